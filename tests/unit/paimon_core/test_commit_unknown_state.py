"""A publish whose outcome cannot be told must never lead to deleting the commit's files.

The failure seen on the S3 server: the snapshot PUT landed, the client saw an error, and the
look-up that should tell "ours" from "not there" failed as well (the store was going away). The
commit then looked like a plain failure and ``write_arrow`` deleted the data files a live snapshot
references: every later read failed. Both halves are covered here: the committer turns any doubt into
``CommitStateUnknownError``, and a writer interrupted mid-publish (``KeyboardInterrupt``, a task kill)
checks the history before deleting anything.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitStateUnknownError
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import SnapshotCommit
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.table.table import FileStoreTable

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64())})


class _LandsThenRaises:
    """Publishes the snapshot, then fails as a dropped connection (or a kill) would."""

    def __init__(self, inner: SnapshotCommit, error: BaseException, on_landed: object = None) -> None:
        self.inner = inner
        self.error = error
        self.on_landed = on_landed

    def commit(self, snapshot: Snapshot) -> bool:
        assert self.inner.commit(snapshot)
        if callable(self.on_landed):
            self.on_landed()
        raise self.error


def _table(tmp_path: Path) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    return catalog.create_table("db.t", pa.schema([("id", pa.int64())]))


def _inject(monkeypatch: pytest.MonkeyPatch, error: BaseException, on_landed: object = None) -> None:
    original = FileStoreTable.new_file_store_commit

    def patched(self: FileStoreTable, commit_user: str) -> FileStoreCommit:
        commit = original(self, commit_user)
        commit.snapshot_commit = _LandsThenRaises(commit.snapshot_commit, error, on_landed)
        return commit

    monkeypatch.setattr(FileStoreTable, "new_file_store_commit", patched)


def test_landed_publish_with_failing_lookup_keeps_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    store_down = {"on": False}
    original_try = SnapshotManager.try_snapshot

    def try_snapshot(self: SnapshotManager, snapshot_id: int) -> Snapshot | None:
        if store_down["on"]:
            raise ConnectionError("store unreachable")
        return original_try(self, snapshot_id)

    monkeypatch.setattr(SnapshotManager, "try_snapshot", try_snapshot)
    _inject(monkeypatch, ConnectionError("connection reset by peer"), on_landed=lambda: store_down.update(on=True))
    with pytest.raises(CommitStateUnknownError, match="checking whether it landed failed too"):
        table.write_arrow(ROWS)
    store_down["on"] = False
    monkeypatch.undo()
    # The snapshot landed and everything it references is still there.
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_interrupt_after_landing_keeps_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    _inject(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        table.write_arrow(ROWS)
    monkeypatch.undo()
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_interrupt_before_landing_deletes_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side: a commit that surely did not land still cleans up after itself."""
    table = _table(tmp_path)

    def refuse(self: FileStoreCommit, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(FileStoreCommit, "commit", refuse)
    with pytest.raises(KeyboardInterrupt):
        table.write_arrow(ROWS)
    assert table.snapshot_manager.latest_snapshot_id() is None
    assert not list(tmp_path.glob("db.db/t/bucket-*/*.parquet"))
