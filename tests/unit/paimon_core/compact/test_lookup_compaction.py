"""Lookup compaction of primary-key tables (Java ``LookupMergeTreeCompactRewriter``): deletion
vectors produced by compaction make level-0 rows readable, and ``changelog-producer = lookup``
yields the changelog of each compaction; both checked against a dict model over random rounds."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append.append_deletion_index import DeletionIndex
from paimon_core.deletionvectors import read_deletion_vector
from paimon_core.exceptions import CommitConflictError, InvalidOptionError
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64()), ("s", pa.string())])
Model = dict[int, tuple[int, str]]


def _table(catalog: FileSystemCatalog, name: str = "db.t", **options: str) -> FileStoreTable:
    opts = {"bucket": "1", "write-only": "true", **options}
    return catalog.create_table(name, SCHEMA, primary_keys=["k"], options=opts)


def _write(t: FileStoreTable, upserts: Sequence[tuple[int, int, str]], deletes: Sequence[int] = ()) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    if upserts:
        w.write_arrow(pa.table({"k": [u[0] for u in upserts], "v": [u[1] for u in upserts], "s": [u[2] for u in upserts]}, schema=SCHEMA))
    if deletes:
        w.delete_arrow(pa.table({"k": list(deletes)}, schema=pa.schema([pa.field("k", pa.int64(), nullable=False)])))
    b.new_commit().commit(w.prepare_commit())


def _state(t: FileStoreTable, snapshot_id: int | None = None) -> Model:
    tt = t if snapshot_id is None else t.copy({"scan.snapshot-id": str(snapshot_id)})
    rows = tt.to_arrow()
    return {k: (v, s) for k, v, s in zip(rows["k"].to_pylist(), rows["v"].to_pylist(), rows["s"].to_pylist(), strict=True)}


def _changelog(t: FileStoreTable, snapshot_id: int) -> list[tuple[str, int, int, str]]:
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    units = scan.plan_delta(t.snapshot_manager.snapshot(snapshot_id))
    if units is None:
        return []
    got = TableRead(t, row_kind=True).to_arrow(units)
    return list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), got["v"].to_pylist(), got["s"].to_pylist(), strict=True))


def _expected_changelog(before: Model, after: Model, touched: set[int], *, dedup: bool) -> list[tuple[str, int, int, str]]:
    out: list[tuple[str, int, int, str]] = []
    for k in sorted(touched):
        b, a = before.get(k), after.get(k)
        if b is None and a is not None:
            out.append(("+I", k, *a))
        elif b is not None and a is None:
            out.append(("-D", k, *b))
        elif b is not None and a is not None and not (dedup and a == b):
            out += [("-U", k, *b), ("+U", k, *a)]
    return out


def _round(rnd: random.Random, model: Model, r: int, n_keys: int) -> tuple[list[tuple[int, int, str]], list[int]]:
    upserts = [(k, r * 1000 + k, f"r{r}") for k in rnd.sample(range(n_keys), n_keys // 3)]
    deletes = rnd.sample(range(n_keys), n_keys // 10)
    return upserts, deletes


def _apply(model: Model, upserts: Sequence[tuple[int, int, str]], deletes: Sequence[int]) -> None:
    for k, v, s in upserts:
        model[k] = (v, s)
    for k in deletes:  # written after the upserts of the same commit: the delete wins
        model.pop(k, None)


def _index(t: FileStoreTable) -> DeletionIndex:
    """The deletion vectors of the (one) bucket of the unpartitioned table."""
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return DeletionIndex.load(t.store, entries[0].partition, 0)


def _dv_cardinality(t: FileStoreTable) -> int:
    return sum(read_deletion_vector(t.file_io, d).cardinality for d in _index(t).deletion_files.values())


@pytest.mark.parametrize("seed", [1, 2])
def test_dv_table_randomized_rounds_against_a_model(catalog: FileSystemCatalog, seed: int) -> None:
    """Rounds of writes (upserts, deletes, several commits) and minor or full compactions; the
    compacted table equals the model, every earlier snapshot reads as before, and level-0 rows
    stay invisible until compacted (Java's DV read skips level 0)."""
    t = _table(catalog, **{"deletion-vectors.enabled": "true", "num-levels": "4"})
    rnd = random.Random(seed)
    model: Model = {}
    for r in range(8):
        compacted = dict(model)
        for c in range(rnd.choice([1, 2])):
            upserts, deletes = _round(rnd, model, r * 10 + c, 120)
            _write(t, upserts, deletes)
            _apply(model, upserts, deletes)
        assert _state(t) == compacted  # the new level-0 files are invisible
        latest = t.latest_snapshot()
        assert latest is not None
        history = {i: _state(t, i) for i in range(max(1, latest.id - 3), latest.id + 1)}
        result = t.maintenance.compact(compact_strategy="full" if r % 4 == 3 else "minor")
        assert result.snapshot_id is not None
        snap = t.snapshot_manager.snapshot(result.snapshot_id)
        assert snap.commit_kind == CommitKind.COMPACT
        assert _state(t) == model, f"round {r}"
        assert {i: _state(t, i) for i in history} == history
        entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
        assert all(e.file.level > 0 for e in entries)
        assert sum(e.file.row_count for e in entries) - _dv_cardinality(t) == len(model)
    # at the end some vectors exist: minor compactions marked rows of files above the output level
    full = t.maintenance.compact(compact_strategy="full")
    assert _state(t) == model and (full.snapshot_id is None or _dv_cardinality(t) == 0)


def test_minor_compaction_marks_superseded_rows_in_higher_levels(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"deletion-vectors.enabled": "true"})
    _write(t, [(k, k, "a") for k in range(100)])
    t.maintenance.compact(compact_strategy="full")  # 100 rows on the max level
    _write(t, [(k, -k, "b") for k in range(0, 100, 10)], deletes=[5, 6])
    result = t.maintenance.compact(compact_strategy="minor")
    assert result.snapshot_id is not None
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert sorted(e.file.level for e in entries) == [4, 5]  # L0 went to level 4, not rewriting level 5
    index = _index(t)
    (max_file,) = [e.file for e in entries if e.file.level == 5]
    dv = read_deletion_vector(t.file_io, index.deletion_files[max_file.file_name])
    assert dv.deleted_positions().tolist() == sorted([*range(0, 100, 10), 5, 6])  # row position = key here
    want = {k: (k, "a") for k in range(100) if k not in (5, 6)} | {k: (-k, "b") for k in range(0, 100, 10)}
    assert _state(t) == want
    # a full compaction rewrites everything: the vector goes with its file
    t.maintenance.compact(compact_strategy="full")
    assert _state(t) == want and not _index(t).deletion_files


@pytest.mark.parametrize("dv", [False, True])
@pytest.mark.parametrize("dedup", [False, True])
def test_lookup_changelog_of_each_compaction_matches_the_model(catalog: FileSystemCatalog, dv: bool, dedup: bool) -> None:
    opts = {"changelog-producer": "lookup", "num-levels": "4"}
    if dv:
        opts["deletion-vectors.enabled"] = "true"
    if dedup:
        opts["changelog-producer.row-deduplicate"] = "true"
    t = _table(catalog, **opts)
    rnd = random.Random(7)
    model: Model = {}
    for r in range(7):
        before = dict(model)
        touched: set[int] = set()
        for _ in range(rnd.choice([1, 2])):
            upserts, deletes = _round(rnd, model, r, 90)
            if r % 3 == 2 and model:  # rewrite some rows with their current values
                upserts += [(k, *model[k]) for k in list(model)[:5]]
            _write(t, upserts, deletes)
            _apply(model, upserts, deletes)
            touched |= {u[0] for u in upserts} | set(deletes)
            assert _changelog(t, t.latest_snapshot().id) == []  # type: ignore[union-attr]  # writes make none
        result = t.maintenance.compact(compact_strategy="full" if r == 4 else "minor")
        assert result.snapshot_id is not None
        got = _changelog(t, result.snapshot_id)
        assert got == _expected_changelog(before, model, touched, dedup=dedup), f"round {r}"
        assert _state(t) == model


def test_first_row_lookup_changelog(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"changelog-producer": "lookup", "merge-engine": "first-row"})
    _write(t, [(1, 1, "a"), (2, 2, "a")])
    first = t.maintenance.compact(compact_strategy="minor")
    assert first.snapshot_id is not None
    assert _changelog(t, first.snapshot_id) == [("+I", 1, 1, "a"), ("+I", 2, 2, "a")]
    _write(t, [(2, 20, "b"), (3, 3, "b")])
    second = t.maintenance.compact(compact_strategy="minor")
    assert second.snapshot_id is not None
    assert _changelog(t, second.snapshot_id) == [("+I", 3, 3, "b")]  # key 2 is kept as first written
    assert _state(t) == {1: (1, "a"), 2: (2, "a"), 3: (3, "b")}


def test_aggregation_with_deletion_vectors_merges_the_looked_up_value(catalog: FileSystemCatalog) -> None:
    t = _table(
        catalog,
        **{"deletion-vectors.enabled": "true", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
           "fields.s.aggregate-function": "last_non_null_value", "changelog-producer": "lookup"},
    )
    rnd = random.Random(3)
    model: dict[int, int] = {}
    for r in range(6):
        keys = rnd.sample(range(50), 20)
        _write(t, [(k, r + 1, f"r{r}") for k in keys])
        for k in keys:
            model[k] = model.get(k, 0) + r + 1
        t.maintenance.compact(compact_strategy="full" if r == 3 else "minor")
        assert {k: v for k, (v, _) in _state(t).items()} == model


def test_lookup_producer_without_deletion_vectors_refuses_aggregation(catalog: FileSystemCatalog) -> None:
    opts = {"changelog-producer": "lookup", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}
    with pytest.raises(InvalidOptionError, match="deletion-vectors.enabled"):
        _table(catalog, **opts)
    t = _table(catalog, "db.ok", **opts, **{"deletion-vectors.enabled": "true"})
    # a table another engine created that way: its compaction is refused, nothing changes
    _write(t, [(1, 1, "a")])
    latest = t.latest_snapshot()
    with pytest.raises(InvalidOptionError, match="deduplicate and first-row"):
        t.copy({"deletion-vectors.enabled": "false"}).maintenance.compact()
    assert t.latest_snapshot() == latest


@pytest.mark.parametrize("existing_vectors", [False, True])
def test_racing_compactions_of_one_bucket_cannot_lose_vectors(catalog: FileSystemCatalog, existing_vectors: bool) -> None:
    """Two compactions of one bucket on disjoint files both mark rows of the max-level file: the
    second commit would drop the first one's vectors, so it is refused and the table keeps the first."""
    from paimon_core.mergetree.compact.compact_task_plan import UpgradeStep
    from paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter import deletion_index_after
    from paimon_core.operation.compact.compact_planner import CompactPlanner, CompactRequest
    from paimon_core.operation.compact.compact_task import run_compact_task
    from paimon_core.operation.compact.table_compact import delete_written

    t = _table(catalog, **{"deletion-vectors.enabled": "true"})
    _write(t, [(k, k, "a") for k in range(5000)])  # large enough for minor compactions to leave it alone
    t.maintenance.compact(compact_strategy="full")
    if existing_vectors:
        _write(t, [(k, -k, "z") for k in (50, 51)])
        t.maintenance.compact(compact_strategy="minor")  # level 4 + vectors on the max level
    _write(t, [(k, -k, "b") for k in range(20)])
    (first,) = CompactPlanner(t.store, clock=t.clock).plan(CompactRequest(strategy="minor")).tasks
    _write(t, [(k, -k, "c") for k in range(20, 40)])
    latest = t.new_file_store_scan().live_entries(t.latest_snapshot())
    newest = max((e.file for e in latest if e.file.level == 0), key=lambda f: f.max_sequence_number)
    second = dataclasses.replace(first, steps=(UpgradeStep(newest, 3),), output_level=3)
    m1, m2 = run_compact_task(t.store, first), run_compact_task(t.store, second)
    assert m1.compact_new_index_files and m2.compact_new_index_files
    t.new_file_store_commit("a").commit([m1], 1)
    state = _state(t)
    with pytest.raises(CommitConflictError, match="Deletion vector index conflicts"):
        t.new_file_store_commit("b").commit([m2], 1)
    assert _state(t) == state and _state(t)[5] == (-5, "b")
    # started from the first compaction's vectors (as a writer compacting a bucket twice does), it lands
    delete_written(t, [m2])
    chained = dataclasses.replace(second, deletion_index=deletion_index_after(t.store, first, m1))
    t.new_file_store_commit("b").commit([run_compact_task(t.store, chained)], 2)
    want = {k: (k, "a") for k in range(5000)} | {k: (-k, "z") for k in ((50, 51) if existing_vectors else ())}
    want |= {k: (-k, "b") for k in range(20)} | {k: (-k, "c") for k in range(20, 40)}
    assert _state(t) == want
    assert _dv_cardinality(t) == 40 + (2 if existing_vectors else 0)


def test_string_and_composite_keys(catalog: FileSystemCatalog) -> None:
    """Keys that are not one integer column are matched by a hash join of the level's key window."""
    schema = pa.schema([pa.field("a", pa.string(), nullable=False), pa.field("b", pa.int32(), nullable=False), ("v", pa.int64())])
    t = catalog.create_table(
        "db.sk", schema, primary_keys=["a", "b"],
        options={"bucket": "1", "write-only": "true", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    )
    rnd = random.Random(11)
    model: dict[tuple[str, int], int] = {}
    for r in range(5):
        keys = {(f"k{rnd.randrange(40):02d}", rnd.randrange(5)) for _ in range(60)}
        rows = sorted(keys)
        t.write_arrow(pa.table({"a": [k[0] for k in rows], "b": [k[1] for k in rows], "v": [r] * len(rows)}, schema=schema))
        before = dict(model)
        model.update(dict.fromkeys(rows, r))
        res = t.maintenance.compact(compact_strategy="full" if r == 2 else "minor")
        assert res.snapshot_id is not None
        got = t.to_arrow()
        assert {(a, b): v for a, b, v in zip(got["a"].to_pylist(), got["b"].to_pylist(), got["v"].to_pylist(), strict=True)} == model
        scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
        cl = TableRead(t, row_kind=True).to_arrow(scan.plan_delta(t.snapshot_manager.snapshot(res.snapshot_id)) or [])
        kinds = sorted(zip(cl["_ROW_KIND"].to_pylist(), cl["a"].to_pylist(), cl["b"].to_pylist(), strict=True))
        want = sorted([("+I", *k) for k in rows if k not in before] + [(x, *k) for k in rows if k in before for x in ("-U", "+U")])
        assert kinds == want


def test_a_failing_compaction_leaves_no_file_behind(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_core.deletionvectors.bucketed_dv_maintainer import BucketedDvMaintainer

    t = _table(catalog, **{"deletion-vectors.enabled": "true", "changelog-producer": "lookup"})
    _write(t, [(k, k, "a") for k in range(50)])
    t.maintenance.compact(compact_strategy="full")
    _write(t, [(k, -k, "b") for k in range(10)])

    def failing(self: BucketedDvMaintainer) -> object:  # after the data and changelog files are written
        assert self.modified
        raise OSError("disk gone")

    monkeypatch.setattr(BucketedDvMaintainer, "write_index", failing)
    latest = t.latest_snapshot()
    with pytest.raises(OSError, match="disk gone"):
        t.maintenance.compact(compact_strategy="minor")
    assert t.latest_snapshot() == latest
    assert unreferenced_files(t) == set()


def test_writers_compact_dv_and_lookup_tables_inline(catalog: FileSystemCatalog) -> None:
    """write-only = false (the default): every commit compacts its level-0 files away (Java's
    ForceUpLevel0Compaction), so written rows are readable at once, with their changelog."""
    t = catalog.create_table(
        "db.inline", SCHEMA, primary_keys=["k"],
        options={"bucket": "1", "deletion-vectors.enabled": "true", "changelog-producer": "lookup",
                 "compaction.max-size-amplification-percent": "100000"},
    )
    rnd = random.Random(4)
    model: Model = {}
    seen_vectors = False
    for r in range(6):
        before = dict(model)
        upserts, deletes = _round(rnd, model, r, 60)
        _write(t, upserts, deletes)
        _apply(model, upserts, deletes)
        latest = t.latest_snapshot()
        assert latest is not None and latest.commit_kind == CommitKind.COMPACT
        assert _state(t) == model
        touched = {u[0] for u in upserts} | set(deletes)
        assert _changelog(t, latest.id) == _expected_changelog(before, model, touched, dedup=False)
        seen_vectors |= _dv_cardinality(t) > 0
    assert seen_vectors
    assert unreferenced_files(t) == set()


@pytest.mark.parametrize("bitmap64", [False, True])
def test_serialized_vectors_read_back(bitmap64: bool) -> None:
    from paimon_core.deletionvectors import DeletionVector, deserialize_deletion_vector
    from paimon_core.deletionvectors.bucketed_dv_maintainer import serialize_deletion_vector

    positions = [0, 3, 4, 5, 6, 7, 65535, 65536, 70000, *range(100000, 104000)]
    if bitmap64:
        positions.append((1 << 33) + 1)
    blob, length = serialize_deletion_vector(DeletionVector.of(positions, bitmap64=bitmap64))
    dv = deserialize_deletion_vector(blob, range_length=length)
    assert dv.deleted_positions().tolist() == sorted(positions) and dv.bitmap64 == bitmap64


def test_bitmap64_table(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"})
    _write(t, [(k, k, "a") for k in range(3000)])
    t.maintenance.compact(compact_strategy="full")
    _write(t, [(k, -k, "b") for k in range(0, 3000, 7)])
    t.maintenance.compact(compact_strategy="minor")
    (d,) = _index(t).deletion_files.values()
    assert read_deletion_vector(t.file_io, d).bitmap64
    assert _state(t) == {k: ((-k, "b") if k % 7 == 0 else (k, "a")) for k in range(3000)}
