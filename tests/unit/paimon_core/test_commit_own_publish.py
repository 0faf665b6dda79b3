"""A publish that lands but reports "taken" (an HTTP client retried a conditional PUT whose first
try succeeded: the retry gets 412) is the committer's own snapshot: kept, not cleaned up, not
committed twice."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import RenamingSnapshotCommit


class _LandsButSaysTaken:
    def __init__(self, inner: RenamingSnapshotCommit) -> None:
        self.inner = inner

    def commit(self, snapshot: Snapshot) -> bool:
        assert self.inner.commit(snapshot)
        return False  # what try_write_atomic answers to the retried PUT's 412


def test_own_snapshot_reported_taken_is_kept(tmp_path: Path) -> None:
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    commit = table.new_file_store_commit(builder.commit_user)
    commit.snapshot_commit = _LandsButSaysTaken(RenamingSnapshotCommit(table.snapshot_manager))
    result = commit.commit(write.prepare_commit(), 1)
    assert (result.snapshot_id, result.attempts) == (1, 1)
    assert [s.id for s in table.snapshot_manager.snapshots()] == [1]  # not committed again as 2
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]  # its manifests are there
