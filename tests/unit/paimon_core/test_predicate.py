"""Tests of paimon_core.predicate: Java's PredicateTest cases, builder, helpers, Arrow filtering,
and hypothesis properties tying stats pruning, value evaluation and Arrow filtering together."""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Sequence
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.data.internal import from_internal
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.predicate import (
    CompoundPredicate,
    LeafPredicate,
    Predicate,
    PredicateBuilder,
    and_all,
    or_all,
    pick_by_fields,
    split_and,
    split_or,
)
from paimon_core.schema.data_types import (
    ArrayType,
    BooleanType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    TimestampType,
    VarBinaryType,
    VarCharType,
)
from paimon_core.stats.collector import FULL, StatsMode, collect_stats

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)
INT1 = [DataField(0, "a", IntType())]


def _test(p: Predicate, row_count: int, *stats: tuple[object, object, int | None]) -> bool:
    return p.test_stats(row_count, [s[0] for s in stats], [s[1] for s in stats], [s[2] for s in stats])


# --- Java PredicateTest ----------------------------------------------------------------------


def test_equal() -> None:
    b = PredicateBuilder(INT1)
    p = b.equal("a", 5)
    assert [p.test_values([v]) for v in (4, 5, None)] == [False, True, False]
    assert _test(p, 3, (0, 5, 0)) and _test(p, 3, (0, 6, 0))
    assert not _test(p, 3, (6, 7, 0))
    assert not _test(p, 1, (None, None, 1))
    assert p.negate() == b.not_equal("a", 5)


def test_not_equal() -> None:
    b = PredicateBuilder(INT1)
    p = b.not_equal("a", 5)
    assert [p.test_values([v]) for v in (4, 5, None)] == [True, False, False]
    assert _test(p, 3, (0, 5, 0)) and _test(p, 3, (0, 6, 0)) and _test(p, 3, (6, 7, 0))
    assert not _test(p, 1, (5, 5, 0))
    assert not _test(p, 3, (5, 5, 2))  # nulls never match <> either
    assert not _test(p, 1, (None, None, 1))
    assert p.negate() == b.equal("a", 5)


@pytest.mark.parametrize(
    ("method", "stats_true", "stats_false"),
    [
        ("greater_than", [(0, 6)], [(0, 5)]),
        ("greater_or_equal", [(0, 5)], [(0, 4)]),
        ("less_than", [(4, 7)], [(5, 7)]),
        ("less_or_equal", [(5, 7)], [(6, 7)]),
    ],
)
def test_range_comparisons(
    method: str, stats_true: list[tuple[int, int]], stats_false: list[tuple[int, int]]
) -> None:
    p = getattr(PredicateBuilder(INT1), method)("a", 5)
    for lo, hi in stats_true:
        assert _test(p, 3, (lo, hi, 0))
    for lo, hi in stats_false:
        assert not _test(p, 3, (lo, hi, 0))
    assert not _test(p, 1, (None, None, 1))
    assert not p.test_values([None])


def test_is_null_and_is_not_null() -> None:
    b = PredicateBuilder(INT1)
    is_null, not_null = b.is_null("a"), b.is_not_null("a")
    assert is_null.test_values([None]) and not is_null.test_values([4])
    assert not _test(is_null, 3, (6, 7, 0))
    assert _test(is_null, 3, (5, 7, 1))
    assert not _test(is_null, 3, (None, None, 0))  # counts-only stats still prune IS NULL
    assert _test(not_null, 3, (6, 7, 0)) and _test(not_null, 3, (5, 7, 1))
    assert not _test(not_null, 3, (None, None, 3))
    assert is_null.negate() == not_null and not_null.negate() == is_null


def test_in_and_not_in_small() -> None:
    b = PredicateBuilder(INT1)
    p = b.is_in("a", [1, 3])
    assert isinstance(p, CompoundPredicate) and p.function == "or"
    assert [p.test_values([v]) for v in (1, 2, 3, None)] == [True, False, True, False]
    assert _test(p, 3, (0, 5, 0)) and not _test(p, 3, (6, 7, 0)) and not _test(p, 1, (None, None, 1))
    q = b.is_not_in("a", [1, 3])
    assert isinstance(q, CompoundPredicate) and q.function == "and"
    assert [q.test_values([v]) for v in (1, 2, 3, None)] == [False, True, False, False]
    assert not _test(q, 3, (1, 1, 0)) and not _test(q, 3, (3, 3, 0))
    assert _test(q, 3, (1, 3, 0)) and _test(q, 3, (0, 5, 0)) and _test(q, 3, (6, 7, 0))
    assert not _test(q, 1, (None, None, 1))


def test_large_in_is_a_leaf() -> None:
    b = PredicateBuilder(INT1)
    literals = [1, 3, *range(10, 30)]
    p = b.is_in("a", literals)
    assert isinstance(p, LeafPredicate) and p.function == "in"
    assert [p.test_values([v]) for v in (1, 2, 3, None)] == [True, False, True, False]
    assert _test(p, 3, (0, 5, 0)) and not _test(p, 3, (6, 7, 0))
    assert not _test(p, 1, (None, None, 1)) and _test(p, 3, (29, 32, 0))
    with_null = b.is_in("a", [1, None, 3, *range(10, 30)])
    assert with_null.test_values([1]) and not with_null.test_values([2])
    q = b.is_not_in("a", literals)
    assert isinstance(q, LeafPredicate) and q.function == "not_in"
    assert [q.test_values([v]) for v in (1, 2, 3, None)] == [False, True, False, False]
    assert not _test(q, 3, (1, 1, 0)) and _test(q, 3, (1, 3, 0)) and _test(q, 3, (29, 32, 0))
    q_null = b.is_not_in("a", [1, None, 3, *range(10, 30)])
    assert not any(q_null.test_values([v]) for v in (1, 2, 3, None))
    assert not _test(q_null, 3, (0, 5, 0)) and not _test(q_null, 3, (29, 32, 0))
    assert b.is_in("a", []).test_values([1]) is False


def test_and_or() -> None:
    fields = [DataField(0, "a", IntType()), DataField(1, "b", IntType())]
    b = PredicateBuilder(fields)
    p = b.and_(b.equal("a", 3), b.equal("b", 5))
    assert [p.test_values(r) for r in ([4, 5], [3, 6], [3, 5], [None, 5])] == [False, False, True, False]
    assert _test(p, 3, (3, 6, 0), (4, 6, 0))
    assert not _test(p, 3, (3, 6, 0), (6, 8, 0)) and not _test(p, 3, (6, 7, 0), (4, 6, 0))
    assert p.negate() == b.or_(b.not_equal("a", 3), b.not_equal("b", 5))
    q = b.or_(b.equal("a", 3), b.equal("b", 5))
    assert [q.test_values(r) for r in ([4, 6], [3, 6], [4, 5], [None, 5])] == [False, True, True, True]
    assert _test(q, 3, (3, 6, 0), (6, 8, 0)) and not _test(q, 3, (6, 7, 0), (6, 8, 0))
    assert b.and_(p) is p


def test_unknown_stats() -> None:
    p = PredicateBuilder(INT1).equal("a", 5)
    assert not _test(p, 3, (None, None, 3))
    assert _test(p, 3, (None, None, 4))  # inconsistent stats: cannot tell
    assert _test(p, 3, (None, None, None)) and _test(p, 3, (1, None, 0))
    assert p.test_stats(3, [1], [2], None) is False
    assert p.test_stats(3, [None], [None], None) is True
    assert _test(p, 3, (math.nan, math.nan, 0))


def test_binary_unsigned_comparison() -> None:
    b = PredicateBuilder([DataField(0, "x", BYTES)])
    assert b.greater_than("x", b"\x7f").test_values([b"\x80"])
    assert not b.greater_than("x", b"\x7f").test_values([b"\x7e"])
    assert b.greater_than("x", b"\x01").test_values([b"\xff"])
    assert not b.less_than("x", b"\x80").test_values([b"\xff"])
    assert _test(b.greater_than("x", b"\x7f"), 2, (b"\x00", b"\xff", 0))


def test_starts_with_on_stats_java_rule() -> None:
    b = PredicateBuilder([DataField(0, "s", STRING)])
    p = b.starts_with("s", "ab")
    assert p.test_values(["abc"]) and not p.test_values(["b"]) and not p.test_values([None])
    assert _test(p, 3, ("aa", "ac", 0))
    assert _test(p, 3, ("abz", "abzz", 0))  # both start with the prefix
    assert not _test(p, 3, ("ac", "az", 0))  # min above every 'ab...'
    assert not _test(p, 3, ("a", "aa", 0))  # max below 'ab'
    assert _test(p, 3, ("a", "ab", 0))
    assert not _test(p, 3, (None, None, 3))
    # truncated stats: min 'ab' (from 'abxyz...'), max incremented 'ac'
    assert _test(p, 3, ("ab", "ac", 0))
    assert p.negate() is None
    assert _test(b.ends_with("s", "z"), 3, ("a", "b", 0)) and _test(b.contains("s", "z"), 3, ("a", "b", 0))
    assert not _test(b.ends_with("s", "z"), 3, (None, None, 3))


def test_builder_errors() -> None:
    fields = [
        DataField(0, "a", IntType()),
        DataField(1, "arr", ArrayType(IntType())),
        DataField(2, "s", STRING),
    ]
    b = PredicateBuilder(fields)
    with pytest.raises(InvalidArgumentError, match="'nope'"):
        b.equal("nope", 1)
    with pytest.raises(InvalidArgumentError, match="nested"):
        b.equal("arr", [1])
    with pytest.raises(InvalidArgumentError, match="'a'"):
        b.equal("a", "x")
    with pytest.raises(InvalidArgumentError, match="CHAR/VARCHAR"):
        b.starts_with("a", "1")
    with pytest.raises(InvalidArgumentError, match="LIKE"):
        b.like("s", "a_c%")
    with pytest.raises(InvalidArgumentError):
        b.and_()
    assert b.is_null("arr").test_values([0, None, "x"])  # null checks work on nested fields


def test_builder_converts_literals() -> None:
    fields = [
        DataField(0, "d", DateType()),
        DataField(1, "ts", TimestampType(3)),
        DataField(2, "m", DecimalType(5, 2)),
        DataField(3, "f", DoubleType()),
    ]
    b = PredicateBuilder(fields)
    assert b.equal("d", dt.date(1970, 1, 2)) == LeafPredicate("equal", 0, "d", DateType(), (1,))
    leaf = b.less_than("ts", "1970-01-01 00:00:01.5")
    assert isinstance(leaf, LeafPredicate) and leaf.literals == (1_500_000_000,)
    leaf = b.greater_than("m", "1.5")
    assert isinstance(leaf, LeafPredicate) and leaf.literals == (Decimal("1.50"),)
    like = PredicateBuilder([DataField(0, "s", STRING)])
    assert like.like("s", "ab%") == like.starts_with("s", "ab")
    assert like.like("s", "%ab") == like.ends_with("s", "ab")
    assert like.like("s", "%ab%") == like.contains("s", "ab")
    assert like.like("s", "ab") == like.equal("s", "ab")


def test_helpers_split_pick_remap() -> None:
    fields = [DataField(0, "a", IntType()), DataField(1, "pt", STRING), DataField(2, "b", IntType())]
    b = PredicateBuilder(fields)
    p = b.and_(b.equal("pt", "x"), b.or_(b.equal("a", 1), b.equal("pt", "y")), b.greater_than("b", 2))
    assert len(split_and(p)) == 3 and split_and(None) == []
    assert len(split_or(b.or_(b.equal("a", 1), b.or_(b.equal("a", 2), b.equal("a", 3))))) == 3
    assert p.field_names() == {"a", "pt", "b"}
    picked = pick_by_fields(p, ["pt"])
    assert picked == b.equal("pt", "x")
    assert pick_by_fields(p, ["zzz"]) is None
    remapped = picked.remap({"pt": 0}) if picked is not None else None
    assert isinstance(remapped, LeafPredicate) and remapped.field_index == 0
    assert remapped.test_values(["x"]) and not remapped.test_values(["y"])
    with pytest.raises(InvalidArgumentError, match="'a'"):
        p.remap({"pt": 0})
    both = and_all([b.equal("a", 1), and_all([b.equal("a", 2), b.equal("b", 3)])])
    assert isinstance(both, CompoundPredicate) and len(both.children) == 3
    assert or_all([b.equal("a", 1)]) == b.equal("a", 1)
    assert str(b.equal("a", 1)) == "equal(a, 1)"


def test_leaf_validation() -> None:
    with pytest.raises(InvalidArgumentError):
        LeafPredicate("bogus", 0, "a", IntType(), ())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        LeafPredicate("equal", 0, "a", IntType(), ())


# --- to_arrow --------------------------------------------------------------------------------


def _selected(table: pa.Table, p: Predicate) -> list[int]:
    indexed = table.append_column("__row", pa.array(range(table.num_rows), pa.int64()))
    return indexed.filter(p.to_arrow(table.schema))["__row"].to_pylist()


def test_to_arrow_null_semantics() -> None:
    table = pa.table({"a": pa.array([1, None, 3, 0], pa.int32())})
    b = PredicateBuilder(INT1)
    assert _selected(table, b.not_equal("a", 1)) == [2, 3]
    assert _selected(table, b.is_null("a")) == [1]
    assert _selected(table, b.is_not_null("a")) == [0, 2, 3]
    assert _selected(table, b.is_not_in("a", [1])) == [2, 3]
    assert _selected(table, b.is_not_in("a", list(range(100, 130)))) == [0, 2, 3]
    assert _selected(table, b.is_not_in("a", [1, None])) == []
    assert _selected(table, b.is_in("a", list(range(3, 40)))) == [2]
    assert _selected(table, b.is_in("a", [])) == []
    assert _selected(table, b.equal("a", None)) == []
    assert _selected(table, b.or_(b.is_null("a"), b.equal("a", 3))) == [1, 2]


def test_to_arrow_typed_literals() -> None:
    fields = [
        DataField(0, "ts", TimestampType(6)),
        DataField(1, "ltz", LocalZonedTimestampType(3)),
        DataField(2, "d", DateType()),
        DataField(3, "m", DecimalType(10, 2)),
        DataField(4, "f", FloatType()),
    ]
    table = pa.table(
        {
            "ts": pa.array(
                [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 0, 1)], pa.timestamp("us")
            ),
            "ltz": pa.array([0, 1], pa.timestamp("ms", tz="UTC")),
            "d": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2)], pa.date32()),
            "m": pa.array([Decimal("1.10"), Decimal("2.20")], pa.decimal128(10, 2)),
            "f": pa.array([0.1, 0.2], pa.float32()),
        }
    )
    b = PredicateBuilder(fields)
    assert _selected(table, b.greater_than("ts", dt.datetime(2024, 1, 1))) == [1]
    assert _selected(table, b.equal("ltz", 1_000_000)) == [1]
    assert _selected(table, b.equal("d", "2024-01-02")) == [1]
    assert _selected(table, b.less_than("m", Decimal("2.2"))) == [0]
    assert _selected(table, b.equal("f", 0.1)) == [0]
    assert _selected(table, b.is_in("f", [0.2] * 25)) == [1]
    # a schema with other physical types (large_string) still filters
    strings = pa.table({"s": pa.array(["ab", "b"], pa.large_string())})
    sb = PredicateBuilder([DataField(0, "s", STRING)])
    assert _selected(strings, sb.equal("s", "b")) == [1]
    assert _selected(strings, sb.is_in("s", ["b"] * 21)) == [1]
    assert _selected(strings, sb.starts_with("s", "a")) == [0]
    encoded = pa.table({"s": pa.array(["ab", "b", None]).dictionary_encode()})
    assert _selected(encoded, sb.starts_with("s", "a")) == [0]
    assert _selected(encoded, sb.is_not_in("s", ["ab"] * 21)) == [1]


def test_to_arrow_float_special_values() -> None:
    table = pa.table({"x": pa.array([0.0, -0.0, math.nan, None, 1.0])})
    b = PredicateBuilder([DataField(0, "x", DoubleType())])
    many_zero = [0.0, *range(100, 125)]
    assert _selected(table, b.is_in("x", many_zero)) == [0, 1]
    assert _selected(table, b.is_in("x", [math.nan, *range(100, 125)])) == []
    assert _selected(table, b.is_not_in("x", [math.nan, *range(100, 125)])) == [0, 1, 2, 4]
    assert _selected(table, b.not_equal("x", 1.0)) == [0, 1, 2]


# --- properties ------------------------------------------------------------------------------

PROPERTY_FIELDS = [
    DataField(0, "i", IntType()),
    DataField(1, "d", DoubleType()),
    DataField(2, "f", FloatType()),
    DataField(3, "s", STRING),
    DataField(4, "b", BYTES),
    DataField(5, "m", DecimalType(6, 2)),
    DataField(6, "dt", DateType()),
    DataField(7, "ts", TimestampType(6)),
    DataField(8, "flag", BooleanType()),
]

_SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.5, -1.5])


def _value_strategy(t: DataType) -> st.SearchStrategy[object]:
    if isinstance(t, IntType):
        return st.integers(min_value=-50, max_value=50)
    if isinstance(t, DoubleType):
        return st.one_of(_SPECIAL_FLOATS, st.floats(min_value=-100, max_value=100))
    if isinstance(t, FloatType):
        return st.one_of(_SPECIAL_FLOATS, st.floats(min_value=-100, max_value=100, width=32))
    if isinstance(t, VarCharType):
        prefixes = st.sampled_from(["", "a", "ab", "abcdefghijklmnopq", "\U0010ffff" * 3, "é"])
        tails = st.text(alphabet="ab\u00e9\U0010ffffz", max_size=20)
        return st.builds(lambda p, s: p + s, prefixes, tails)
    if isinstance(t, VarBinaryType):
        return st.binary(max_size=20)
    if isinstance(t, DecimalType):
        return st.integers(min_value=-9999, max_value=9999).map(lambda v: Decimal(v).scaleb(-2))
    if isinstance(t, DateType):
        return st.integers(min_value=-5, max_value=5)
    if isinstance(t, TimestampType):
        return st.integers(min_value=-5_000, max_value=5_000).map(lambda v: v * 1000)
    return st.booleans()


def _to_internal_float32(v: object, t: DataType) -> object:
    if isinstance(t, FloatType) and isinstance(v, float):
        return struct.unpack("<f", struct.pack("<f", v))[0]
    return v


@st.composite
def _rows(draw: st.DrawFn) -> list[list[object]]:
    n = draw(st.integers(min_value=0, max_value=8))
    rows = []
    for _ in range(n):
        row = []
        for f in PROPERTY_FIELDS:
            v = draw(st.one_of(st.none(), _value_strategy(f.type)))
            row.append(_to_internal_float32(v, f.type))
        rows.append(row)
    return rows


def _table(rows: Sequence[Sequence[object]]) -> pa.Table:
    columns = {}
    for i, f in enumerate(PROPERTY_FIELDS):
        values = [r[i] for r in rows]
        at = to_arrow_type(f.type)
        if isinstance(f.type, (DateType, TimestampType)):
            values = [None if v is None else from_internal(v, f.type) for v in values]
        columns[f.name] = pa.array(values, at)
    return pa.table(columns)


_COMPARISONS = ["equal", "not_equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal"]


@st.composite
def _leaf(draw: st.DrawFn, rows: list[list[object]]) -> Predicate:
    b = PredicateBuilder(PROPERTY_FIELDS)
    index = draw(st.integers(min_value=0, max_value=len(PROPERTY_FIELDS) - 1))
    field = PROPERTY_FIELDS[index]
    present = [r[index] for r in rows if r[index] is not None]
    fresh = _value_strategy(field.type).map(lambda v: _to_internal_float32(v, field.type))
    literal = st.one_of(st.sampled_from(present), fresh) if present else fresh
    kinds = [*_COMPARISONS, "in", "not_in", "is_null", "is_not_null"]
    if isinstance(field.type, VarCharType):
        kinds += ["starts_with", "ends_with", "contains"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("is_null", "is_not_null"):
        return getattr(b, kind)(field.name)
    if kind in ("in", "not_in"):
        values = draw(st.lists(st.one_of(literal, st.none()), max_size=25))
        return b.is_in(field.name, values) if kind == "in" else b.is_not_in(field.name, values)
    value = draw(literal)
    if kind in ("starts_with", "ends_with", "contains"):
        assert isinstance(value, str)
        return getattr(b, kind)(field.name, value[: draw(st.integers(min_value=0, max_value=18))])
    return getattr(b, kind)(field.name, value)


@st.composite
def _predicate(draw: st.DrawFn, rows: list[list[object]], depth: int = 0) -> Predicate:
    if depth >= 2 or draw(st.booleans()):
        p = draw(_leaf(rows))
    else:
        children = draw(st.lists(_predicate(rows, depth + 1), min_size=1, max_size=3))
        p = and_all(children) if draw(st.booleans()) else or_all(children)
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        negated = p.negate()
        if negated is not None:
            return negated
    return p


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[list[object]], Predicate]:
    rows = draw(_rows())
    return rows, draw(_predicate(rows))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case(), st.sampled_from([FULL, StatsMode.truncate(16), StatsMode.truncate(2)]))
def test_stats_never_prune_matching_files(
    case: tuple[list[list[object]], Predicate], mode: StatsMode
) -> None:
    rows, p = case
    table = _table(rows)
    selected = _selected(table, p)
    stats = collect_stats(table, PROPERTY_FIELDS, [mode] * len(PROPERTY_FIELDS))
    might_match = p.test_stats(
        len(rows), [s.min for s in stats], [s.max for s in stats], [s.null_count for s in stats]
    )
    if selected:
        assert might_match, f"{p} pruned a file with matching rows {selected}: {stats}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_values_agree_with_arrow(case: tuple[list[list[object]], Predicate]) -> None:
    rows, p = case
    selected = set(_selected(_table(rows), p))
    for i, row in enumerate(rows):
        assert p.test_values(row) == (i in selected), f"{p} on row {row}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_negation_is_complement_without_nulls_and_nan(case: tuple[list[list[object]], Predicate]) -> None:
    rows, p = case
    negated = p.negate()
    if negated is None:
        return
    for row in rows:
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in row):
            continue
        assert negated.test_values(row) == (not p.test_values(row))


def test_pc_available() -> None:
    # to_arrow returns a real compute expression
    assert isinstance(PredicateBuilder(INT1).equal("a", 1).to_arrow(), pc.Expression)
