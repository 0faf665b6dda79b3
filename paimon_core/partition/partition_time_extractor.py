"""PartitionTimeExtractor: the time a partition's values stand for (Java's ``PartitionTimeExtractor``).

``partition.timestamp-pattern`` builds the time string from the partition values, each ``$col``
replaced by that column's value in partition-key order (``$dt $hour:00:00``); without a pattern the
first partition column's value is the string. ``partition.timestamp-formatter`` is a Java
``DateTimeFormatter`` pattern (``yyyyMMdd``, ``yyyy-MM-dd HH:mm:ss``) parsed as
``LocalDateTime`` with Java's default (SMART) resolver, or as a date at midnight when the
formatter has no hour. Without a formatter Java's defaults apply: ``y-M-d[ H:m:s[.fffffffff]]``
with 1-2 digit fields and the LENIENT resolver (``2024-13-01`` is 2025-01-01).

A value that does not parse gives ``None`` and a warning (Java logs and skips the partition);
a formatter this module cannot parse at all is an :class:`InvalidArgumentError` up front.

>>> PartitionTimeExtractor(None, "yyyyMMdd").extract(["dt"], ["20240105"])
datetime.datetime(2024, 1, 5, 0, 0)
>>> PartitionTimeExtractor("$dt $hh:00:00", None).extract(["dt", "hh"], ["2024-01-05", "7"])
datetime.datetime(2024, 1, 5, 7, 0)
"""

from __future__ import annotations

import calendar
import datetime as dt
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from paimon_core.exceptions import InvalidArgumentError

__all__ = ["JavaDateTimeFormat", "PartitionTimeExtractor", "to_local_date_time_default"]

logger = logging.getLogger(__name__)

_DEFAULT = re.compile(r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?")
_MONTHS_SHORT = [m.lower() for m in calendar.month_abbr[1:]]
_MONTHS_LONG = [m.lower() for m in calendar.month_name[1:]]
#: Java pattern letters that are valid in DateTimeFormatter.ofPattern but not parsed here.
_JAVA_OTHER_LETTERS = set("GQqwWEecFDKkAnNVvzOXxZYgB")


def _lenient(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0, nanos: int = 0) -> dt.datetime:
    """Java's LENIENT resolution: out-of-range fields roll over into the next larger one."""
    y += (mo - 1) // 12
    mo = (mo - 1) % 12 + 1
    base = dt.datetime(y, mo, 1)
    return base + dt.timedelta(days=d - 1, hours=h, minutes=mi, seconds=s, microseconds=nanos // 1000)


def to_local_date_time_default(text: str) -> dt.datetime:
    """Java's ``toLocalDateTimeDefault``; ValueError when ``text`` is not ``y-M-d[ H:m:s[.f]]``."""
    m = _DEFAULT.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not y-M-d[ H:m:s[.fraction]]")
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(4) is None:
        return _lenient(y, mo, d)
    frac = m.group(7) or ""
    nanos = int(frac.ljust(9, "0")) if frac else 0
    return _lenient(y, mo, d, int(m.group(4)), int(m.group(5)), int(m.group(6)), nanos)


@dataclass(frozen=True)
class _Field:
    letter: str
    count: int


class JavaDateTimeFormat:
    """A ``DateTimeFormatter.ofPattern`` pattern compiled to a regex (numeric fields, month names,
    ``a``, quoted literals, ``[optional]`` sections). Raises InvalidArgumentError for a pattern Java
    rejects or one without year, month and day (Java can never build a date from it)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._fields: list[_Field] = []
        regex = self._compile(pattern)
        letters = {f.letter for f in self._fields}
        if not ({"y", "u"} & letters and {"M", "L"} & letters and "d" in letters):
            raise InvalidArgumentError(
                f"partition.timestamp-formatter {pattern!r} needs a year (yyyy), month (MM) and day (dd): "
                "Java parses the partition time as a date",
                argument="timestamp_formatter",
            )
        self._regex = re.compile(regex)

    def _bad(self, why: str) -> InvalidArgumentError:
        return InvalidArgumentError(
            f"Invalid partition.timestamp-formatter {self.pattern!r}: {why}", argument="timestamp_formatter"
        )

    def _compile(self, pattern: str) -> str:
        out: list[str] = []
        i, depth = 0, 0
        while i < len(pattern):
            c = pattern[i]
            if c == "'":
                end = pattern.find("'", i + 1)
                if end < 0:
                    raise self._bad("unclosed quote")
                out.append("'" if end == i + 1 else re.escape(pattern[i + 1 : end]))
                i = end + 1
                continue
            if c == "[":
                out.append("(?:")
                depth += 1
            elif c == "]":
                if depth == 0:
                    raise self._bad("']' without '['")
                out.append(")?")
                depth -= 1
            elif c in "{}#":
                raise self._bad(f"reserved character {c!r}")
            elif c.isascii() and c.isalpha():
                n = 1
                while i + n < len(pattern) and pattern[i + n] == c:
                    n += 1
                out.append(self._field(c, n))
                i += n
                continue
            else:
                out.append(re.escape(c))
            i += 1
        if depth:
            raise self._bad("'[' without ']'")
        return "".join(out)

    def _field(self, c: str, n: int) -> str:
        if c in "yu":
            rx = r"(\d{2})" if n == 2 else (r"(\d{1,19})" if n == 1 else rf"(\d{{{n},19}})")
        elif c in "ML":
            if n <= 2:
                rx = r"(\d{1,19})" if n == 1 else r"(\d{2})"
            elif n <= 4:
                rx = r"([A-Za-z]+)"
            else:
                raise self._bad(f"{c * n}: narrow month names cannot be parsed back")
        elif c in "dHhms":
            if n > 2:
                raise self._bad(f"too many pattern letters: {c * n}")
            rx = r"(\d{1,19})" if n == 1 else r"(\d{2})"
        elif c == "S":
            if n > 9:
                raise self._bad(f"too many pattern letters: {c * n}")
            rx = rf"(\d{{{n}}})"
        elif c == "a":
            rx = r"(AM|PM)"
        elif c in _JAVA_OTHER_LETTERS:
            raise self._bad(f"pattern letter {c!r} is not supported here (use y, M, d, H, h, a, m, s, S)")
        else:
            raise self._bad(f"unknown pattern letter {c!r}")
        self._fields.append(_Field(c, n))
        return rx

    def parse(self, text: str) -> dt.datetime:
        """The LocalDateTime ``text`` stands for (SMART resolver); ValueError if it does not match."""
        m = self._regex.fullmatch(text)
        if m is None:
            raise ValueError(f"{text!r} does not match {self.pattern!r}")
        vals: dict[str, int] = {}
        ampm: str | None = None
        for f, raw in zip(self._fields, m.groups(), strict=True):
            if raw is None:
                continue
            if f.letter == "a":
                ampm = raw
            elif f.letter in "ML" and f.count >= 3:
                names = _MONTHS_SHORT if f.count == 3 else _MONTHS_LONG
                if raw.lower() not in names:
                    raise ValueError(f"{raw!r} is not a month name")
                vals["M"] = names.index(raw.lower()) + 1
            elif f.letter == "S":
                vals["S"] = int(raw.ljust(9, "0"))
            else:
                v = int(raw)
                key = {"u": "y", "L": "M"}.get(f.letter, f.letter)
                vals[key] = 2000 + v if key == "y" and f.count == 2 else v
        if "y" not in vals or "M" not in vals or "d" not in vals:
            raise ValueError(f"{text!r} has no complete date")
        y, mo, d = vals["y"], vals["M"], vals["d"]
        if not 1 <= mo <= 12 or not 1 <= d <= 31:
            raise ValueError(f"{text!r}: month or day out of range")
        d = min(d, calendar.monthrange(y, mo)[1])  # SMART: Feb 30 -> Feb 28/29
        hour: int | None = vals.get("H")
        if hour is None and "h" in vals and ampm is not None:
            if not 1 <= vals["h"] <= 12:
                raise ValueError(f"{text!r}: clock hour out of range")
            hour = vals["h"] % 12 + (12 if ampm == "PM" else 0)
        if hour is None:  # Java: no LocalTime, so LocalDate at midnight
            return dt.datetime(y, mo, d)
        mi, s, nanos = vals.get("m", 0), vals.get("s", 0), vals.get("S", 0)
        if not (0 <= hour <= 23 and 0 <= mi <= 59 and 0 <= s <= 59):
            raise ValueError(f"{text!r}: time out of range")
        return dt.datetime(y, mo, d, hour, mi, s, nanos // 1000)


class PartitionTimeExtractor:
    """Extracts the partition time from partition values (see the module docstring)."""

    def __init__(self, pattern: str | None, formatter: str | None) -> None:
        self.pattern = pattern or None
        self.formatter = JavaDateTimeFormat(formatter) if formatter else None

    def time_string(self, keys: Sequence[str], values: Sequence[str | None]) -> str | None:
        """The string to parse; None when a value it needs is null (Java: no time, never expires)."""
        if self.pattern is None:
            return values[0] if values else None
        if any(v is None for v in values):
            return None
        text = self.pattern
        for k, v in zip(keys, values, strict=True):
            text = text.replace("$" + k, str(v))
        return text

    def extract(self, keys: Sequence[str], values: Sequence[str | None]) -> dt.datetime | None:
        """The partition's time, or None (with a warning) when it cannot be extracted."""
        text = self.time_string(keys, values)
        try:
            if text is None:
                raise ValueError("a partition value is null")
            if self.formatter is None:
                return to_local_date_time_default(text)
            return self.formatter.parse(text)
        except (ValueError, OverflowError) as e:
            logger.warning(
                "Partition %s: no time can be extracted (%s); it never expires by values-time. Check "
                "partition.timestamp-pattern/-formatter, drop it by hand, or use the update-time strategy",
                ",".join(f"{k}:{v}" for k, v in zip(keys, values, strict=True)),
                e,
            )
            return None
