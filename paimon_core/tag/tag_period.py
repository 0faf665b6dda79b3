"""Periods and names of automatic tags (Java's TagPeriodHandler and TagTimeExtractor).

An auto tag is named after the *start* of the period it covers, formatted as Java's
``DateTimeFormatter``s write it:

=============================  ====================  =====================  ===========================
``tag.creation-period``        ``with_dashes``       ``without_dashes``     ``without_dashes_and_spaces``
=============================  ====================  =====================  ===========================
``daily``                      ``2024-01-31``        ``20240131``           ``20240131``
``hourly``                     ``2024-01-31 08``     ``20240131 08``        ``2024013108``
``two-hours``                  ``2024-01-31 08``     (always with dashes)   (always with dashes)
``tag.creation-period-duration``  ``202401310830`` (``yyyyMMddHHmm``, whatever the formatter)
=============================  ====================  =====================  ===========================

Times are naive local date-times (Java ``LocalDateTime``) in the zone of
``sink.process-time-zone`` (default: this machine's zone) for process-time tags and of
``sink.watermark-time-zone`` (default UTC) for watermark tags. Period arithmetic treats the
local date-time as if it were UTC, exactly as Java's ``Timestamp.fromLocalDateTime`` does.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import zoneinfo
from dataclasses import dataclass

from paimon_core.exceptions import InvalidOptionError
from paimon_core.options import CoreOptions

logger = logging.getLogger(__name__)

_EPOCH = dt.datetime(1970, 1, 1)
_ONE_DAY_MS = 86_400_000
_ONE_HOUR_MS = 3_600_000

# name -> (regex, strftime pattern, fields parsed: 3 = date, 4 = +hour, 5 = +minute)
_FORMATS: dict[str, tuple[re.Pattern[str], str, int]] = {
    "day": (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "%Y-%m-%d", 3),
    "day_without_dashes": (re.compile(r"(\d{4})(\d{2})(\d{2})"), "%Y%m%d", 3),
    "hour": (re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2})"), "%Y-%m-%d %H", 4),
    "hour_without_dashes": (re.compile(r"(\d{4})(\d{2})(\d{2}) (\d{2})"), "%Y%m%d %H", 4),
    "hour_without_dashes_and_spaces": (re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})"), "%Y%m%d%H", 4),
    "minute": (re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})"), "%Y%m%d%H%M", 5),
}
FORMATTERS = ("with_dashes", "without_dashes", "without_dashes_and_spaces")
PERIODS = ("daily", "hourly", "two-hours")


@dataclass(frozen=True)
class TagPeriodHandler:
    """Names, parses and steps the periods of automatic tags.

    ``period_ms`` is the length of one period; ``format_name`` one of the keys of ``_FORMATS``;
    ``daily`` parses names as Java's DailyTagPeriodHandler does (the part before a space).
    """

    period_ms: int
    format_name: str
    daily: bool = False

    @staticmethod
    def create(options: CoreOptions) -> TagPeriodHandler:
        """The handler Java's ``TagPeriodHandler.create(options)`` would build."""
        duration = options.tag_creation_period_duration_ms
        if duration is not None:
            if duration <= 0:
                raise InvalidOptionError("Option 'tag.creation-period-duration' must be positive", key="tag.creation-period-duration")
            return TagPeriodHandler(duration, "minute")
        formatter = options.tag_period_formatter.lower()
        if formatter not in FORMATTERS:
            raise InvalidOptionError(
                f"Option 'tag.period-formatter' must be one of {', '.join(FORMATTERS)}; got {formatter!r}",
                key="tag.period-formatter",
            )
        period = options.tag_creation_period.lower()
        if period == "daily":
            fmt = "day" if formatter == "with_dashes" else "day_without_dashes"
            return TagPeriodHandler(_ONE_DAY_MS, fmt, daily=True)
        if period == "hourly":
            fmt = "hour" if formatter == "with_dashes" else f"hour_{formatter}"
            return TagPeriodHandler(_ONE_HOUR_MS, fmt)
        if period == "two-hours":
            return TagPeriodHandler(2 * _ONE_HOUR_MS, "hour")
        raise InvalidOptionError(
            f"Option 'tag.creation-period' must be one of {', '.join(PERIODS)}; got {period!r}",
            key="tag.creation-period",
        )

    @property
    def period(self) -> dt.timedelta:
        return dt.timedelta(milliseconds=self.period_ms)

    def validate_delay(self, delay_ms: int) -> None:
        """Java: the delay must be shorter than one period."""
        if not self.period_ms > delay_ms:
            raise InvalidOptionError(
                f"Option 'tag.creation-delay' ({delay_ms} ms) must be shorter than one tag period ({self.period_ms} ms)",
                key="tag.creation-delay",
            )

    def tag_to_time(self, name: str) -> dt.datetime:
        """The period start a tag name stands for; ValueError if it is not an auto-tag name."""
        if self.daily:
            name = name.split(" ")[0]
        regex, _, n = _FORMATS[self.format_name]
        m = regex.fullmatch(name)
        if m is None:
            raise ValueError(f"{name!r} is not an automatic tag name")
        parts = [int(g) for g in m.groups()] + [0] * (5 - n)
        return dt.datetime(parts[0], parts[1], parts[2], parts[3], parts[4])  # validates (strict resolver)

    def is_auto_tag(self, name: str) -> bool:
        try:
            self.tag_to_time(name)
        except ValueError:
            return False
        return True

    def time_to_tag(self, time: dt.datetime) -> str:
        # strftime's %Y is not zero-padded for years < 1000 on every platform: pad by hand.
        _, pattern, _ = _FORMATS[self.format_name]
        return time.strftime(pattern.replace("%Y", f"{time.year:04d}"))

    def normalize_to_previous_tag(self, time: dt.datetime) -> dt.datetime:
        """Start of the last *complete* period before ``time`` (Java's normalizeToPreviousTag)."""
        millis = _local_millis(time)
        quotient = millis // self.period_ms if millis >= 0 else -(-millis // self.period_ms)  # Java truncates
        floored = quotient * self.period_ms
        return _EPOCH + dt.timedelta(milliseconds=floored) - self.period

    def next_tag_time(self, time: dt.datetime) -> dt.datetime:
        return time + self.period

    def previous_tag_time(self, time: dt.datetime) -> dt.datetime:
        return time - self.period


def _local_millis(time: dt.datetime) -> int:
    delta = time - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_OFFSET = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def parse_zone(zone_id: str | None) -> dt.tzinfo | None:
    """A tzinfo for a Java zone id ('Asia/Shanghai', 'UTC', 'GMT+08:00', '+8'); None = local zone."""
    if zone_id is None:
        return None
    text = zone_id.strip()
    if text.upper() in ("UTC", "GMT", "UT", "Z"):
        return dt.UTC
    m = _OFFSET.match(text.upper())
    if m is not None:
        sign = -1 if m.group(1) == "-" else 1
        delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return dt.timezone(sign * delta)
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise InvalidOptionError(f"Unknown time zone {zone_id!r}: {e}", key="time-zone") from None


def to_local_datetime(epoch_millis: int, zone: dt.tzinfo | None) -> dt.datetime:
    """Java ``Instant.ofEpochMilli(ms).atZone(zone).toLocalDateTime()`` (zone None = machine zone)."""
    if zone is None:
        return dt.datetime.fromtimestamp(epoch_millis / 1000.0)
    return dt.datetime.fromtimestamp(epoch_millis / 1000.0, zone).replace(tzinfo=None)


def from_local_datetime(time: dt.datetime, zone: dt.tzinfo | None) -> int:
    """Epoch millis of a local date-time in ``zone`` (None = machine zone)."""
    aware = time.astimezone() if zone is None else time.replace(tzinfo=zone)
    return int(aware.timestamp() * 1000)


@dataclass(frozen=True)
class TagTimeExtractor:
    """Java's TagTimeExtractor: the time a snapshot stands for in ``process-time`` or ``watermark`` mode."""

    mode: str
    zone: dt.tzinfo | None

    @staticmethod
    def for_auto_tag(options: CoreOptions) -> TagTimeExtractor | None:
        """None for modes without a time (``none``, ``batch``), as in Java."""
        mode = options.tag_automatic_creation.lower()
        if mode == "process-time":
            return TagTimeExtractor(mode, parse_zone(options.get("sink.process-time-zone")))
        if mode == "watermark":
            return TagTimeExtractor(mode, parse_zone(options.get("sink.watermark-time-zone", "UTC")))
        if mode in ("none", "batch"):
            return None
        raise InvalidOptionError(
            f"Option 'tag.automatic-creation' must be none, process-time, watermark or batch; got {mode!r}",
            key="tag.automatic-creation",
        )

    def extract(self, time_millis: int, watermark: int | None) -> dt.datetime | None:
        if self.mode == "watermark":
            if watermark is None or watermark == -(2**63):
                return None
            return to_local_datetime(watermark, self.zone)
        return to_local_datetime(time_millis, self.zone)
