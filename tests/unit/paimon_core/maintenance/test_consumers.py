"""reset_consumer / clear_consumers (Java's ResetConsumerProcedure, ClearConsumersProcedure)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError
from paimon_core.consumer.consumer_operations import ClearConsumersResult, ResetConsumerResult
from paimon_core.table.table import FileStoreTable


def _table(warehouse: str, n: int = 4) -> FileStoreTable:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]))
    for k in range(n):
        t.write_arrow(pa.table({"id": pa.array([k], pa.int64())}))
    return t


def _consumer_files(t: FileStoreTable) -> dict[str, str]:
    return {st.name: t.file_io.read_text(st.path) for st in t.file_io.list_files(t.paths.consumer_dir)}


def test_reset_consumer_writes_java_file(warehouse: str) -> None:
    t = _table(warehouse)
    res = t.maintenance.reset_consumer("job-1", 2)
    assert isinstance(res, ResetConsumerResult)
    assert (res.previous_next_snapshot_id, res.next_snapshot_id, res.deleted) == (None, 2, False)
    assert json.loads(_consumer_files(t)["consumer-job-1"]) == {"nextSnapshot": 2}
    res = t.maintenance.reset_consumer("job-1", 5)  # latest + 1: the consumer has read everything
    assert res.previous_next_snapshot_id == 2 and t.consumer_manager.consumer("job-1").next_snapshot == 5  # type: ignore[union-attr]
    assert res.to_dict() == {
        "table": "db.t",
        "consumer_id": "job-1",
        "previous_next_snapshot_id": 2,
        "next_snapshot_id": 5,
        "deleted": False,
    }


def test_reset_consumer_bounds(warehouse: str) -> None:
    t = _table(warehouse)
    t.maintenance.reset_consumer("c", 3)
    before = _consumer_files(t)
    for bad in (0, 6, -1):
        with pytest.raises(InvalidArgumentError, match=r"\[1, 5\]"):
            t.maintenance.reset_consumer("c", bad)
    for bad_type in ("3", 2.0, True):
        with pytest.raises(InvalidArgumentError):
            t.maintenance.reset_consumer("c", bad_type)  # type: ignore[arg-type]
    assert _consumer_files(t) == before
    # After snapshot 1 expires, 1 is out of range.
    t.file_io.delete(t.snapshot_manager.snapshot_path(1))
    with pytest.raises(InvalidArgumentError, match=r"\[2, 5\]"):
        t.maintenance.reset_consumer("c", 1)
    assert t.maintenance.reset_consumer("c", 2).next_snapshot_id == 2


def test_reset_consumer_invalid_id_and_empty_table(warehouse: str) -> None:
    t = _table(warehouse)
    for bad in ("", "a b", "x/y"):
        with pytest.raises(InvalidArgumentError):
            t.maintenance.reset_consumer(bad, 1)
    empty = FileSystemCatalog(warehouse).create_table("db.empty", pa.schema([("id", pa.int64())]))
    with pytest.raises(InvalidArgumentError, match="no snapshot"):
        empty.maintenance.reset_consumer("c", 1)
    assert _consumer_files(t) == {} and _consumer_files(empty) == {}


def test_reset_without_id_deletes(warehouse: str) -> None:
    t = _table(warehouse)
    t.maintenance.reset_consumer("c", 3)
    res = t.maintenance.reset_consumer("c")
    assert res.deleted and res.previous_next_snapshot_id == 3 and res.next_snapshot_id is None
    assert _consumer_files(t) == {}
    res = t.maintenance.reset_consumer("c")
    assert not res.deleted and res.previous_next_snapshot_id is None


def test_clear_consumers_with_regexes(warehouse: str) -> None:
    t = _table(warehouse)
    for cid in ("job-a", "job-b", "job-keep", "other", "jobx"):
        t.maintenance.reset_consumer(cid, 2)
    dry = t.maintenance.clear_consumers("job-.*", "job-keep", dry_run=True)
    assert isinstance(dry, ClearConsumersResult)
    assert dry.cleared_consumers == ("job-a", "job-b") and dry.dry_run
    assert len(_consumer_files(t)) == 5
    res = t.maintenance.clear_consumers("job-.*", "job-keep", dry_run=False)
    assert res.cleared_consumers == ("job-a", "job-b") and not res.dry_run
    assert sorted(_consumer_files(t)) == ["consumer-job-keep", "consumer-jobx", "consumer-other"]
    # Full matches only (Java's Matcher.matches): 'job' does not match 'jobx'.
    assert t.maintenance.clear_consumers("job", dry_run=False).cleared_consumers == ()
    # Blank patterns mean the defaults (all, none excluded), as in Java.
    res = t.maintenance.clear_consumers(" ", " ", dry_run=False)
    assert res.cleared_consumers == ("job-keep", "jobx", "other") and res.including == ".*" and res.excluding is None
    assert _consumer_files(t) == {}


def test_clear_consumers_invalid_regex_changes_nothing(warehouse: str) -> None:
    t = _table(warehouse)
    t.maintenance.reset_consumer("a", 1)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.clear_consumers("(", dry_run=False)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.clear_consumers(".*", "[", dry_run=False)
    assert list(_consumer_files(t)) == ["consumer-a"]
