"""Off-peak hours for compaction: Java's ``OffPeakHours`` (org.apache.paimon.mergetree.compact).

During off-peak hours ``compaction.offpeak-ratio`` is added to ``compaction.size-ratio``, so
size-ratio picking absorbs larger runs. The ratio is a pure function of the hour; the hour
comes from an injected clock and time zone (Java reads ``LocalDateTime.now().getHour()``, the
machine zone).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from paimon_core.tag.tag_period import to_local_datetime
from paimon_core.utils.clock import Clock

__all__ = ["OffPeakHours", "current_hour"]


@dataclass(frozen=True, slots=True)
class OffPeakHours:
    """Hours ``[start_hour, end_hour)``, wrapping past midnight when ``start_hour > end_hour``."""

    start_hour: int
    end_hour: int
    ratio: int

    @staticmethod
    def create(start_hour: int, end_hour: int, ratio: int) -> OffPeakHours | None:
        """None (no off-peak) when either hour is -1 or both are equal, as Java."""
        if start_hour == -1 or end_hour == -1 or start_hour == end_hour:
            return None
        return OffPeakHours(start_hour, end_hour, ratio)

    def is_off_peak(self, hour: int) -> bool:
        if self.start_hour <= self.end_hour:
            return self.start_hour <= hour < self.end_hour
        return hour < self.end_hour or self.start_hour <= hour

    def current_ratio(self, hour: int) -> int:
        """The extra size ratio (percent) at ``hour`` of the day: ``ratio`` off-peak, else 0."""
        return self.ratio if self.is_off_peak(hour) else 0


def current_hour(clock: Clock, zone: dt.tzinfo | None = None) -> int:
    """Hour of the day now, in ``zone`` (None = the machine's zone, as Java)."""
    return to_local_datetime(clock.now_millis(), zone).hour
