"""A commit that does not land says why and leaves nothing behind; one that cannot tell keeps
everything; one whose files are gone publishes nothing (issue 17, "Writers under concurrent
maintenance")."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import (
    CommitFilesMissingError,
    CommitRetriesExhaustedError,
    CommitStateUnknownError,
    TransientError,
)
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import SnapshotCommit
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
HOUR = 3_600_000


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "dt": ["a"] * len(ids)}, schema=SCHEMA)


def _table(tmp_path: Path, options: dict[str, str] | None = None, clock: ManualClock | None = None) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"), **({"clock": clock} if clock else {}))
    catalog.create_database("db")
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options=options or {})


def _unreferenced(table: FileStoreTable) -> set[str]:
    """Data and manifest files on disk that no snapshot references."""
    used: set[str] = set()
    sm = table.snapshot_manager
    for sid in sm.list_snapshot_ids():
        snap = sm.snapshot(sid)
        for lst in (snap.base_manifest_list, snap.delta_manifest_list):
            used.add(lst)
            for meta in read_manifest_list(table.file_io, table.paths.manifest_path(lst)):
                used.add(meta.file_name)
                used |= {e.file.file_name for e in read_manifest_file(table.file_io, table.paths.manifest_path(meta.file_name))}
    root = Path(table.path)
    on_disk = {p.name for p in root.glob("dt=*/bucket-*/*")} | {p.name for p in (root / "manifest").iterdir()}
    return on_disk - used


class _OthersWinFirst:
    """Before each publish another writer commits: every attempt finds its id taken."""

    def __init__(self, inner: SnapshotCommit, other: FileStoreTable) -> None:
        self.inner = inner
        self.other = other

    def commit(self, snapshot: Snapshot) -> bool:
        self.other.write_arrow(_rows([1000 + snapshot.id]))
        return self.inner.commit(snapshot)


def test_exhausted_retries_name_attempts_and_winners_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(tmp_path, {"commit.max-retries": "2", "commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "2 ms"})
    table.write_arrow(_rows([1]))  # snapshot 1
    other = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
    original = FileStoreTable.new_file_store_commit

    def losing(commit_user: str) -> FileStoreCommit:
        commit = original(table, commit_user)
        commit.snapshot_commit = _OthersWinFirst(commit.snapshot_commit, other)
        return commit

    monkeypatch.setattr(table, "new_file_store_commit", losing)
    with pytest.raises(CommitRetriesExhaustedError) as info:
        table.write_arrow(_rows([7, 8]))
    err = info.value
    assert isinstance(err, TransientError)
    assert err.attempts == 3 and err.lost_to_snapshot_ids == (2, 3, 4)
    assert "after 3 attempts" in str(err) and "[2, 3, 4]" in str(err)
    assert len(err.written_files) == 1 and err.written_files[0] in str(err)
    assert _unreferenced(table) == set()  # its data file and manifests are deleted
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 1002, 1003, 1004]


class _TakenWhileInFlight:
    """Reports 'taken' (an HTTP client whose retried conditional PUT got 412), while its own
    first PUT lands only later (``land``) or never."""

    def __init__(self, inner: SnapshotCommit) -> None:
        self.inner = inner
        self.pending: Snapshot | None = None

    def commit(self, snapshot: Snapshot) -> bool:
        self.pending = snapshot
        return False

    def land(self, _seconds: float) -> None:
        if self.pending is not None:
            assert self.inner.commit(self.pending)
            self.pending = None


def _ambiguous(table: FileStoreTable, monkeypatch: pytest.MonkeyPatch, *, lands: bool) -> None:
    monkeypatch.setattr(table.file_io, "publish_taken_is_definite", False)  # as an HTTP store
    original = FileStoreTable.new_file_store_commit

    def patched(commit_user: str) -> FileStoreCommit:
        commit = original(table, commit_user)
        publish = _TakenWhileInFlight(commit.snapshot_commit)
        commit.snapshot_commit = publish
        commit.sleep = publish.land if lands else (lambda _s: None)
        return commit

    monkeypatch.setattr(table, "new_file_store_commit", patched)


def test_taken_by_its_own_late_publish_is_a_success(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    _ambiguous(table, monkeypatch, lands=True)
    result = table.write_arrow(_rows([1, 2]))
    assert result.snapshot_id == 1 and result.attempts == 1
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2]
    assert _unreferenced(table) == set()


def test_taken_but_unreadable_on_a_retrying_store_keeps_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(tmp_path)
    _ambiguous(table, monkeypatch, lands=False)
    data_before = set(Path(table.path).glob("dt=*/bucket-*/*"))
    with pytest.raises(CommitStateUnknownError, match="reported 'taken'"):
        table.write_arrow(_rows([1, 2]))
    assert len(set(Path(table.path).glob("dt=*/bucket-*/*")) - data_before) == 1  # kept: it may have landed
    assert len(list((Path(table.path) / "manifest").iterdir())) > 0  # its manifests too


@pytest.mark.parametrize("options", [{}, {"bucket": "-1", "write-only": "true"}], ids=["append", "dynamic-pk"])
def test_commit_whose_files_were_cleaned_publishes_nothing(tmp_path: Path, options: dict[str, str]) -> None:
    # The clock runs two days ahead of the files' mtimes: to orphan clean every file looks old.
    clock = ManualClock(int(time.time() * 1000) + 48 * HOUR)
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    catalog.create_database("db")
    pk = ["id", "dt"] if options else []
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False)])
    table = catalog.create_table("db.t", schema, partition_keys=["dt"], primary_keys=pk, options=options)
    table.write_arrow(_rows([1]).cast(schema))
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows([2, 3]).cast(schema))
    messages = write.prepare_commit()
    cleaned = table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)  # too short a cutoff
    assert cleaned.deleted_file_count >= 1
    with pytest.raises(CommitFilesMissingError) as info:
        builder.new_commit().commit(messages)
    assert isinstance(info.value, TransientError) and "orphan clean" in str(info.value)
    assert Path(info.value.path).name in {f.file_name for m in messages for f in m.new_files} | {
        i.file_name for m in messages for i in m.new_index_files
    }
    latest = table.latest_snapshot()
    assert latest is not None and latest.id == 1
    assert table.to_arrow().column("id").to_pylist() == [1]  # every read still works
