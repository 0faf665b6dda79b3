"""Tests of paimon_core.stats.collector (cases ported from Java's SimpleColStatsCollectorTest
and StatsCollectorFactoriesTest, plus NaN, nesting, merging and a hypothesis property)."""

from __future__ import annotations

import math
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.schema.data_types import (
    ArrayType,
    DataField,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    MapType,
    RowType,
    TimestampType,
    VarBinaryType,
    VarCharType,
)
from paimon_core.stats.collector import (
    COUNTS,
    FULL,
    NONE,
    ColumnStats,
    SimpleStatsCollector,
    StatsMode,
    apply_modes,
    collect_raw_stats,
    collect_stats,
    merge_stats,
    parse_stats_mode,
    stats_modes_for,
    truncate_max,
    truncate_min,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)

S1 = "a" * 12
S2 = "b" * 12
S3 = "d" * 13

JAVA_FIELDS = [DataField(0, "a", IntType(), "Someone's desc."), DataField(1, "b", STRING)]
JAVA_ROWS = pa.table({"a": pa.array([1, 2, 3, 4], pa.int32()), "b": [S1, S2, None, S3]})


def _one(mode: StatsMode, column: int) -> ColumnStats:
    modes = [mode, mode]
    return collect_stats(JAVA_ROWS, JAVA_FIELDS, modes)[column]


# --- parsing -------------------------------------------------------------------------------


def test_parse_stats_mode() -> None:
    assert parse_stats_mode("none") == NONE
    assert parse_stats_mode("Full") == FULL
    assert parse_stats_mode("CoUNts") == COUNTS
    mode = parse_stats_mode("truncate(10)")
    assert mode.kind == "truncate" and mode.length == 10
    assert parse_stats_mode("TRUNCATE(16)") == StatsMode.truncate(16)
    assert str(parse_stats_mode("truncate(16)")) == "truncate(16)"
    assert str(FULL) == "full"


@pytest.mark.parametrize("bad", ["aatruncate(10)", "truncate(10.1)", "truncate(0)", "truncate()", "", "all"])
def test_parse_stats_mode_rejects(bad: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        parse_stats_mode(bad)
    assert repr(bad) in str(info.value) or "zero" in str(info.value)


def test_stats_modes_for_field_overrides() -> None:
    fields = [
        DataField(0, "a", STRING, "Someone's desc."),
        DataField(1, "b", TimestampType(6)),
        DataField(2, "c", VarCharType(5)),
    ]
    options = {"fields.b.stats-mode": "truncate(12)", "fields.c.stats-mode": "full"}
    assert stats_modes_for(fields, options) == [StatsMode.truncate(16), StatsMode.truncate(12), FULL]


def test_stats_modes_for_keep_first_n_columns() -> None:
    fields = [DataField(0, "a", STRING), DataField(1, "b", TimestampType(6)), DataField(2, "c", STRING)]
    options = {"metadata.stats-keep-first-n-columns": "1", "fields.c.stats-mode": "full"}
    assert stats_modes_for(fields, options) == [StatsMode.truncate(16), NONE, FULL]


def test_stats_modes_for_default_table_mode_and_system_fields() -> None:
    fields = [
        DataField(0, "a", IntType()),
        DataField(1, "_KEY_a", IntType()),
        DataField(2, "_SEQUENCE_NUMBER", IntType()),
    ]
    assert stats_modes_for(fields, {}) == [
        StatsMode.truncate(16),
        StatsMode.truncate(128),
        StatsMode.truncate(128),
    ]
    assert stats_modes_for(fields, {"metadata.stats-mode": "none"})[0] == NONE
    with pytest.raises(InvalidOptionError, match="bogus"):
        stats_modes_for(fields, {"metadata.stats-mode": "bogus"})


# --- Java SimpleColStatsCollectorTest --------------------------------------------------------


def test_none() -> None:
    assert _one(NONE, 0) == ColumnStats(None, None, None)
    assert _one(NONE, 1) == ColumnStats(None, None, None)


def test_counts() -> None:
    assert _one(COUNTS, 0) == ColumnStats(None, None, 0)
    assert _one(COUNTS, 1) == ColumnStats(None, None, 1)


def test_full() -> None:
    assert _one(FULL, 0) == ColumnStats(1, 4, 0)
    assert _one(FULL, 1) == ColumnStats(S1, S3, 1)


def test_truncate() -> None:
    assert _one(StatsMode.truncate(1), 0) == ColumnStats(1, 4, 0)
    assert _one(StatsMode.truncate(2), 1) == ColumnStats("aa", "de", 1)


def test_truncate_two_char() -> None:
    raw = [ColumnStats("\U0001f918a", "\U0001f918b", 0)]
    assert apply_modes(raw, [StatsMode.truncate(1)]) == [ColumnStats("\U0001f918", "\U0001f919", 0)]


def test_full_binary_min_max() -> None:
    data = pa.table({"x": pa.array([bytes([1, 2, 3]), bytes([200]), bytes([0]), None], pa.binary())})
    stats = collect_stats(data, [DataField(0, "x", BYTES)], [FULL])
    assert stats == [ColumnStats(bytes([0]), bytes([200]), 1)]


def test_truncate_binary_min_max() -> None:
    data = pa.table({"x": pa.array([bytes([5, 7, 9, 11]), bytes([5, 7, 200]), None], pa.binary())})
    stats = collect_stats(data, [DataField(0, "x", BYTES)], [StatsMode.truncate(2)])
    assert stats == [ColumnStats(bytes([5, 7]), bytes([5, 8]), 1)]
    converted = apply_modes([ColumnStats(bytes([1, 2, 3]), bytes([1, 2, 3]), 0)], [StatsMode.truncate(2)])
    assert converted == [ColumnStats(bytes([1, 2]), bytes([1, 3]), 0)]


def test_truncate_binary_fail() -> None:
    value = bytes([0xFF, 0xFF, 7])
    data = pa.table({"x": pa.array([value], pa.binary())})
    assert collect_stats(data, [DataField(0, "x", BYTES)], [StatsMode.truncate(2)]) == [
        ColumnStats(None, None, 0)
    ]
    assert apply_modes([ColumnStats(value, value, 0)], [StatsMode.truncate(2)]) == [
        ColumnStats(None, None, 0)
    ]


def test_truncate_fail() -> None:
    value = "\U0010ffff" * 4
    data = pa.table({"x": [value]})
    assert collect_stats(data, [DataField(0, "x", STRING)], [StatsMode.truncate(3)]) == [
        ColumnStats(None, None, 0)
    ]
    assert apply_modes([ColumnStats(value, value, 0)], [StatsMode.truncate(3)]) == [
        ColumnStats(None, None, 0)
    ]


# --- truncation rules ------------------------------------------------------------------------


def test_truncate_max_increments_last_incrementable_code_point() -> None:
    assert truncate_max("abc", 3) == "abc"  # not longer: unchanged
    assert truncate_max("abcd", 3) == "abd"
    assert truncate_max("ab\U0010ffffz", 3) == "ac"  # U+10FFFF cannot grow: carry left, drop the rest
    assert truncate_max("\ud7ff" + "x", 1) == "\ue000"  # skip the surrogate range
    assert truncate_min("abcd", 3) == "abc"
    assert truncate_min(b"abcd", 2) == b"ab"
    assert truncate_max(b"a\xff\xff", 2) == b"b"
    assert truncate_max(12345, 1) == 12345  # only strings and binaries are truncated


@given(st.text(max_size=8), st.integers(min_value=1, max_value=5))
def test_truncate_bounds_strings(value: str, length: int) -> None:
    lo = truncate_min(value, length)
    hi = truncate_max(value, length)
    assert isinstance(lo, str) and lo <= value
    assert len(lo) <= length
    if hi is not None:
        assert isinstance(hi, str) and hi >= value and len(hi) <= length


@given(st.binary(max_size=8), st.integers(min_value=1, max_value=5))
def test_truncate_bounds_bytes(value: bytes, length: int) -> None:
    lo = truncate_min(value, length)
    hi = truncate_max(value, length)
    assert isinstance(lo, bytes) and lo <= value
    if hi is not None:
        assert isinstance(hi, bytes) and hi >= value and len(hi) <= length
    else:
        assert value[:length] == b"\xff" * length


# --- floats, nested, misc --------------------------------------------------------------------


def test_nan_drops_min_max_like_parquet_java() -> None:
    field = [DataField(0, "d", DoubleType())]
    data = pa.table({"d": [1.0, math.nan, None, -3.0]})
    raw = collect_raw_stats(data, field)
    assert raw[0].min == -3.0 and math.isnan(raw[0].max) and raw[0].null_count == 1  # type: ignore[arg-type]
    assert collect_stats(data, field, [FULL]) == [ColumnStats(None, None, 1)]
    all_nan = collect_raw_stats(pa.table({"d": [math.nan, math.nan]}), field)[0]
    assert math.isnan(all_nan.min) and math.isnan(all_nan.max)  # type: ignore[arg-type]


def test_signed_zeros_are_widened() -> None:
    field = [DataField(0, "f", FloatType())]
    stats = collect_stats(pa.table({"f": pa.array([0.0, 0.0], pa.float32())}), field, [FULL])[0]
    assert math.copysign(1.0, stats.min) == -1.0 and math.copysign(1.0, stats.max) == 1.0  # type: ignore[arg-type]


def test_nested_types_get_null_counts_only() -> None:
    fields = [
        DataField(0, "arr", ArrayType(IntType())),
        DataField(1, "m", MapType(STRING, IntType())),
        DataField(2, "r", RowType((DataField(3, "x", IntType()),))),
    ]
    data = pa.table(
        {
            "arr": pa.array([[1], None, []], pa.list_(pa.int32())),
            "m": pa.array([[("a", 1)], None, None], pa.map_(pa.string(), pa.int32())),
            "r": pa.array([{"x": 1}, {"x": None}, None], pa.struct([("x", pa.int32())])),
        }
    )
    assert collect_stats(data, fields, [FULL] * 3) == [
        ColumnStats(None, None, 1),
        ColumnStats(None, None, 2),
        ColumnStats(None, None, 1),
    ]


def test_decimal_timestamp_and_dictionary_columns() -> None:
    fields = [
        DataField(0, "m", DecimalType(10, 2)),
        DataField(1, "ts", TimestampType(3)),
        DataField(2, "s", STRING),
    ]
    data = pa.table(
        {
            "m": pa.array([Decimal("1.50"), Decimal("-2.25")], pa.decimal128(10, 2)),
            "ts": pa.array([1_000, 3_000], pa.timestamp("ms")),
            "s": pa.array(["b", "a"]).dictionary_encode(),
        }
    )
    assert collect_stats(data, fields, [FULL] * 3) == [
        ColumnStats(Decimal("-2.25"), Decimal("1.50"), 0),
        ColumnStats(1_000_000_000, 3_000_000_000, 0),
        ColumnStats("a", "b", 0),
    ]


def test_all_null_and_empty_columns() -> None:
    field = [DataField(0, "s", STRING)]
    assert collect_stats(pa.table({"s": pa.array([None, None], pa.string())}), field, [FULL]) == [
        ColumnStats(None, None, 2)
    ]
    assert collect_stats(pa.table({"s": pa.array([], pa.string())}), field, [FULL]) == [
        ColumnStats(None, None, 0)
    ]


def test_record_batch_and_errors() -> None:
    batch = pa.record_batch({"a": pa.array([3, 1], pa.int32())})
    assert collect_stats(batch, [DataField(0, "a", IntType())], [FULL]) == [ColumnStats(1, 3, 0)]
    with pytest.raises(InvalidArgumentError, match="'missing'"):
        collect_stats(batch, [DataField(0, "missing", IntType())], [FULL])
    with pytest.raises(InvalidArgumentError):
        collect_stats(batch, [DataField(0, "a", IntType())], [FULL, FULL])
    with pytest.raises(InvalidArgumentError):
        merge_stats([ColumnStats(1, 2, 0)], [])


def test_merge_then_truncate_once() -> None:
    field = [DataField(0, "s", STRING)]
    mode = [StatsMode.truncate(4)]
    first = pa.table({"s": ["aaaaaaaa", None]})
    second = pa.table({"s": ["aaab", "zzzzzzzzzz"]})
    merged = merge_stats(collect_raw_stats(first, field, mode), collect_raw_stats(second, field, mode))
    assert merged == [ColumnStats("aaaaaaaa", "zzzzzzzzzz", 1)]
    assert apply_modes(merged, mode) == [ColumnStats("aaaa", "zzz{", 1)]


def test_merge_nan_and_unknown_null_counts() -> None:
    merged = merge_stats(
        [ColumnStats(1.0, math.nan, 0), ColumnStats(None, None, None)],
        [ColumnStats(-1.0, 5.0, 2), ColumnStats(None, None, None)],
    )
    assert merged[0].min == -1.0 and math.isnan(merged[0].max) and merged[0].null_count == 2  # type: ignore[arg-type]
    assert merged[1] == ColumnStats(None, None, None)


def test_simple_stats_collector_accumulates() -> None:
    fields = [DataField(0, "a", IntType()), DataField(1, "s", STRING)]
    modes = [FULL, StatsMode.truncate(2)]
    collector = SimpleStatsCollector(fields, modes)
    assert not collector.is_disabled
    collector.collect(pa.table({"a": pa.array([5, None], pa.int32()), "s": ["abc", None]}))
    collector.collect(pa.record_batch({"a": pa.array([-1], pa.int32()), "s": ["b"]}))
    assert collector.row_count == 3
    assert collector.result() == [ColumnStats(-1, 5, 1), ColumnStats("ab", "b", 1)]
    assert SimpleStatsCollector(fields, [NONE, NONE]).is_disabled


_VALUES = st.lists(st.one_of(st.none(), st.text(alphabet="ab\U0010ffff\u00e9z", max_size=6)), max_size=12)


@settings(max_examples=150, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=12), st.integers(min_value=1, max_value=4))
def test_split_batches_merge_to_the_same_stats(values: list[str | None], cut: int, length: int) -> None:
    field = [DataField(0, "s", STRING)]
    modes = [StatsMode.truncate(length)]
    table = pa.table({"s": pa.array(values, pa.string())})
    cut = min(cut, len(values))
    merged = merge_stats(
        collect_raw_stats(table.slice(0, cut), field, modes),
        collect_raw_stats(table.slice(cut), field, modes),
    )
    assert apply_modes(merged, modes) == collect_stats(table, field, modes)
    final = collect_stats(table, field, modes)[0]
    present = [v for v in values if v is not None]
    assert final.null_count == len(values) - len(present)
    if final.min is not None:
        assert isinstance(final.min, str) and isinstance(final.max, str)
        assert all(final.min <= v <= final.max for v in present)
