"""Partition values given as text (CLI ``--overwrite-partition q=2``, job arguments, Airflow
Params, the datasource's ``overwrite-partition``, compaction's ``partitions``) are parsed by
the partition column's type, for every partition type (issue 17)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError

#: partition type, a value, the same value as text, another value
TYPES = {
    "int": (pa.int32(), 2, "2", 3),
    "bigint": (pa.int64(), 2**40, str(2**40), 5),
    "smallint": (pa.int16(), 7, "7", 8),
    "tinyint": (pa.int8(), -3, "-3", 4),
    "boolean": (pa.bool_(), True, "true", False),
    "date": (pa.date32(), dt.date(2024, 1, 2), "2024-01-02", dt.date(2024, 1, 3)),
    "timestamp": (pa.timestamp("us"), dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05", dt.datetime(2024, 1, 3)),
    "decimal": (pa.decimal128(10, 2), Decimal("1.50"), "1.50", Decimal("2.00")),
    "string": (pa.string(), "x", "x", "y"),
    "double": (pa.float64(), 1.5, "1.5", 2.5),
    "float": (pa.float32(), 0.5, "0.5", 2.5),
}


@pytest.fixture
def cat(local_warehouse: str) -> FileSystemCatalog:
    c = FileSystemCatalog(local_warehouse)
    c.create_database("db")
    return c


def _rows(ids: list[int], q: object, t: pa.DataType) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int32()), "q": pa.array([q] * len(ids), t)})


@pytest.mark.parametrize("name", sorted(TYPES))
def test_static_overwrite_with_text_value(cat: FileSystemCatalog, name: str) -> None:
    t_type, value, text, other = TYPES[name]
    t = cat.create_table(f"db.{name}", pa.schema([("id", pa.int32()), ("q", t_type)]), partition_keys=["q"])
    t.write_arrow(_rows([1, 2], value, t_type))
    t.write_arrow(_rows([3], other, t_type))
    builder = t.new_batch_write_builder().overwrite({"q": text})
    write = builder.new_write()
    write.write_arrow(_rows([9], value, t_type))
    builder.new_commit().commit(write.prepare_commit())
    got = {(r["id"], r["q"]) for r in t.to_arrow().to_pylist()}
    assert got == {(9, value), (3, other)}


def test_bad_text_names_the_column_value_and_type(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.t", pa.schema([("id", pa.int32()), ("q", pa.int32())]), partition_keys=["q"])
    with pytest.raises(InvalidArgumentError, match=r"Partition value q='two' does not fit the partition column's type INT"):
        t.new_batch_write_builder().overwrite({"q": "two"})
    with pytest.raises(InvalidArgumentError, match=r"Partition value q='2147483648' .*INT"):
        t.new_batch_write_builder().overwrite({"q": "2147483648"})


def test_default_partition_name_stands_for_null(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.t", pa.schema([("id", pa.int32()), ("q", pa.int32())]), partition_keys=["q"])
    t.write_arrow(pa.table({"id": pa.array([1, 2], pa.int32()), "q": pa.array([None, 5], pa.int32())}))
    t.write_arrow(pa.table({"id": pa.array([7], pa.int32()), "q": pa.array([None], pa.int32())}), overwrite={"q": "__DEFAULT_PARTITION__"})
    assert sorted((r["id"], r["q"]) for r in t.to_arrow().to_pylist()) == [(2, 5), (7, None)]


def test_compaction_partitions_parse_text_by_type(cat: FileSystemCatalog) -> None:
    t = cat.create_table(
        "db.c",
        pa.schema([("id", pa.int32()), ("q", pa.int32()), ("b", pa.bool_())]),
        partition_keys=["q", "b"],
        primary_keys=["q", "b", "id"],
        options={"bucket": "1"},
    )
    for q in (1, 2):
        for _ in range(3):
            t.write_arrow(pa.table({"id": pa.array([1], pa.int32()), "q": pa.array([q], pa.int32()), "b": [True]}))
    assert t.maintenance.compact(partitions="q=2,b=true", dry_run=True).tasks == 1
    assert t.maintenance.compact(partitions="q=3,b=true", dry_run=True).tasks == 0
    assert t.maintenance.compact(partitions=[{"q": "1", "b": "true"}, {"q": "2", "b": "true"}], dry_run=True).tasks == 2
    with pytest.raises(InvalidArgumentError, match="Partition value q='x'"):
        t.maintenance.compact(partitions="q=x", dry_run=True)


def test_cli_overwrite_partition_on_int_column(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    src = tmp_path / "in.parquet"
    pq.write_table(_rows([1, 2], 2, pa.int32()), src)
    one = tmp_path / "one.parquet"
    pq.write_table(_rows([9], 2, pa.int32()), one)
    cli = [sys.executable, "-m", "paimon_core"]
    for args in (
        ["create-table", wh, "db.t", "--schema-from", str(src), "--partition-by", "q"],
        ["write", wh, "db.t", str(src)],
        ["write", wh, "db.t", str(one), "--overwrite-partition", "q=2"],
    ):
        r = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    assert FileSystemCatalog(wh).get_table("db.t").to_arrow().to_pylist() == [{"id": 9, "q": 2}]


def test_text_java_would_refuse_is_refused() -> None:
    """Python's digit separators and epoch numbers beyond a Java long are not partition values."""
    from paimon_core.data.internal import partition_string_to_value
    from paimon_core.exceptions import InvalidArgumentError
    from paimon_core.schema.data_types import DecimalType, DoubleType, IntType, TimestampType

    for text, t in [("1_000", DoubleType()), ("1_000", DecimalType(10, 2)), ("1_000", IntType())]:
        with pytest.raises(InvalidArgumentError, match="1_000"):
            partition_string_to_value(text, t)
    with pytest.raises(InvalidArgumentError, match="Java long"):
        partition_string_to_value("99999999999999999999", TimestampType(3))
    assert partition_string_to_value("12.5", DoubleType()) == 12.5
