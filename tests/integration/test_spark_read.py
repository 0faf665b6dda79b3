"""Batch reads through the ``paimon`` Spark data source."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType, LongType, StringType, TimestampNTZType, TimestampType

from tests.integration.helpers import (
    EVENTS_SCHEMA,
    all_types_table,
    catalog,
    core_rows,
    events,
    read,
    rows,
)


def test_all_types_match_paimon_core_with_nullability(spark: SparkSession, wh: str) -> None:
    data = all_types_table()
    t = catalog(wh).create_table("db.types", data.schema)
    t.write_arrow(data)
    df = read(spark, wh, "db.types")
    fields = {f.name: f for f in df.schema.fields}
    assert not fields["k"].nullable and fields["s"].nullable
    assert isinstance(fields["ts3"].dataType, TimestampNTZType) and isinstance(
        fields["ltz"].dataType, TimestampType
    )
    got = df.toArrow().sort_by("k")
    want = t.to_arrow().sort_by("k")
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def test_primary_key_table_is_read_merged(spark: SparkSession, wh: str) -> None:
    t = catalog(wh).create_table(
        "db.pk", EVENTS_SCHEMA, primary_keys=["id"], partition_keys=[], options={"bucket": "2"}
    )
    t.write_arrow(events(100))
    t.write_arrow(events(20, start=90, v=1000.0))  # upserts 90..99, inserts 100..109
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(events(3).select(["id"]))
    b.new_commit().commit(w.prepare_commit())
    df = read(spark, wh, "db.pk")
    assert df.count() == 107
    assert rows(df, "id", "v") == core_rows(wh, "db.pk", "id", "v")
    assert df.where("id = 95").first()["v"] == 1000.0 + 95 * 0.5


def test_time_travel_and_incremental_options(spark: SparkSession, wh: str) -> None:
    t = catalog(wh).create_table("db.tt", EVENTS_SCHEMA, partition_keys=["dt"])
    t.write_arrow(events(10))
    t.maintenance.create_tag("first")
    time.sleep(0.01)
    middle_ms = t.latest_snapshot().time_millis  # type: ignore[union-attr]
    time.sleep(0.01)
    t.write_arrow(events(5, start=10))
    t.write_arrow(events(7, start=15))
    assert read(spark, wh, "db.tt").count() == 22
    assert read(spark, wh, "db.tt", **{"scan.snapshot-id": "1"}).count() == 10
    assert read(spark, wh, "db.tt", **{"scan.tag-name": "first"}).count() == 10
    assert read(spark, wh, "db.tt", **{"scan.timestamp-millis": str(middle_ms)}).count() == 10
    inc = read(spark, wh, "db.tt", **{"incremental-between": "1,3"})
    assert rows(inc, "id") == [(i,) for i in range(10, 22)]


def test_dataframe_is_pinned_to_one_snapshot(spark: SparkSession, wh: str) -> None:
    t = catalog(wh).create_table("db.pin", EVENTS_SCHEMA)
    t.write_arrow(events(10))
    df = read(spark, wh, "db.pin")
    assert df.count() == 10
    t.write_arrow(events(10, start=10))
    assert df.count() == 10  # the DataFrame keeps its snapshot
    assert read(spark, wh, "db.pin").count() == 20


def test_empty_table_and_unknown_option(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.empty", EVENTS_SCHEMA)
    df = read(spark, wh, "db.empty")
    assert df.count() == 0
    assert df.schema["id"].dataType == LongType() and df.schema["name"].dataType == StringType()
    with pytest.raises(Exception, match="Unknown table option 'scan.snapshot-idd'"):
        read(spark, wh, "db.empty", **{"scan.snapshot-idd": "1"}).count()
    with pytest.raises(Exception, match="does not exist"):
        read(spark, wh, "db.missing").count()


# --- filters -----------------------------------------------------------------------------------


def _files_table(wh: str) -> None:
    """4 partitions x 2 commits with disjoint id ranges: 8 data files, one per split."""
    t = catalog(wh).create_table("db.f", EVENTS_SCHEMA, partition_keys=["dt"])
    t.write_arrow(events(400, days=4))  # ids 0..399
    t.write_arrow(events(400, start=400, days=4))  # ids 400..799


_SPLIT_PER_FILE = {"source.split.target-size": "1 b"}


def _splits(df) -> int:  # type: ignore[no-untyped-def]
    return int(df.rdd.getNumPartitions())


_PRUNING_CASES = [
    ("dt = '2024-01-02'", 2),  # partition pruning
    ("id >= 600", 4),  # stats pruning: only the second commit's files
    ("dt = '2024-01-02' AND id >= 600", 1),  # both
    ("dt IN ('2024-01-01', '2024-01-03') AND id < 100", 2),
    ("name LIKE 'n7%'", 8),  # exact, but no pruning (string min/max of the files span 'n7')
]


def test_filter_pushdown_prunes_files_and_is_exact(spark: SparkSession, wh: str) -> None:
    _files_table(wh)
    everything = read(spark, wh, "db.f", **_SPLIT_PER_FILE)
    assert _splits(everything) == 8
    for condition, splits in _PRUNING_CASES:
        expected = rows(everything.where(condition), "id")  # evaluated by Spark (pushdown off: the default)
        pushed = read(spark, wh, "db.f", **_SPLIT_PER_FILE, **{"filter-pushdown": "true"}).where(condition)
        assert _splits(pushed) == splits, condition
        assert " Filter " not in pushed._jdf.queryExecution().executedPlan().toString(), (
            condition
        )  # no re-check
        assert rows(pushed, "id") == expected and expected, condition


def test_filter_option_prunes_and_stays_with_the_dataframe(spark: SparkSession, wh: str) -> None:
    _files_table(wh)
    df = read(spark, wh, "db.f", **_SPLIT_PER_FILE, filter="dt = '2024-01-02' AND id >= 600")
    assert _splits(df) == 1
    want = [(i,) for i in range(600, 800) if i % 4 == 1]
    assert rows(df, "id") == want
    assert df.where("id > 700").count() == len([w for w in want if w[0] > 700])
    assert df.count() == len(want)


def test_default_mode_is_safe_when_a_dataframe_is_reused(spark: SparkSession, wh: str) -> None:
    _files_table(wh)
    df = read(spark, wh, "db.f")
    assert df.where("id = 3").count() == 1
    assert df.count() == 800
    assert df.where("id < 10 OR v > 390").count() == 10 + 19
    assert df.count() == 800


def test_spark_430_leaks_pushed_filters_into_later_queries(spark: SparkSession, wh: str) -> None:
    """Characterizes the Spark 4.3.0 bug that keeps ``filter-pushdown`` off by default.

    The read planned with one query's pushed filters is stored on the DataFrame's relation and
    reused by later queries on it that push nothing. When this starts failing, Spark fixed it
    (scan-scoped read info) and the default can be turned on.
    """
    _files_table(wh)
    df = read(spark, wh, "db.f", **{"filter-pushdown": "true"})
    assert df.where("id = 3").count() == 1
    assert df.count() == 1  # should be 800


def test_float_comparisons_keep_spark_nan_semantics(spark: SparkSession, wh: str) -> None:
    t = catalog(wh).create_table("db.nan", pa.schema([("id", pa.int64()), ("x", pa.float64())]))
    t.write_arrow(pa.table({"id": [1, 2, 3, 4], "x": [float("nan"), 1.0, 5.0, None]}))
    df = read(spark, wh, "db.nan", **{"filter-pushdown": "true"})
    assert df.schema["x"].dataType == DoubleType()
    assert rows(df.where("x > 2"), "id") == [(1,), (3,)]  # NaN > 2 in Spark
    assert rows(df.where("x < 2"), "id") == [(2,)]
    assert rows(df.where("NOT (x = 1.0)"), "id") == [(1,), (3,)]
    assert rows(df.where("x IS NULL"), "id") == [(4,)]


def test_filter_conversion_accepts_only_exact_filters() -> None:
    from pyspark.sql.datasource import (
        EqualNullSafe,
        EqualTo,
        GreaterThan,
        In,
        IsNull,
        LessThan,
        Not,
        StringEndsWith,
        StringStartsWith,
    )

    from paimon_core.format.arrow_types import fields_from_arrow_schema
    from spark_jobs.datasource.filters import convert_filters

    fields = fields_from_arrow_schema(
        pa.schema([("id", pa.int64()), ("x", pa.float64()), ("s", pa.string())])
    )[0]
    accepted = [
        EqualTo(("id",), 1),
        In(("id",), [1, None, 3]),
        Not(In(("id",), [1, 2])),
        LessThan(("x",), 2.0),
        StringStartsWith(("s",), "ab"),
        EqualNullSafe(("s",), None),
        Not(IsNull(("s",))),
    ]
    rejected = [
        GreaterThan(("x",), 1.0),  # NaN > 1 is true in Spark
        Not(LessThan(("x",), 1.0)),
        EqualTo(("x",), float("nan")),
        Not(EqualNullSafe(("id",), 1)),  # true for NULL id in Spark
        Not(StringEndsWith(("s",), "z")),
        Not(In(("id",), [1, None])),
        EqualTo(("st", "a"), 1),  # nested field
        EqualTo(("id",), "not a number"),
    ]
    out = convert_filters(accepted + rejected, fields)
    assert len(out.predicates) == len(accepted)
    assert out.rejected == rejected
