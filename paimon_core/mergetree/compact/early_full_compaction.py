"""Time- and size-triggered full compaction: Java's ``EarlyFullCompaction``.

``try_full_compact`` picks every run into the max level when (checked in this order)
``compaction.optimization-interval`` has elapsed since the last full compaction, the total size
is below ``compaction.total-size-threshold``, or the bytes outside the max level exceed
``compaction.incremental-size-threshold``. The last full compaction time starts from
:func:`estimate_last_full_compaction_time` (Java's
``MergeTreeCompactManagerFactory.estimateLastFullCompactionTime``) and is updated whenever a
full compaction is picked, here or by ``UniversalCompaction``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Sequence

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.sorted_run import LevelSortedRun
from paimon_core.tag.tag_period import from_local_datetime
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

__all__ = ["EarlyFullCompaction", "estimate_last_full_compaction_time"]

logger = logging.getLogger(__name__)

_EPOCH = dt.datetime(1970, 1, 1)


class EarlyFullCompaction:
    """Full-compaction trigger; holds the time of the last full compaction (epoch millis)."""

    def __init__(
        self,
        *,
        full_compaction_interval_ms: int | None = None,
        total_size_threshold: int | None = None,
        incremental_size_threshold: int | None = None,
        last_full_compaction_ms: int | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.full_compaction_interval_ms = full_compaction_interval_ms
        self.total_size_threshold = total_size_threshold
        self.incremental_size_threshold = incremental_size_threshold
        self._last_full_compaction_ms = last_full_compaction_ms
        self._clock = clock

    @property
    def last_full_compaction_ms(self) -> int | None:
        return self._last_full_compaction_ms

    def update_last_full_compaction(self) -> None:
        self._last_full_compaction_ms = self._clock.now_millis()

    def try_full_compact(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        if len(runs) == 1:
            return None
        max_level = num_levels - 1
        reason = self._reason(max_level, runs)
        if reason is None:
            return None
        logger.debug("Universal compaction due to %s", reason)
        self.update_last_full_compaction()
        return CompactUnit.from_level_runs(max_level, runs)

    def _reason(self, max_level: int, runs: Sequence[LevelSortedRun]) -> str | None:
        if self.full_compaction_interval_ms is not None and (
            self._last_full_compaction_ms is None
            or self._clock.now_millis() - self._last_full_compaction_ms > self.full_compaction_interval_ms
        ):
            return "full compaction interval"
        if self.total_size_threshold is not None:
            if sum(r.run.total_size for r in runs) < self.total_size_threshold:
                return "total size threshold"
        if self.incremental_size_threshold is not None:
            incremental = sum(r.run.total_size for r in runs if r.level != max_level)
            if incremental > self.incremental_size_threshold:
                return "incremental size threshold"
        return None


def estimate_last_full_compaction_time(
    restore_files: Iterable[DataFileMeta], num_levels: int, *, zone: dt.tzinfo | None = None
) -> int | None:
    """Epoch millis of the newest max-level file's creation, or None without max-level files.

    ``creation_time`` is stored as local wall-clock millis; ``zone`` is the writer's zone used
    to turn it into epoch millis (None = this machine's zone, like Java's
    ``creationTimeEpochMillis``). Files with no creation time are skipped.
    """
    max_level = num_levels - 1
    newest = max(
        (f.creation_time for f in restore_files if f.level == max_level and f.creation_time is not None),
        default=None,
    )
    if newest is None:
        return None
    epoch = from_local_datetime(_EPOCH + dt.timedelta(milliseconds=newest), zone)
    return epoch if epoch >= 0 else None
