"""Bad input to the write paths gets a PaimonError naming the problem, and nothing is written
(issue 17): nested fields the table does not have, a non-Parquet input file, a dict or None
given to ``write_arrow``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.table.table import FileStoreTable

INNER = pa.struct([("a", pa.int32())])
SCHEMA = pa.schema(
    [("id", pa.int32()), ("s", INNER), ("l", pa.list_(INNER)), ("m", pa.map_(pa.string(), INNER))]
)


@pytest.fixture
def table(local_warehouse: str) -> FileStoreTable:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    return cat.create_table("db.n", SCHEMA)


def _data(s: object, s_type: pa.DataType = INNER, *, l_type: pa.DataType = INNER, m_type: pa.DataType = INNER,
          lst: object = None, mp: object = None) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([1], pa.int32()),
            "s": pa.array([s], s_type),
            "l": pa.array([lst], pa.list_(l_type)),
            "m": pa.array([mp], pa.map_(pa.string(), m_type)),
        }
    )


AB = pa.struct([("a", pa.int32()), ("b", pa.int64())])
B = pa.struct([("b", pa.int64())])


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (lambda: _data({"b": 7}, B), "s.b"),
        (lambda: _data({"a": 1, "b": 7}, AB), "s.b"),
        (lambda: _data({"a": 1}, l_type=AB, lst=[{"a": 1, "b": 2}]), "l.element.b"),
        (lambda: _data({"a": 1}, m_type=AB, mp=[("k", {"a": 1, "b": 2})]), "m.value.b"),
    ],
)
def test_unknown_nested_field_is_an_error(table: FileStoreTable, data, path: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SchemaMismatchError, match=rf"nested field\(s\) \['{path}'\] that the table does not have"):
        table.write_arrow(data())
    assert table.latest_snapshot() is None


def test_missing_nullable_nested_field_stays_null(table: FileStoreTable) -> None:
    table.write_arrow(_data({}, pa.struct([]), lst=[{"a": 3}]))
    assert table.to_arrow().to_pylist() == [{"id": 1, "s": {"a": None}, "l": [{"a": 3}], "m": None}]


def test_missing_not_null_nested_field_is_an_error(local_warehouse: str) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    strict = pa.struct([pa.field("a", pa.int32(), nullable=False), ("c", pa.string())])
    t = cat.create_table("db.t", pa.schema([("id", pa.int32()), ("s", strict)]))
    data = pa.table({"id": pa.array([1], pa.int32()), "s": pa.array([{"c": "x"}], pa.struct([("c", pa.string())]))})
    with pytest.raises(SchemaMismatchError, match=r"lacks NOT NULL nested field\(s\) \['s.a'\]"):
        t.write_arrow(data)
    assert t.latest_snapshot() is None


# --- public API misuse ---------------------------------------------------------------------------


class DataFrame:
    """Stands for a pandas DataFrame: iterating it yields column names."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(["id"])


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"id": [1]}, r"got dict \(for a dict of columns use pyarrow.table"),
        (None, "got NoneType"),
        ("rows", "got str"),
        (DataFrame(), r"got DataFrame \(for a pandas DataFrame use pyarrow.Table.from_pandas"),
        ([{"id": 1}], "the iterable yielded a dict"),
        ([1, 2], "the iterable yielded a int"),
    ],
)
def test_write_arrow_says_what_it_expects(table: FileStoreTable, data: object, match: str) -> None:
    with pytest.raises(InvalidArgumentError, match="write_arrow expects a pyarrow.Table, .*" + match):
        table.write_arrow(data)
    write = table.new_batch_write_builder().new_write()
    with pytest.raises(InvalidArgumentError, match="write_arrow expects a pyarrow.Table, .*" + match):
        write.write_arrow(data)
    write.abort()
    assert table.latest_snapshot() is None


def test_delete_arrow_and_overwrite_misuse(local_warehouse: str) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    t = cat.create_table("db.pk", pa.schema([("id", pa.int32()), ("v", pa.string())]), primary_keys=["id"])
    write = t.new_batch_write_builder().new_write()
    with pytest.raises(InvalidArgumentError, match="delete_arrow expects a pyarrow.Table or RecordBatch of keys; got dict"):
        write.delete_arrow({"id": [1]})
    write.abort()
    rows = pa.table({"id": pa.array([1], pa.int32()), "v": ["a"]})
    with pytest.raises(InvalidArgumentError, match="overwrite must be True/False or a partition spec dict; got str"):
        t.write_arrow(rows, overwrite="yes")  # type: ignore[arg-type]
    assert t.latest_snapshot() is None


# --- an input file that is not Parquet -----------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paimon_core", *args], capture_output=True, text=True, timeout=120)


def test_cli_names_the_file_that_is_not_parquet(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    good = tmp_path / "good.parquet"
    rows = pa.table({"id": pa.array(range(50_000), pa.int64()), "v": [str(i) * 3 for i in range(50_000)]})
    pq.write_table(rows, good, compression="snappy")
    bad = tmp_path / "bad.parquet"
    bad.write_text("id,v\n1,a\n")
    damaged = tmp_path / "damaged.parquet"
    raw = bytearray(good.read_bytes())
    raw[100:3000] = b"\xab" * 2900  # the first data page: the footer still parses
    damaged.write_bytes(bytes(raw))

    r = _cli("create-table", wh, "db.t", "--schema-from", str(bad))
    assert r.returncode == 2 and f"error: Input file {bad} is not a valid Parquet file: " in r.stderr, r.stderr
    assert _cli("create-table", wh, "db.t", "--schema-from", str(good)).returncode == 0
    for path in (bad, damaged):
        r = _cli("write", wh, "db.t", str(path))
        assert r.returncode == 2 and f"error: Input file {path} is not a valid Parquet file: " in r.stderr, r.stderr
    r = _cli("write", wh, "db.t", str(tmp_path / "missing.parquet"))
    assert r.returncode == 2 and f"Input file {tmp_path / 'missing.parquet'} does not exist" in r.stderr
    t = FileSystemCatalog(wh).get_table("db.t")
    assert t.latest_snapshot() is None
    assert not list((Path(wh) / "db.db" / "t").glob("bucket-*/*"))  # the damaged file's batches were cleaned up
