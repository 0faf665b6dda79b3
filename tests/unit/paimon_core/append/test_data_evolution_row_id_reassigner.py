"""``reassign_row_id`` (Java ``DataEvolutionRowIdReassigner``) on tables our writer wrote, against
Java's ``ReassignRowIdProcedureTest`` cases; its refusals change nothing. With pypaimon and
pypaimon-rust reading: tests/interop/test_data_evolution_compaction.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append.data_evolution_row_id_reassigner import RowRangeMapping
from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.schema.schema_change import SetOption
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int32()), ("pt", pa.string())])
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}


def table(tmp_path: Path, *, partitioned: bool = True, **options: str) -> FileStoreTable:
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_database("db", ignore_if_exists=True)
    return cat.create_table("db.t", SCHEMA, partition_keys=["pt"] if partitioned else (), options={**DE, **options})


def insert(t: FileStoreTable, *rows: tuple[int, str]) -> None:
    for i, pt in rows:  # each its own commit: ids in commit order, interleaving the partitions
        t.write_arrow(pa.table({"id": [i], "pt": [pt]}, schema=SCHEMA))


def ids(t: FileStoreTable, **options: str) -> list[tuple[Any, ...]]:
    at = t.copy(options) if options else t
    got = at.inspect.system_table("row_tracking").select(["id", "pt", "_ROW_ID"]).to_pylist()
    return sorted(tuple(r.values()) for r in got)


def listing(t: FileStoreTable) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(t.path) for f in fs}


def test_interleaved_partitions_get_contiguous_ids(tmp_path: Path) -> None:
    """Java ``reassign row ids for interleaved partitions``."""
    t = table(tmp_path)
    insert(t, (0, "a"), (1, "b"), (2, "a"), (3, "b"), (4, "a"))
    assert ids(t) == [(0, "a", 0), (1, "b", 1), (2, "a", 2), (3, "b", 3), (4, "a", 4)]
    before = listing(t)
    plan = t.maintenance.reassign_row_id(dry_run=True)
    assert plan.result.startswith("Dry run.") and (plan.row_count, plan.next_row_id) == (5, 10)
    assert listing(t) == before and t.latest_snapshot().id == 5  # type: ignore[union-attr]

    result = t.maintenance.reassign_row_id()
    assert result.result.startswith("Success."), result.result
    assert (result.previous_snapshot_id, result.new_snapshot_id, result.file_count, result.row_count) == (5, 6, 5, 5)
    assert (result.first_assigned_row_id, result.next_row_id) == (5, 10)
    assert result.partitions == ("pt=a", "pt=b")
    assert ids(t) == [(0, "a", 5), (1, "b", 8), (2, "a", 6), (3, "b", 9), (4, "a", 7)]
    latest = t.latest_snapshot()
    assert latest is not None and latest.commit_kind == CommitKind.OVERWRITE and latest.next_row_id == 10
    assert latest.total_record_count == 5 and latest.delta_record_count == 0
    assert ids(t, **{"scan.snapshot-id": "5"})[0] == (0, "a", 0)  # the old snapshot keeps its ids
    # a later commit continues after the new ids; the compaction now merges each partition
    insert(t, (5, "b"))
    assert ids(t)[-1] == (5, "b", 10)
    again = t.maintenance.reassign_row_id()
    assert again.result.startswith("Skipped.") and not again.reassigned  # contiguous: 'b' is 8, 9, 10
    t.maintenance.compact(options={"compaction.min.file-num": "2"})
    files = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert sorted((t.partition_path(e.partition), e.file.first_row_id, e.file.row_count) for e in files) == [
        ("pt=a", 5, 3),
        ("pt=b", 8, 3),
    ]
    assert ids(t) == [(0, "a", 5), (1, "b", 8), (2, "a", 6), (3, "b", 9), (4, "a", 7), (5, "b", 10)]


def test_partitions_filter(tmp_path: Path) -> None:
    """Java ``reassign row id with partitions filter``: 'pt=c' matches nothing (skipped)."""
    t = table(tmp_path)
    insert(t, (0, "a"), (1, "b"), (2, "a"))
    skipped = t.maintenance.reassign_row_id("pt=c")
    assert skipped.result.startswith("Skipped.") and skipped.new_snapshot_id == 3
    done = t.maintenance.reassign_row_id("pt=a")
    assert done.result.startswith("Success.") and done.partitions == ("pt=a",)
    assert ids(t) == [(0, "a", 3), (1, "b", 1), (2, "a", 4)]
    with pytest.raises(InvalidArgumentError, match=r"non-partition column\(s\) \['id'\]"):
        t.maintenance.reassign_row_id("id=1")


def test_refusals_change_nothing(tmp_path: Path) -> None:
    """Java's checks: row tracking, data evolution, a snapshot; unpartitioned tables are skipped."""
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_database("db")
    plain = cat.create_table("db.plain", SCHEMA, partition_keys=["pt"])
    insert(plain, (0, "a"))
    with pytest.raises(InvalidOptionError, match="must enable 'row-tracking.enabled=true'"):
        plain.maintenance.reassign_row_id()
    rt = cat.create_table("db.rt", SCHEMA, partition_keys=["pt"], options={"row-tracking.enabled": "true"})
    insert(rt, (0, "a"))
    with pytest.raises(InvalidOptionError, match="must enable 'data-evolution.enabled=true'"):
        rt.maintenance.reassign_row_id()
    empty = cat.create_table("db.empty", SCHEMA, partition_keys=["pt"], options=DE)
    with pytest.raises(InvalidArgumentError, match="Cannot reassign row IDs for empty table"):
        empty.maintenance.reassign_row_id()
    flat = cat.create_table("db.flat", SCHEMA, options=DE)
    insert(flat, (0, "a"), (1, "b"))
    assert "table is not partitioned" in flat.maintenance.reassign_row_id().result
    for t, sid in ((plain, 1), (rt, 1), (flat, 2)):
        assert t.latest_snapshot().id == sid  # type: ignore[union-attr]


def test_long_contiguous_runs_stay(tmp_path: Path) -> None:
    """``data-evolution.reassign.skip-contiguous-row-count``: a run of follow-on ranges holding more
    rows than that keeps its ids; a partition left without gaps is not moved at all."""
    t = table(tmp_path)
    t.write_arrow(pa.table({"id": [0, 1, 2], "pt": ["a"] * 3}, schema=SCHEMA))  # ids 0..2
    t.write_arrow(pa.table({"id": [3, 4, 5], "pt": ["a"] * 3}, schema=SCHEMA))  # ids 3..5: a run of 6
    insert(t, (6, "b"), (7, "a"), (8, "b"), (9, "a"))  # ids 6..9
    t.schema_manager.commit_changes([SetOption("data-evolution.reassign.skip-contiguous-row-count", "5")])
    t = FileSystemCatalog(str(tmp_path)).get_table("db.t")
    result = t.maintenance.reassign_row_id()
    # a: the run 0..5 stays, 7 and 9 are still apart (moved to 10, 11); b: 6, 8 -> 12, 13
    assert ids(t) == [(0, "a", 0), (1, "a", 1), (2, "a", 2), (3, "a", 3), (4, "a", 4), (5, "a", 5),
                      (6, "b", 12), (7, "a", 10), (8, "b", 13), (9, "a", 11)]  # fmt: skip
    assert (result.row_count, result.next_row_id) == (4, 14)
    t.schema_manager.commit_changes([SetOption("data-evolution.reassign.skip-contiguous-row-count", "-1")])
    with pytest.raises(InvalidOptionError, match="cannot be negative"):
        FileSystemCatalog(str(tmp_path)).get_table("db.t").maintenance.reassign_row_id()


def test_range_mapping() -> None:
    m = RowRangeMapping((0, 10, 30), (4, 19, 30), (100, 105, 115))
    assert [m.map(0, 4), m.map(12, 19), m.map(30, 30), m.map(3, 12), m.map(25, 26), m.map(31, 31)] == [
        100, 107, 115, None, None, None,
    ]  # fmt: skip
