"""Column statistics (min, max, null count) of data files, as Paimon's stats collectors compute them.

Java reference: ``org.apache.paimon.statistics.*SimpleColStatsCollector`` and
``org.apache.paimon.utils.StatsCollectorFactories``. Values are *internal values*
(see :mod:`paimon_core.data.internal`).

The work is split in two steps so that a rolling file writer can accumulate over
several batches and finalize once:

* :func:`collect_raw_stats` computes exact, untruncated stats of one batch with
  ``pyarrow.compute`` (one kernel call per column, no per-row Python);
* :func:`merge_stats` merges raw stats of two batches;
* :func:`apply_modes` turns raw stats into what goes into the manifest (truncation,
  ``counts``/``none``, NaN and signed-zero handling), like Java's ``convert``.

:func:`collect_stats` does both steps for a single batch and :class:`SimpleStatsCollector`
wraps the accumulate-then-finalize loop.

Floating point: raw stats order values like Java's ``Double.compareTo`` (NaN above
everything), so a batch holding NaN has a NaN ``max``. Final stats then drop min/max
when either is NaN, as parquet-java does for the Parquet footer statistics Java reads
back (Parquet is Paimon's default format), and widen a zero ``min`` to ``-0.0`` and a
zero ``max`` to ``+0.0`` so that no zero of either sign is pruned.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.data.internal import arrow_scalar_to_internal
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

__all__ = [
    "COUNTS",
    "FIELDS_PREFIX",
    "FULL",
    "METADATA_STATS_KEEP_FIRST_N_COLUMNS",
    "METADATA_STATS_MODE",
    "METADATA_STATS_MODE_DEFAULT",
    "NONE",
    "STATS_MODE_SUFFIX",
    "ColumnStats",
    "SimpleStatsCollector",
    "StatsMode",
    "apply_modes",
    "collect_raw_stats",
    "collect_stats",
    "has_min_max",
    "merge_stats",
    "parse_stats_mode",
    "stats_modes_for",
    "truncate_max",
    "truncate_min",
]

METADATA_STATS_MODE = "metadata.stats-mode"
METADATA_STATS_MODE_DEFAULT = "truncate(16)"
METADATA_STATS_KEEP_FIRST_N_COLUMNS = "metadata.stats-keep-first-n-columns"
METADATA_STATS_KEEP_FIRST_N_COLUMNS_DEFAULT = -1
FIELDS_PREFIX = "fields"
STATS_MODE_SUFFIX = "stats-mode"

#: Java ``SpecialFields``: system fields always get ``truncate(128)`` unless a field mode is set.
_KEY_FIELD_PREFIX = "_KEY_"
_SYSTEM_FIELD_NAMES = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"})
_SYSTEM_FIELD_TRUNCATE_LENGTH = 128

_TRUNCATE_PATTERN = re.compile(r"TRUNCATE\((\d+)\)")
_MAX_CODE_POINT = 0x10FFFF
_INT_MAX = 2**31 - 1

#: Types whose values have a total order and get min/max; all others (ARRAY, MAP, ROW, ...)
#: only get a null count, like Java's collectors for non-``Comparable`` values.
_ORDERED_TYPES: tuple[type[DataType], ...] = (
    BooleanType,
    TinyIntType,
    SmallIntType,
    IntType,
    BigIntType,
    FloatType,
    DoubleType,
    DecimalType,
    CharType,
    VarCharType,
    BinaryType,
    VarBinaryType,
    DateType,
    TimeType,
    TimestampType,
    LocalZonedTimestampType,
)


@dataclass(frozen=True)
class ColumnStats:
    """Stats of one column: min and max as internal values, and the null count.

    ``None`` means unknown (or, for min/max, that the column holds no non-null value).
    """

    min: object | None
    max: object | None
    null_count: int | None


_NO_STATS = ColumnStats(None, None, None)


@dataclass(frozen=True)
class StatsMode:
    """One of Paimon's stats modes: ``none``, ``counts``, ``full`` or ``truncate(N)``."""

    kind: Literal["none", "counts", "full", "truncate"]
    length: int | None = None

    @staticmethod
    def truncate(length: int) -> StatsMode:
        """``truncate(length)``: min/max of strings and binaries cut to ``length`` characters/bytes."""
        if length <= 0 or length > _INT_MAX:
            raise InvalidOptionError(
                f"Truncate length should be larger than zero (and fit an int), got {length}",
                value=length,
            )
        return StatsMode("truncate", length)

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind


NONE = StatsMode("none")
COUNTS = StatsMode("counts")
FULL = StatsMode("full")


def parse_stats_mode(s: str) -> StatsMode:
    """Parse a stats mode option value, case-insensitively, like Java's ``SimpleColStatsCollector.from``.

    Raises:
        InvalidOptionError: for anything but ``none``, ``counts``, ``full`` or ``truncate(N)``, N > 0.
    """
    upper = s.upper()
    if upper == "NONE":
        return NONE
    if upper == "FULL":
        return FULL
    if upper == "COUNTS":
        return COUNTS
    match = _TRUNCATE_PATTERN.fullmatch(upper)
    if match is None:
        raise InvalidOptionError(
            f"Unexpected stats mode {s!r}: expected none, counts, full or truncate(N)", value=s
        )
    return StatsMode.truncate(int(match.group(1)))


def stats_modes_for(fields: Sequence[DataField], options: Mapping[str, str]) -> list[StatsMode]:
    """The stats mode of each field, as Java's ``StatsCollectorFactories.createStatsFactories``.

    Priority: ``fields.<name>.stats-mode``; then system fields (``_KEY_*``, ``_SEQUENCE_NUMBER``,
    ``_VALUE_KIND``, ...) get ``truncate(128)``; then, once
    ``metadata.stats-keep-first-n-columns`` (default -1: off) columns were counted, ``none``;
    else ``metadata.stats-mode`` (default ``truncate(16)``). Nested types keep their mode but
    only ever get a null count (see :func:`collect_raw_stats`).
    """
    default_mode = parse_stats_mode(options.get(METADATA_STATS_MODE, METADATA_STATS_MODE_DEFAULT))
    keep_first_n = _int_option(
        options, METADATA_STATS_KEEP_FIRST_N_COLUMNS, METADATA_STATS_KEEP_FIRST_N_COLUMNS_DEFAULT
    )
    modes: list[StatsMode] = []
    column_count = 0
    for field in fields:
        field_mode = options.get(f"{FIELDS_PREFIX}.{field.name}.{STATS_MODE_SUFFIX}")
        if field_mode is not None:
            modes.append(parse_stats_mode(field_mode))
            column_count += 1
        elif field.name.startswith(_KEY_FIELD_PREFIX) or field.name in _SYSTEM_FIELD_NAMES:
            modes.append(StatsMode.truncate(_SYSTEM_FIELD_TRUNCATE_LENGTH))
        else:
            if 0 <= keep_first_n <= column_count:
                modes.append(NONE)
            else:
                modes.append(default_mode)
            column_count += 1
    return modes


def _int_option(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as e:
        raise InvalidOptionError(f"Option {key} must be an integer, got {raw!r}", key=key, value=raw) from e


def has_min_max(t: DataType) -> bool:
    """Whether values of type ``t`` are ordered, so that min/max stats exist for them."""
    return isinstance(t, _ORDERED_TYPES)


# --- collecting ------------------------------------------------------------------------


def collect_raw_stats(
    data: pa.Table | pa.RecordBatch,
    fields: Sequence[DataField],
    modes: Sequence[StatsMode] | None = None,
) -> list[ColumnStats]:
    """Exact (untruncated) stats of the column named ``f.name`` in ``data`` for each field.

    ``modes`` only lets the collector skip work: ``none`` columns get nothing, ``counts``
    columns only a null count. Finalize with :func:`apply_modes`. A float column holding NaN
    gets ``max = nan`` (and ``min = nan`` when every non-null value is NaN).

    Raises:
        InvalidArgumentError: if a field's column is missing, or ``modes`` has another length.
    """
    _check_modes(fields, modes)
    result: list[ColumnStats] = []
    for i, field in enumerate(fields):
        mode = modes[i] if modes is not None else FULL
        if mode.kind == "none":
            result.append(_NO_STATS)
            continue
        column = _column(data, field.name)
        null_count = int(column.null_count)
        if mode.kind == "counts" or not has_min_max(field.type) or null_count == len(column):
            result.append(ColumnStats(None, None, null_count))
            continue
        result.append(_min_max_stats(column, field.type, null_count))
    return result


def _check_modes(fields: Sequence[DataField], modes: Sequence[StatsMode] | None) -> None:
    if modes is not None and len(modes) != len(fields):
        raise InvalidArgumentError(
            f"Got {len(modes)} stats modes for {len(fields)} fields", modes=len(modes), fields=len(fields)
        )


def _column(data: pa.Table | pa.RecordBatch, name: str) -> pa.Array | pa.ChunkedArray:
    index = data.schema.get_field_index(name)
    if index < 0:
        raise InvalidArgumentError(f"Column {name!r} is missing (or duplicated) in the data", column=name)
    column = data.column(index)
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column


def _min_max_stats(column: pa.Array | pa.ChunkedArray, t: DataType, null_count: int) -> ColumnStats:
    min_max = pc.min_max(column)
    min_scalar, max_scalar = min_max["min"], min_max["max"]
    lo = arrow_scalar_to_internal(min_scalar, t) if min_scalar.is_valid else None
    hi = arrow_scalar_to_internal(max_scalar, t) if max_scalar.is_valid else None
    if isinstance(t, (FloatType, DoubleType)) and pc.any(pc.is_nan(column)).as_py():
        # pc.min_max skips NaN; Java's Double.compareTo puts NaN above everything.
        hi = math.nan
        if lo is None:
            lo = math.nan
    return ColumnStats(lo, hi, null_count)


# --- merging ---------------------------------------------------------------------------


def merge_stats(a: Sequence[ColumnStats], b: Sequence[ColumnStats]) -> list[ColumnStats]:
    """Merge the raw stats of two batches of the same fields (see :func:`collect_raw_stats`).

    Merge *raw* stats only: truncated maxima that failed (``None``) cannot be told apart
    from all-null columns. Null counts add up; an unknown null count stays unknown.
    """
    if len(a) != len(b):
        raise InvalidArgumentError(f"Cannot merge stats of {len(a)} and {len(b)} columns")
    return [_merge_column(x, y) for x, y in zip(a, b, strict=True)]


def _merge_column(a: ColumnStats, b: ColumnStats) -> ColumnStats:
    null_count = None if a.null_count is None or b.null_count is None else a.null_count + b.null_count
    lo = b.min if a.min is None else a.min if b.min is None else (b.min if _java_lt(b.min, a.min) else a.min)
    hi = b.max if a.max is None else a.max if b.max is None else (b.max if _java_lt(a.max, b.max) else a.max)
    return ColumnStats(lo, hi, null_count)


def _java_lt(x: object, y: object) -> bool:
    """``x < y`` in Java's ``compareTo`` order for internal values (NaN is the largest float)."""
    if isinstance(x, float) and math.isnan(x):
        return False
    if isinstance(y, float) and math.isnan(y):
        return True
    return x < y  # type: ignore[operator]


# --- finalizing ------------------------------------------------------------------------


def apply_modes(raw: Sequence[ColumnStats], modes: Sequence[StatsMode]) -> list[ColumnStats]:
    """Turn raw stats into manifest stats, like Java's ``SimpleColStatsCollector.convert``.

    ``none``: nothing; ``counts``: null count only; ``full``: min/max as they are;
    ``truncate(N)``: see :func:`truncate_min` / :func:`truncate_max` (when the max cannot be
    truncated, min and max are both dropped). Float min/max are dropped when either is
    NaN and a zero min/max is widened to ``-0.0``/``+0.0``.
    """
    if len(raw) != len(modes):
        raise InvalidArgumentError(f"Got {len(modes)} stats modes for {len(raw)} columns")
    return [_apply_mode(stats, mode) for stats, mode in zip(raw, modes, strict=True)]


def _apply_mode(stats: ColumnStats, mode: StatsMode) -> ColumnStats:
    if mode.kind == "none":
        return _NO_STATS
    if mode.kind == "counts" or stats.min is None or stats.max is None:
        return ColumnStats(None, None, stats.null_count)
    lo, hi = stats.min, stats.max
    if isinstance(lo, float) and isinstance(hi, float):
        if math.isnan(lo) or math.isnan(hi):
            return ColumnStats(None, None, stats.null_count)
        lo = -0.0 if lo == 0.0 else lo
        hi = 0.0 if hi == 0.0 else hi
    if mode.kind == "truncate" and mode.length is not None:
        lo = truncate_min(lo, mode.length)
        hi = truncate_max(hi, mode.length)
        if hi is None:
            return ColumnStats(None, None, stats.null_count)
    return ColumnStats(lo, hi, stats.null_count)


def truncate_min(value: object, length: int) -> object:
    """A value <= ``value``: strings cut to ``length`` code points, bytes to ``length`` bytes."""
    if isinstance(value, (str, bytes)):
        return value[:length]
    return value


def truncate_max(value: object, length: int) -> object | None:
    """A value >= ``value``, or ``None`` when there is none short enough.

    Strings longer than ``length`` code points are cut to ``length`` and the last code point
    that can be incremented is incremented (dropping what follows); bytes likewise with bytes
    below 0xFF. Java's rule exactly, except that incrementing U+D7FF gives U+E000 (Java
    produces a lone surrogate there, which it encodes as ``?``: not an upper bound).
    """
    if isinstance(value, str):
        if len(value) <= length:
            return value
        for i in range(length - 1, -1, -1):
            code_point = ord(value[i]) + 1
            if code_point <= _MAX_CODE_POINT:
                if 0xD800 <= code_point <= 0xDFFF:
                    code_point = 0xE000
                return value[:i] + chr(code_point)
        return None
    if isinstance(value, bytes):
        if len(value) <= length:
            return value
        for i in range(length - 1, -1, -1):
            if value[i] != 0xFF:
                return value[:i] + bytes([value[i] + 1])
        return None
    return value


def collect_stats(
    data: pa.Table | pa.RecordBatch, fields: Sequence[DataField], modes: Sequence[StatsMode]
) -> list[ColumnStats]:
    """Final stats of one batch: :func:`collect_raw_stats` then :func:`apply_modes`."""
    return apply_modes(collect_raw_stats(data, fields, modes), modes)


class SimpleStatsCollector:
    """Accumulates stats over the batches of one data file; :meth:`result` finalizes them.

    A rolling writer calls :meth:`collect` for each batch it writes to the current file and
    :meth:`result` once when it closes the file (truncation happens only there).
    """

    def __init__(self, fields: Sequence[DataField], modes: Sequence[StatsMode]) -> None:
        _check_modes(fields, modes)
        self._fields = tuple(fields)
        self._modes = tuple(modes)
        self._raw: list[ColumnStats] = [
            _NO_STATS if m.kind == "none" else ColumnStats(None, None, 0) for m in self._modes
        ]
        self.row_count = 0

    @property
    def is_disabled(self) -> bool:
        """True when every column's mode is ``none`` (nothing to collect)."""
        return all(m.kind == "none" for m in self._modes)

    def collect(self, data: pa.Table | pa.RecordBatch) -> None:
        """Add one batch of rows."""
        self.row_count += data.num_rows
        if not self.is_disabled:
            self._raw = merge_stats(self._raw, collect_raw_stats(data, self._fields, self._modes))

    def raw(self) -> list[ColumnStats]:
        """The exact stats accumulated so far."""
        return list(self._raw)

    def result(self) -> list[ColumnStats]:
        """The final (mode-applied) stats of everything collected."""
        return apply_modes(self._raw, self._modes)
