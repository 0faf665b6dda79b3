"""Z-order and Hilbert keys against a plain-Python port of Paimon's Java (``ZIndexer``,
``ZOrderByteUtils``, ``HilbertIndexer``, ``ConvertBinaryUtil``, Moten's ``HilbertCurve``), one
row at a time, on random values with nulls and edge values of every supported type; and the
range helpers."""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
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
)
from paimon_core.sort import (
    HilbertIndexer,
    SortSpec,
    ZIndexer,
    assign_ranges,
    cut_by_weight,
    range_boundaries,
    sort_indices,
)

M64 = (1 << 64) - 1
MIN = 1 << 63
N = 240
EPOCH = dt.datetime(1970, 1, 1)


# --- Java, one value at a time -------------------------------------------------------------------
def long_bits(v: int) -> int:
    return v & M64


def signed(v: int) -> int:
    v &= M64
    return v - (1 << 64) if v >= MIN else v


def as_float(v: float) -> float:
    out: float = struct.unpack("f", struct.pack("f", v))[0]
    return out


def double_to_long_bits(v: float) -> int:
    if math.isnan(v):
        return 0x7FF8000000000000
    out: int = struct.unpack(">q", struct.pack(">d", v))[0]
    return out


def to_byte_array(v: int) -> bytes:
    """Java ``BigInteger.toByteArray``."""
    length = (v if v >= 0 else ~v).bit_length() // 8 + 1
    return v.to_bytes(length, "big", signed=True)


def truncate_or_fill(b: bytes, n: int) -> bytes:
    return b[:n] + b"\x00" * max(0, n - len(b))


def padding_to_n(b: bytes, n: int) -> bytes:
    return b[:n] if len(b) >= n else b"\x00" * (n - len(b)) + b


def millis(v: dt.datetime) -> int:
    delta = v - EPOCH
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros // 1000


def unscaled(v: Decimal, scale: int) -> int:
    return int(v.scaleb(scale))


def java_zvalue(v: Any, t: DataType, var: int) -> bytes:
    width = var if isinstance(t, (CharType, VarCharType, BinaryType, VarBinaryType)) else 8
    if v is None:
        return b"\x00" * width
    if isinstance(t, (CharType, VarCharType)):
        return truncate_or_fill(v.encode("utf-8"), var)
    if isinstance(t, (BinaryType, VarBinaryType)):
        return truncate_or_fill(v, var)
    if isinstance(t, BooleanType):
        return (b"\x81" if v else b"\x00") + b"\x00" * 7
    if isinstance(t, DecimalType):
        return truncate_or_fill(to_byte_array(unscaled(v, t.scale)), 8)
    if isinstance(t, (FloatType, DoubleType)):
        lval = double_to_long_bits(as_float(v) if isinstance(t, FloatType) else v)
        lval ^= (lval >> 31) | -MIN
        return long_bits(lval).to_bytes(8, "big")
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        v = millis(v)
    elif isinstance(t, DateType):
        v = (v - EPOCH.date()).days
    elif isinstance(t, TimeType):
        v = ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return (long_bits(v) ^ MIN).to_bytes(8, "big")


def java_interleave(columns: Sequence[bytes], size: int) -> bytes:
    out = bytearray(size)
    col, src_byte, src_bit, ib, ibit = 0, 0, 7, 0, 7
    while ib < size:
        out[ib] |= ((columns[col][src_byte] & (1 << src_bit)) >> src_bit) << ibit
        ibit -= 1
        if ibit == -1:
            ib += 1
            ibit = 7
        if ib == size:
            break
        while True:
            col += 1
            if col == len(columns):
                col = 0
                src_bit -= 1
                if src_bit == -1:
                    src_byte += 1
                    src_bit = 7
            if len(columns[col]) > src_byte:
                break
    return bytes(out)


def java_hvalue(v: Any, t: DataType) -> int:
    if v is None:
        return (1 << 63) - 1
    if isinstance(t, (CharType, VarCharType)):
        return signed(int.from_bytes(padding_to_n(v.encode("utf-8"), 8), "big"))
    if isinstance(t, (BinaryType, VarBinaryType)):
        return signed(int.from_bytes(padding_to_n(v, 8), "big"))
    if isinstance(t, BooleanType):
        return 1 if v else 0
    if isinstance(t, DecimalType):
        return signed(int(v))  # BigDecimal.longValue: integer part, low 64 bits
    if isinstance(t, TinyIntType):
        return v & 0xFF
    if isinstance(t, (FloatType, DoubleType)):
        return double_to_long_bits(as_float(v) if isinstance(t, FloatType) else v)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return millis(v)
    if isinstance(t, DateType):
        return (v - EPOCH.date()).days
    if isinstance(t, TimeType):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return int(v)


def moten_index(bits: int, point: Sequence[int]) -> int:
    """Moten's ``HilbertCurve.bits(bits).index(point)`` with Java long arithmetic."""
    x = [long_bits(p) for p in point]
    n = len(x)
    m = 1 << (bits - 1)
    q = m
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = m
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [xi ^ t for xi in x]
    length = bits * n
    b = bytearray(length)
    b_index = length - 1
    mask = 1 << (bits - 1)
    for _ in range(bits):
        for j in range(n):
            if x[j] & mask:
                b[length - 1 - b_index // 8] |= 1 << (b_index % 8)
            b_index -= 1
        mask >>= 1
    return int.from_bytes(bytes(b), "big")


def java_hilbert_key(longs: Sequence[int]) -> bytes:
    index = moten_index(63, longs)
    return padding_to_n(to_byte_array(index), 63 * len(longs) // 8 + 1)


# --- data ----------------------------------------------------------------------------------------
def _gen(rng: random.Random, edges: Sequence[Any], make: Callable[[], Any]) -> list[Any]:
    values = list(edges) + [None] * 10
    values += [make() for _ in range(N - len(values))]
    rng.shuffle(values)
    return values


def _text(rng: random.Random) -> str:
    return "".join(rng.choice("aZ09ü€𝄞 _") for _ in range(rng.randint(0, 12)))


def columns(rng: random.Random) -> list[tuple[DataField, pa.DataType, list[Any]]]:
    i64 = (-(1 << 63), (1 << 63) - 1, 0, -1, 1)
    specs: list[tuple[DataType, pa.DataType, Sequence[Any], Callable[[], Any]]] = [
        (TinyIntType(), pa.int8(), (-128, 127, 0, -1), lambda: rng.randint(-128, 127)),
        (SmallIntType(), pa.int16(), (-32768, 32767, 0, -1), lambda: rng.randint(-32768, 32767)),
        (IntType(), pa.int32(), (-(1 << 31), (1 << 31) - 1, 0, -1), lambda: rng.randint(-(1 << 31), (1 << 31) - 1)),
        (BigIntType(), pa.int64(), i64, lambda: rng.randint(-(1 << 63), (1 << 63) - 1)),
        (FloatType(), pa.float32(), (float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-40),
         lambda: struct.unpack("f", struct.pack("f", rng.uniform(-1e6, 1e6)))[0]),
        (DoubleType(), pa.float64(), (float("nan"), float("inf"), float("-inf"), -0.0, 5e-324, -1.5),
         lambda: rng.uniform(-1e12, 1e12)),
        (BooleanType(), pa.bool_(), (True, False), lambda: rng.random() < 0.5),
        (VarCharType(100), pa.string(), ("", "a", "abcdefgh", "abcdefghi", "ü€𝄞"), lambda: _text(rng)),
        (VarBinaryType(100), pa.binary(), (b"", b"\xff" * 9, b"\x00\x01"), lambda: rng.randbytes(rng.randint(0, 11))),
        (DecimalType(10, 2), pa.decimal128(10, 2), (Decimal("0.00"), Decimal("-0.01"), Decimal("99999999.99"),
         Decimal("-99999999.99"), Decimal("1.27"), Decimal("1.28"), Decimal("-1.28"), Decimal("-1.29")),
         lambda: Decimal(rng.randint(-10**10 + 1, 10**10 - 1)).scaleb(-2)),
        (DecimalType(38, 3), pa.decimal128(38, 3), (Decimal(10**35 - 1).scaleb(-3) * -1, Decimal("-0.5"),
         Decimal("12345678901234567890.123")), lambda: Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-3)),
        (DateType(), pa.date32(), (dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(9999, 12, 31)),
         lambda: dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-100000, 100000))),
        (TimeType(3), pa.time32("ms"), (dt.time(0), dt.time(23, 59, 59, 999000)),
         lambda: dt.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999) * 1000)),
        (TimestampType(6), pa.timestamp("us"), (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), EPOCH,
         dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
         lambda: EPOCH + dt.timedelta(microseconds=rng.randint(-10**16, 10**16))),
        (LocalZonedTimestampType(3), pa.timestamp("ms", tz="UTC"), (dt.datetime(1969, 12, 31, 23, 59, 59, 999000),),
         lambda: EPOCH + dt.timedelta(milliseconds=rng.randint(-10**13, 10**13))),
    ]  # fmt: skip
    out = []
    for i, (t, at, edges, make) in enumerate(specs):
        values = _gen(rng, edges, make)
        if pa.types.is_timestamp(at) and at.tz is not None:
            values = [None if v is None else v.replace(tzinfo=dt.UTC) for v in values]
        out.append((DataField(i, f"c{i}", t), at, values))
    return out


def _plain(v: Any) -> Any:
    return v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v


@pytest.fixture(scope="module")
def data() -> tuple[list[DataField], pa.Table, dict[str, list[Any]]]:
    cols = columns(random.Random(20261127))
    table = pa.table({f.name: pa.array(v, at) for f, at, v in cols})
    return [f for f, _, _ in cols], table, {f.name: [_plain(x) for x in v] for f, _, v in cols}


def _combos(fields: Sequence[DataField]) -> list[list[str]]:
    names = [f.name for f in fields]
    rng = random.Random(7)
    out = [[n, names[(i + 3) % len(names)]] for i, n in enumerate(names)]
    out += [rng.sample(names, k) for k in (3, 4, 5, 8)]
    return out


@pytest.mark.parametrize("var", [8, 3, 13])
def test_zorder_keys_match_java(data: tuple[list[DataField], pa.Table, dict[str, list[Any]]], var: int) -> None:
    fields, table, values = data
    by_name = {f.name: f for f in fields}
    for combo in _combos(fields):
        ours = ZIndexer(fields, combo, var_length=var).index(table).to_pylist()
        size = sum(var if isinstance(by_name[c].type, (VarCharType, VarBinaryType)) else 8 for c in combo)
        for row in range(table.num_rows):
            cols = [java_zvalue(values[c][row], by_name[c].type, var) for c in combo]
            assert ours[row] == java_interleave(cols, size), (combo, row, [values[c][row] for c in combo])


def test_hilbert_keys_match_java(data: tuple[list[DataField], pa.Table, dict[str, list[Any]]]) -> None:
    fields, table, values = data
    by_name = {f.name: f for f in fields}
    names = [f.name for f in fields]
    for combo in _combos(fields)[::2] + [names[:3], names[2:10], names[:9], names]:  # up to 15 dimensions
        ours = HilbertIndexer(fields, combo).index(table).to_pylist()
        for row in range(0, table.num_rows, 3):
            longs = [java_hvalue(values[c][row], by_name[c].type) for c in combo]
            assert ours[row] == java_hilbert_key(longs), (combo, row, [values[c][row] for c in combo])


def test_hilbert_curve_small_grid_is_a_path() -> None:
    """2 dims x 2 bits through the same transform: consecutive indexes are neighbouring cells."""
    from paimon_core.sort.hilbert import hilbert_index_bytes

    xs, ys = np.meshgrid(np.arange(64, dtype=np.int64), np.arange(64, dtype=np.int64))
    keys = hilbert_index_bytes([xs.ravel(), ys.ravel()])
    order = np.lexsort([keys[:, i] for i in range(keys.shape[1] - 1, -1, -1)])
    pts = np.stack([xs.ravel()[order], ys.ravel()[order]], axis=1)
    assert (np.abs(np.diff(pts, axis=0)).sum(axis=1) == 1).all()
    assert [moten_index(63, [int(x), int(y)]) for x, y in pts[:5]] == sorted(
        moten_index(63, [int(x), int(y)]) for x, y in pts[:5]
    )


def test_sort_indices_orders_by_key_nulls_first(data: tuple[list[DataField], pa.Table, dict[str, list[Any]]]) -> None:
    fields, table, values = data
    spec = SortSpec.of("order", "c2,c3", {})
    order = sort_indices(spec.keys(table, fields))
    got = [(values["c2"][i], values["c3"][i]) for i in order]
    want = sorted(got, key=lambda r: tuple((v is not None, v if v is not None else 0) for v in r))
    assert got == want
    z = SortSpec.of("zorder", ["c2", "c7"], {})
    keys = z.keys(table, fields)
    zo = sort_indices(keys)
    raw = keys.column(0).to_pylist()
    assert [raw[i] for i in zo] == sorted(raw)


def test_specs_are_validated_with_clear_errors(data: tuple[list[DataField], pa.Table, dict[str, list[Any]]]) -> None:
    fields, _, _ = data
    with pytest.raises(InvalidArgumentError, match="order_strategy must be one of"):
        SortSpec.of("random", "c1", {})
    with pytest.raises(InvalidArgumentError, match="needs order_by"):
        SortSpec.of("zorder", " , ", {})
    with pytest.raises(InvalidArgumentError, match="Can't find column"):
        SortSpec.of("zorder", "c1,nope", {}).validate(fields, [])
    with pytest.raises(InvalidArgumentError, match="should not contain partition cols"):
        SortSpec.of("order", "c1", {}).validate(fields, ["c1"])
    with pytest.raises(InvalidArgumentError, match="at least two columns"):
        SortSpec.of("hilbert", "c1", {}).validate(fields, [])
    with pytest.raises(InvalidOptionError, match="greater than or equal to 20"):
        SortSpec.of("zorder", "c1", {"sort-compaction.local-sample.magnification": "5"})
    with pytest.raises(InvalidOptionError, match="range-strategy"):
        SortSpec.of("zorder", "c1", {"sort-compaction.range-strategy": "rows"})


def test_ranges_by_weight_and_by_sample() -> None:
    rng = np.random.default_rng(3)
    n = 20000
    keys = pa.table({"k": pa.array(rng.integers(0, 1000, n))})
    weights = np.where(np.arange(n) % 2 == 0, 1.0, 9.0)
    order = sort_indices(keys)
    spans = cut_by_weight(weights[order], 8)
    shares = [weights[order][a:b].sum() for a, b in spans]
    assert len(spans) == 8 and max(shares) / min(shares) < 1.05

    sample = rng.choice(n, 8 * 1000, replace=False)  # the default magnification
    bounds = range_boundaries(keys.take(pa.array(sample)), weights[sample], 8)
    assert bounds.num_rows == 7
    ranges = assign_ranges(keys, bounds)
    assert ranges.min() == 0 and ranges.max() == 7
    # monotone: a higher key never lands in a lower range
    k = keys.column(0).to_numpy()
    assert (np.diff(ranges[np.argsort(k, kind="stable")]) >= 0).all()
    share = np.bincount(ranges, weights=weights, minlength=8)
    assert share.max() / share.min() < 1.25  # keys have ties: 20 rows each
    # binary keys take the same path through words
    z = SortSpec.of("zorder", ["a", "b"], {})
    fields = [DataField(0, "a", IntType()), DataField(1, "b", BigIntType())]
    data = pa.table({"a": pa.array(rng.integers(-50, 50, n), pa.int32()), "b": pa.array(rng.integers(0, 1 << 40, n))})
    zk = z.keys(data, fields)
    zb = range_boundaries(zk.take(pa.array(sample)), np.ones(len(sample)), 4)
    zr = assign_ranges(zk, zb)
    raw = np.array(zk.column(0).to_pylist(), dtype=object)
    bl = zb.column(0).to_pylist()
    assert all(sum(b < key for b in bl) == r for key, r in zip(raw[:500], zr[:500], strict=True))


@pytest.mark.parametrize("columns", [1, 2, 3, 5, 8, 9])
def test_equal_width_interleave_matches_the_bit_by_bit_path(columns: int) -> None:
    from paimon_core.sort.zorder import _interleave_order, interleave_bits

    rng = np.random.default_rng(columns)
    cols = [rng.integers(0, 256, (300, 8), dtype=np.uint8) for _ in range(columns)]
    slow = np.packbits(np.unpackbits(np.concatenate(cols, axis=1), axis=1)[:, _interleave_order([8] * columns)], axis=1)
    assert (interleave_bits(cols) == slow).all()
    assert [bytes(r) for r in interleave_bits(cols)[:20]] == [
        java_interleave([bytes(c[i]) for c in cols], 8 * columns) for i in range(20)
    ]
