"""Data-evolution compaction planning against Java's ``DataEvolutionCompactCoordinatorTest`` cases,
the row-id range conflict check of its commit (Java ``DataEvolutionConflictDetection``) and the
task's refusals; end to end on pypaimon-written tables in
tests/interop/test_data_evolution_compaction.py."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append.append_compact_coordinator import AppendCompactConfig
from paimon_core.append.data_evolution_compact_coordinator import (
    DataEvolutionCompactCoordinator,
    DataEvolutionCompactTask,
    check_contiguous_row_range,
    validate_options,
)
from paimon_core.append.data_evolution_compact_task import run_data_evolution_compact_task
from paimon_core.exceptions import (
    CommitConflictError,
    CorruptFileError,
    InvalidOptionError,
    UnsupportedTableKindError,
)
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry
from paimon_core.operation.commit.conflicts import check_no_conflicts, check_row_id_range_conflicts

MB = 1024 * 1024


def meta(name: str, first: int, rows: int, size: int = 100, seq: int = 1, cols: tuple[str, ...] | None = None) -> DataFileMeta:
    f = DataFileMeta.new_level0(name, size, rows, value_stats=None, min_sequence_number=seq, max_sequence_number=seq, schema_id=0)
    return f.copy(first_row_id=first, write_cols=cols)


def planner(target: int, open_cost: int, min_files: int) -> DataEvolutionCompactCoordinator:
    return DataEvolutionCompactCoordinator(
        AppendCompactConfig(target_file_size=target, compaction_file_size=target, open_file_cost=open_cost, min_file_num=min_files)
    )


def befores(tasks: list[DataEvolutionCompactTask]) -> list[list[str]]:
    return [[f.file_name for f in t.files] for t in tasks]


def test_single_file_is_no_task() -> None:
    assert planner(128 * MB, 4 * MB, 2).plan({b"": [meta("file1.parquet", 0, 100)]}) == []


def test_contiguous_files_fill_a_bin_until_it_weighs_more_than_the_target() -> None:
    files = [meta("file1.parquet", 0, 100), meta("file2.parquet", 100, 100), meta("file3.parquet", 200, 100)]
    assert befores(planner(199, 1, 2).plan({b"": files})) == [["file1.parquet", "file2.parquet"]]
    assert befores(planner(200, 1, 2).plan({b"": files})) == [["file1.parquet", "file2.parquet", "file3.parquet"]]


def test_a_row_id_gap_ends_a_run() -> None:
    files = [meta("f1", 0, 100), meta("f2", 100, 100), meta("f3", 1000, 100), meta("f4", 1100, 100)]
    assert befores(planner(128 * MB, 4 * MB, 2).plan({b"": files})) == [["f1", "f2"], ["f3", "f4"]]


def test_large_files_are_skipped_and_partitions_planned_apart() -> None:
    """Java ``testCompactPlannerSkipsLargeFiles`` (without its blob files, which we refuse)."""
    big = 200 * MB
    p0, p1, p2 = b"p0", b"p1", b"p2"
    plan = planner(100 * MB, 4 * MB, 2).plan(
        {
            p0: [
                meta("large.parquet", 0, 100, big),
                meta("file1.parquet", 100, 100),
                meta("file2.parquet", 200, 100),
                meta("large2.parquet", 300, 100, big),
                meta("file3.parquet", 400, 100),
                meta("file4.parquet", 500, 100),
            ],
            p1: [meta("file5.parquet", 600, 100), meta("file6.parquet", 700, 100)],
            p2: [meta("file7.parquet", 800, 100), meta("file8.parquet", 900, 100)],
        }
    )
    assert befores(plan) == [
        ["file1.parquet", "file2.parquet"],
        ["file3.parquet", "file4.parquet"],
        ["file5.parquet", "file6.parquet"],
        ["file7.parquet", "file8.parquet"],
    ]
    assert [t.partition for t in plan] == [p0, p0, p1, p2]


def test_column_files_of_a_range_go_with_it_and_a_big_range_is_merged_alone() -> None:
    files = [
        meta("base0", 0, 10, seq=1),
        meta("a0", 0, 10, seq=3, cols=("a",)),
        meta("base1", 10, 10, 500, seq=2),
        meta("b1", 10, 10, 500, seq=4, cols=("b",)),
        meta("base2", 20, 10, seq=5),
    ]
    # range 1 weighs 1000 > 900: the bin before it is drained (base0 + a0), then range 1 alone
    plan = planner(900, 1, 2).plan({b"": files})
    assert befores(plan) == [["base0", "a0"], ["base1", "b1"]]
    assert [t.row_range for t in plan] == [(0, 9), (10, 19)]
    assert plan[0].to_dict() == {"files": 2, "first_row_id": 0, "row_count": 10}
    # compaction.min.file-num 5 (Paimon's default): a run of fewer files stays
    assert planner(10**9, 1, 5).plan({b"": files}) == DataEvolutionCompactCoordinator.from_options(
        {"data-evolution.enabled": "true"}
    ).plan({b"": files}) == [DataEvolutionCompactTask(b"", tuple(files))]
    assert planner(10**9, 1, 6).plan({b"": files}) == []


def test_overlapping_ranges_that_differ_are_refused() -> None:
    with pytest.raises(CorruptFileError, match="overlap without spanning the same row-id range"):
        planner(10**9, 1, 2).plan({b"": [meta("base", 0, 10), meta("odd", 5, 10, cols=("a",))]})
    with pytest.raises(UnsupportedTableKindError, match="blob"):
        planner(10**9, 1, 2).plan({b"": [meta("base.parquet", 0, 10), meta("pic.blob", 0, 10, cols=("pic",))]})


def test_options_and_contiguity() -> None:
    with pytest.raises(InvalidOptionError, match="materialize_deletion_vectors"):
        validate_options({"data-evolution.compaction.rewrite-row-ids": "true"})
    validate_options({"data-evolution.compaction.rewrite-row-ids": "false"})
    with pytest.raises(InvalidOptionError, match="data-evolution.enabled"):
        DataEvolutionCompactCoordinator.from_options({"row-tracking.enabled": "true"})
    assert check_contiguous_row_range([meta("b", 10, 5), meta("a", 0, 10)]) == (0, 14)
    with pytest.raises(CorruptFileError, match="rows 10..11 are missing"):
        check_contiguous_row_range([meta("a", 0, 10), meta("b", 12, 5)])
    with pytest.raises(CorruptFileError, match="contiguous"):
        DataEvolutionCompactTask(b"", (meta("a", 0, 10), meta("b", 12, 5)))


def entry(f: DataFileMeta, kind: FileKind = FileKind.ADD) -> ManifestEntry:
    return ManifestEntry(kind, b"", 0, -1, f)


def test_a_compaction_over_a_range_updated_meanwhile_conflicts() -> None:
    """Java ``checkRowIdRangeConflicts``: after the commit, overlapping files must span one range."""
    base0, base1 = meta("base0", 0, 10), meta("base1", 10, 10)
    merged = meta("merged", 0, 20, seq=1)
    update = meta("update", 0, 10, seq=2, cols=("a",))  # landed after our plan, over range 0 only
    compaction = [entry(base0, FileKind.DELETE), entry(base1, FileKind.DELETE), entry(merged)]
    check_no_conflicts([entry(base0), entry(base1)], compaction, snapshot_id=3, check_row_id_ranges=True)
    with pytest.raises(CommitConflictError, match="'MERGE INTO' and 'COMPACT'") as err:
        check_no_conflicts([entry(base0), entry(base1), entry(update)], compaction, snapshot_id=4, check_row_id_ranges=True)
    assert err.value.conflict == "row-id-range"
    # the same ranges overlapping (a column file over its base) are fine; blob files are not data files
    check_row_id_range_conflicts(
        [entry(base0), entry(update), entry(base1), entry(meta("x.blob", 3, 2))], snapshot_id=4
    )


def test_task_refuses_a_gap_and_writes_nothing(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("a", pa.int64())])
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    t = cat.create_table("db.t", schema, options=opts)
    t.write_arrow(pa.table({"id": [1, 2], "a": [3, 4]}, schema=schema))
    t.write_arrow(pa.table({"id": [5], "a": [6]}, schema=schema))
    files = [e.file for e in t.new_file_store_scan().live_entries(t.latest_snapshot())]
    assert sorted((f.first_row_id, f.row_count) for f in files) == [(0, 2), (2, 1)]
    part = t.partition_codec.encode([])
    bucket_dir = t.bucket_path(part, 0)
    before = set(os.listdir(bucket_dir))
    gap = [f for f in files if f.first_row_id == 0] + [f.copy(first_row_id=3) for f in files if f.first_row_id == 2]
    with pytest.raises(CorruptFileError, match="contiguous"):
        run_data_evolution_compact_task(t.store, part, gap)
    message = run_data_evolution_compact_task(t.store, part, files)
    (out,) = message.compact_after
    assert (out.first_row_id, out.row_count, out.write_cols) == (0, 3, None)
    assert (out.min_sequence_number, out.max_sequence_number) == (1, 2)
    assert set(os.listdir(bucket_dir)) == before | {out.file_name}  # the refused task wrote nothing
