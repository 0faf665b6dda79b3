"""Nested struct fields written from Spark are matched by name (issue 17): a reordered struct
keeps its values, a missing nullable field is null, an unknown one is an error naming its path
(tables with nested columns are written by the data source, whose Arrow batches go through
``paimon_core.table.input_conform``; Spark's own struct cast would be positional)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import SchemaMismatchError
from spark_jobs.datasource import write_table
from tests.integration.helpers import catalog

INNER = pa.struct([("a", pa.int32()), ("c", pa.string())])
SCHEMA = pa.schema([("id", pa.int32()), ("s", INNER), ("l", pa.list_(INNER))])


def test_spark_writes_match_nested_fields_by_name(spark: SparkSession, wh: str) -> None:
    table = catalog(wh).create_table("db.n", SCHEMA)
    reordered = spark.range(2).selectExpr(
        "cast(id as int) as id",
        "named_struct('c', concat('x', id), 'a', cast(id as int)) as s",
        "array(named_struct('c', 'y', 'a', 5)) as l",
    )
    write_table(reordered, wh, "db.n")
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [
        {"id": 0, "s": {"a": 0, "c": "x0"}, "l": [{"a": 5, "c": "y"}]},
        {"id": 1, "s": {"a": 1, "c": "x1"}, "l": [{"a": 5, "c": "y"}]},
    ]
    missing = spark.range(1).selectExpr(
        "cast(7 as int) as id", "named_struct('a', 7) as s", "cast(null as array<struct<c: string, a: int>>) as l"
    )
    write_table(missing, wh, "db.n")
    assert {"id": 7, "s": {"a": 7, "c": None}, "l": None} in table.to_arrow().to_pylist()
    for bad, path in (
        ("named_struct('b', 7) as s", "s.b"),
        ("named_struct('a', 1, 'c', 'z', 'b', 7) as s", "s.b"),
    ):
        df = spark.range(1).selectExpr("cast(9 as int) as id", bad, "cast(null as array<struct<a: int, c: string>>) as l")
        with pytest.raises(SchemaMismatchError, match=rf"nested field\(s\) \['{path}'\] that the table does not have"):
            write_table(df, wh, "db.n")
    extra_in_list = spark.range(1).selectExpr(
        "cast(9 as int) as id", "named_struct('a', 1, 'c', 'z') as s", "array(named_struct('a', 1, 'q', 2)) as l"
    )
    with pytest.raises(SchemaMismatchError, match=r"\['l.element.q'\]"):
        write_table(extra_in_list, wh, "db.n")
    assert table.snapshot_manager.latest_snapshot_id() == 2
