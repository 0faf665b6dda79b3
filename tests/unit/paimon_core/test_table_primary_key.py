"""Primary-key tables: upserts, deletes, sequence numbers, merge on read."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, SchemaMismatchError
from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.format.file_format import read_file
from paimon_core.io.file_io import join
from paimon_core.schema.data_types import BigIntType


def _rows(ids: list[int], v: float, dt: str = "2024-01-01") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "v": [v + i for i in ids]})


def _pk(catalog: FileSystemCatalog, name: str = "db.pk", **options: str):  # type: ignore[no-untyped-def]
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
    opts = {"bucket": "4", **options}
    return catalog.create_table(name, schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)


def test_upsert_and_read_merged(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows(list(range(100)), 0.0))
    t.write_arrow(_rows(list(range(0, 100, 10)), 1000.0))
    out = t.to_arrow().sort_by("id")
    assert out.num_rows == 100
    assert out.column("v").to_pylist() == [(1000.0 + i if i % 10 == 0 else float(i)) for i in range(100)]
    # Time travel to before the upsert.
    assert t.copy({"scan.snapshot-id": "1"}).to_arrow().sort_by("id").column("v").to_pylist()[:2] == [0.0, 1.0]


def test_same_key_twice_in_one_write_keeps_the_last(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(pa.concat_tables([_rows([1, 2], 0.0), _rows([1], 50.0)]))
    out = t.to_arrow().sort_by("id")
    assert out.column("v").to_pylist() == [51.0, 2.0]
    files = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert sum(e.file.row_count for e in files) == 2  # folded before writing


def test_file_layout_keys_sequence_numbers_and_stats(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows(list(range(20)), 0.0))
    t.write_arrow(_rows(list(range(20)), 5.0))
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    by_bucket: dict[int, list] = {}
    for e in entries:
        assert e.total_buckets == 4 and e.file.level == 0
        by_bucket.setdefault(e.bucket, []).append(e.file)
        path = join(t.bucket_path(e.partition, e.bucket), e.file.file_name)
        batch = next(read_file(t.file_io, path, "parquet"))
        assert batch.schema.names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "dt", "v"]
        ids = batch.column("id").to_pylist()
        assert ids == sorted(ids)
        lo, hi = deserialize_binary_row(e.file.min_key, [BigIntType(nullable=False)])[0], deserialize_binary_row(
            e.file.max_key, [BigIntType(nullable=False)]
        )[0]
        assert (lo, hi) == (ids[0], ids[-1])
    for files in by_bucket.values():
        files.sort(key=lambda f: f.min_sequence_number)
        assert files[1].min_sequence_number == files[0].max_sequence_number + 1


def test_deletes_by_key_and_by_rowkind_field(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows(list(range(10)), 0.0))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(pa.table({"id": pa.array([3, 4], pa.int64()), "dt": ["2024-01-01"] * 2}))
    res = b.new_commit().commit(w.prepare_commit())
    assert res.added_rows == 2
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2, 5, 6, 7, 8, 9]
    files = t.new_file_store_scan().delta_entries(t.latest_snapshot())
    assert sum(e.file.delete_row_count or 0 for e in files) == 2


def test_rowkind_field(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("op", pa.string())])
    t = catalog.create_table("db.rk", schema, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "op"})
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"], "op": ["+I"] * 3}))
    t.write_arrow(pa.table({"id": pa.array([2, 3], pa.int64()), "v": ["b", "C"], "op": ["-D", "+U"]}))
    out = t.to_arrow().sort_by("id")
    assert out.column("id").to_pylist() == [1, 3] and out.column("v").to_pylist() == ["a", "C"]
    with pytest.raises(SchemaMismatchError, match="must hold"):
        t.write_arrow(pa.table({"id": pa.array([9], pa.int64()), "v": ["x"], "op": ["UPSERT"]}))


def test_null_primary_key_is_refused(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    with pytest.raises(SchemaMismatchError):
        t.write_arrow(pa.table({"id": pa.array([1, None], pa.int64()), "dt": ["x", "y"], "v": [1.0, 2.0]}))
    assert t.latest_snapshot() is None


def test_small_write_buffer_spills_sorted_runs(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog, **{"write-buffer-size": "64 kb"})
    b = t.new_batch_write_builder()
    w = b.new_write()
    for k in range(10):
        w.write_arrow(_rows(list(range(k * 1000, k * 1000 + 2000)), float(k)))  # overlapping upserts
    msgs = w.prepare_commit()
    assert sum(len(m.new_files) for m in msgs) > 8  # several level-0 runs per bucket
    b.new_commit().commit(msgs)
    out = t.to_arrow().sort_by("id")
    assert out.num_rows == 11000
    assert out.column("v").to_pylist()[:3] == [0.0, 1.0, 2.0]
    assert out.column("v").to_pylist()[1500] == 1.0 + 1500  # written by k=0 and k=1: k=1 wins


def test_first_row_skips_level0_like_java(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog, **{"merge-engine": "first-row", "write-only": "true"})
    t.write_arrow(_rows([1, 2], 0.0))
    assert t.to_arrow().num_rows == 0  # visible only after compaction, as in Java
    t.maintenance.compact()
    assert t.to_arrow().num_rows == 2
    # a writer that compacts (write-only = false, the default) forces level 0 up at once
    # (ForceUpLevel0Compaction, as Java's first-row writers): the rows are visible after its commit
    t2 = _pk(catalog, name="db.pk2", **{"merge-engine": "first-row"})
    result = t2.write_arrow(_rows([1, 2], 0.0))
    assert len(result.snapshot_ids) == 2 and t2.to_arrow().num_rows == 2


def test_incremental_changes_with_row_kinds(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows([1, 2, 3], 0.0))
    t.write_arrow(_rows([2], 100.0))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(pa.table({"id": pa.array([3], pa.int64()), "dt": ["2024-01-01"]}))
    b.new_commit().commit(w.prepare_commit())
    rb = t.copy({"incremental-between": "1,3"}).new_read_builder().with_row_kind()
    changes = rb.new_read().to_arrow(rb.new_scan().plan().splits).sort_by("id")
    assert list(zip(changes["id"].to_pylist(), changes["_ROW_KIND"].to_pylist(), strict=True)) == [(2, "+I"), (3, "-D")]
    # A merged (non-incremental) read marks every row +I.
    rb = t.new_read_builder().with_row_kind()
    full = rb.new_read().to_arrow(rb.new_scan().plan().splits)
    assert set(full["_ROW_KIND"].to_pylist()) == {"+I"} and full.num_rows == 2


def test_key_predicates_prune_buckets_and_files(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    for k in range(5):  # five commits of disjoint key ranges: one file per bucket each
        t.write_arrow(_rows(list(range(k * 100, k * 100 + 100)), float(k)))
    pb = t.new_read_builder().new_predicate_builder()
    rb = t.new_read_builder().with_filter(pb.and_(pb.equal("dt", "2024-01-01"), pb.equal("id", 250)))
    plan = rb.new_scan().plan()
    assert len(plan.splits) == 1 and len(plan.splits[0].files) == 1  # one bucket, one file by key range
    assert rb.new_read().to_arrow(plan.splits).column("id").to_pylist() == [250]
    rb = t.new_read_builder().with_filter(pb.is_in("id", [5, 305]))
    plan = rb.new_scan().plan()
    # At most the two keys' buckets, and in them only files of commits 1 and 4 (of 20 files).
    assert sum(len(s.files) for s in plan.splits) <= 4
    assert sorted(rb.new_read().to_arrow(plan.splits).column("id").to_pylist()) == [5, 305]
    rb = t.new_read_builder().with_filter(pb.between("id", 120, 180) if hasattr(pb, "between") else pb.and_(
        pb.greater_or_equal("id", 120), pb.less_or_equal("id", 180)))
    plan = rb.new_scan().plan()
    assert sum(len(s.files) for s in plan.splits) <= 4  # only files of commit 2 (one per bucket)
    assert sorted(rb.new_read().to_arrow(plan.splits).column("id").to_pylist()) == list(range(120, 181))


def test_sequence_field_orders_out_of_order_events(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("v", pa.string())])
    t = catalog.create_table("db.seq", schema, primary_keys=["id"], options={"bucket": "1", "sequence.field": "ts"})
    t.write_arrow(pa.table({"id": pa.array([1, 1], pa.int64()), "ts": pa.array([5, 3], pa.int64()), "v": ["new", "old"]}))
    t.write_arrow(pa.table({"id": pa.array([1], pa.int64()), "ts": pa.array([4], pa.int64()), "v": ["late"]}))
    assert t.to_arrow().column("v").to_pylist() == ["new"]  # highest ts wins, whatever the arrival order
