"""Fixed-bucket assignment: vectorized hashes vs. the BinaryRow + Murmur3 reference and pypaimon."""

from __future__ import annotations

import json
import subprocess
import textwrap
from decimal import Context, Decimal
from pathlib import Path

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.bucket import bucket_hashes, compute_buckets, hash_bytes_by_words, scalar_bucket
from paimon_core.data.binary_row import binary_row_bytes
from paimon_core.data.internal import internal_to_arrow_scalar
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    parse_data_type,
)
from tests.peer_python import require_peer_python

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)


def reference_hashes(rows: list[list[object | None]], types: list[DataType]) -> np.ndarray:
    return np.array([mmh3.hash(binary_row_bytes(r, types), 42, signed=True) for r in rows], dtype=np.int32)


def arrow_column(values: list[object | None], t: DataType) -> pa.Array:
    return pa.array([internal_to_arrow_scalar(v, t) for v in values], type=to_arrow_type(t))


def test_bigint_ids_two_buckets() -> None:
    buckets = compute_buckets([pa.array(range(10), pa.int64())], [BigIntType()], 2)
    assert buckets.dtype == np.int32
    assert {i for i in range(10) if buckets[i] == 1} == {0, 3, 7, 9}
    assert [scalar_bucket([i], [BigIntType()], 2) for i in range(10)] == buckets.tolist()


@given(st.binary(max_size=64).map(lambda b: b[: len(b) // 4 * 4]), st.integers(0, 2**32 - 1))
def test_murmur_words_equals_mmh3_on_aligned_input(data: bytes, seed: int) -> None:
    assert hash_bytes_by_words(data, seed) == mmh3.hash(data, seed, signed=True)


def test_known_hash_values() -> None:
    # BinaryRow of BIGINT 0 is 16 zero bytes
    assert hash_bytes_by_words(bytes(16)) == mmh3.hash(bytes(16), 42, signed=True)
    assert bucket_hashes([pa.array([0], pa.int64())], [BigIntType()])[0] == hash_bytes_by_words(bytes(16))


# --- vectorized == reference, per type and composite -------------------------------------------

_CTX = Context(prec=60)


def _decimal(p: int, s: int) -> st.SearchStrategy[Decimal]:
    return st.integers(-(10**p) + 1, 10**p - 1).map(lambda u: Decimal(u).scaleb(-s, context=_CTX))


def _ts(precision: int) -> st.SearchStrategy[int]:
    step = 10 ** (9 - precision)
    return st.integers(-(2**62) // step, (2**62) // step).map(lambda v: v * step)


_TYPE_VALUES: st.SearchStrategy[tuple[DataType, st.SearchStrategy[object]]] = st.sampled_from(
    [
        (BooleanType(), st.booleans()),
        (TinyIntType(), st.integers(-128, 127)),
        (SmallIntType(), st.integers(-(2**15), 2**15 - 1)),
        (IntType(), st.integers(-(2**31), 2**31 - 1)),
        (BigIntType(), st.integers(-(2**63), 2**63 - 1)),
        (FloatType(), st.floats(width=32)),
        (DoubleType(), st.floats()),
        (STRING, st.text(max_size=24)),
        (CharType(12), st.text(max_size=12)),
        (BYTES, st.binary(max_size=24)),
        (BinaryType(10), st.binary(max_size=10)),
        (DateType(), st.integers(-(2**31), 2**31 - 1)),
        (TimeType(3), st.integers(0, 86_399_999)),
        (DecimalType(10, 2), _decimal(10, 2)),
        (DecimalType(18, 0), _decimal(18, 0)),
        (DecimalType(19, 3), _decimal(19, 3)),
        (DecimalType(38, 4), _decimal(38, 4)),
        (TimestampType(0), _ts(0)),
        (TimestampType(3), _ts(3)),
        (TimestampType(6), _ts(6)),
        (TimestampType(9), _ts(9)),
        (LocalZonedTimestampType(3), _ts(3)),
        (LocalZonedTimestampType(6), _ts(6)),
    ]
)


@st.composite
def _key_table(draw: st.DrawFn, max_columns: int) -> tuple[list[DataType], list[list[object | None]]]:
    specs = draw(st.lists(_TYPE_VALUES, min_size=1, max_size=max_columns))
    n = draw(st.integers(1, 40))
    columns = [draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n)) for _, values in specs]
    return [t for t, _ in specs], [list(r) for r in zip(*columns, strict=True)]


@settings(max_examples=150, deadline=None)
@given(_key_table(max_columns=1))
def test_vectorized_equals_reference_single_column(
    table: tuple[list[DataType], list[list[object | None]]],
) -> None:
    types, rows = table
    columns = [arrow_column([r[0] for r in rows], types[0])]
    assert bucket_hashes(columns, types).tolist() == reference_hashes(rows, types).tolist()


@settings(max_examples=150, deadline=None)
@given(_key_table(max_columns=5))
def test_vectorized_equals_reference_composite(
    table: tuple[list[DataType], list[list[object | None]]],
) -> None:
    types, rows = table
    columns = [arrow_column([r[j] for r in rows], t) for j, t in enumerate(types)]
    expected = reference_hashes(rows, types)
    assert bucket_hashes(columns, types).tolist() == expected.tolist()
    buckets = compute_buckets(columns, types, 7)
    assert buckets.tolist() == [scalar_bucket(r, types, 7) for r in rows]
    assert buckets.tolist() == [abs(int(h) % 7 if h >= 0 else -(-int(h) % 7)) for h in expected]


def test_other_arrow_representations() -> None:
    values = ["a", None, "a much longer string", "ü", "", "1234567", "12345678"]
    rows = [[v] for v in values]
    expected = reference_hashes(rows, [STRING]).tolist()
    base = pa.array(values)
    variants = [
        base,
        base.cast(pa.large_string()),
        base.cast(pa.string_view()),
        base.dictionary_encode(),
        pa.chunked_array([base.slice(0, 3), base.slice(3)]),
        pa.concat_arrays([pa.array(["zz"]), base]).slice(1),
    ]
    for v in variants:
        assert bucket_hashes([v], [STRING]).tolist() == expected, v.type
    ts = [0, None, 1_704_112_200_123_456_000, -1_000]
    expected_ts = reference_hashes([[v] for v in ts], [LocalZonedTimestampType(6)]).tolist()
    micros = pa.array([None if v is None else v // 1000 for v in ts], pa.timestamp("us", tz="Asia/Tokyo"))
    assert bucket_hashes([micros], [LocalZonedTimestampType(6)]).tolist() == expected_ts
    nanos = pa.array([None if v is None else v for v in ts], pa.timestamp("ns"))
    assert bucket_hashes([nanos], [TimestampType(6)]).tolist() == expected_ts
    ints = pa.array([1, None, 3], pa.int64())
    assert (
        bucket_hashes([ints], [IntType()]).tolist()
        == reference_hashes([[1], [None], [3]], [IntType()]).tolist()
    )
    nulls = pa.nulls(3)
    assert (
        bucket_hashes([nulls], [DecimalType(38, 2)]).tolist()
        == reference_hashes([[None]] * 3, [DecimalType(38, 2)]).tolist()
    )


def test_large_input_and_edges() -> None:
    n = 200_000
    ids = pa.array(np.arange(n, dtype=np.int64) * 7919 - 10**9)
    names = pa.array([f"name-{i % 1000}" * (i % 3) for i in range(n)])
    types: list[DataType] = [STRING, BigIntType()]
    got = compute_buckets([names, ids], types, 16)
    sample = range(0, n, 997)
    assert [got[i] for i in sample] == [
        scalar_bucket([names[i].as_py(), ids[i].as_py()], types, 16) for i in sample
    ]
    assert compute_buckets([pa.array([], pa.int64())], [BigIntType()], 3).tolist() == []
    with pytest.raises(InvalidArgumentError):
        compute_buckets([ids], [BigIntType()], 0)
    with pytest.raises(InvalidArgumentError):
        bucket_hashes([ids, names.slice(1)], types)
    with pytest.raises(InvalidArgumentError):
        bucket_hashes([], [])


# --- cross-check against pypaimon -------------------------------------------------------------

_PEER_SCRIPT = textwrap.dedent(
    """
    import sys, datetime, decimal, pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    wh = sys.argv[1]
    cat = CatalogFactory.create({"warehouse": wh})
    cat.create_database("db", True)
    n = 300

    def write(name, table, primary_keys=None, **options):
        schema = Schema.from_pyarrow_schema(table.schema, primary_keys=primary_keys, options=options)
        cat.create_table("db." + name, schema, False)
        t = cat.get_table("db." + name)
        wb = t.new_batch_write_builder()
        w = wb.new_write()
        w.write_arrow(table)
        wb.new_commit().commit(w.prepare_commit())

    keys = pa.table({
        "k1": [None if i % 17 == 0 else ("key-%d" % i) * (i % 4) for i in range(n)],
        "k2": pa.array([None if i % 13 == 0 else i * 7919 - 500 for i in range(n)], pa.int32()),
        "v": pa.array(range(n), pa.int64()),
    })
    write("append_keys", keys, bucket="4", **{"bucket-key": "k1,k2"})
    pk = pa.table({
        "k1": [("key-%d" % i) * (i % 4) for i in range(n)],
        "k2": pa.array([i * 7919 - 500 for i in range(n)], pa.int32()),
        "v": pa.array(range(n), pa.int64()),
    }, schema=pa.schema([pa.field("k1", pa.string(), False), pa.field("k2", pa.int32(), False),
                         ("v", pa.int64())]))
    write("pk", pk, primary_keys=["k1", "k2"], bucket="3")
    many = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "b": pa.array([None if i % 11 == 0 else i % 2 == 0 for i in range(n)]),
        "t8": pa.array([(i * 37) % 256 - 128 for i in range(n)], pa.int8()),
        "s16": pa.array([i * 1001 % 65536 - 32768 for i in range(n)], pa.int16()),
        "f": pa.array([i * 1.25 - 7 for i in range(n)], pa.float32()),
        "dbl": pa.array([None if i % 7 == 0 else i / 3 for i in range(n)], pa.float64()),
        "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in range(n)], pa.date32()),
        "ts3": pa.array([datetime.datetime(2024, 1, 1, 1, 2, 3) + datetime.timedelta(milliseconds=i * 12345)
                         for i in range(n)], pa.timestamp("ms")),
        "ts6": pa.array([datetime.datetime(1960, 1, 1) + datetime.timedelta(microseconds=i * 123456789)
                         for i in range(n)], pa.timestamp("us")),
        "dec": pa.array([decimal.Decimal(i * 1234 - 99999).scaleb(-2) for i in range(n)], pa.decimal128(10, 2)),
        "dec38": pa.array([decimal.Decimal((i - 150) * 10**25 + i).scaleb(-4) for i in range(n)],
                          pa.decimal128(38, 4)),
        "bin": pa.array([bytes([i % 256]) * (i % 12) for i in range(n)], pa.binary()),
    })
    write("many_types", many, bucket="5", **{"bucket-key": "b,t8,s16,f,dbl,d,ts3,ts6,dec,dec38,bin"})
    """
)


def _run_peer(tmp_path: Path) -> Path:
    PEER_PYTHON = require_peer_python()
    script = tmp_path / "write_tables.py"
    script.write_text(_PEER_SCRIPT)
    warehouse = tmp_path / "wh"
    result = subprocess.run(
        [str(PEER_PYTHON), str(script), str(warehouse)], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return warehouse / "db.db"


def _check_table(table_dir: Path, key_names: list[str]) -> int:
    schema = json.loads((table_dir / "schema" / "schema-0").read_text())
    types = {f["name"]: parse_data_type(f["type"]) for f in schema["fields"]}
    num_buckets = int(schema["options"]["bucket"])
    checked = 0
    for data_file in sorted(table_dir.glob("bucket-*/*.parquet")):
        bucket = int(data_file.parent.name.removeprefix("bucket-"))
        data = pq.read_table(data_file, columns=key_names)
        got = compute_buckets([data.column(k) for k in key_names], [types[k] for k in key_names], num_buckets)
        assert (got == bucket).all(), (
            f"{data_file}: expected bucket {bucket}, got {sorted(set(got.tolist()))}"
        )
        checked += data.num_rows
    return checked


@pytest.mark.interop
def test_buckets_match_pypaimon(tmp_path: Path) -> None:
    db = _run_peer(tmp_path)
    assert _check_table(db / "append_keys", ["k1", "k2"]) == 300
    assert _check_table(db / "pk", ["k1", "k2"]) == 300
    many_keys = ["b", "t8", "s16", "f", "dbl", "d", "ts3", "ts6", "dec", "dec38", "bin"]
    assert _check_table(db / "many_types", many_keys) == 300
    # every bucket got rows, so the check is not vacuous
    assert len(list((db / "append_keys").glob("bucket-*"))) == 4
