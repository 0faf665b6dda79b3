"""Tests of paimon_core.predicate.parser (the CLI's SQL WHERE parser)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.predicate import CompoundPredicate, LeafPredicate, PredicateBuilder, parse_predicate
from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    BooleanType,
    DataField,
    DateType,
    DecimalType,
    DoubleType,
    IntType,
    LocalZonedTimestampType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
FIELDS = [
    DataField(0, "id", BigIntType()),
    DataField(1, "name", STRING),
    DataField(2, "price", DecimalType(10, 2)),
    DataField(3, "score", DoubleType()),
    DataField(4, "dt", DateType()),
    DataField(5, "ts", TimestampType(3)),
    DataField(6, "ok", BooleanType()),
    DataField(7, "weird name", IntType()),
    DataField(8, "tags", ArrayType(STRING)),
    DataField(9, "raw", VarBinaryType(VarBinaryType.MAX_LENGTH)),
    DataField(10, "t", TimeType(3)),
    DataField(11, "ltz", LocalZonedTimestampType(6)),
    DataField(12, "date", STRING),
]
B = PredicateBuilder(FIELDS)


def parse(text: str) -> object:
    return parse_predicate(text, FIELDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id = 5", B.equal("id", 5)),
        ("id == 5", B.equal("id", 5)),
        ("id != 5", B.not_equal("id", 5)),
        ("id <> 5", B.not_equal("id", 5)),
        ("id < -5", B.less_than("id", -5)),
        ("id <= +5", B.less_or_equal("id", 5)),
        ("id > 1e3", B.greater_than("id", 1000)),
        ("id >= 5.0", B.greater_or_equal("id", 5)),
        ("5 < id", B.greater_than("id", 5)),
        ("5 = id", B.equal("id", 5)),
        ("name = 'it''s'", B.equal("name", "it's")),
        ("name = ''", B.equal("name", "")),
        ("price = 1.5", B.equal("price", Decimal("1.50"))),
        ("price < 10", B.less_than("price", Decimal("10"))),
        ("score > .5", B.greater_than("score", 0.5)),
        ("score > 1", B.greater_than("score", 1.0)),
        ("dt = DATE '2024-01-01'", B.equal("dt", dt.date(2024, 1, 1))),
        ("dt = '2024-01-01'", B.equal("dt", dt.date(2024, 1, 1))),
        (
            "ts >= TIMESTAMP '2024-01-01 00:00:00.123'",
            B.greater_or_equal("ts", dt.datetime(2024, 1, 1, 0, 0, 0, 123000)),
        ),
        ("ts >= DATE '2024-01-01'", B.greater_or_equal("ts", dt.datetime(2024, 1, 1))),
        ("ltz < TIMESTAMP '1970-01-01 00:00:01'", B.less_than("ltz", 10**9)),
        ("t = TIME '01:00:00'", B.equal("t", 3_600_000)),
        ("ok = TRUE", B.equal("ok", True)),
        ("ok = false", B.equal("ok", False)),
        ("ok", B.equal("ok", True)),
        ("NOT ok", B.not_equal("ok", True)),
        ("raw = X'00ff'", B.equal("raw", b"\x00\xff")),
        ("raw = 'ab'", B.equal("raw", b"ab")),
        ("`weird name` = 1", B.equal("weird name", 1)),
        ("`date` = 'x'", B.equal("date", "x")),
        ("date = 'x'", B.equal("date", "x")),
        ("id IN (1, 2, 3)", B.is_in("id", [1, 2, 3])),
        ("id in (1)", B.equal("id", 1)),
        ("id NOT IN (1, 2)", B.is_not_in("id", [1, 2])),
        ("id IN (1, NULL)", B.is_in("id", [1, None])),
        ("id IS NULL", B.is_null("id")),
        ("id is not null", B.is_not_null("id")),
        ("tags IS NOT NULL", B.is_not_null("tags")),
        ("name LIKE 'ab%'", B.starts_with("name", "ab")),
        ("name LIKE '%ab'", B.ends_with("name", "ab")),
        ("name LIKE '%ab%'", B.contains("name", "ab")),
        ("name LIKE 'ab'", B.equal("name", "ab")),
        ("id BETWEEN 1 AND 5", B.and_(B.greater_or_equal("id", 1), B.less_or_equal("id", 5))),
        ("id NOT BETWEEN 1 AND 5", B.or_(B.less_than("id", 1), B.greater_than("id", 5))),
        ("id = NULL", B.equal("id", None)),
    ],
)
def test_constructs(text: str, expected: object) -> None:
    assert parse(text) == expected


def test_in_with_many_literals_is_a_leaf() -> None:
    text = "id IN (" + ", ".join(str(i) for i in range(25)) + ")"
    p = parse(text)
    assert isinstance(p, LeafPredicate) and p.function == "in" and len(p.literals) == 25


def test_and_binds_tighter_than_or() -> None:
    a, b, c = B.equal("id", 1), B.equal("id", 2), B.equal("id", 3)
    assert parse("id = 1 OR id = 2 AND id = 3") == B.or_(a, B.and_(b, c))
    assert parse("id = 1 AND id = 2 OR id = 3") == B.or_(B.and_(a, b), c)
    assert parse("(id = 1 OR id = 2) AND id = 3") == B.and_(B.or_(a, b), c)
    assert parse("id = 1 AND id = 2 AND id = 3") == B.and_(a, b, c)
    flat = parse("id = 1 OR (id = 2 OR id = 3)")
    assert isinstance(flat, CompoundPredicate) and len(flat.children) == 3


def test_not_is_pushed_down() -> None:
    assert parse("NOT id = 1") == B.not_equal("id", 1)
    assert parse("NOT (id = 1 AND name IS NULL)") == B.or_(B.not_equal("id", 1), B.is_not_null("name"))
    assert parse("NOT NOT id < 1") == B.less_than("id", 1)
    assert parse("NOT id IN (1, 2)") == B.is_not_in("id", [1, 2])
    assert parse("NOT (id > 1 OR id IS NOT NULL)") == B.and_(B.less_or_equal("id", 1), B.is_null("id"))


def test_keywords_are_case_insensitive_and_whitespace_free() -> None:
    assert parse("id=1and(name='x'or ok)") == B.and_(
        B.equal("id", 1), B.or_(B.equal("name", "x"), B.equal("ok", True))
    )


def test_parsed_predicate_filters_arrow() -> None:
    p = parse_predicate(
        "a > 1 AND s LIKE 'x%' OR a IS NULL", [DataField(0, "a", IntType()), DataField(1, "s", STRING)]
    )
    table = pa.table({"a": pa.array([1, 2, 3, None], pa.int32()), "s": ["xa", "xb", "y", "z"]})
    assert table.filter(p.to_arrow())["s"].to_pylist() == ["xb", "z"]


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("", "expected a condition", 0),
        ("id =", "expected a literal", 4),
        ("id = 1 AND", "expected a literal|expected a condition|got end of input", 10),
        ("id = 1)", "expected AND, OR or end of input", 6),
        ("(id = 1", r"expected '\)'", 7),
        ("id = 'abc", "unterminated quote", 5),
        ("id = 1 # 2", "unexpected character '#'", 7),
        ("nope = 1", "Unknown column 'nope'", 0),
        ("nope IS NULL", "'nope'", 0),
        ("id = name", "Comparing two columns", 5),
        ("1 = 2", "one side of a comparison must be a column", 4),
        ("id = 1.5", "does not fit|not an int|number literal", 5),
        ("id = 'x'", "string literal does not fit", 5),
        ("price = 1.234", "more than 2 fraction digits", 8),
        ("name LIKE 'a_c'", "Unsupported LIKE pattern", 0),
        ("name LIKE 'a%c'", "Unsupported LIKE pattern", 0),
        ("name NOT LIKE 'a%'", "NOT is not supported", 5),
        ("id LIKE 'a%'", "CHAR/VARCHAR", 0),
        ("tags = 'x'", "cannot be compared|nested", 0),
        ("dt = DATE '2024-13-01'", "Invalid DATE literal", 5),
        ("ts = TIMESTAMP 'yesterday'", "Invalid TIMESTAMP literal", 5),
        ("id IN ()", "expected a literal", 7),
        ("id NOT 5", "expected IN, BETWEEN or LIKE", 7),
        ("id", "expected an operator", 2),
        ("id IS 5", "expected NULL", 6),
        ("ok = 1", "number literal does not fit", 5),
        ("id = 99999999999999999999", "out of range|does not fit|Invalid literal", 0),
    ],
)
def test_errors(text: str, message: str, position: int) -> None:
    with pytest.raises(InvalidArgumentError, match=message) as info:
        parse(text)
    assert f"at position {position}" in str(info.value)
    assert info.value.position == position  # type: ignore[attr-defined]
