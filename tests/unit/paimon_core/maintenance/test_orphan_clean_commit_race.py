"""Orphan clean and commits in flight (issue 27, item 4): no commit that returns success loses a
file, whatever ``older_than`` and ``force`` say.

Each interleaving of the protocol (:mod:`paimon_core.operation.commit.pending_commits`,
:mod:`paimon_core.operation.orphan_trash`) is forced here with a hook, on a local warehouse:

* a commit lands between the clean's reference read and its delete: the clean moves the files
  aside, sees the new snapshot on its second read and moves them back;
* a commit that announced its files before the clean listed them: the clean leaves them;
* a clean that moved a file before the commit announced it: the commit fails before publishing;
* a clean that died between moving and deleting: the next run moves back what is referenced;
* a file gone after the publish: moved back from the trash, or :class:`CommitFilesLostError`;
* the trash and announcement directories themselves (links, stale or broken announcements).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitFilesLostError, CommitFilesMissingError, OrphanCleanAbortedError
from paimon_core.operation.commit import committer as committer_module
from paimon_core.operation.commit.commit_guard import check_added_files
from paimon_core.operation.commit.pending_commits import PENDING_DIR, PENDING_TTL_MILLIS, announce
from paimon_core.operation.orphan_files_clean import OrphanFilesClean
from paimon_core.operation.orphan_trash import TRASH_DIR
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable

DAY = 86_400_000
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False)])


def _table(tmp_path: Path) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options={"bucket": "-1"})
    t.write_arrow(pa.table({"id": [1, 2], "dt": ["a", "b"]}, schema=SCHEMA))
    return t


def _written(t: FileStoreTable, ids: list[int], dt: str = "c") -> tuple[Any, list[CommitMessage], list[Path]]:
    """A write not committed yet, its files two days old (old enough for any cutoff)."""
    builder = t.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA))
    messages = write.prepare_commit()
    files = [Path(t.bucket_path(m.partition, m.bucket)) / f.file_name for m in messages for f in m.new_files]
    old = (time.time() * 1000 - 2 * DAY) / 1000
    for f in files:
        os.utime(f, (old, old))
    return builder, messages, files


def _ids(t: FileStoreTable) -> list[int]:
    fresh = FileSystemCatalog(t.path.rsplit("/db.db/", 1)[0]).get_table("db.t")
    return sorted(fresh.to_arrow(columns=["id"]).column("id").to_pylist())


def _trash_files(t: FileStoreTable) -> list[Path]:
    return [p for p in (Path(t.path) / TRASH_DIR).rglob("*") if p.is_file()]


def _after_first_read(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> None:
    """Run ``action`` right after the clean's first reference read (before it moves anything)."""
    real = OrphanFilesClean.referenced_names
    calls: list[int] = []

    def read_then_act(self: OrphanFilesClean, *args: Any, **kwargs: Any) -> set[str]:
        out = real(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            action()
        return out

    monkeypatch.setattr(OrphanFilesClean, "referenced_names", read_then_act)


@pytest.mark.parametrize("force", [False, True])
def test_a_commit_landing_between_the_read_and_the_delete_keeps_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: bool
) -> None:
    """The issue's race: on today's main the clean deletes the landed commit's files."""
    t = _table(tmp_path)
    builder, messages, files = _written(t, [10, 11])
    landed: list[int | None] = []
    _after_first_read(monkeypatch, lambda: landed.append(builder.new_commit().commit(messages).snapshot_id))
    older_than = int(time.time() * 1000) - (1000 if force else DAY)
    result = t.maintenance.remove_orphan_files(older_than=older_than, force=force, dry_run=False)
    assert landed == [2]
    assert all(f.exists() for f in files)
    assert result.deleted_file_count == 0 and not [p for p in result.deleted_paths if "dt=c" in p]
    assert _ids(t) == [1, 2, 10, 11]
    assert not _trash_files(t) and not (Path(t.path) / TRASH_DIR).exists()


def test_a_commit_that_announced_its_files_keeps_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forced clean running while a commit checks its files (after announcing them) leaves
    them; on today's main it deletes them and the commit fails."""
    t = _table(tmp_path)
    builder, messages, files = _written(t, [20, 21])
    results: list[Any] = []
    real_check = check_added_files

    def clean_then_check(*args: Any, **kwargs: Any) -> None:
        results.append(t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - 1, force=True, dry_run=False))
        real_check(*args, **kwargs)

    monkeypatch.setattr(committer_module, "check_added_files", clean_then_check)
    assert builder.new_commit().commit(messages).snapshot_id == 2
    assert results and results[0].deleted_file_count == 0
    assert all(f.exists() for f in files) and _ids(t) == [1, 2, 20, 21]
    assert not (Path(t.path) / PENDING_DIR).exists()  # withdrawn after the publish, its directory with it


def test_a_file_moved_before_the_announcement_fails_the_commit(tmp_path: Path) -> None:
    t = _table(tmp_path)
    builder, messages, files = _written(t, [30])
    assert t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - 1000, force=True, dry_run=False).deleted_file_count == 1
    with pytest.raises(CommitFilesMissingError, match="not published"):
        builder.new_commit().commit(messages)
    assert t.latest_snapshot().id == 1 and _ids(t) == [1, 2]  # type: ignore[union-attr]


def test_a_clean_that_died_after_moving_is_finished_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed between the move and its second read, with a commit landed meanwhile: the commit's
    file lies in the trash; the next clean moves it back and deletes the real orphan."""
    t = _table(tmp_path)
    builder, messages, files = _written(t, [40])
    _, _, orphan = _written(t, [41], dt="d")  # never committed: a real orphan
    _after_first_read(monkeypatch, lambda: builder.new_commit().commit(messages))
    _on_second_read(monkeypatch, SystemExit("killed"))
    with pytest.raises(SystemExit):
        t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - 1000, force=True, dry_run=False)
    monkeypatch.undo()
    assert not files[0].exists() and len(_trash_files(t)) == 2
    result = t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)  # not forced: the trash is emptied anyway
    assert files[0].exists() and not orphan[0].exists()
    assert result.deleted_file_count == 1 and result.deleted_paths == (str(orphan[0]),)
    assert _ids(t) == [1, 2, 40] and not _trash_files(t)


def test_a_failed_second_read_moves_everything_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    _, _, orphan = _written(t, [50])
    moved: list[bool] = []
    _on_second_read(monkeypatch, OSError("disk gone"), lambda: moved.append(not orphan[0].exists()))
    with pytest.raises(OSError, match="disk gone"):
        t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)
    assert moved == [True] and orphan[0].exists() and not _trash_files(t)


def _on_second_read(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, before: Callable[[], None] = lambda: None
) -> None:
    """Raise ``error`` when the clean reads the announcements a second time (after its move)."""
    real = OrphanFilesClean.pending
    calls: list[int] = []

    def pending(self: OrphanFilesClean) -> Any:
        calls.append(1)
        if len(calls) == 2:
            before()
            raise error
        return real(self)

    monkeypatch.setattr(OrphanFilesClean, "pending", pending)


def _publish_then(monkeypatch: pytest.MonkeyPatch, t: FileStoreTable, action: Callable[[], None]) -> None:
    """Run ``action`` right after the commit's snapshot is published."""
    real = t.new_file_store_commit

    def new_commit(user: str) -> Any:
        c = real(user)
        publish = c.snapshot_commit.commit

        def publish_then(snapshot: Any) -> bool:
            ok = publish(snapshot)
            action()
            return ok

        c.snapshot_commit.commit = publish_then  # type: ignore[method-assign]
        return c

    monkeypatch.setattr(t, "new_file_store_commit", new_commit)


def test_a_file_gone_after_the_publish_is_moved_back_or_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path)
    # In the trash (a clean that did not see the announcement, e.g. an old version): moved back.
    builder, messages, files = _written(t, [60])
    trashed = Path(t.path) / TRASH_DIR / "0-x" / files[0].relative_to(t.path)
    def to_trash() -> None:
        trashed.parent.mkdir(parents=True)
        files[0].rename(trashed)

    _publish_then(monkeypatch, t, to_trash)
    assert builder.new_commit().commit(messages).snapshot_id == 2
    assert files[0].exists() and _ids(t) == [1, 2, 60]
    monkeypatch.undo()
    # Deleted outright: the published commit does not report success.
    builder, messages, files = _written(t, [61])
    _publish_then(monkeypatch, t, lambda: files[0].unlink())
    with pytest.raises(CommitFilesLostError, match="published snapshot") as e:
        builder.new_commit().commit(messages)
    assert e.value.context["missing_files"] == (str(files[0]),) and e.value.context["snapshot_ids"] == (3,)


def test_a_linked_trash_directory_is_refused(tmp_path: Path) -> None:
    t = _table(tmp_path)
    _, _, orphan = _written(t, [70])
    outside = tmp_path / "outside"
    outside.mkdir()
    (Path(t.path) / TRASH_DIR).symlink_to(outside)
    with pytest.raises(OrphanCleanAbortedError, match="symbolic link"):
        t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)
    assert orphan[0].exists() and not list(outside.rglob("*"))


def test_dry_run_moves_nothing(tmp_path: Path) -> None:
    t = _table(tmp_path)
    _, _, orphan = _written(t, [80])
    result = t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=True)
    assert result.deleted_file_count == 1 and orphan[0].exists()
    assert not (Path(t.path) / TRASH_DIR).exists()


def test_announcements_stale_and_broken(tmp_path: Path) -> None:
    t = _table(tmp_path)
    _, _, files = _written(t, [90])
    # A commit that crashed a day ago: its announcement is removed, its files are orphans.
    stale = announce(t.file_io, t.path, names=[files[0].name], prefixes=(), commit_user="dead")
    old = (time.time() * 1000 - PENDING_TTL_MILLIS - 60_000) / 1000
    os.utime(stale, (old, old))
    # A live one protects its files, by name and by prefix.
    _, _, kept = _written(t, [91, 92], dt="e")
    live = announce(t.file_io, t.path, names=[kept[0].name], prefixes=(kept[0].name[:20],), commit_user="live")
    result = t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)
    assert not Path(stale).exists() and Path(live).exists()
    assert result.deleted_paths == (str(files[0]),) and all(k.exists() for k in kept)
    # An unreadable fresh announcement stops the clean before anything moves.
    Path(live).write_text("{not json")
    with pytest.raises(OrphanCleanAbortedError, match="cannot be read"):
        t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)
    assert all(k.exists() for k in kept)
    json.loads(Path(live).read_text().replace("{not json", "{}"))  # the file is left for a person


def _to_trash(t: FileStoreTable, path: Path) -> Path:
    trashed = Path(t.path) / TRASH_DIR / "1-dead" / path.relative_to(t.path)
    trashed.parent.mkdir(parents=True, exist_ok=True)
    path.rename(trashed)
    return trashed


def test_the_repairs_move_back_what_lies_in_the_trash(tmp_path: Path) -> None:
    """A data file or manifest of the latest snapshot in the orphan trash (a clean between its
    move and its move back, or one that died there) is not missing: remove_unexisting_files and
    remove_unexisting_manifests must not drop its rows."""
    t = _table(tmp_path)
    builder, messages, files = _written(t, [95])
    builder.new_commit().commit(messages)
    trashed = _to_trash(t, files[0])
    assert t.maintenance.remove_unexisting_files(dry_run=True).removed_files == 0 and trashed.exists()
    result = t.maintenance.remove_unexisting_files(dry_run=False)
    assert result.removed_files == 0 and files[0].exists() and not trashed.exists()
    scan = t.new_file_store_scan()
    latest = t.latest_snapshot()
    assert latest is not None
    manifest = Path(t.paths.manifest_path(scan.data_manifests(latest)[-1].file_name))
    trashed = _to_trash(t, manifest)
    assert not t.maintenance.remove_unexisting_manifests(dry_run=True).missing_manifests and trashed.exists()
    assert not t.maintenance.remove_unexisting_manifests(dry_run=False).missing_manifests and manifest.exists() and not trashed.exists()
    assert _ids(t) == [1, 2, 95]


def test_the_announcement_of_a_dead_process_is_dropped(tmp_path: Path) -> None:
    """A writer killed in a commit (no ``finally`` ran) on this machine: its announcement goes at
    the next clean and its files are orphans at once. One from another machine or container
    (not provably dead) protects its files until it is a day old."""
    import subprocess
    import sys

    t = _table(tmp_path)
    _, _, dead_files = _written(t, [96])
    _, _, remote_files = _written(t, [97], dt="f")
    script = (
        "import os, sys\n"
        "from paimon_core.io.local_io import LocalFileIO\n"
        "from paimon_core.operation.commit.pending_commits import announce\n"
        "announce(LocalFileIO(), sys.argv[1], names=[sys.argv[2]], prefixes=(), commit_user='killed')\n"
        "os._exit(9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, t.path, dead_files[0].name], capture_output=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    remote = announce(t.file_io, t.path, names=[remote_files[0].name], prefixes=(), commit_user="remote")
    body = json.loads(Path(remote).read_text())
    body["process"]["bootId"] = "another-machine"
    Path(remote).write_text(json.dumps(body))
    result = t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - DAY, dry_run=False)
    assert result.deleted_paths == (str(dead_files[0]),) and remote_files[0].exists()
    assert [p.name for p in (Path(t.path) / PENDING_DIR).iterdir()] == [Path(remote).name]


def test_announcements_of_concurrent_commits_never_fail_on_the_shared_directory(tmp_path: Path) -> None:
    """Commits announce and withdraw in ``_pending_commits/`` at once; a withdraw removes the
    directory when it is empty, so another commit's mkdir sees EEXIST and then no directory (os.makedirs
    raises FileExistsError then) or its write finds the directory gone. Neither may fail a commit."""
    import threading

    from paimon_core.io.local_io import LocalFileIO
    from paimon_core.operation.commit.pending_commits import announce, pending_dir, withdraw

    file_io = LocalFileIO()
    table = str(tmp_path / "t")
    os.makedirs(table)
    errors: list[BaseException] = []

    def commits() -> None:
        for _ in range(400):
            try:
                withdraw(file_io, announce(file_io, table, names=["f"], prefixes=[], commit_user="u"))
            except BaseException as e:  # noqa: BLE001 - collected and asserted below
                errors.append(e)

    threads = [threading.Thread(target=commits) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not os.path.exists(pending_dir(table)) or os.listdir(pending_dir(table)) == []
