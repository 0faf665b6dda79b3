"""How Java's system tables render values: strings of rows, maps and durations, local times.

Java builds system-table rows from internal objects and prints some of them with ``toString``:

* ``TIMESTAMP(3)`` columns built from epoch millis are ``LocalDateTime.ofInstant(millis,
  ZoneId.systemDefault())``: the wall clock of the JVM's zone. :func:`local_wall_millis` does the
  same with this process's zone (``TZ``); Arrow stores the wall clock as ``timestamp[ms]``.
* A partition row cast to STRING (``CastExecutors.resolveToString(partitionType)``, Java's
  ``RowToStringCastRule``) is ``{v1, v2}`` with each field CAST to STRING (``2024-01-01``).
* Keys (``Arrays.toString``) and stats maps (``TreeMap.toString``) print Java's internal objects:
  DATE as its day number, TIMESTAMP as ``LocalDateTime.toString()``, DECIMAL plain, FLOAT/DOUBLE
  as ``Float/Double.toString``. Binary values are printed as UTF-8 text (Java prints an object
  identity such as ``[B@1b6d3586``, which nobody can reproduce).
* ``Duration.toString()`` is ISO-8601 (``PT24H``, ``PT1M30.5S``).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from paimon_core.data.binary_row import binary_row_arity, deserialize_binary_row
from paimon_core.data.internal import partition_value_to_string
from paimon_core.schema.data_types import (
    BigIntType,
    DataType,
    DateType,
    IntType,
    SmallIntType,
    TimeType,
    TinyIntType,
    is_nested,
)

__all__ = [
    "flat_json",
    "java_duration_string",
    "java_object_string",
    "java_sorted",
    "local_date_time_millis",
    "local_wall_millis",
    "row_cast_string",
    "row_cast_string_of_bytes",
]

_EPOCH = dt.datetime(1970, 1, 1)
#: Types whose internal value is an int that Java's toString prints as is (DATE: day number).
_PLAIN_INT_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType, DateType, TimeType)


def local_wall_millis(epoch_millis: int) -> int:
    """Millis of ``LocalDateTime.ofInstant(epoch_millis, systemDefault)`` read as UTC."""
    offset = time.localtime(epoch_millis // 1000).tm_gmtoff
    return epoch_millis + int(offset) * 1000


def local_date_time_millis(parts: Sequence[int] | None) -> int | None:
    """A Jackson ``LocalDateTime`` array ``[y, mo, d, h, mi, s, ns]`` as wall-clock millis."""
    if not parts or len(parts) < 3:
        return None
    values = [int(p) for p in parts] + [0] * (7 - len(parts))
    y, mo, d, h, mi, s, ns = values[:7]
    delta = dt.datetime(y, mo, d, h, mi, s) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + ns // 1_000_000


def java_duration_string(value: str | None) -> str | None:
    """Java ``Duration.toString()`` of a duration stored as decimal seconds (``86400.000000000``)."""
    if value is None:
        return None
    text = str(value).strip()
    if text.upper().startswith(("P", "-P")):
        return text  # already ISO-8601
    try:
        total = Decimal(text)
    except InvalidOperation:
        return text
    nanos_total = int((total * 1_000_000_000).to_integral_value())
    seconds, nanos = divmod(nanos_total, 1_000_000_000)  # floor, like Java's Duration
    if seconds == 0 and nanos == 0:
        return "PT0S"
    effective = seconds + 1 if seconds < 0 < nanos else seconds
    hours = int(effective / 3600)  # Java's long division truncates toward zero
    minutes = int((effective - hours * 3600) / 60)
    secs = effective - hours * 3600 - minutes * 60
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if secs == 0 and nanos == 0 and len(out) > 2:
        return out
    if seconds < 0 < nanos:
        out += "-0" if secs == 0 else str(secs)
    else:
        out += str(secs)
    if nanos > 0:
        frac = str(2 * 1_000_000_000 - nanos if seconds < 0 else nanos + 1_000_000_000).rstrip("0")
        out += "." + frac[1:]
    return out + "S"


def flat_json(value: Any) -> str:
    """Compact JSON as Jackson's ``writeValueAsString`` writes it (``JsonSerdeUtil.toFlatJson``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def java_sorted(names: Sequence[str]) -> list[str]:
    """``names`` in Java ``String.compareTo`` order (UTF-16 code units), as a TreeMap keeps them."""
    return sorted(names, key=lambda s: s.encode("utf-16-be"))


def java_object_string(value: object, t: DataType) -> str:
    """``String.valueOf`` of Java's internal object for a value of type ``t`` (``null`` for None)."""
    if value is None:
        return "null"
    if type(value) is str or (type(value) is int and isinstance(t, _PLAIN_INT_TYPES)):
        return str(value)  # fast path: strings, and integers Java prints as they are
    if is_nested(t):
        return str(value)
    return partition_value_to_string(value, t, legacy_name=True)


def _cast_string(value: object, t: DataType) -> str:
    if value is None:
        return "null"
    if is_nested(t):
        return str(value)
    return partition_value_to_string(value, t, legacy_name=False)


def row_cast_string(values: Sequence[object | None], types: Sequence[DataType]) -> str:
    """A row CAST to STRING: ``{2024-01-01, 3}`` (``{}`` for the empty row)."""
    return "{" + ", ".join(_cast_string(v, t) for v, t in zip(values, types, strict=True)) + "}"


def row_cast_string_of_bytes(data: bytes, types: Sequence[DataType]) -> str | None:
    """:func:`row_cast_string` of a serialized BinaryRow; None when it cannot be decoded."""
    try:
        if binary_row_arity(data) == 0:
            return "{}"
        return row_cast_string(deserialize_binary_row(data, types), types)
    except Exception:  # noqa: BLE001 - a row we cannot decode renders as null, never fails the table
        return None
