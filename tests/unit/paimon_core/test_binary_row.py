"""BinaryRow bytes (Java BinaryRowWriter / AbstractBinaryWriter), incl. paimon-format.md 1.8 examples."""

from __future__ import annotations

import struct
from decimal import Context, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.data.binary_row import (
    EMPTY_ROW,
    binary_row_arity,
    binary_row_bytes,
    deserialize_binary_row,
    null_bits_width,
    serialize_binary_row,
)
from paimon_core.exceptions import CorruptFileError, SchemaError
from paimon_core.schema.data_types import (
    ArrayType,
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
    MapType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", "").replace("|", ""))


# --- worked examples of paimon-format.md 1.8 -------------------------------------------------------


def test_partition_string_example() -> None:
    data = serialize_binary_row(["2024-01-01"], [STRING])
    assert data == h("00000001 | 0000000000000000 | 0a00000010000000 | 323032342d30312d3031 000000000000")
    assert deserialize_binary_row(data, [STRING]) == ("2024-01-01",)


def test_empty_row() -> None:
    assert EMPTY_ROW == h("00000000 0000000000000000")
    assert serialize_binary_row([], []) == EMPTY_ROW
    assert deserialize_binary_row(EMPTY_ROW, []) == ()
    assert binary_row_arity(EMPTY_ROW) == 0


def test_inline_non_ascii_string() -> None:
    data = serialize_binary_row(["ü"], [STRING])
    assert data[12:] == h("c3bc000000000082")
    assert deserialize_binary_row(data, [STRING]) == ("ü",)


def test_null_partition() -> None:
    data = serialize_binary_row([None, None], [STRING, IntType()])
    assert data == h("00000002 0003000000000000 0000000000000000 0000000000000000")
    assert deserialize_binary_row(data, [STRING, IntType()]) == (None, None)


def test_thirteen_field_stats_row_slots() -> None:
    types: list[DataType] = [
        BigIntType(), IntType(), SmallIntType(), TinyIntType(), BooleanType(), FloatType(), DoubleType(),
        DateType(), TimeType(), DecimalType(10, 2), TimestampType(6), DecimalType(38, 4), STRING,
    ]  # fmt: skip
    ts = 1_704_112_200_123_901_000  # ...123 ms + 901000 ns
    dec = Decimal(2**80 + 12345).scaleb(-4, context=Context(prec=60))  # 11-byte unscaled value
    values = [1, 2, 3, 4, True, 1.5, 2.5, 19723, 1000, Decimal("1.25"), ts, dec, "abcdefgh"]
    row = binary_row_bytes(values, types)
    assert null_bits_width(13) + 8 * 13 == 112
    slot = {i: row[8 + 8 * i : 16 + 8 * i] for i in range(13)}
    assert slot[10] == h("88bf0d00 70000000")  # offset 0x70, 901000 ns of the millisecond
    assert slot[11] == h("0b000000 78000000")  # 11 bytes at 0x78, padded to 16
    assert slot[12] == h("08000000 88000000")  # 8-char string at 0x88
    assert struct.unpack_from("<q", row, 0x70)[0] == ts // 10**6
    assert row[0x78 : 0x78 + 11] == (2**80 + 12345).to_bytes(11, "big", signed=True)
    assert row[0x78 + 11 : 0x88] == bytes(5)
    assert row[0x88:] == b"abcdefgh"
    assert slot[9] == struct.pack("<q", 125)
    assert slot[4] == h("0100000000000000")
    assert slot[3] == h("0400000000000000")
    assert deserialize_binary_row(serialize_binary_row(values, types), types) == tuple(values)


def test_null_non_compact_decimal_and_timestamp_reserve_like_java() -> None:
    types = [DecimalType(20, 2), TimestampType(9), IntType()]
    row = binary_row_bytes([None, None, 7], types)
    # header: null bits for fields 0 and 1
    assert row[:8] == h("0003000000000000")
    assert row[8:16] == struct.pack("<q", 32 << 32)  # offset 32, length 0
    assert row[16:24] == struct.pack("<q", 48 << 32)  # 16 bytes later, nanos 0
    assert len(row) == 32 + 16 + 8
    assert row[32:] == bytes(24)
    assert deserialize_binary_row(serialize_binary_row([None, None, 7], types), types) == (None, None, 7)


def test_pypaimon_zero_slot_null_variant_is_read() -> None:
    types = [DecimalType(20, 2), TimestampType(9)]
    pypaimon_style = h("00000002 0003000000000000 0000000000000000 0000000000000000")
    assert deserialize_binary_row(pypaimon_style, types) == (None, None)


def test_negative_values_and_small_decimals() -> None:
    types = [
        TinyIntType(),
        SmallIntType(),
        IntType(),
        DecimalType(20, 0),
        DecimalType(20, 0),
        TimestampType(6),
    ]
    values = [-1, -2, -3, Decimal(-1), Decimal(0), -1_000]  # -1 us before epoch
    row = binary_row_bytes(values, types)
    assert row[8:16] == h("ff00000000000000")
    assert row[16:24] == h("feff000000000000")
    assert row[24:32] == h("fdffffff00000000")
    assert row[32:40] == struct.pack("<q", (56 << 32) | 1) and row[56:72] == h("ff") + bytes(15)
    assert row[40:48] == struct.pack("<q", (72 << 32) | 1) and row[72:88] == bytes(16)
    assert row[48:56] == struct.pack("<q", (88 << 32) | 999_000)
    assert struct.unpack_from("<q", row, 88)[0] == -1
    assert deserialize_binary_row(serialize_binary_row(values, types), types) == tuple(values)


def test_wide_rows_have_wider_header() -> None:
    assert null_bits_width(56) == 8 and null_bits_width(57) == 16
    types = [IntType()] * 57
    values: list[object | None] = [None] * 56 + [5]
    data = serialize_binary_row(values, types)
    assert len(data) == 4 + 16 + 57 * 8
    assert deserialize_binary_row(data, types) == tuple(values)


def test_string_boundaries() -> None:
    for n in (0, 1, 7, 8, 9, 16, 17):
        s = "x" * n
        row = binary_row_bytes([s], [STRING])
        if n <= 7:
            assert len(row) == 16 and row[15] == 0x80 | n
        else:
            assert len(row) == 16 + (n + 7) // 8 * 8
            assert row[8:16] == struct.pack("<q", (16 << 32) | n)
        assert deserialize_binary_row(serialize_binary_row([s], [STRING]), [STRING]) == (s,)


def test_nested_types() -> None:
    types = [ArrayType(IntType()), MapType(STRING, IntType()), IntType()]
    data = serialize_binary_row([None, None, 1], types)
    assert deserialize_binary_row(data, types) == (None, None, 1)
    with pytest.raises(SchemaError):
        serialize_binary_row([[1], None, 1], types)


def test_corrupt_input() -> None:
    with pytest.raises(CorruptFileError):
        deserialize_binary_row(b"\x00\x00", [])
    with pytest.raises(CorruptFileError):
        deserialize_binary_row(serialize_binary_row([1], [IntType()]), [IntType(), IntType()])
    with pytest.raises(CorruptFileError):
        deserialize_binary_row(serialize_binary_row(["long string!"], [STRING])[:-8], [STRING])


# --- hypothesis round trip over every atomic type, with nulls -----------------------------------

_CTX = Context(prec=60)


def _decimal(p: int, s: int) -> st.SearchStrategy[Decimal]:
    return st.integers(-(10**p) + 1, 10**p - 1).map(lambda u: Decimal(u).scaleb(-s, context=_CTX))


def _ts(precision: int) -> st.SearchStrategy[int]:
    step = 10 ** (9 - precision)
    return st.integers(-(2**62) // step, (2**62) // step).map(lambda v: v * step)


_TYPED: st.SearchStrategy[tuple[DataType, object]] = st.one_of(
    st.tuples(st.just(BooleanType()), st.booleans()),
    st.tuples(st.just(TinyIntType()), st.integers(-128, 127)),
    st.tuples(st.just(SmallIntType()), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just(IntType()), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(BigIntType()), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(FloatType()), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just(DoubleType()), st.floats(allow_nan=False)),
    st.tuples(st.just(STRING), st.text(max_size=20)),
    st.tuples(st.just(CharType(10)), st.text(max_size=10)),
    st.tuples(st.just(VarCharType(30)), st.text(max_size=30)),
    st.tuples(st.just(BYTES), st.binary(max_size=20)),
    st.tuples(st.just(BinaryType(9)), st.binary(max_size=9)),
    st.tuples(st.just(DateType()), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(TimeType(3)), st.integers(0, 86_399_999)),
    st.sampled_from([(1, 0), (10, 2), (18, 18), (19, 4), (38, 0), (38, 37)]).flatmap(
        lambda ps: st.tuples(st.just(DecimalType(*ps)), _decimal(*ps))
    ),
    st.integers(0, 9).flatmap(lambda p: st.tuples(st.just(TimestampType(p)), _ts(p))),
    st.integers(0, 9).flatmap(lambda p: st.tuples(st.just(LocalZonedTimestampType(p)), _ts(p))),
)
_ROW = st.lists(st.tuples(_TYPED, st.booleans()), max_size=12)


@settings(deadline=None)
@given(_ROW)
def test_round_trip(fields: list[tuple[tuple[DataType, object], bool]]) -> None:
    types = [tv[0] for tv, _ in fields]
    values = [None if is_null else tv[1] for tv, is_null in fields]
    data = serialize_binary_row(values, types)
    assert binary_row_arity(data) == len(types)
    assert (len(data) - 4) % 8 == 0
    assert deserialize_binary_row(data, types) == tuple(values)
