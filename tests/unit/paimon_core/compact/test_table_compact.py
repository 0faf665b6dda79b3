"""Dedicated compaction of whole tables (``table.compact``): rows kept, files and levels as Java
lays them out, one COMPACT commit, idempotent retries, concurrent writers and compactions."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.manifest.entries import FileSource
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.compact_task import CompactTask
from paimon_core.operation.compact.table_compact import TableCompact, local_executor
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.store import FileStore
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def _rows(ids: Sequence[int], v: int, dt: str = "a") -> pa.Table:
    return pa.table({"id": list(ids), "dt": [dt] * len(ids), "v": [v] * len(ids)}, schema=SCHEMA)


def _pk(catalog: FileSystemCatalog, name: str = "db.t", **options: str) -> FileStoreTable:
    opts = {"bucket": "2", "write-only": "true", **options}  # a dedicated job compacts (writers do not)
    return catalog.create_table(name, SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)


def _delete(t: FileStoreTable, ids: Sequence[int], dt: str = "a") -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(pa.table({"id": list(ids), "dt": [dt] * len(ids)}))
    b.new_commit().commit(w.prepare_commit())


def _state(t: FileStoreTable) -> list[tuple[int, str, int]]:
    rows = t.to_arrow().sort_by([("dt", "ascending"), ("id", "ascending")])
    return list(zip(rows["id"].to_pylist(), rows["dt"].to_pylist(), rows["v"].to_pylist(), strict=True))


def _history(t: FileStoreTable) -> dict[int, list[tuple[int, str, int]]]:
    latest = t.latest_snapshot()
    assert latest is not None
    return {i: _state(t.copy({"scan.snapshot-id": str(i)})) for i in range(1, latest.id + 1)}


def _files(t: FileStoreTable) -> list[tuple[str, int, int]]:
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return sorted((t.partition_path(e.partition), e.bucket, e.file.level) for e in entries)


def _fill(t: FileStoreTable, commits: int = 6) -> None:
    for i in range(commits):
        t.write_arrow(_rows(range(i * 10, i * 10 + 40), i))
        t.write_arrow(_rows(range(i * 5, i * 5 + 8), 100 + i, dt="b"))
    _delete(t, [1, 2, 3, 41])


def test_full_compaction_keeps_every_snapshot_and_writes_one_compact_snapshot(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    _fill(t)
    t.maintenance.create_tag("before")
    history = _history(t)
    plan = t.maintenance.compact(dry_run=True)
    assert plan.snapshot_id is None and plan.tasks == 4 and t.latest_snapshot().id == max(history)  # type: ignore[union-attr]
    assert {p["output_level"] for p in plan.plan} == {5} and all(p["input_levels"] == [0] for p in plan.plan)

    result = t.maintenance.compact()
    assert result.snapshot_id == max(history) + 1 and result.snapshot_ids == (result.snapshot_id,)
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT and snap.delta_record_count < 0
    assert _state(t) == history[max(history)]
    assert _history(t) == {**history, snap.id: history[max(history)]}  # older snapshots read as before
    assert _state(t.copy({"scan.tag-name": "before"})) == history[max(history)]
    # each bucket is one sorted run at the max level, deletes dropped, files marked COMPACT
    live = t.new_file_store_scan().live_entries(snap)
    assert {e.file.level for e in live} == {5}
    assert len({(e.partition, e.bucket) for e in live}) == len(live) == 4
    assert all(e.file.delete_row_count == 0 and e.file.file_source == FileSource.COMPACT for e in live)
    assert result.files_written == 4 and result.rows_written == len(_state(t)) == snap.total_record_count
    assert [b["sorted_runs_after"] for b in result.buckets] == [1, 1, 1, 1]
    assert all(b["sorted_runs_before"] > 1 for b in result.buckets)
    # nothing left to do
    again = t.maintenance.compact()
    assert again.snapshot_id is None and again.tasks == 0


def test_minor_compaction_follows_the_universal_strategy(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog, bucket="1", **{"num-sorted-run.compaction-trigger": "3"})
    for i in range(2):
        t.write_arrow(_rows(range(i, i + 10), i))
    assert t.maintenance.compact(compact_strategy="minor").tasks == 0  # 2 runs < trigger 3
    t.write_arrow(_rows(range(5, 20), 7))
    want = _state(t)
    result = t.maintenance.compact(compact_strategy="minor")
    assert result.tasks == 1 and _state(t) == want
    levels = [lvl for _, _, lvl in _files(t)]
    assert levels == [3]  # num-levels = trigger + 1: everything picked goes to the max level (3)


def test_retry_with_the_same_commit_user_and_identifier_is_a_no_op(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    _fill(t, commits=3)
    first = t.maintenance.compact(commit_user="airflow-run-1", commit_identifier=7)
    assert first.snapshot_id is not None
    files = _files(t)
    second = t.maintenance.compact(commit_user="airflow-run-1", commit_identifier=7)
    assert second.already_committed and second.snapshot_id is None and second.tasks == 0
    assert _files(t) == files and t.latest_snapshot().id == first.snapshot_id  # type: ignore[union-attr]


def test_a_concurrent_append_is_kept(catalog: FileSystemCatalog) -> None:
    """A writer commits to the same buckets while the compaction runs: its rows stay, no conflict."""
    t = _pk(catalog)
    _fill(t, commits=3)
    run = local_executor(1)

    def executor(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = run(store, tasks)
        t.write_arrow(_rows([1000, 1001, 5], 999))
        return out

    want = _state(t)
    result = TableCompact(t.store, executor=executor).run(CompactRequest())
    assert result.conflict_rounds == 0
    got = _state(t)
    assert (1000, "a", 999) in got and (5, "a", 999) in got
    assert len(got) == len(want) + 2


def test_two_compactions_at_once_end_in_one_retry_and_the_same_rows(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    _fill(t, commits=4)
    want = _state(t)
    run = local_executor(1)
    raced: list[int] = []

    def executor(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = run(store, tasks)
        if not raced:  # another job compacts partition dt=b first
            raced.append(t.maintenance.compact(partitions="dt=b").snapshot_id or 0)
        return out

    result = TableCompact(t.store, executor=executor).run(CompactRequest())
    assert raced and raced[0] > 0 and result.conflict_rounds == 1
    assert _state(t) == want
    # every bucket ends as one file at the max level; the raced buckets were re-planned (nothing left)
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert {e.file.level for e in live} == {5} and len(live) == 4
    assert result.tasks == 2  # dt=a's two buckets; dt=b was already compacted by the other job


def test_conflicts_beyond_the_bound_fail_cleanly(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog, bucket="1")
    _fill(t, commits=3)
    run = local_executor(1)
    rounds: list[int] = []

    def executor(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = run(store, tasks)
        rounds.append(len(tasks))
        t.maintenance.compact()  # another job compacts the buckets under us ...
        t.write_arrow(_rows([7, 8], 70 + len(rounds)))  # ... and a writer adds more, every round
        return out

    with pytest.raises(CommitConflictError, match="File deletion conflicts detected"):
        TableCompact(t.store, executor=executor, max_conflict_rounds=2).run(CompactRequest())
    assert len(rounds) == 3  # the first try and two re-plans
    got = {(i, dt): v for i, dt, v in _state(t)}
    assert got[(7, "a")] == got[(8, "a")] == 73 and len(got) == len(_state(t))
    # the failed job deleted everything it wrote: only the other job's and the writer's files exist
    assert unreferenced_files(t) == set()


@pytest.mark.parametrize(
    ("engine", "options"),
    [
        ("deduplicate", {}),
        ("partial-update", {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}),
        ("aggregation", {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}),
        ("first-row", {"merge-engine": "first-row"}),
    ],
)
def test_every_merge_engine_reads_the_same_after_compaction(
    catalog: FileSystemCatalog, engine: str, options: dict[str, str]
) -> None:
    t = _pk(catalog, bucket="1", **options)
    for i in range(5):
        t.write_arrow(_rows(range(i, i + 20), i + 1))
    if engine not in ("first-row", "aggregation"):
        _delete(t, [3, 4])
    # first-row tables read only compacted files (Java's batchScanSkipLevel0): compare the merge result
    want = _state(t.copy({})) if engine != "first-row" else None
    t.maintenance.compact()
    got = _state(t)
    if want is not None:
        assert got == want
    else:
        assert got == [(i, "a", 1 if i < 20 else i - 18) for i in range(24)]


def test_unaware_append_small_files_are_merged(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    t = catalog.create_table("db.a", schema, partition_keys=["dt"], options={"target-file-size": "64 kb", "source.split.open-file-cost": "1 b"})
    for i in range(12):
        t.write_arrow(pa.table({"id": list(range(i * 100, i * 100 + 100)), "dt": ["x", "y"] * 50}, schema=schema))
    want = sorted(t.to_arrow()["id"].to_pylist())
    result = t.maintenance.compact()
    assert result.tasks == 2 and result.files_read == 24 and result.files_written == 2
    assert sorted(t.to_arrow()["id"].to_pylist()) == want
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT


def test_bad_arguments_name_the_problem_and_change_nothing(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    _fill(t, commits=2)
    latest = t.latest_snapshot()
    with pytest.raises(InvalidArgumentError, match="partition columns"):
        t.maintenance.compact(where="id > 3")
    with pytest.raises(InvalidArgumentError, match="non-partition column"):
        t.maintenance.compact(partitions="id=3")
    with pytest.raises(InvalidArgumentError, match="compact_strategy"):
        t.maintenance.compact(compact_strategy="major")
    with pytest.raises(InvalidArgumentError, match="cannot be used together"):
        t.maintenance.compact(partitions="dt=a", where="dt = 'a'")
    dyn = catalog.create_table("db.d", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"])
    with pytest.raises(InvalidArgumentError, match="fixed-bucket"):
        dyn.maintenance.compact(buckets=[0])
    assert t.latest_snapshot() == latest


def test_partition_filters_and_idle_time(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    _fill(t, commits=2)
    assert {p["partition"] for p in t.maintenance.compact(partitions="dt=b", dry_run=True).plan} == {"dt=b"}
    assert {p["partition"] for p in t.maintenance.compact(where="dt <> 'b'", dry_run=True).plan} == {"dt=a"}
    assert {p["bucket"] for p in t.maintenance.compact(buckets=[1], dry_run=True).plan} == {1}
    assert t.maintenance.compact(partition_idle_time="1 d", dry_run=True).plan == ()  # everything was just written


def test_partition_idle_time_compares_creation_times_as_epoch_millis(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Files store their creation time as local wall-clock millis (Java's _CREATION_TIME); the idle
    cut-off compares it as epoch millis (Java's creationTimeEpochMillis) with the injected clock."""
    import time

    from paimon_core.utils.clock import ManualClock

    clock = ManualClock(int(time.time() * 1000))
    cat = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    cat.create_database("db")
    t = _pk(cat)
    t.write_arrow(_rows(range(10), 1))
    t.write_arrow(_rows(range(10), 2))
    clock.advance(2 * 3_600_000)  # two hours later, nothing new
    planned = {p["partition"] for p in t.maintenance.compact(partition_idle_time="1 h", dry_run=True).plan}
    assert planned == {"dt=a"}  # idle for 2 h: due
    assert t.maintenance.compact(partition_idle_time="3 h", dry_run=True).plan == ()  # not idle for 3 h yet


def test_append_table_with_deletion_vectors_compacts_files_with_many_deletes(catalog: FileSystemCatalog) -> None:
    """A file whose vector deletes more than compaction.delete-ratio-threshold is rewritten even when
    it is not small; its deleted rows are gone and the rows of other files keep their vectors."""
    from tests.unit.paimon_core.append.test_append_compact_deletion_vectors import commit_index, ids

    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = catalog.create_table("db.dv", schema, options={"deletion-vectors.enabled": "true", "target-file-size": "1 kb",
                                                        "compaction.min.file-num": "2"})
    for i in range(3):
        t.write_arrow(pa.table({"id": pa.array([100 * i + k for k in range(100)], pa.int64()), "v": ["x" * 20] * 100}))
    entries = sorted(t.new_file_store_scan().live_entries(t.latest_snapshot()), key=lambda e: e.file.min_sequence_number)
    commit_index(t, entries[0], {entries[0].file.file_name: list(range(50))})  # half of the first file deleted
    before = ids(t)
    plan = t.maintenance.compact(dry_run=True).plan
    assert plan and entries[0].file.file_name not in {e.file.file_name for e in entries[1:]}
    result = t.maintenance.compact()
    assert ids(t) == before and result.files_read >= 1
    live = {e.file.file_name for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    assert entries[0].file.file_name not in live
