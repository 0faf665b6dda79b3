"""Bucket routing: the JVM bucket expression and the Arrow UDF agree with paimon_core's bucket function."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession

from paimon_core.bucket import compute_buckets
from paimon_core.format.arrow_types import fields_from_arrow_schema
from spark_jobs.datasource import write_table
from spark_jobs.datasource.bucket_expr import supports, with_bucket_column
from spark_jobs.datasource.routing import bucket_udf
from tests.integration.helpers import catalog, core_rows, read, rows


def _keys() -> pa.Table:
    rng = np.random.default_rng(7)
    n = 500
    return pa.table(
        {
            "a": pa.array(
                np.concatenate([rng.integers(-(2**63), 2**63 - 1, n - 3), [0, -1, 2**63 - 1]]), pa.int64()
            ),
            "b": pa.array(
                [None if i % 7 == 0 else int(x) for i, x in enumerate(rng.integers(-(2**31), 2**31 - 1, n))],
                pa.int32(),
            ),
            "c": pa.array([int(x) for x in rng.integers(-128, 127, n)], pa.int8()),
            "d": pa.array(
                [dt.date(1960, 1, 1) + dt.timedelta(days=int(x)) for x in rng.integers(0, 40000, n)],
                pa.date32(),
            ),
            "s": pa.array(
                [
                    None if i % 11 == 0 else f"key-{x}" * (1 + i % 3)
                    for i, x in enumerate(rng.integers(0, 10**6, n))
                ]
            ),
        }
    )


def test_jvm_expression_and_udf_match_paimon_core(spark: SparkSession) -> None:
    data = _keys()
    fields = {f.name: f for f in fields_from_arrow_schema(data.schema)[0]}
    df = spark.createDataFrame(data.to_pandas()).coalesce(1)
    for keys in (["a"], ["b"], ["c", "d"], ["b", "c", "d", "a"], ["s"], ["s", "a"]):
        fs = [fields[k] for k in keys]
        want = compute_buckets([data.column(k) for k in keys], [f.type for f in fs], 5).tolist()
        got_udf = [r[0] for r in df.select(bucket_udf(fs, 5)(*keys)).collect()]
        assert got_udf == want, keys
        if supports(fs):
            routed = with_bucket_column(df, fs, 5, "bk")
            assert routed is not None
            assert [r[0] for r in routed.select("bk").collect()] == want, keys
        else:
            assert with_bucket_column(df, fs, 5, "bk") is None


def test_jvm_expression_for_not_null_keys(spark: SparkSession) -> None:
    """NOT NULL key columns: the constant header words are mixed on the driver, same buckets."""
    data = _keys()
    fields = {f.name: dataclasses.replace(f, type=f.type.copy(nullable=False))
              for f in fields_from_arrow_schema(data.schema)[0]}
    df = spark.createDataFrame(data.to_pandas()).coalesce(1)
    for keys in (["a"], ["c"], ["c", "d"], ["d", "a", "c"]):
        fs = [fields[k] for k in keys]
        for n in (1, 4, 7):
            want = compute_buckets([data.column(k) for k in keys], [f.type for f in fs], n).tolist()
            routed = with_bucket_column(df, fs, n, "bk")
            assert routed is not None
            assert [r[0] for r in routed.select("bk").collect()] == want, (keys, n)


def test_string_keyed_primary_key_table_routed_through_the_udf(spark: SparkSession, wh: str) -> None:
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), ("dt", pa.string()), ("v", pa.int64())])
    catalog(wh).create_table(
        "db.s", schema, primary_keys=["dt", "k"], partition_keys=["dt"], options={"bucket": "3"}
    )
    data = pa.table(
        {"k": [f"k{i}" for i in range(300)], "dt": [f"d{i % 2}" for i in range(300)], "v": list(range(300))}
    )
    write_table(spark.createDataFrame(data.to_pandas()).repartition(3), wh, "db.s")
    upd = pa.table(
        {
            "k": [f"k{i}" for i in range(0, 300, 10)],
            "dt": [f"d{i % 2}" for i in range(0, 300, 10)],
            "v": [-1] * 30,
        }
    )
    write_table(spark.createDataFrame(upd.to_pandas()).repartition(2), wh, "db.s")
    want = sorted((f"k{i}", -1 if i % 10 == 0 else i) for i in range(300))
    assert rows(read(spark, wh, "db.s"), "k", "v") == want == core_rows(wh, "db.s", "k", "v")


def test_mod_bucket_function_table_routed_by_floor_mod(spark: SparkSession, wh: str) -> None:
    """``bucket-function.type = mod``: Spark routes each row to floorMod(key, n) (Java's
    ModBucketFunction), the writer's spot check agrees, and upserts meet their keys."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])
    catalog(wh).create_table(
        "db.m", schema, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "5", "bucket-function.type": "mod", "bucket-key": "id"}
    )
    ids = list(range(-150, 150))
    data = pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": ids}, schema=schema)
    write_table(spark.createDataFrame(data.to_pandas()).repartition(3), wh, "db.m")
    upd = pa.table({"id": ids[::10], "dt": [f"d{i % 2}" for i in ids[::10]], "v": [-1] * 30}, schema=schema)
    write_table(spark.createDataFrame(upd.to_pandas()).repartition(2), wh, "db.m")
    want = sorted((i, -1 if i % 10 == 0 else i) for i in ids)
    assert rows(read(spark, wh, "db.m"), "id", "v") == want == core_rows(wh, "db.m", "id", "v")
    t = catalog(wh).get_table("db.m")
    rb = t.new_read_builder()
    for split in rb.new_scan().plan().splits:
        got = rb.new_read().to_arrow([split]).column("id").to_pylist()
        assert {i % 5 for i in got} == {split.bucket}, (split.bucket, got)
