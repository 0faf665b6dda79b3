"""The "internal value" of a Paimon atomic type, used for partition values, keys and stats.

==========================  =====================================================
Paimon type                 internal Python value
==========================  =====================================================
BOOLEAN                     ``bool``
TINYINT/SMALLINT/INT/BIGINT ``int`` (range-checked)
FLOAT / DOUBLE              ``float`` (FLOAT rounded to single precision)
DECIMAL(p, s)               ``decimal.Decimal`` with exactly ``s`` fraction digits
CHAR/VARCHAR/STRING         ``str``
BINARY/VARBINARY/BYTES      ``bytes``
DATE                        ``int`` days since 1970-01-01
TIME(p)                     ``int`` milliseconds of the day
TIMESTAMP(p)                ``int`` epoch nanoseconds of the wall-clock time read as UTC
TIMESTAMP_LTZ(p)            ``int`` epoch nanoseconds of the UTC instant
==========================  =====================================================

Nested types (ARRAY, MAP, ROW) have no internal value here and raise :class:`SchemaError`.

The partition helpers render values as Java's ``InternalRowPartitionComputer`` does before
escaping: with ``partition.legacy-name=true`` (Java's default) that is the ``toString()`` of
Java's internal object (DATE as its day number, TIMESTAMP as ``LocalDateTime.toString()``),
otherwise Java's CAST to STRING (``2024-01-01``, ``2024-01-01 12:00:00.000000``).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import struct
import unicodedata
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation

import pyarrow as pa

from paimon_core.exceptions import InvalidArgumentError, SchemaError
from paimon_core.format.arrow_types import timestamp_unit, to_arrow_type
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
    is_nested,
)

__all__ = [
    "DEFAULT_PARTITION_NAME",
    "arrow_scalar_to_internal",
    "escape_path_name",
    "from_internal",
    "internal_to_arrow_scalar",
    "is_blank",
    "partition_dir_value",
    "partition_string_to_value",
    "partition_value_to_string",
    "to_internal",
    "unescape_path_name",
]

#: Java's default ``partition.default-name``.
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

_INT_RANGES: dict[type[DataType], tuple[int, int]] = {
    TinyIntType: (-(2**7), 2**7 - 1),
    SmallIntType: (-(2**15), 2**15 - 1),
    IntType: (-(2**31), 2**31 - 1),
    BigIntType: (-(2**63), 2**63 - 1),
}
_MILLIS_PER_DAY = 86_400_000
_NANOS_PER_DAY = 86_400 * 10**9
_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_UTC = _dt.UTC
_UNIT_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DECIMAL_CONTEXT = Context(prec=100, rounding=ROUND_HALF_UP)


def _bad(value: object, t: DataType, why: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"Value {value!r} is not a valid {t}: {why}", value=repr(value), type=str(t))


def _check_atomic(t: DataType) -> None:
    if is_nested(t):
        raise SchemaError(f"Nested type {t} has no internal value representation")


def _is_int(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or _is_numpy_int(value)


def _int(value: object) -> int:
    """``int(value)`` for a value already known to be integral."""
    return int(value)  # type: ignore[call-overload]


def _float(value: object) -> float:
    """``float(value)`` for a value already known to be numeric."""
    return float(value)  # type: ignore[arg-type]


def _is_numpy_int(value: object) -> bool:
    module = type(value).__module__
    return module == "numpy" and hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"


# --------------------------------------------------------------------------------------------
# to_internal
# --------------------------------------------------------------------------------------------


def to_internal(value: object, t: DataType) -> object:
    """Validate ``value`` for type ``t`` and return its internal form (``None`` stays ``None``).

    Besides internal values it accepts: ``datetime.date`` / ISO strings for DATE;
    ``datetime.time`` / ``HH:MM:SS[.fff]`` for TIME; naive or aware ``datetime.datetime`` / ISO
    strings (up to 9 fraction digits, optional ``Z``/offset) for timestamps (aware values are
    converted to UTC; naive ones are taken as UTC for TIMESTAMP_LTZ); ``Decimal``, ``int``,
    ``float`` or ``str`` for DECIMAL (rounded HALF_UP to the scale, like Java); ``bytearray`` /
    ``memoryview`` for binaries. Raises :class:`InvalidArgumentError` naming value and type.
    """
    _check_atomic(t)
    if value is None:
        return None
    if isinstance(t, BooleanType):
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return bool(value)
        raise _bad(value, t, "expected a bool")
    int_range = _INT_RANGES.get(type(t))
    if int_range is not None:
        if not _is_int(value):
            raise _bad(value, t, "expected an int")
        v = _int(value)
        if not int_range[0] <= v <= int_range[1]:
            raise _bad(value, t, f"out of range [{int_range[0]}, {int_range[1]}]")
        return v
    if isinstance(t, (FloatType, DoubleType)):
        return _float_to_internal(value, t)
    if isinstance(t, DecimalType):
        return _decimal_to_internal(value, t)
    if isinstance(t, (CharType, VarCharType)):
        if not isinstance(value, str):
            raise _bad(value, t, "expected a str")
        if t.length != VarCharType.MAX_LENGTH and len(value) > t.length:
            raise _bad(value, t, f"longer than {t.length} characters")
        return value
    if isinstance(t, (BinaryType, VarBinaryType)):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise _bad(value, t, "expected bytes")
        b = bytes(value)
        if t.length != VarBinaryType.MAX_LENGTH and len(b) > t.length:
            raise _bad(value, t, f"longer than {t.length} bytes")
        return b
    if isinstance(t, DateType):
        return _date_to_internal(value, t)
    if isinstance(t, TimeType):
        return _time_to_internal(value, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return _timestamp_to_internal(value, t)
    raise SchemaError(f"Unsupported type {t}")


def _float_to_internal(value: object, t: FloatType | DoubleType) -> float:
    if isinstance(value, bool) or not (
        isinstance(value, (int, float)) or _is_int(value) or _is_numpy_float(value)
    ):
        raise _bad(value, t, "expected a float")
    try:
        f = _float(value)
    except OverflowError as e:
        raise _bad(value, t, "out of range") from e
    if isinstance(t, FloatType):
        try:
            f = struct.unpack("<f", struct.pack("<f", f))[0]
        except OverflowError as e:
            raise _bad(value, t, "out of the range of a 4-byte float") from e
    return f


def _is_numpy_float(value: object) -> bool:
    return type(value).__module__ == "numpy" and getattr(getattr(value, "dtype", None), "kind", "") == "f"


def _decimal_to_internal(value: object, t: DecimalType) -> Decimal:
    if isinstance(value, bool):
        raise _bad(value, t, "expected a decimal")
    try:
        if isinstance(value, Decimal):
            d = value
        elif isinstance(value, float):
            d = Decimal(repr(value))
        elif isinstance(value, str):
            d = Decimal(value.strip())
        elif _is_int(value):
            d = Decimal(_int(value))
        else:
            raise _bad(value, t, "expected a Decimal, int, float or str")
    except InvalidOperation as e:
        raise _bad(value, t, "not a number") from e
    if not d.is_finite():
        raise _bad(value, t, "not a finite number")
    q = d.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP, context=_DECIMAL_CONTEXT)
    if q.scaleb(t.scale, context=_DECIMAL_CONTEXT).copy_abs() >= 10**t.precision:
        raise _bad(value, t, f"more than {t.precision - t.scale} integer digits")
    if q.is_zero() and q.is_signed():
        q = q.copy_abs()
    return q


_DATE_RE = re.compile(r"^\s*([+-]?\d{1,9})-(\d{1,2})-(\d{1,2})\s*$")
_TIME_RE = re.compile(r"^\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?\s*$")
_TS_RE = re.compile(
    r"^\s*(?P<date>[+-]?\d{1,9}-\d{1,2}-\d{1,2})"
    r"(?:[T ](?P<h>\d{1,2}):(?P<m>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d{0,9}))?)?)?"
    r"\s*(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?\s*$"
)


def _date_from_parts(y: int, mo: int, d: int, value: object, t: DataType) -> int:
    try:
        return _dt.date(y, mo, d).toordinal() - _EPOCH_ORDINAL
    except ValueError as e:
        raise _bad(value, t, str(e)) from e


def _date_to_internal(value: object, t: DateType) -> int:
    if _is_int(value):
        v = _int(value)
        if not -(2**31) <= v < 2**31:
            raise _bad(value, t, "out of the INT range")
        return v
    if isinstance(value, _dt.datetime):
        raise _bad(value, t, "expected a date, not a datetime")
    if isinstance(value, _dt.date):
        return value.toordinal() - _EPOCH_ORDINAL
    if isinstance(value, str):
        m = _DATE_RE.match(value)
        if m is None:
            raise _bad(value, t, "expected YYYY-MM-DD")
        return _date_from_parts(int(m.group(1)), int(m.group(2)), int(m.group(3)), value, t)
    raise _bad(value, t, "expected a date, an ISO string or days since epoch")


def _time_to_internal(value: object, t: TimeType) -> int:
    if _is_int(value):
        v = _int(value)
    elif isinstance(value, _dt.time):
        if value.tzinfo is not None:
            raise _bad(value, t, "TIME has no time zone")
        v = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    elif isinstance(value, str):
        m = _TIME_RE.match(value)
        if m is None:
            raise _bad(value, t, "expected HH:MM[:SS[.fff]]")
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if h > 23 or mi > 59 or s > 59:
            raise _bad(value, t, "field out of range")
        v = ((h * 60 + mi) * 60 + s) * 1000 + int((m.group(4) or "").ljust(3, "0")[:3])
    else:
        raise _bad(value, t, "expected a time, an ISO string or millis of the day")
    if not 0 <= v < _MILLIS_PER_DAY:
        raise _bad(value, t, "millis of day out of range [0, 86400000)")
    return v


def _datetime_nanos(value: _dt.datetime, to_utc: bool) -> int:
    # pandas.Timestamp (what pyarrow returns for ns timestamps) is a datetime with nanoseconds
    extra_nanos = int(getattr(value, "nanosecond", 0) or 0)
    if value.tzinfo is not None and value.utcoffset() is not None and to_utc:
        value = value.astimezone(_UTC).replace(tzinfo=None)
    else:
        value = value.replace(tzinfo=None)
    days = value.toordinal() - _EPOCH_ORDINAL
    secs = (value.hour * 60 + value.minute) * 60 + value.second
    return days * _NANOS_PER_DAY + secs * 10**9 + value.microsecond * 1000 + extra_nanos


def _parse_timestamp_string(value: str, t: DataType) -> int:
    m = _TS_RE.match(value)
    if m is None:
        raise _bad(value, t, "expected YYYY-MM-DD[ HH:MM[:SS[.fffffffff]]][Z|+HH:MM]")
    dm = _DATE_RE.match(m.group("date"))
    if dm is None:  # pragma: no cover - the outer pattern guarantees the shape
        raise _bad(value, t, "bad date")
    days = _date_from_parts(int(dm.group(1)), int(dm.group(2)), int(dm.group(3)), value, t)
    h, mi, s = int(m.group("h") or 0), int(m.group("m") or 0), int(m.group("s") or 0)
    if h > 23 or mi > 59 or s > 59:
        raise _bad(value, t, "time field out of range")
    nanos = days * _NANOS_PER_DAY + ((h * 60 + mi) * 60 + s) * 10**9 + int((m.group("f") or "").ljust(9, "0"))
    tz = m.group("tz")
    if tz and tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        digits = tz[1:].replace(":", "")
        offset_min = int(digits[:2]) * 60 + int(digits[2:4] or 0)
        nanos -= sign * offset_min * 60 * 10**9
    return nanos


def _timestamp_to_internal(value: object, t: TimestampType | LocalZonedTimestampType) -> int:
    if _is_int(value):
        nanos = _int(value)
    elif isinstance(value, _dt.datetime):
        nanos = _datetime_nanos(value, to_utc=True)
    elif isinstance(value, _dt.date):
        nanos = (value.toordinal() - _EPOCH_ORDINAL) * _NANOS_PER_DAY
    elif isinstance(value, str):
        nanos = _parse_timestamp_string(value, t)
    else:
        raise _bad(value, t, "expected a datetime, an ISO string or epoch nanoseconds")
    step = 10 ** (9 - t.precision)
    if nanos % step:
        raise _bad(value, t, f"has more than {t.precision} fractional second digits")
    return nanos


# --------------------------------------------------------------------------------------------
# from_internal
# --------------------------------------------------------------------------------------------


def _nanos_to_naive(nanos: int) -> _dt.datetime:
    """Naive datetime of epoch nanos (floored to microseconds)."""
    days, nano_of_day = divmod(nanos, _NANOS_PER_DAY)
    base = _dt.datetime.fromordinal(days + _EPOCH_ORDINAL)
    return base + _dt.timedelta(microseconds=nano_of_day // 1000)


def from_internal(value: object, t: DataType) -> object:
    """User-friendly Python value of an internal value.

    DATE -> ``date``; TIME -> ``time``; TIMESTAMP -> naive ``datetime``; TIMESTAMP_LTZ ->
    ``datetime`` in UTC (both floored to microseconds); everything else unchanged.
    """
    _check_atomic(t)
    if value is None:
        return None
    try:
        return _from_internal(value, t)
    except (ValueError, OverflowError) as e:
        raise _bad(value, t, f"outside the range of Python's datetime types ({e})") from e


def _from_internal(value: object, t: DataType) -> object:
    if isinstance(t, DateType):
        return _dt.date.fromordinal(_int(value) + _EPOCH_ORDINAL)
    if isinstance(t, TimeType):
        ms = _int(value)
        return _dt.time(ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000 * 1000)
    if isinstance(t, TimestampType):
        return _nanos_to_naive(_int(value))
    if isinstance(t, LocalZonedTimestampType):
        return _nanos_to_naive(_int(value)).replace(tzinfo=_UTC)
    return value


# --------------------------------------------------------------------------------------------
# Arrow scalars
# --------------------------------------------------------------------------------------------


def arrow_scalar_to_internal(s: pa.Scalar, t: DataType) -> object:
    """Exact internal value of an Arrow scalar holding a value of type ``t`` (None for null)."""
    _check_atomic(t)
    if not s.is_valid:
        return None
    st = s.type
    if pa.types.is_dictionary(st):
        return arrow_scalar_to_internal(s.value, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and pa.types.is_timestamp(st):
        return to_internal(s.value * _UNIT_NANOS[st.unit], t)
    if isinstance(t, DateType):
        if pa.types.is_date32(st):
            return to_internal(s.value, t)
        if pa.types.is_date64(st):
            return to_internal(s.value // _MILLIS_PER_DAY, t)
    if isinstance(t, TimeType) and pa.types.is_time(st):
        return to_internal(s.value * _UNIT_NANOS[st.unit] // 10**6, t)
    return to_internal(s.as_py(), t)


def internal_to_arrow_scalar(v: object, t: DataType) -> pa.Scalar:
    """Arrow scalar of type ``to_arrow_type(t)`` for an internal value (or None)."""
    _check_atomic(t)
    at = to_arrow_type(t)
    if v is None:
        return pa.scalar(None, type=at)
    v = to_internal(v, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return pa.scalar(_int(v) // _UNIT_NANOS[timestamp_unit(t.precision)], type=at)
    return pa.scalar(v, type=at)


# --------------------------------------------------------------------------------------------
# partition values <-> strings
# --------------------------------------------------------------------------------------------


def _java_year(year: int) -> str:
    """Year as ``java.time.LocalDate.toString`` prints it."""
    if abs(year) < 1000:
        return ("-" if year < 0 else "") + str(abs(year)).rjust(4, "0")
    return ("+" if year > 9999 else "") + str(year)


def _java_local_date_time(nanos: int) -> str:
    """``java.time.LocalDateTime.toString()`` of the wall clock at epoch nanos."""
    days, nano_of_day = divmod(nanos, _NANOS_PER_DAY)
    d = _dt.date.fromordinal(days + _EPOCH_ORDINAL)
    secs, nano = divmod(nano_of_day, 10**9)
    out = f"{_java_year(d.year)}-{d.month:02d}-{d.day:02d}T{secs // 3600:02d}:{secs // 60 % 60:02d}"
    if secs % 60 or nano:
        out += f":{secs % 60:02d}"
        if nano % 1_000_000 == 0:
            out += f".{nano // 1_000_000:03d}" if nano else ""
        elif nano % 1000 == 0:
            out += f".{nano // 1000:06d}"
        else:
            out += f".{nano:09d}"
    return out


def _format_timestamp(nanos: int, precision: int) -> str:
    """Java ``DateTimeUtils.formatTimestamp(ts, precision)``: ``yyyy-MM-dd HH:mm:ss[.fff...]``."""
    days, nano_of_day = divmod(nanos, _NANOS_PER_DAY)
    d = _dt.date.fromordinal(days + _EPOCH_ORDINAL)
    secs, nano = divmod(nano_of_day, 10**9)
    fraction = f"{nano:09d}"
    while len(fraction) > precision and fraction.endswith("0"):
        fraction = fraction[:-1]
    out = f"{d.year % 10000:04d}-{d.month:02d}-{d.day:02d} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return out + ("." + fraction if fraction else "")


def _format_date(days: int) -> str:
    """Java ``DateTimeUtils.formatDate``."""
    d = _dt.date.fromordinal(days + _EPOCH_ORDINAL)
    return f"{d.year % 10000:04d}-{d.month:02d}-{d.day:02d}"


def _format_time(millis: int, precision: int) -> str:
    """Java ``DateTimeUtils.formatTimestampMillis(int, precision)`` (Calcite style)."""
    while millis < 0:
        millis += _MILLIS_PER_DAY
    out = f"{millis // 3_600_000:02d}:{millis % 3_600_000 // 60_000:02d}:{millis % 60_000 // 1000:02d}"
    ms = millis % 1000
    if precision > 0:
        out += "."
        while precision > 0:
            out += str(ms // 100)
            ms = ms % 100 * 10
            if ms == 0:
                break
            precision -= 1
    return out


def _java_float_str(x: float, single: bool) -> str:
    """Java ``Float.toString`` / ``Double.toString`` (shortest round-trip digits, JDK 19+)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if single:
        text = ""
        for digits in range(1, 10):
            text = f"{x:.{digits - 1}e}"
            try:
                if struct.unpack("<f", struct.pack("<f", float(text)))[0] == x:
                    break
            except OverflowError:  # rounded past the largest float
                continue
    else:
        text = repr(x)
    if len(Decimal(text).normalize().as_tuple().digits) == 1:
        # JDK 19+: when one digit suffices, Java prints the 2-digit decimal closest to x.
        text = f"{x:.1e}"
    sign, digit_tuple, exponent = Decimal(text).normalize().as_tuple()
    digits_str = "".join(map(str, digit_tuple))
    point = len(digits_str) + int(exponent)  # position of the decimal point within digits_str
    prefix = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return prefix + "0." + "0" * (-point) + digits_str
        if point >= len(digits_str):
            return prefix + digits_str + "0" * (point - len(digits_str)) + ".0"
        return prefix + digits_str[:point] + "." + digits_str[point:]
    mantissa = digits_str[0] + "." + (digits_str[1:] or "0")
    return f"{prefix}{mantissa}E{point - 1}"


def partition_value_to_string(v: object, t: DataType, *, legacy_name: bool = True) -> str:
    """Render a non-null internal partition value as Java does before path escaping.

    ``legacy_name=True`` is Java's default (``partition.legacy-name``): ``toString()`` of the
    Java internal object, so DATE is the day number (``19723``), TIME the millis of day and
    TIMESTAMP ``LocalDateTime.toString()`` (``2024-01-01T12:30``). ``legacy_name=False`` is a
    CAST to STRING: ``2024-01-01``, ``12:30:00``, ``2024-01-01 12:30:00.000000``. TIMESTAMP_LTZ
    is rendered in UTC (Java uses the JVM's zone for the cast). Binary values are decoded as
    UTF-8 (Java's legacy form prints an object identity, which nobody can reproduce).
    A blank result means Java writes the default partition name (see :func:`partition_dir_value`).
    """
    _check_atomic(t)
    if v is None:
        raise InvalidArgumentError(
            f"Null partition value of type {t} has no string form; use the default name"
        )
    v = to_internal(v, t)
    if isinstance(t, BooleanType):
        return "true" if v else "false"
    if isinstance(t, FloatType):
        return _java_float_str(_float(v), single=True)
    if isinstance(t, DoubleType):
        return _java_float_str(_float(v), single=False)
    if isinstance(t, DecimalType):
        return format(v, "f")
    if isinstance(t, (BinaryType, VarBinaryType)):
        return v.decode("utf-8", errors="replace") if isinstance(v, bytes) else str(v)
    if isinstance(t, DateType):
        return str(v) if legacy_name else _format_date(_int(v))
    if isinstance(t, TimeType):
        return str(v) if legacy_name else _format_time(_int(v), t.precision)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        nanos = _int(v)
        return _java_local_date_time(nanos) if legacy_name else _format_timestamp(nanos, t.precision)
    return str(v)


def is_blank(s: str | None) -> bool:
    """Java ``StringUtils.isNullOrWhitespaceOnly`` (``Character.isWhitespace`` on each char)."""
    if s is None or s == "":
        return True
    return all(_java_is_whitespace(c) for c in s)


def _java_is_whitespace(c: str) -> bool:
    if c in "\t\n\u000b\f\r\u001c\u001d\u001e\u001f":
        return True
    return unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\u00a0\u2007\u202f"


def partition_dir_value(
    v: object,
    t: DataType,
    *,
    default_partition_name: str = DEFAULT_PARTITION_NAME,
    legacy_name: bool = True,
) -> str:
    """The escaped value part of a ``key=value`` partition directory, exactly as Java writes it:
    null and blank strings become ``default_partition_name``."""
    text = None if v is None else partition_value_to_string(v, t, legacy_name=legacy_name)
    if text is None or is_blank(text):
        text = default_partition_name
    return escape_path_name(text)


_TRUE_STRINGS = frozenset({"t", "true", "y", "yes", "1"})
_FALSE_STRINGS = frozenset({"f", "false", "n", "no", "0"})
_JAVA_INT_RE = re.compile(r"^[+-]?\d+$")


def partition_string_to_value(s: str, t: DataType) -> object:
    """Parse a partition string (already unescaped, not the default name) into an internal
    value, like Java's ``TypeUtils.castFromString``. Both legacy and CAST renderings parse:
    DATE/TIME accept a plain number (days / millis) or ISO text; TIMESTAMP accepts
    ``yyyy-MM-dd[ HH:mm:ss[.f]]``, ``yyyy-MM-ddTHH:mm[:ss[.f]]`` or a plain epoch number in
    the type's unit (s / ms / us / ns for precision 0 / 3 / 6 / 9).
    """
    _check_atomic(t)
    try:
        return _parse_partition_string(s, t)
    except InvalidArgumentError:
        raise
    except (ValueError, ArithmeticError) as e:
        raise _bad(s, t, str(e)) from e


def _parse_partition_string(s: str, t: DataType) -> object:
    if isinstance(t, (CharType, VarCharType)):
        return to_internal(s, t)
    if isinstance(t, BooleanType):
        low = s.lower()
        if low in _TRUE_STRINGS:
            return True
        if low in _FALSE_STRINGS:
            return False
        raise _bad(s, t, "not a boolean")
    if isinstance(t, (BinaryType, VarBinaryType)):
        return to_internal(s.encode("utf-8"), t)
    if isinstance(t, (DecimalType, FloatType, DoubleType)) and "_" in s:
        raise _bad(s, t, "not a number")  # Python's digit separators; Java refuses them
    if isinstance(t, DecimalType):
        return to_internal(Decimal(s.strip()), t)
    if type(t) in _INT_RANGES:
        if not _JAVA_INT_RE.match(s):
            raise _bad(s, t, "not an integer")
        return to_internal(int(s), t)
    if isinstance(t, (FloatType, DoubleType)):
        text = s.strip()
        java_specials = {"NaN": math.nan, "Infinity": math.inf, "+Infinity": math.inf, "-Infinity": -math.inf}
        return to_internal(java_specials[text] if text in java_specials else float(text), t)
    if isinstance(t, DateType):
        if _JAVA_INT_RE.match(s):  # legacy name: day number (Java itself only takes unsigned)
            return to_internal(int(s), t)
        return to_internal(s.split(" ", 1)[0], t)
    if isinstance(t, TimeType):
        if _JAVA_INT_RE.match(s):
            return to_internal(int(s), t)
        return to_internal(s, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if _JAVA_INT_RE.match(s):
            epoch = int(s)
            if not -(2**63) <= epoch < 2**63:
                raise _bad(s, t, "out of the range of a Java long")
            unit = timestamp_unit(t.precision)
            return to_internal(epoch * _UNIT_NANOS[unit], t)
        nanos = _parse_timestamp_string(s, t)
        step = 10 ** (9 - t.precision)
        return to_internal(nanos - nanos % step, t)
    raise SchemaError(f"Unsupported partition type {t}")


# --------------------------------------------------------------------------------------------
# path escaping (Java PartitionPathUtils)
# --------------------------------------------------------------------------------------------

_CHARS_TO_ESCAPE = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\u007f{}[]^"))


def escape_path_name(s: str) -> str:
    """Java ``PartitionPathUtils.escapePathName``: ``%XX`` (uppercase hex) for control chars and
    ``" # % ' * / : = ? \\ DEL { } [ ] ^``; everything else, incl. spaces and non-ASCII, is kept."""
    if not s:
        raise InvalidArgumentError(f"Path should not be null or empty: {s!r}")
    if not any(c in _CHARS_TO_ESCAPE for c in s):
        return s
    return "".join(f"%{ord(c):02X}" if c in _CHARS_TO_ESCAPE else c for c in s)


_HEX = frozenset("0123456789abcdefABCDEF")


def unescape_path_name(s: str) -> str:
    """Java ``PartitionPathUtils.unescapePathName``: decode every ``%XX`` (any hex case)."""
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "%" and i + 2 < n:
            pair = s[i + 1 : i + 3]
            # Integer.parseInt(pair, 16) also accepts a leading sign; a negative code is rejected.
            if (pair[0] in _HEX or pair[0] == "+") and pair[1] in _HEX or pair == "-0":
                out.append(chr(int(pair, 16)))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)
