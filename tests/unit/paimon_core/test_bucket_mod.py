"""``bucket-function.type = mod`` (Paimon 1.2+, Java's ``ModBucketFunction``): a row's bucket is
``Math.floorMod(key, num_buckets)`` of its single INT or BIGINT bucket key.

Every place that assigns or selects a fixed bucket follows it: the writer, the check of buckets a
caller hands in, bucket pruning of a scan by a key predicate, postpone-bucket compaction and reads,
and Spark's routing (``tests/integration/test_spark_routing.py``). A key of another type, or more
than one key field, is refused with Java's messages when a writer is made, and nothing is written.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.bucket import compute_buckets, scalar_bucket
from paimon_core.exceptions import InvalidArgumentError, UnsupportedTableKindError
from paimon_core.predicate.parser import parse_predicate
from paimon_core.schema.data_types import BigIntType, IntType, VarCharType
from paimon_core.table.table import FileStoreTable

I32_MIN, I32_MAX, I64_MIN, I64_MAX = -(2**31), 2**31 - 1, -(2**63), 2**63 - 1


def test_java_vectors() -> None:
    """ModBucketFunctionTest's cases."""
    for values, t, want in (([1, 7, -2], IntType(), [1, 2, 3]), ([8, 0, -3], BigIntType(), [3, 0, 2])):
        arrow = pa.int32() if isinstance(t, IntType) else pa.int64()
        assert compute_buckets([pa.array(values, arrow)], [t], 5, function="mod").tolist() == want
        assert [scalar_bucket([v], [t], 5, function="mod") for v in values] == want


def test_floor_mod_over_the_whole_range_and_nulls() -> None:
    rng = np.random.default_rng(11)
    longs = [*rng.integers(I64_MIN, I64_MAX, 2000, dtype=np.int64).tolist(), I64_MIN, I64_MAX, 0, -1, None]
    ints = [*rng.integers(I32_MIN, I32_MAX, 2000, dtype=np.int64).tolist(), I32_MIN, I32_MAX, 0, -1, None]
    for values, t, arrow in ((longs, BigIntType(), pa.int64()), (ints, IntType(), pa.int32())):
        for n in (1, 2, 3, 7, 16, 1000):
            # Math.floorMod; a null key is a zeroed slot in Java's BinaryRow: bucket 0
            want = [0 if v is None else v - n * (v // n) for v in values]
            assert compute_buckets([pa.array(values, arrow)], [t], n, function="mod").tolist() == want
            assert [scalar_bucket([v], [t], n, function="mod") for v in values[::97]] == want[::97]
            assert compute_buckets([pa.chunked_array([pa.array(values, arrow)])], [t], n, function="mod").tolist() == want


def test_java_refusals() -> None:
    with pytest.raises(InvalidArgumentError, match="^bucket key must have exactly one field in mod bucket function$"):
        compute_buckets([pa.array([1]), pa.array([2])], [IntType(), BigIntType()], 4, function="mod")
    with pytest.raises(
        InvalidArgumentError, match="^bucket key type must be INT or BIGINT in mod bucket function, but got STRING$"
    ):
        scalar_bucket(["a"], [VarCharType(2**31 - 1)], 4, function="mod")
    with pytest.raises(InvalidArgumentError, match="bucket-function.type 'hive' is not supported"):
        compute_buckets([pa.array([1])], [IntType()], 4, function="hive")


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.string())])


def _files_by_bucket(t: FileStoreTable) -> dict[int, list[int]]:
    """{bucket: ids of its files' rows} of the latest snapshot, read split by split."""
    rb = t.new_read_builder()
    out: dict[int, list[int]] = {}
    for split in rb.new_scan().plan().splits:
        out.setdefault(split.bucket, []).extend(rb.new_read().to_arrow([split]).column("id").to_pylist())
    return out


def _write_with_buckets(t: FileStoreTable, data: pa.Table, buckets: pa.Array) -> None:
    builder = t.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(data, buckets=buckets)
    builder.new_commit().commit(write.prepare_commit())


@pytest.mark.parametrize("primary_key", [True, False])
def test_a_mod_table_is_written_pruned_and_merged_by_floor_mod(catalog: FileSystemCatalog, primary_key: bool) -> None:
    opts = {"bucket": "4", "bucket-function.type": "mod"} | ({} if primary_key else {"bucket-key": "id"})
    keys = {"primary_keys": ["id", "dt"]} if primary_key else {}
    t = catalog.create_table("db.m", SCHEMA, partition_keys=["dt"], options=opts, **keys)
    ids = [-9, -4, -1, 0, 1, 2, 3, 5, 7, 8, 11, 2**40 + 3]
    t.write_arrow(pa.table({"id": ids, "dt": ["a"] * len(ids), "v": ["x"] * len(ids)}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": [7, -9], "dt": ["a", "a"], "v": ["y", "y"]}, schema=SCHEMA))
    t = catalog.get_table("db.m")
    for bucket, got in _files_by_bucket(t).items():
        assert {i % 4 for i in got} == {bucket}, (bucket, got)  # Python's % on ints is floorMod
    rows = sorted(t.to_arrow().to_pylist(), key=lambda r: (r["id"], r["v"]))
    if primary_key:  # the upserts met their keys in the same bucket: one row per key
        assert [(r["id"], r["v"]) for r in rows] == sorted((i, "y" if i in (7, -9) else "x") for i in ids)
    else:
        assert len(rows) == len(ids) + 2
    # a key predicate reads only its floorMod bucket, and finds the row
    for key in (7, -9, 2**40 + 3):
        rb = t.new_read_builder().with_filter(parse_predicate(f"id = {key}", t.schema.fields))
        splits = rb.new_scan().plan().splits
        assert {s.bucket for s in splits} == {key % 4}, key
        assert key in rb.new_read().to_arrow(splits).column("id").to_pylist()
    # buckets handed in must be floorMod's, not the hash's
    good = pa.array([i % 4 for i in (13, -13)], pa.int32())
    _write_with_buckets(t, pa.table({"id": [13, -13], "dt": ["b", "b"], "v": ["z", "z"]}, schema=SCHEMA), good)
    assert sorted(catalog.get_table("db.m").to_arrow(predicate=parse_predicate("dt = 'b'", t.schema.fields)).column("id").to_pylist()) == [-13, 13]
    hashed = pa.array(compute_buckets([pa.array([13, -13], pa.int64())], [BigIntType()], 4).tolist(), pa.int32())
    assert hashed.to_pylist() != good.to_pylist()
    with pytest.raises(InvalidArgumentError, match="disagree with the table's bucket function"):
        _write_with_buckets(t, pa.table({"id": [13, -13], "dt": ["b", "b"], "v": ["w", "w"]}, schema=SCHEMA), hashed)


def test_a_mod_table_with_a_string_key_is_refused_and_unchanged(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), ("v", pa.int64())])
    t = catalog.create_table("db.s", schema, primary_keys=["k"], options={"bucket": "2", "bucket-function.type": "mod"})
    with pytest.raises(InvalidArgumentError, match="must be INT or BIGINT in mod bucket function, but got STRING NOT NULL"):
        t.write_arrow(pa.table({"k": ["a"], "v": [1]}, schema=schema))
    assert t.latest_snapshot() is None
    # a scan with a key filter does not prune by a function the key cannot take, nor fail
    from paimon_core.operation.key_filters import buckets_for

    key = t.schema.fields_of(t.schema.bucket_keys)
    assert buckets_for(parse_predicate("k = 'a'", t.schema.fields), key, 2, function="mod") is None
    small = pa.schema([pa.field("k", pa.int16(), nullable=False), ("v", pa.int64())])  # an integer literal too
    s = catalog.create_table("db.s16", small, primary_keys=["k"], options={"bucket": "2", "bucket-function.type": "mod"})
    key = s.schema.fields_of(s.schema.bucket_keys)
    assert buckets_for(parse_predicate("k = 3", s.schema.fields), key, 2, function="mod") is None


def test_hive_is_still_refused(catalog: FileSystemCatalog) -> None:
    with pytest.raises(UnsupportedTableKindError, match="bucket function"):
        catalog.create_table("db.h", SCHEMA, primary_keys=["id", "dt"], options={"bucket": "2", "bucket-function.type": "hive"})


def test_postpone_compaction_assigns_floor_mod_buckets(catalog: FileSystemCatalog) -> None:
    """A postpone-bucket table (bucket = -2) with the mod function: the compaction puts each key in
    its floorMod bucket of ``postpone.default-bucket-num``, upserts merged."""
    opts = {
        "bucket": "-2",
        "bucket-function.type": "mod",
        "postpone.default-bucket-num": "3",
        "postpone.batch-write-fixed-bucket": "false",
    }
    t = catalog.create_table("db.p", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)
    ids = list(range(-7, 8))
    t.write_arrow(pa.table({"id": ids, "dt": ["a"] * len(ids), "v": ["x"] * len(ids)}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": [-7, 4], "dt": ["a", "a"], "v": ["y", "y"]}, schema=SCHEMA))
    t.maintenance.compact()
    t = catalog.get_table("db.p")
    by_bucket = _files_by_bucket(t)
    assert set(by_bucket) <= {0, 1, 2}
    for bucket, got in by_bucket.items():
        assert {i % 3 for i in got} == {bucket}, (bucket, got)
    rows = sorted((r["id"], r["v"]) for r in t.to_arrow().to_pylist())
    assert rows == [(i, "y" if i in (-7, 4) else "x") for i in ids]


#: Calls that take the bucket function.
_BUCKET_CALLS = ("compute_buckets", "scalar_bucket", "check_buckets", "buckets_for", "bucket_udf")


def test_every_bucket_assignment_passes_the_table_function() -> None:
    """Every call in paimon_core and spark_jobs that assigns or selects a fixed bucket passes
    ``function=`` (the table's ``bucket-function.type``): a writer, scan or job added later that
    hashes with the default function fails here, not on a mod table's data."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    missing = []
    calls = 0
    for package in ("paimon_core", "spark_jobs"):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for fn in ast.walk(tree):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if not isinstance(node, ast.Call):
                        continue
                    name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                    if name not in _BUCKET_CALLS or rel == "paimon_core/bucket.py":
                        continue
                    calls += 1
                    if not any(k.arg == "function" for k in node.keywords):
                        missing.append(f"{rel}:{node.lineno} in {fn.name}(): {name}(...) without function=")
    assert calls >= 8, calls  # the writer, its check, the scan, postpone compaction and reads, Spark
    assert not missing, "\n".join(sorted(set(missing)))
