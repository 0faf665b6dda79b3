"""PartitionTimeExtractor: Java's default formats (LENIENT), DateTimeFormatter patterns (SMART),
``$col`` patterns over several partition columns, and the strategies that use it."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.partition_expire import select_expired
from paimon_core.partition.partition_expire_strategy import (
    PartitionEntry,
    PartitionUpdateTimeExpireStrategy,
    PartitionValuesTimeExpireStrategy,
    stored_millis_to_local,
)
from paimon_core.partition.partition_time_extractor import (
    JavaDateTimeFormat,
    PartitionTimeExtractor,
    to_local_date_time_default,
)

D = dt.datetime


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-05", D(2024, 1, 5)),
        ("2024-1-5", D(2024, 1, 5)),  # 1-2 digit fields
        ("2024-01-05 07:08:09", D(2024, 1, 5, 7, 8, 9)),
        ("2024-01-05 7:8:9.123", D(2024, 1, 5, 7, 8, 9, 123000)),
        ("2024-13-01", D(2025, 1, 1)),  # LENIENT: month 13 rolls into the next year
        ("2024-02-30", D(2024, 3, 1)),  # LENIENT: day past the month's end rolls over
        ("2024-01-31 24:00:00", D(2024, 2, 1)),
    ],
)
def test_default_formats_are_javas_lenient_ones(text: str, expected: dt.datetime) -> None:
    assert to_local_date_time_default(text) == expected


@pytest.mark.parametrize("text", ["20240105", "2024/01/05", "2024-01-05T07:00:00", "2024-01-05 07:00", "x"])
def test_default_formats_reject_other_shapes(text: str) -> None:
    with pytest.raises(ValueError):
        to_local_date_time_default(text)
    assert PartitionTimeExtractor(None, None).extract(["dt"], [text]) is None


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyyMMdd", "20240105", D(2024, 1, 5)),
        ("yyyyMMddHH", "2024010507", D(2024, 1, 5, 7)),
        ("yyyy-MM-dd HH:mm:ss", "2024-01-05 07:08:09", D(2024, 1, 5, 7, 8, 9)),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-05 07:08:09.250", D(2024, 1, 5, 7, 8, 9, 250000)),
        ("yyyy/M/d", "2024/1/5", D(2024, 1, 5)),
        ("yyyy-MM-dd'T'HH", "2024-01-05T23", D(2024, 1, 5, 23)),
        ("dd MMM yyyy", "05 Jan 2024", D(2024, 1, 5)),
        ("yyyy-MM-dd hh a", "2024-01-05 07 PM", D(2024, 1, 5, 19)),
        ("yyyy-MM-dd[ HH:mm]", "2024-01-05", D(2024, 1, 5)),
        ("yyyy-MM-dd[ HH:mm]", "2024-01-05 10:30", D(2024, 1, 5, 10, 30)),
        ("yyMMdd", "240105", D(2024, 1, 5)),
        ("yyyy-MM-dd", "2024-02-30", D(2024, 2, 29)),  # SMART: clamped to the month's last day
    ],
)
def test_formatter_patterns(pattern: str, text: str, expected: dt.datetime) -> None:
    assert JavaDateTimeFormat(pattern).parse(text) == expected
    assert PartitionTimeExtractor(None, pattern).extract(["dt"], [text]) == expected


@pytest.mark.parametrize(
    ("pattern", "text"),
    [("yyyyMMdd", "2024-01-05"), ("yyyyMMdd", "20241305"), ("yyyy-MM-dd HH", "2024-01-05 25"), ("yyyyMMdd", "2024010")],
)
def test_values_the_formatter_does_not_match_give_no_time(pattern: str, text: str) -> None:
    assert PartitionTimeExtractor(None, pattern).extract(["dt"], [text]) is None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyy-MM", "needs a year"),  # no day: Java can never build a date from it
        ("yyyy-MM-dd bb", "unknown pattern letter 'b'"),
        ("yyyy-MM-dd 'T", "unclosed quote"),
        ("yyyy-MM-dd EEE", "not supported"),
        ("yyyy-MM-ddd", "too many pattern letters"),
        ("yyyy-MM-dd]", "']' without '['"),
    ],
)
def test_bad_formatters_are_clear_errors(pattern: str, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=re.escape(message)) as e:
        PartitionTimeExtractor(None, pattern)
    assert pattern in str(e.value)


def test_pattern_substitutes_every_partition_column() -> None:
    ex = PartitionTimeExtractor("$year-$month-$day $hour:00:00", None)
    keys = ["year", "month", "day", "hour"]
    assert ex.extract(keys, ["2024", "01", "05", "7"]) == D(2024, 1, 5, 7)
    assert ex.extract(keys, ["2024", "01", "05", None]) is None  # a null value: no time (Java: NPE, skipped)
    with_formatter = PartitionTimeExtractor("$dt $hh", "yyyyMMdd HH")
    assert with_formatter.extract(["dt", "hh"], ["20240105", "07"]) == D(2024, 1, 5, 7)


def test_without_pattern_only_the_first_column_counts() -> None:
    ex = PartitionTimeExtractor(None, None)
    assert ex.extract(["dt", "region"], ["2024-01-05", "eu"]) == D(2024, 1, 5)
    assert ex.extract(["region", "dt"], ["eu", "2024-01-05"]) is None


def _entry(values: tuple[str | None, ...], created: dt.datetime | None = None) -> PartitionEntry:
    millis = None if created is None else int((created - D(1970, 1, 1)).total_seconds() * 1000)
    return PartitionEntry(repr(values).encode(), values, 10, 100, 1, millis)


def test_values_time_selection_sorts_and_limits() -> None:
    strategy = PartitionValuesTimeExpireStrategy(["dt", "hh"], pattern="$dt $hh:00:00", formatter="yyyyMMdd H:mm:ss")
    parts = [
        _entry(("20240103", "5")),
        _entry(("20240101", "23")),
        _entry(("20240102", "0")),
        _entry(("20240102", None)),  # null hour: never expires by values-time
        _entry(("bad", "1")),  # unparseable: never expires, no error
        _entry(("20240104", "0")),
    ]
    cutoff = D(2024, 1, 3, 5)  # strictly after the partition time expires it: 20240103 5h stays
    got = select_expired(parts, strategy, cutoff, max_expires=100)
    assert [p.values for p in got] == [("20240101", "23"), ("20240102", "0")]
    assert [p.values for p in select_expired(parts, strategy, cutoff, max_expires=1)] == [("20240101", "23")]
    assert select_expired(parts, strategy, cutoff, max_expires=0) == []


def test_update_time_selection_uses_the_newest_file() -> None:
    strategy = PartitionUpdateTimeExpireStrategy()
    old = _entry(("a",), D(2024, 1, 1, 10))
    new = _entry(("b",), D(2024, 1, 2, 10))
    unknown = _entry(("c",), None)
    got = select_expired([new, old, unknown], strategy, D(2024, 1, 2), max_expires=10)
    assert got == [old]
    assert stored_millis_to_local(0) == D(1970, 1, 1)
    assert strategy.partition_time(new) == D(2024, 1, 2, 10)
