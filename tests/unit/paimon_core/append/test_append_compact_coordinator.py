"""Unaware-bucket append compaction planning: Java's ``AppendCompactCoordinatorTest`` ported
case by case (same inputs, same expected task counts), plus properties of every plan."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_core.append import (
    COMPACT_AGE,
    REMOVE_AGE,
    AppendCompactConfig,
    AppendCompactCoordinator,
    AppendCompactTask,
    plan_unaware_bucket_compaction,
)
from paimon_core.deletionvectors import DeletionFile
from paimon_core.manifest.entries import EMPTY_ROW_BYTES, DataFileMeta, FileKind, ManifestEntry

MB = 1024 * 1024
TARGET = 256 * MB  # append default target-file-size
PARTITION = EMPTY_ROW_BYTES
_names = itertools.count()


def new_file(size: int, *, rows: int = 100, name: str | None = None) -> DataFileMeta:
    """Java test's ``newFile(fileSize)``: 100 rows, a unique name."""
    return DataFileMeta.new_level0(
        name or f"data-{next(_names)}.parquet",
        size,
        rows,
        value_stats=None,
        min_sequence_number=0,
        max_sequence_number=0,
        schema_id=0,
    )


def files(n: int, size: int) -> list[DataFileMeta]:
    return [new_file(size) for _ in range(n)]


def java_test_config(**changes: object) -> AppendCompactConfig:
    """The Java test table: defaults, ``compaction.min.file-num`` 3, deletion vectors enabled."""
    return AppendCompactConfig.from_options(
        {"compaction.min.file-num": "3", "deletion-vectors.enabled": "true", **{k: str(v) for k, v in changes.items()}}
    )


@pytest.fixture
def coordinator() -> AppendCompactCoordinator:
    return AppendCompactCoordinator(java_test_config())


def assert_tasks(c: AppendCompactCoordinator, fs: list[DataFileMeta], n: int) -> list[AppendCompactTask]:
    c.notify_new_files(PARTITION, fs)
    tasks = c.compact_plan()
    assert len(tasks) == n
    return tasks


def test_config_defaults_match_java() -> None:
    c = AppendCompactConfig.from_options({})
    assert c.target_file_size == 256 * MB
    assert c.compaction_file_size == int(256 * MB * 0.7)
    assert (c.open_file_cost, c.min_file_num, c.delete_ratio_threshold, c.file_num_limit) == (4 * MB, 5, 0.2, 100_000)
    assert not c.deletion_vectors_enabled and not c.force_rewrite_all_files
    c = AppendCompactConfig.from_options(
        {"target-file-size": "10 mb", "compaction.small-file-ratio": "0.5", "source.split.open-file-cost": "1 kb"}
    )
    assert (c.target_file_size, c.compaction_file_size, c.open_file_cost) == (10 * MB, 5 * MB, 1024)


# --- AppendCompactCoordinatorTest: the task-count cases --------------------------------------------
@pytest.mark.parametrize(
    ("java_test", "count", "size", "tasks"),
    [
        ("testForCompactPlan", 200, 0, 2),
        ("testNoCompactTask", 100, 2**63 - 1, 0),
        ("testMinSizeCompactTask", 100, TARGET // 3 + 1, 17),
        ("testFilterMiddleFile", 100, TARGET // 10 * 8, 0),
        ("testCompactGroupSplit2", 1089, TARGET // 5, 109),
    ],
)
def test_java_task_counts(coordinator: AppendCompactCoordinator, java_test: str, count: int, size: int, tasks: int) -> None:
    assert_tasks(coordinator, files(count, size), tasks)


def test_compact_group_split(coordinator: AppendCompactCoordinator) -> None:
    """testCompactGroupSplit: two rounds on the same coordinator."""
    assert_tasks(coordinator, files(1000, TARGET // 10), 56)
    assert_tasks(coordinator, files(1050, TARGET // 5), 105)


def test_eliminate_partition_coordinator(coordinator: AppendCompactCoordinator) -> None:
    coordinator.notify_new_files(PARTITION, files(1, 0))
    for _ in range(REMOVE_AGE):
        assert coordinator.compact_plan() == []
        assert len(coordinator.partitions) == 1
    assert coordinator.compact_plan() == []  # old enough: forgotten
    assert len(coordinator.partitions) == 0


def test_compact_less_file(coordinator: AppendCompactCoordinator) -> None:
    fs = files(2, 0)
    coordinator.notify_new_files(PARTITION, fs)
    for _ in range(COMPACT_AGE):
        assert coordinator.compact_plan() == []
        assert len(coordinator.partitions) == 1
    (task,) = coordinator.compact_plan()  # old enough: the two files are compacted anyway
    assert set(task.files) == set(fs)
    assert len(coordinator.partitions) == 0


def test_age_grow_up(coordinator: AppendCompactCoordinator) -> None:
    coordinator.notify_new_files(PARTITION, files(1, 0))
    for i in range(REMOVE_AGE):
        coordinator.compact_plan()
        assert len(coordinator.partitions) == 1
        assert coordinator.partitions[PARTITION].age == i + 1
    coordinator.notify_new_files(PARTITION, files(1, 0))  # new files reset the age
    assert len(coordinator.partitions) == 1
    assert coordinator.partitions[PARTITION].age == 0


def test_batch_scan_empty_table() -> None:
    """testBatchScanEmptyTable: Java throws EndOfScanException; Spark turns it into no task."""
    assert plan_unaware_bucket_compaction({}, target_file_size=TARGET, compaction_file_size=int(TARGET * 0.7)) == []


@pytest.mark.parametrize(
    ("java_test", "cardinality", "tasks"),
    [("testDeleteRatio", 21, 1), ("testDeleteRatioNoCompact", 11, 0), ("unknown cardinality", None, 1)],
)
def test_delete_ratio(java_test: str, cardinality: int | None, tasks: int) -> None:
    fs = files(2, TARGET)  # big files: only a high delete ratio makes one a candidate
    c = AppendCompactCoordinator(java_test_config())
    c.run([], deletion_files={PARTITION: {fs[0].file_name: DeletionFile("", 0, 0, cardinality)}})
    got = assert_tasks(c, fs, tasks)
    assert [t.files for t in got] == [(fs[0],)] * tasks  # a single file with a DV is compacted


def test_delete_ratio_merge_task() -> None:
    """testDeleteRatioMergeTask: 100 tiny files, each with a DV in its own index file: one task."""
    fs = files(100, 1)
    c = AppendCompactCoordinator(java_test_config())
    c.run([], deletion_files={PARTITION: {f.file_name: DeletionFile(str(i), 0, 0, 21) for i, f in enumerate(fs)}})
    (task,) = assert_tasks(c, fs, 1)
    assert set(task.files) == set(fs)


def test_deletion_vectors_ignored_when_disabled() -> None:
    fs = files(2, TARGET)
    dvs = {PARTITION: {fs[0].file_name: DeletionFile("idx", 0, 0, 90)}}
    kw = {"target_file_size": TARGET, "compaction_file_size": int(TARGET * 0.7), "min_file_num": 1}
    assert plan_unaware_bucket_compaction({PARTITION: fs}, **kw) == []  # type: ignore[arg-type]
    assert plan_unaware_bucket_compaction({PARTITION: fs}, deletion_files=dvs, **kw) == [  # type: ignore[arg-type]
        AppendCompactTask(PARTITION, (fs[0],))
    ]


def test_dv_groups_stay_together_and_rest_packs_separately() -> None:
    """Files sharing a DV index file go to one task; files without a DV never join it."""
    a, b, c, d = files(4, MB)
    dvs = {PARTITION: {a.file_name: DeletionFile("idx-1", 1, 1, 1), b.file_name: DeletionFile("idx-1", 9, 1, 1)}}
    got = plan_unaware_bucket_compaction(
        {PARTITION: [a, c, b, d]}, target_file_size=TARGET, compaction_file_size=TARGET, min_file_num=2, deletion_files=dvs
    )
    assert [set(t.files) for t in got] == [{a, b}, {c, d}]


# --- streaming: run() over new snapshots -----------------------------------------------------------
def add(f: DataFileMeta, partition: bytes = PARTITION) -> ManifestEntry:
    return ManifestEntry(FileKind.ADD, partition, 0, -1, f)


def test_run_without_candidates_does_not_age() -> None:
    c = AppendCompactCoordinator(java_test_config())
    assert c.run([add(f) for f in files(2, 0)]) == []
    assert c.partitions[PARTITION].age == 1
    for _ in range(20):  # Java: no new files, no plan, no ageing
        assert c.run([add(new_file(TARGET))]) == []
        assert c.run([ManifestEntry(FileKind.DELETE, PARTITION, 0, -1, new_file(0))]) == []
    assert c.partitions[PARTITION].age == 1


def test_run_ages_partitions_on_runs_with_new_files_elsewhere() -> None:
    c = AppendCompactCoordinator(java_test_config())
    leftovers = files(2, 0)
    c.run([add(f) for f in leftovers])
    tasks: list[AppendCompactTask] = []
    for i in range(COMPACT_AGE):
        tasks = c.run([add(new_file(0), partition=bytes([i + 1]) * 12)])
    assert [t.files for t in tasks] == [tuple(leftovers)]


def test_run_respects_file_num_limit() -> None:
    c = AppendCompactCoordinator(java_test_config(**{"compaction.file-num-limit": 4, "compaction.min.file-num": 100}))
    fs = files(10, 0)
    c.run([add(f) for f in fs])
    assert c.restored_files() == set(fs[:4])
    c.run([])
    c.run([])
    assert c.restored_files() == set(fs)


# --- properties -------------------------------------------------------------------------------------
SIZES = st.integers(min_value=0, max_value=3 * 64)
PARTITIONS = st.dictionaries(
    st.binary(min_size=1, max_size=2), st.lists(SIZES, max_size=40), min_size=1, max_size=3
)


@given(parts=PARTITIONS, min_file_num=st.integers(1, 8), open_cost=st.integers(0, 8), with_dvs=st.booleans())
def test_plan_properties(parts: dict[bytes, list[int]], min_file_num: int, open_cost: int, with_dvs: bool) -> None:
    target, small = 64, 45
    by_partition = {p: [new_file(s) for s in sizes] for p, sizes in parts.items()}
    dvs = None
    if with_dvs:  # every third file has a DV in one of two index files, half of them over the ratio
        dvs = {
            p: {f.file_name: DeletionFile(f"idx-{i % 2}", 0, 0, 50 if i % 2 else 5) for i, f in enumerate(fs) if i % 3 == 0}
            for p, fs in by_partition.items()
        }
    tasks = plan_unaware_bucket_compaction(
        by_partition,
        target_file_size=target,
        compaction_file_size=small,
        open_file_cost=open_cost,
        min_file_num=min_file_num,
        deletion_files=dvs,
    )
    seen: set[DataFileMeta] = set()
    for t in tasks:
        assert t.files and not seen & set(t.files), "tasks are disjoint"
        seen |= set(t.files)
        for f in t.files:  # every file is a candidate of the task's partition
            assert f in by_partition[t.partition]
            d = (dvs or {}).get(t.partition, {}).get(f.file_name)
            assert f.file_size < small or (d is not None and (d.cardinality or 0) > f.row_count * 0.2)
        weight = sum(f.file_size + open_cost for f in t.files)
        if dvs is None:  # a bin is full (>1 file, 2 × target) or the leftover of >= min_file_num files
            assert (len(t.files) > 1 and weight >= 2 * target) or len(t.files) >= min_file_num
            # a full bin closes as soon as it is full: without its largest file it was not
            rest = sorted(t.files, key=lambda f: f.file_size)[:-1]
            if weight >= 2 * target and len(t.files) > 2:
                assert sum(f.file_size + open_cost for f in rest) < 2 * target
    if dvs is None:
        for fs in by_partition.values():  # nothing left that would still fill a bin
            left = sorted((f for f in fs if f.file_size < small and f not in seen), key=lambda f: f.file_size)
            assert len(left) < min_file_num
            assert not (len(left) > 1 and sum(f.file_size + open_cost for f in left) >= 2 * target)


@pytest.mark.parametrize(("sizes", "tasks"), [((96, 96), 1), ((96, 95), 0), ((199,), 0), ((1, 1, 1, 1), 0), ((1,) * 5, 1)])
def test_bin_boundaries(sizes: tuple[int, ...], tasks: int) -> None:
    """A bin closes at exactly 2 × target including the open-file cost (4 each here), needs
    more than one file, and a leftover needs min.file-num (5) files."""
    fs = [new_file(s) for s in sizes]
    got = plan_unaware_bucket_compaction({PARTITION: fs}, target_file_size=100, compaction_file_size=200, open_file_cost=4)
    assert len(got) == tasks
