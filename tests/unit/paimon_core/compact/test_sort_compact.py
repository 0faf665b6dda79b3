"""Sort compaction (order / zorder / hilbert) of unaware-bucket append tables: rows identical,
files narrow on the sort columns and even in size, one COMPACT commit of exactly the files read
(a file appended meanwhile stays), conflicts re-planned within bounds, refusals as Paimon's,
and pypaimon / pypaimon-rust read the result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.sort_compact import SortCompaction, SortCompactTask, local_sort_executor
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.sort.table_sorter import SortSpec
from paimon_core.store import FileStore
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

ROWS_PER_COMMIT = 2000


def _batch(seed: int, dt: str = "a", n: int = ROWS_PER_COMMIT) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(seed * 100_000, seed * 100_000 + n)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "dt": pa.array([dt] * n, pa.string()),
        "x": pa.array(rng.integers(0, 1000, n), pa.int32()),
        "z": pa.array(rng.integers(0, 1000, n), pa.int64()),
        "y": pa.array(rng.uniform(-1, 1, n), pa.float64()),
        "s": pa.array([None if i % 17 == 0 else f"k{int(v):04d}" for i, v in enumerate(rng.integers(0, 5000, n))]),
    })  # fmt: skip


def _table(catalog: FileSystemCatalog, name: str = "db.s", **options: str) -> FileStoreTable:
    return catalog.create_table(name, _batch(0).schema, partition_keys=["dt"], options={"write-only": "true", **options})


def _fill(t: FileStoreTable, commits: int = 8) -> None:
    for i in range(commits):
        t.write_arrow(_batch(i + 1, "a"))
        if i % 2 == 0:
            t.write_arrow(_batch(i + 50, "b", 500))


def _state(t: FileStoreTable) -> pa.Table:
    return t.to_arrow().sort_by("id").select(["id", "dt", "x", "z", "y", "s"])


def _live(t: FileStoreTable, dt: str | None = None) -> list[DataFileMeta]:
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return [e.file for e in entries if dt is None or t.partition_path(e.partition) == f"dt={dt}"]


def _overlap(files: Sequence[DataFileMeta], t: FileStoreTable, col: str) -> float:
    """Mean number of files whose [min, max] of ``col`` contains a value (1 = perfectly sorted)."""
    from paimon_core.data.binary_row import deserialize_binary_row

    types = [f.type for f in t.schema.fields]
    idx = [f.name for f in t.schema.fields].index(col)
    spans: list[tuple[float, float]] = []
    for f in files:
        assert f.value_stats is not None and f.value_stats_cols is None
        lo = deserialize_binary_row(f.value_stats.min_values, types)[idx]
        hi = deserialize_binary_row(f.value_stats.max_values, types)[idx]
        assert isinstance(lo, (int, float)) and isinstance(hi, (int, float))
        spans.append((lo, hi))
    probes = np.linspace(min(s[0] for s in spans), max(s[1] for s in spans), 50)
    return float(np.mean([sum(lo <= p <= hi for lo, hi in spans) for p in probes]))


@pytest.mark.parametrize(("strategy", "cols"), [("order", "x,z"), ("zorder", "x,z"), ("hilbert", "x,z")])
def test_sort_keeps_rows_and_narrows_files(catalog: FileSystemCatalog, strategy: str, cols: str) -> None:
    t = _table(catalog, **{"target-file-size": "24kb"})
    _fill(t)
    want = _state(t)
    before_files = _live(t, "a")
    before_overlap = {c: _overlap(before_files, t, c) for c in ("x", "z")}
    before_id = t.latest_snapshot().id  # type: ignore[union-attr]

    result = SortCompaction(t.store, SortSpec.of(strategy, cols, t.options.options)).run(CompactRequest(partitions=({"dt": "a"},)))
    snap = t.latest_snapshot()
    assert snap is not None and snap.id == before_id + 1 and snap.commit_kind == CommitKind.COMPACT
    assert result.snapshot_id == snap.id and result.tasks == 1 and result.files_read == len(before_files)
    assert _state(t).equals(want)
    assert _state(t.copy({"scan.snapshot-id": str(before_id)})).equals(want)  # the old snapshot reads as before
    after = _live(t, "a")
    assert {f.file_name for f in after}.isdisjoint(f.file_name for f in before_files)
    assert all(f.file_source == FileSource.COMPACT for f in after)
    assert len(_live(t, "b")) == 4  # the other partition is untouched
    overlap = {c: _overlap(after, t, c) for c in ("x", "z")}
    assert len(after) >= 4 and overlap["x"] < before_overlap["x"] * 0.6, (overlap, before_overlap)
    if strategy != "order":  # a curve narrows both columns
        assert overlap["z"] < before_overlap["z"] * 0.8, (overlap, before_overlap)
    # even files: every range gets the same share of input bytes
    sizes = sorted(f.file_size for f in after)
    assert sizes[-1] / sizes[0] < 1.6, sizes
    if strategy == "order":  # x-ranges of files do not overlap beyond the edges
        assert overlap["x"] < 1.6


def test_peers_read_the_sorted_table(local_warehouse: str, pypaimon: Any) -> None:
    from peers import Peer  # type: ignore[import-not-found]

    catalog = FileSystemCatalog(local_warehouse)
    catalog.create_database("db")
    t = _table(catalog, **{"target-file-size": "32kb"})
    _fill(t, commits=4)
    want = _state(t)
    SortCompaction(t.store, SortSpec.of("zorder", "x,s", {})).run()
    assert _state(t).equals(want)
    warehouse = local_warehouse
    with Peer("rust") as rust:
        for peer in (pypaimon, rust):
            got = peer.read(warehouse, "db.s").select(["id", "dt", "x", "z", "y", "s"]).sort_by("id")
            assert got.cast(want.schema).equals(want), peer


def test_a_file_appended_after_planning_stays(catalog: FileSystemCatalog) -> None:
    """The concurrent writer commits between planning and the COMPACT commit (PR 7595's race)."""
    t = _table(catalog)
    _fill(t, commits=4)
    run = local_sort_executor()
    late = _batch(99, "a", 300)

    def executor(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        out = run(store, spec, tasks)
        t.write_arrow(late)  # same partition, after the planned snapshot
        return out

    want = pa.concat_tables([_state(t), late.select(["id", "dt", "x", "z", "y", "s"])]).sort_by("id")
    result = SortCompaction(t.store, SortSpec.of("zorder", "x,y", {}), executor=executor).run()
    assert result.conflict_rounds == 0
    assert _state(t).equals(want)
    late_ids = set(late["id"].to_pylist())
    assert late_ids <= set(_state(t)["id"].to_pylist())


def test_a_conflict_replans_and_a_persistent_one_fails_cleanly(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    _fill(t, commits=4)
    want = _state(t)
    run = local_sort_executor()
    raced: list[int] = []

    def executor(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        out = run(store, spec, tasks)
        if not raced:  # another job rewrites partition a first: the files this one read are gone
            raced.append(SortCompaction(t.store, SortSpec.of("order", "y", {})).run(CompactRequest(partitions=({"dt": "a"},))).snapshot_id or 0)
        return out

    result = SortCompaction(t.store, SortSpec.of("zorder", "x,y", {}), executor=executor).run()
    assert raced and result.conflict_rounds == 1 and _state(t).equals(want)
    assert unreferenced_files(t) == set()  # the first attempt's files were deleted

    rounds: list[int] = []

    def always(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        out = run(store, spec, tasks)
        rounds.append(1)
        SortCompaction(t.store, SortSpec.of("order", "y", {})).run()
        t.write_arrow(_batch(200 + len(rounds), "a", 10))
        return out

    referenced_before = unreferenced_files(t)
    with pytest.raises(CommitConflictError, match="File deletion conflicts detected"):
        SortCompaction(t.store, SortSpec.of("hilbert", "x,y", {}), executor=always, max_conflict_rounds=2).run()
    assert len(rounds) == 3
    assert unreferenced_files(t) == referenced_before  # everything the failed job wrote is deleted
    assert _state(t).num_rows == want.num_rows + 30


def test_refusals_name_the_problem_and_change_nothing(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    _fill(t, commits=2)
    snap = t.latest_snapshot()
    spec = SortSpec.of("zorder", "x,y", {})
    with pytest.raises(InvalidArgumentError, match="partition_idle_time"):
        SortCompaction(t.store, spec).run(CompactRequest(partition_idle_time_ms=1000))
    with pytest.raises(InvalidArgumentError, match="should not contain partition cols"):
        SortCompaction(t.store, SortSpec.of("order", "dt,x", {}))
    with pytest.raises(InvalidArgumentError, match="Can't find column"):
        SortCompaction(t.store, SortSpec.of("order", "nope", {}))
    fixed = catalog.create_table("db.f", _batch(0).schema, options={"bucket": "2", "bucket-key": "id"})
    with pytest.raises(InvalidArgumentError, match="only support unaware-bucket"):
        SortCompaction(fixed.store, spec)
    pk = catalog.create_table("db.pk", _batch(0).schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                              options={"bucket": "-1"})  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="primary-key table"):
        SortCompaction(pk.store, spec)
    clustered = _table(catalog, "db.c", **{"clustering.incremental": "true", "clustering.columns": "x"})
    with pytest.raises(InvalidArgumentError, match="incremental clustering"):
        SortCompaction(clustered.store, spec)
    assert t.latest_snapshot() == snap
    # dry run: the plan, nothing written
    plan = SortCompaction(t.store, spec).run(dry_run=True)
    assert plan.snapshot_id is None and plan.tasks == 2 and t.latest_snapshot() == snap
    assert unreferenced_files(t) == set()


def test_retry_with_same_user_and_identifier_is_a_no_op(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    _fill(t, commits=2)
    first = SortCompaction(t.store, SortSpec.of("order", "x", {}), commit_user="job").run(commit_identifier=7)
    again = SortCompaction(t.store, SortSpec.of("order", "x", {}), commit_user="job").run(commit_identifier=7)
    assert first.snapshot_id is not None and again.already_committed and t.latest_snapshot().id == first.snapshot_id  # type: ignore[union-attr]


def _commit_vectors(t: FileStoreTable, partition: bytes, deletes: dict[str, list[int]]) -> None:
    """One DV index file (Java's layout) holding a vector per data file of ``partition``."""
    import struct
    import zlib

    from pyroaring import BitMap

    from paimon_core.deletionvectors import BITMAP32_MAGIC
    from paimon_core.index.index_path_factory import index_file_path
    from paimon_core.manifest.entries import DeletionVectorMeta, IndexFileMeta
    from paimon_core.table.commit_message import CommitMessage

    out = bytearray(b"\x01")
    ranges = []
    for name, positions in deletes.items():
        data = struct.pack(">I", BITMAP32_MAGIC) + BitMap(positions).serialize()
        ranges.append(DeletionVectorMeta(name, len(out), len(data), len(positions)))
        out += struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    name = t.paths.new_index_file_name()
    meta = IndexFileMeta("DELETION_VECTORS", name, len(out), len(ranges), tuple(ranges))
    t.file_io.write_bytes(index_file_path(t, partition, 0, meta), bytes(out))
    t.new_file_store_commit("dv").commit([CommitMessage(partition, 0, -1, new_index_files=(meta,))], 1)


def test_deletion_vectors_are_applied_and_their_index_dropped(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"deletion-vectors.enabled": "true"})
    _fill(t, commits=3)
    entries = [e for e in t.new_file_store_scan().live_entries(t.latest_snapshot()) if t.partition_path(e.partition) == "dt=a"]
    _commit_vectors(t, entries[0].partition, {entries[0].file.file_name: [0, 5, 7], entries[1].file.file_name: [1]})
    want = _state(t)
    assert want.num_rows == 3 * ROWS_PER_COMMIT + 2 * 500 - 4
    result = SortCompaction(t.store, SortSpec.of("zorder", "x,z", {})).run(CompactRequest(partitions=({"dt": "a"},)))
    assert result.rows_written == 3 * ROWS_PER_COMMIT - 4 and _state(t).equals(want)
    from paimon_core.append.append_deletion_index import DeletionIndex

    assert DeletionIndex.load(t.store, entries[0].partition, 0).deletion_files == {}  # the vectors went with their files
    assert unreferenced_files(t) == set()


def test_only_the_partition_that_changed_is_sorted_again(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    _fill(t, commits=4)
    want = _state(t)
    run = local_sort_executor()
    calls: list[list[str]] = []

    def executor(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        calls.append([x.partition_name for x in tasks])
        out = run(store, spec, tasks)
        if len(calls) == 1:  # another job sorts partition b under us
            SortCompaction(t.store, SortSpec.of("order", "y", {})).run(CompactRequest(partitions=({"dt": "b"},)))
        return out

    result = SortCompaction(t.store, SortSpec.of("zorder", "x,z", {}), executor=executor).run()
    assert calls == [["dt=a", "dt=b"], ["dt=b"]] and result.conflict_rounds == 1
    assert _state(t).equals(want) and unreferenced_files(t) == set()


@pytest.mark.parametrize("range_strategy", ["size", "quantity"])
def test_a_partition_beyond_the_memory_budget_is_sorted_by_sampled_ranges(
    catalog: FileSystemCatalog, tmp_path: Any, range_strategy: str
) -> None:
    """The spill path (what the Spark job does on executors): sampled boundaries, rows split by
    range into spill files, each range sorted and written alone; no spill file is left."""
    import tempfile

    t = _table(catalog, **{"target-file-size": "24kb", "sort-compaction.range-strategy": range_strategy,
                           "sort-compaction.local-sample.magnification": "100"})  # fmt: skip
    _fill(t)
    want = _state(t)
    before = _live(t, "a")
    spill = tmp_path / "spill"
    spill.mkdir()
    old = tempfile.tempdir
    tempfile.tempdir = str(spill)
    try:
        spec = SortSpec.of("order", "x,z", t.options.options)
        result = SortCompaction(t.store, spec, executor=local_sort_executor(budget=1)).run(CompactRequest(partitions=({"dt": "a"},)))
    finally:
        tempfile.tempdir = old
    assert _state(t).equals(want) and list(spill.iterdir()) == []
    after = _live(t, "a")
    assert result.files_read == len(before) and len(after) >= 4
    assert _overlap(after, t, "x") < 1.6  # ranges of x do not overlap beyond their edges
    sizes = sorted(f.row_count if range_strategy == "quantity" else f.file_size for f in after)
    assert sizes[-1] / sizes[0] < 1.6, sizes  # sampled ranges: even within sampling error
    assert unreferenced_files(t) == set()
