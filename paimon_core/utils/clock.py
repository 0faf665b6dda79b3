"""An injectable clock, so retention logic is tested without sleeping."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Source of the current time."""

    def now_millis(self) -> int:
        """Milliseconds since the epoch."""
        ...


class SystemClock:
    """The machine's clock."""

    def now_millis(self) -> int:
        return int(time.time() * 1000)


class ManualClock:
    """A clock tests set and advance by hand."""

    def __init__(self, now_millis: int = 0) -> None:
        self._now = now_millis

    def now_millis(self) -> int:
        return self._now

    def set(self, now_millis: int) -> None:
        self._now = now_millis

    def advance(self, millis: int) -> None:
        self._now += millis


SYSTEM_CLOCK = SystemClock()
