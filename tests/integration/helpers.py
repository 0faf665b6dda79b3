"""Small helpers shared by the Spark integration tests."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.table.table import FileStoreTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def catalog(wh: str) -> FileSystemCatalog:
    c = FileSystemCatalog(wh)
    c.create_database("db", ignore_if_exists=True)
    return c


def events(n: int, *, start: int = 0, days: int = 3, v: float = 0.0) -> pa.Table:
    """``id BIGINT NOT NULL, dt STRING, v DOUBLE, name STRING`` rows."""
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "dt": pa.array([f"2024-01-0{1 + i % days}" for i in ids]),
            "v": pa.array([v + i * 0.5 for i in ids], pa.float64()),
            "name": pa.array([f"n{i}" for i in ids]),
        }
    )


EVENTS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("dt", pa.string()),
        ("v", pa.float64()),
        ("name", pa.string()),
    ]
)


def read(spark: SparkSession, wh: str, table: str, **options: str) -> DataFrame:
    reader = spark.read.format("paimon").option("warehouse", wh)
    for k, v in options.items():
        reader = reader.option(k.replace("_", "-"), v)
    return reader.load(table)


def rows(data: pa.Table | DataFrame, *columns: str) -> list[tuple[Any, ...]]:
    """Sorted tuples of the given columns (all columns if none given)."""
    if not isinstance(data, pa.Table):
        data = data.toArrow()
    cols = list(columns) or data.column_names
    return sorted(zip(*(data.column(c).to_pylist() for c in cols), strict=True)) if data.num_rows else []


def core_rows(
    wh: str, table: str, *columns: str, options: dict[str, str] | None = None
) -> list[tuple[Any, ...]]:
    t: FileStoreTable = FileSystemCatalog(wh).get_table(table)
    if options:
        t = t.copy(options)
    return rows(t.to_arrow(), *columns)


def all_types_table() -> pa.Table:
    """One column per common Paimon type, with nulls, nested types and a NOT NULL key."""
    n = 5
    schema = pa.schema(
        [
            pa.field("k", pa.int32(), nullable=False),
            ("b", pa.bool_()),
            ("i8", pa.int8()),
            ("i16", pa.int16()),
            ("i64", pa.int64()),
            ("f32", pa.float32()),
            ("f64", pa.float64()),
            ("dec", pa.decimal128(12, 3)),
            ("s", pa.string()),
            ("bin", pa.binary()),
            ("d", pa.date32()),
            ("ts3", pa.timestamp("ms")),
            ("ts6", pa.timestamp("us")),
            ("ltz", pa.timestamp("us", tz="UTC")),
            ("arr", pa.list_(pa.int64())),
            ("m", pa.map_(pa.string(), pa.int32())),
            ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ]
    )
    base = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
    cols: dict[str, list[Any]] = {
        "k": list(range(n)),
        "b": [True, False, None, True, False],
        "i8": [1, -2, None, 127, -128],
        "i16": [300, None, -300, 0, 1],
        "i64": [2**40, None, -(2**40), 0, 7],
        "f32": [1.5, None, -2.25, 0.0, 3.0],
        "f64": [1.25, 2.5, None, -1e10, 0.0],
        "dec": [
            decimal.Decimal("1.234"),
            None,
            decimal.Decimal("-99.5"),
            decimal.Decimal("0"),
            decimal.Decimal("3.141"),
        ],
        "s": ["a", "bb", None, "ünï", ""],
        "bin": [b"\x00\x01", None, b"", b"xyz", b"\xff"],
        "d": [dt.date(2024, 1, 1), None, dt.date(1970, 1, 1), dt.date(2038, 12, 31), dt.date(2000, 2, 29)],
        "ts3": [base, None, base + dt.timedelta(days=1), base - dt.timedelta(days=400), base],
        "ts6": [base + dt.timedelta(microseconds=456), None, base, base, base],
        "ltz": [base.replace(tzinfo=dt.UTC), None, base.replace(tzinfo=dt.UTC), None, None],
        "arr": [[1, 2], [], None, [3], [None, 4]],
        "m": [[("a", 1)], None, [], [("b", None)], [("c", 3), ("d", 4)]],
        "st": [{"x": 1, "y": "p"}, None, {"x": None, "y": "q"}, {"x": 3, "y": None}, {"x": 5, "y": "r"}],
    }
    return pa.table(cols, schema=schema)
