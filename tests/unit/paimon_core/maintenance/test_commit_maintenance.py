"""Writers expire snapshots, consumers and tags and create automatic tags after each commit
(Java's TableCommitImpl.maintain), unless ``write-only``; a maintenance failure never fails
the commit that already landed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.results import CommitResult
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

HOUR = 3_600_000
DAY0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
SCHEMA = pa.schema([("id", pa.int64())])


def _table(tmp_path: Path, clock: ManualClock, options: dict[str, str]) -> FileStoreTable:
    cat = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    cat.create_database("db")
    return cat.create_table("db.t", SCHEMA, options=options)


def _write(t: FileStoreTable, i: int) -> CommitResult:
    return t.write_arrow(pa.table({"id": [i]}, schema=SCHEMA))


def test_commits_expire_beyond_num_retained_max(tmp_path: Path) -> None:
    clock = ManualClock(DAY0)
    t = _table(tmp_path, clock, {"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"})
    expired = 0
    for i in range(6):
        clock.advance(1000)
        r = _write(t, i)
        expired += r.expired_snapshots
        assert r.maintenance_error is None
        assert len(t.snapshot_manager.list_snapshot_ids()) <= 3
    assert expired == 3
    assert t.snapshot_manager.list_snapshot_ids() == [4, 5, 6]
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(6))


def test_time_retention_and_min_floor(tmp_path: Path) -> None:
    clock = ManualClock(DAY0)
    t = _table(tmp_path, clock, {})  # defaults: min 10, time 1 h, max unlimited
    for i in range(12):
        _write(t, i)
    assert len(t.snapshot_manager.list_snapshot_ids()) == 12  # all younger than 1 h
    clock.advance(2 * HOUR)
    r = _write(t, 12)
    assert r.expired_snapshots == 3
    assert t.snapshot_manager.list_snapshot_ids() == list(range(4, 14))


def test_write_only_turns_maintenance_off(tmp_path: Path) -> None:
    clock = ManualClock(DAY0)
    t = _table(tmp_path, clock, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "write-only": "true"})
    for i in range(4):
        assert _write(t, i).expired_snapshots == 0
    assert len(t.snapshot_manager.list_snapshot_ids()) == 4
    assert t.maintenance.expire_snapshots().expired_snapshot_ids == (1, 2, 3)  # the dedicated job still works


def test_automatic_daily_tags_on_commit(tmp_path: Path) -> None:
    clock = ManualClock(DAY0 + 10 * HOUR)
    t = _table(tmp_path, clock, {"tag.automatic-creation": "process-time", "tag.creation-period": "daily"})
    _write(t, 0)
    clock.advance(24 * HOUR)  # the next day: the previous day is complete
    r = _write(t, 1)
    assert r.created_tags
    assert set(r.created_tags) <= set(t.tag_manager.list_names())


def test_maintenance_failure_keeps_the_commit(tmp_path: Path) -> None:
    clock = ManualClock(DAY0)
    t = _table(tmp_path, clock, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"})
    _write(t, 0)
    t.file_io.write_bytes(t.paths.consumer_path("broken"), b"{not json", overwrite=True)
    r = _write(t, 1)
    assert r.snapshot_id == 2
    assert r.maintenance_error and "broken" in r.maintenance_error
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1]
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2]  # nothing expired on the error
