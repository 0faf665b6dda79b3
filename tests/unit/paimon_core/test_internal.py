"""Internal values, Arrow scalars and partition strings (Java InternalRowPartitionComputer)."""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import textwrap
from decimal import Context, Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.data.internal import (
    DEFAULT_PARTITION_NAME,
    arrow_scalar_to_internal,
    escape_path_name,
    from_internal,
    internal_to_arrow_scalar,
    is_blank,
    partition_dir_value,
    partition_string_to_value,
    partition_value_to_string,
    to_internal,
    unescape_path_name,
)
from paimon_core.exceptions import InvalidArgumentError, SchemaError
from paimon_core.format.arrow_types import to_arrow_type
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
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from tests.peer_python import require_peer_python

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)
NS = 10**9


# --- to_internal / from_internal ---------------------------------------------------------------


def test_friendly_values() -> None:
    assert to_internal(dt.date(2024, 1, 1), DateType()) == 19723
    assert to_internal("2024-01-01", DateType()) == 19723
    assert to_internal(dt.time(1, 2, 3, 4000), TimeType(3)) == 3_723_004
    assert to_internal("01:02:03.004", TimeType(3)) == 3_723_004
    naive = dt.datetime(2024, 1, 1, 12, 30, 0, 123456)
    assert to_internal(naive, TimestampType(6)) == 1_704_112_200_123_456_000
    assert to_internal("2024-01-01 12:30:00.123456", TimestampType(6)) == 1_704_112_200_123_456_000
    assert to_internal("2024-01-01T12:30:00.123456789", TimestampType(9)) == 1_704_112_200_123_456_789
    aware = dt.datetime(2024, 1, 1, 14, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert to_internal(aware, LocalZonedTimestampType(3)) == 1_704_112_200 * NS
    assert to_internal("2024-01-01T14:30:00+02:00", LocalZonedTimestampType(3)) == 1_704_112_200 * NS
    assert to_internal("2024-01-01T12:30:00Z", LocalZonedTimestampType(0)) == 1_704_112_200 * NS
    assert to_internal(dt.datetime(2024, 1, 1, 12, 30), LocalZonedTimestampType(3)) == 1_704_112_200 * NS
    assert to_internal(1.005, DecimalType(10, 2)) == Decimal("1.01")  # HALF_UP like Java
    assert to_internal("12.3", DecimalType(10, 2)) == Decimal("12.30")
    assert str(to_internal(-0.001, DecimalType(5, 2))) == "0.00"
    assert to_internal(7, DecimalType(3, 0)) == Decimal(7)
    assert to_internal(bytearray(b"ab"), BYTES) == b"ab"
    assert to_internal(0.1, FloatType()) == float(pa.scalar(0.1, pa.float32()).as_py())
    assert to_internal(3, DoubleType()) == 3.0


def test_from_internal_out_of_range() -> None:
    with pytest.raises(InvalidArgumentError):
        from_internal(10**20, DateType())


def test_from_internal() -> None:
    assert from_internal(19723, DateType()) == dt.date(2024, 1, 1)
    assert from_internal(3_723_004, TimeType(3)) == dt.time(1, 2, 3, 4000)
    assert from_internal(1_704_112_200_123_456_789, TimestampType(9)) == dt.datetime(
        2024, 1, 1, 12, 30, 0, 123456
    )
    assert from_internal(-1, TimestampType(9)) == dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    assert from_internal(0, LocalZonedTimestampType(3)) == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert from_internal(Decimal("1.50"), DecimalType(3, 2)) == Decimal("1.50")
    assert from_internal(None, IntType()) is None


@pytest.mark.parametrize(
    ("value", "t"),
    [
        (128, TinyIntType()),
        (-32769, SmallIntType()),
        (2**31, IntType()),
        (2**63, BigIntType()),
        (True, IntType()),
        (1.0, BigIntType()),
        ("1", IntType()),
        (1, BooleanType()),
        (1e39, FloatType()),
        (Decimal("1000"), DecimalType(3, 0)),
        (Decimal("99.995"), DecimalType(4, 2)),
        (Decimal("NaN"), DecimalType(4, 2)),
        ("abc", DecimalType(4, 2)),
        ("abcd", VarCharType(3)),
        ("abcd", CharType(3)),
        (b"abcd", BinaryType(3)),
        ("x", BYTES),
        (dt.datetime(2024, 1, 1), DateType()),
        ("2024-02-30", DateType()),
        (86_400_000, TimeType()),
        (dt.datetime(2024, 1, 1, 0, 0, 0, 1000), TimestampType(0)),
        (1_000, TimestampType(3)),
        ("2024-01-01 25:00:00", TimestampType(3)),
        (object(), STRING),
    ],
)
def test_invalid_values(value: object, t: DataType) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        to_internal(value, t)
    assert str(t) in str(info.value)


def test_nested_types_are_not_representable() -> None:
    with pytest.raises(SchemaError):
        to_internal([1], ArrayType(IntType()))


# --- hypothesis: internal <-> Arrow scalar ---------------------------------------------------

_days = st.integers(-719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31


def _ts(precision: int) -> st.SearchStrategy[int]:
    step = 10 ** (9 - precision)
    return st.integers(-(2**62) // step, (2**62) // step).map(lambda v: v * step)


def _decimal(p: int, s: int) -> st.SearchStrategy[Decimal]:
    return st.integers(-(10**p) + 1, 10**p - 1).map(lambda u: Decimal(u).scaleb(-s, context=Context(prec=60)))


_typed_values: st.SearchStrategy[tuple[DataType, object]] = st.one_of(
    st.tuples(st.just(BooleanType()), st.booleans()),
    st.tuples(st.just(TinyIntType()), st.integers(-128, 127)),
    st.tuples(st.just(SmallIntType()), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just(IntType()), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(BigIntType()), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(FloatType()), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just(DoubleType()), st.floats(allow_nan=False)),
    st.tuples(st.just(STRING), st.text()),
    st.tuples(st.just(BYTES), st.binary()),
    st.tuples(st.just(DateType()), _days),
    st.tuples(st.just(TimeType(3)), st.integers(0, 86_399_999)),
    st.sampled_from([(10, 2), (18, 0), (19, 4), (38, 10)]).flatmap(
        lambda ps: st.tuples(st.just(DecimalType(*ps)), _decimal(*ps))
    ),
    st.sampled_from([0, 3, 6, 9]).flatmap(lambda p: st.tuples(st.just(TimestampType(p)), _ts(p))),
    st.sampled_from([0, 3, 6, 9]).flatmap(lambda p: st.tuples(st.just(LocalZonedTimestampType(p)), _ts(p))),
)


@given(_typed_values)
def test_arrow_scalar_round_trip(tv: tuple[DataType, object]) -> None:
    t, v = tv
    scalar = internal_to_arrow_scalar(v, t)
    assert scalar.type == to_arrow_type(t)
    assert arrow_scalar_to_internal(scalar, t) == v
    assert to_internal(v, t) == v
    assert arrow_scalar_to_internal(pa.scalar(None, type=to_arrow_type(t)), t) is None


def test_arrow_scalar_other_representations() -> None:
    assert arrow_scalar_to_internal(pa.scalar(5, pa.timestamp("ms")), TimestampType(6)) == 5 * 10**6
    assert arrow_scalar_to_internal(pa.scalar("a", pa.large_string()), STRING) == "a"
    assert arrow_scalar_to_internal(pa.scalar(86_400_000, pa.date64()), DateType()) == 1
    assert arrow_scalar_to_internal(pa.scalar(1_500, pa.time64("us")), TimeType(3)) == 1
    assert arrow_scalar_to_internal(
        pa.scalar(Decimal("1.5"), pa.decimal128(5, 1)), DecimalType(5, 2)
    ) == Decimal("1.50")


@given(_typed_values)
def test_from_internal_round_trip(tv: tuple[DataType, object]) -> None:
    t, v = tv
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if t.precision > 6 or not -62_135_596_800 * NS <= v < 253_402_300_800 * NS:  # type: ignore[operator]
            return  # datetime holds microseconds within years 1..9999 only
    assert to_internal(from_internal(v, t), t) == v


# --- partition strings -------------------------------------------------------------------------

TS_1230 = 1_704_112_200 * NS  # 2024-01-01 12:30:00


@pytest.mark.parametrize(
    ("value", "t", "legacy", "cast"),
    [
        ("2024-01-01", STRING, "2024-01-01", "2024-01-01"),
        (18628, DateType(), "18628", "2021-01-01"),  # Spark DDLTestBase: day=18628 / day=2021-01-01
        (TS_1230, TimestampType(3), "2024-01-01T12:30", "2024-01-01 12:30:00.000"),
        (TS_1230 + 123 * 10**6, TimestampType(3), "2024-01-01T12:30:00.123", "2024-01-01 12:30:00.123"),
        (TS_1230 + 5 * NS, TimestampType(0), "2024-01-01T12:30:05", "2024-01-01 12:30:05"),
        (TS_1230 + 123_456_000, TimestampType(6), "2024-01-01T12:30:00.123456", "2024-01-01 12:30:00.123456"),
        (TS_1230 + 1, TimestampType(9), "2024-01-01T12:30:00.000000001", "2024-01-01 12:30:00.000000001"),
        (-1 * 10**6, LocalZonedTimestampType(3), "1969-12-31T23:59:59.999", "1969-12-31 23:59:59.999"),
        (3_600_000, TimeType(0), "3600000", "01:00:00"),
        (3_600_120, TimeType(3), "3600120", "01:00:00.12"),
        (Decimal("-0.10"), DecimalType(10, 2), "-0.10", "-0.10"),
        (
            Decimal("12345678901234567890.5"),
            DecimalType(38, 1),
            "12345678901234567890.5",
            "12345678901234567890.5",
        ),
        (True, BooleanType(), "true", "true"),
        (False, BooleanType(), "false", "false"),
        (-5, TinyIntType(), "-5", "-5"),
        (2**63 - 1, BigIntType(), "9223372036854775807", "9223372036854775807"),
        (1e7, DoubleType(), "1.0E7", "1.0E7"),
        (0.1, DoubleType(), "0.1", "0.1"),
        (1234567.0, DoubleType(), "1234567.0", "1234567.0"),
        (0.001, DoubleType(), "0.001", "0.001"),
        (0.0001, DoubleType(), "1.0E-4", "1.0E-4"),
        (-0.0, DoubleType(), "-0.0", "-0.0"),
        (math.inf, DoubleType(), "Infinity", "Infinity"),
        (5e-324, DoubleType(), "4.9E-324", "4.9E-324"),
        (0.1, FloatType(), "0.1", "0.1"),
        (123456.79, FloatType(), "123456.79", "123456.79"),
        (1.4e-45, FloatType(), "1.4E-45", "1.4E-45"),
        (3.4028234663852886e38, FloatType(), "3.4028235E38", "3.4028235E38"),
        (b"2021", BYTES, "2021", "2021"),
    ],
)
def test_partition_value_to_string(value: object, t: DataType, legacy: str, cast: str) -> None:
    assert partition_value_to_string(value, t) == legacy
    assert partition_value_to_string(value, t, legacy_name=False) == cast
    for text in (legacy, cast):
        parsed = partition_string_to_value(text, t)
        if isinstance(t, (FloatType, DoubleType)):
            assert parsed == to_internal(value, t) or (math.isnan(value) and math.isnan(parsed))  # type: ignore[arg-type]
        else:
            assert parsed == to_internal(value, t)


def test_partition_null_and_blank_become_default_name() -> None:
    with pytest.raises(InvalidArgumentError):
        partition_value_to_string(None, STRING)
    assert partition_dir_value(None, IntType()) == DEFAULT_PARTITION_NAME
    assert partition_dir_value("", STRING) == DEFAULT_PARTITION_NAME
    assert partition_dir_value(" \t\u2003", STRING) == DEFAULT_PARTITION_NAME
    assert partition_dir_value("\u00a0", STRING) == "\u00a0"  # Java: NBSP is not whitespace
    assert partition_dir_value(None, IntType(), default_partition_name="dflt") == "dflt"
    assert partition_dir_value("a/b c:d=e%f", STRING) == "a%2Fb c%3Ad%3De%25f"
    assert partition_dir_value(19723, DateType(), legacy_name=False) == "2024-01-01"
    assert partition_dir_value(TS_1230, TimestampType(3)) == "2024-01-01T12%3A30"
    assert is_blank(None) and is_blank("  ") and not is_blank(" x ")


def test_partition_string_parsing_extras() -> None:
    assert partition_string_to_value("YES", BooleanType()) is True
    assert partition_string_to_value("0", BooleanType()) is False
    assert partition_string_to_value("2024-01-01 10:00:00", DateType()) == 19723
    assert partition_string_to_value("1704112200", TimestampType(0)) == TS_1230
    assert partition_string_to_value("1704112200000", TimestampType(3)) == TS_1230
    assert partition_string_to_value("2024-1-1 12:30:00.123456", TimestampType(3)) == TS_1230 + 123 * 10**6
    assert partition_string_to_value("NaN", DoubleType()) != partition_string_to_value("NaN", DoubleType())
    with pytest.raises(InvalidArgumentError):
        partition_string_to_value("1.5", IntType())
    with pytest.raises(InvalidArgumentError):
        partition_string_to_value("maybe", BooleanType())
    with pytest.raises(InvalidArgumentError):
        partition_string_to_value("128", TinyIntType())
    with pytest.raises(InvalidArgumentError):
        partition_string_to_value("x", DecimalType(5, 2))


@settings(deadline=None)
@given(_typed_values, st.booleans())
def test_partition_string_round_trip(tv: tuple[DataType, object], legacy: bool) -> None:
    t, v = tv
    if isinstance(t, (TimestampType, LocalZonedTimestampType, DateType)):
        bound = 253_402_300_800 * NS if not isinstance(t, DateType) else 2_932_896
        low = -62_135_596_800 * NS if not isinstance(t, DateType) else -719_162
        if not low <= v < bound:  # type: ignore[operator]
            return  # Java formats years 1..9999 only
    if isinstance(t, VarBinaryType):
        v = bytes(v).decode("utf-8", "replace").encode()  # type: ignore[call-overload]
    text = partition_value_to_string(v, t, legacy_name=legacy)
    assert partition_string_to_value(text, t) == v


# --- path escaping -----------------------------------------------------------------------------


def test_escape_path_name() -> None:
    assert escape_path_name("a/b c:d=e%f") == "a%2Fb c%3Ad%3De%25f"
    assert escape_path_name("ü") == "ü"
    assert escape_path_name("\x01\n#?*'\"\\{}[]^\x7f") == "%01%0A%23%3F%2A%27%22%5C%7B%7D%5B%5D%5E%7F"
    assert escape_path_name("a-b_c.d~e!f@g$h&(i)+,;") == "a-b_c.d~e!f@g$h&(i)+,;"
    with pytest.raises(InvalidArgumentError):
        escape_path_name("")


def test_unescape_path_name() -> None:
    assert unescape_path_name("a%2Fb c%3Ad%3De%25f") == "a/b c:d=e%f"
    assert unescape_path_name("%2f") == "/"
    assert unescape_path_name("%2") == "%2"
    assert unescape_path_name("100%") == "100%"
    assert unescape_path_name("%zz%") == "%zz%"
    assert unescape_path_name("%-1") == "%-1"  # Integer.parseInt("-1", 16) < 0 -> kept


@given(st.text(min_size=1))
def test_escape_round_trip(s: str) -> None:
    escaped = escape_path_name(s)
    assert "/" not in escaped and ":" not in escaped and "=" not in escaped
    assert unescape_path_name(escaped) == s


# --- cross-check against pypaimon's partition directories -------------------------------------

_PEER_PARTITION_SCRIPT = textwrap.dedent(
    """
    import sys, datetime, decimal, pyarrow as pa
    from pypaimon import CatalogFactory, Schema
    cat = CatalogFactory.create({"warehouse": sys.argv[1]})
    cat.create_database("db", True)
    t = pa.table({
        "id": pa.array([1, 2], pa.int64()),
        "d": pa.array([datetime.date(2021, 1, 1), None], pa.date32()),
        "ts": pa.array([datetime.datetime(2024, 1, 1, 12, 30),
                        datetime.datetime(2024, 1, 1, 12, 30, 0, 123000)], pa.timestamp("ms")),
        "s": pa.array(["a/b c:d=e%f", "\\u00fc#?*"]),
        "dec": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-0.10")], pa.decimal128(10, 2)),
        "b": pa.array([True, False]),
        "dbl": pa.array([1e7, 0.1]),
    })
    keys = ["d", "ts", "s", "dec", "b", "dbl"]
    cat.create_table("db.t", Schema.from_pyarrow_schema(t.schema, partition_keys=keys), False)
    tb = cat.get_table("db.t")
    wb = tb.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(t)
    wb.new_commit().commit(w.prepare_commit())
    """
)


@pytest.mark.interop
def test_partition_dirs_match_pypaimon(tmp_path: Path) -> None:
    PEER_PYTHON = require_peer_python()
    script = tmp_path / "write.py"
    script.write_text(_PEER_PARTITION_SCRIPT)
    wh = tmp_path / "wh"
    subprocess.run([str(PEER_PYTHON), str(script), str(wh)], check=True, capture_output=True, timeout=300)
    found = {
        str(p.parent.parent.relative_to(wh / "db.db" / "t")) for p in (wh / "db.db" / "t").rglob("*.parquet")
    }
    types = [DateType(), TimestampType(3), STRING, DecimalType(10, 2), BooleanType(), DoubleType()]
    names = ["d", "ts", "s", "dec", "b", "dbl"]
    rows = [
        [18628, TS_1230, "a/b c:d=e%f", Decimal("1.50"), True, 1e7],
        [None, TS_1230 + 123 * 10**6, "ü#?*", Decimal("-0.10"), False, 0.1],
    ]
    expected = {
        "/".join(f"{n}={partition_dir_value(v, t)}" for n, v, t in zip(names, row, types, strict=True))
        for row in rows
    }
    assert found == expected
