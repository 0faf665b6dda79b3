"""Conversions of the time arguments maintenance calls accept."""

from __future__ import annotations

import datetime as dt

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.options import parse_duration_ms

TimePoint = int | dt.datetime | str
Duration = int | dt.timedelta | str


def to_epoch_millis(value: TimePoint, *, name: str = "time") -> int:
    """Epoch millis from millis, an aware/naive datetime (naive = UTC) or an ISO-8601 string."""
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name} must be a time, got {value!r}", argument=name)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        try:
            value = dt.datetime.fromisoformat(text)
        except ValueError:
            raise InvalidArgumentError(
                f"{name} {value!r} is neither epoch millis nor an ISO-8601 timestamp", argument=name
            ) from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    raise InvalidArgumentError(f"{name} must be millis, a datetime or an ISO string, got {value!r}", argument=name)


def to_duration_millis(value: Duration, *, name: str = "duration") -> int:
    """Millis from millis, a timedelta or a Paimon duration string ('1 d', '30 min', '2h')."""
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name} must be a duration, got {value!r}", argument=name)
    if isinstance(value, int):
        out = value
    elif isinstance(value, dt.timedelta):
        out = int(value.total_seconds() * 1000)
    elif isinstance(value, str):
        out = parse_duration_ms(value, key=name)
    else:
        raise InvalidArgumentError(f"{name} must be a duration, got {value!r}", argument=name)
    if out < 0:
        raise InvalidArgumentError(f"{name} must not be negative, got {value!r}", argument=name)
    return out
