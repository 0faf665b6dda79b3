"""Universal compaction (RocksDB style): Java's ``UniversalCompaction``.

``pick(num_levels, runs)`` tries, in order: the early full-compaction trigger; size
amplification (all runs into the max level); size ratio (from the newest run, absorb the next run
while the picked runs are at least its size, with ``size-ratio`` + off-peak percent of slack);
and, past the trigger, the run count (pick ``runs - trigger + 1`` runs, then extend by size
ratio). See https://github.com/facebook/rocksdb/wiki/Universal-Compaction.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence

from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.compact.early_full_compaction import EarlyFullCompaction
from paimon_core.mergetree.compact.off_peak_hours import OffPeakHours, current_hour
from paimon_core.mergetree.sorted_run import LevelSortedRun
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

__all__ = ["UniversalCompaction"]

logger = logging.getLogger(__name__)


class UniversalCompaction:
    """Universal compaction strategy (a :class:`CompactStrategy`).

    ``max_size_amp`` is ``compaction.max-size-amplification-percent``, ``size_ratio``
    ``compaction.size-ratio`` (percent), ``num_run_compaction_trigger``
    ``num-sorted-run.compaction-trigger``. ``clock`` and ``zone`` give the hour for
    ``off_peak_hours``.
    """

    def __init__(
        self,
        max_size_amp: int,
        size_ratio: int,
        num_run_compaction_trigger: int,
        *,
        early_full_compaction: EarlyFullCompaction | None = None,
        off_peak_hours: OffPeakHours | None = None,
        clock: Clock = SYSTEM_CLOCK,
        zone: dt.tzinfo | None = None,
    ) -> None:
        self.max_size_amp = max_size_amp
        self.size_ratio = size_ratio
        self.num_run_compaction_trigger = num_run_compaction_trigger
        self.early_full_compaction = early_full_compaction
        self.off_peak_hours = off_peak_hours
        self._clock = clock
        self._zone = zone

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        max_level = num_levels - 1
        if self.early_full_compaction is not None:
            unit = self.early_full_compaction.try_full_compact(num_levels, runs)
            if unit is not None:
                return unit
        unit = self.pick_for_size_amp(max_level, runs)
        if unit is not None:
            logger.debug("Universal compaction due to size amplification")
            return unit
        unit = self.pick_for_size_ratio(max_level, runs)
        if unit is not None:
            logger.debug("Universal compaction due to size ratio")
            return unit
        if len(runs) > self.num_run_compaction_trigger:
            logger.debug("Universal compaction due to file num")
            candidate_count = len(runs) - self.num_run_compaction_trigger + 1
            return self.pick_for_size_ratio(max_level, runs, candidate_count=candidate_count)
        return None

    def force_pick_l0(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        """All level-0 runs, extended by size ratio (Java ``forcePickL0``); None without L0."""
        candidate_count = 0
        for r in runs:
            if r.level > 0:
                break
            candidate_count += 1
        if candidate_count == 0:
            return None
        return self.pick_for_size_ratio(num_levels - 1, runs, candidate_count=candidate_count, force_pick=True)

    def pick_for_size_amp(self, max_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        """All runs into the max level when the runs above the oldest one are too big."""
        if not runs or len(runs) < self.num_run_compaction_trigger:
            return None
        candidate_size = sum(r.run.total_size for r in runs[:-1])
        earliest_run_size = runs[-1].run.total_size
        if candidate_size * 100 > self.max_size_amp * earliest_run_size:
            self._full_compaction_picked()
            return CompactUnit.from_level_runs(max_level, runs)
        return None

    def pick_for_size_ratio(
        self,
        max_level: int,
        runs: Sequence[LevelSortedRun],
        *,
        candidate_count: int | None = None,
        force_pick: bool = False,
    ) -> CompactUnit | None:
        """Pick by size ratio, starting from the first ``candidate_count`` runs.

        Without ``candidate_count`` this is Java's ``pickForSizeRatio(maxLevel, runs)``: nothing
        below the trigger, else start from one run. With it, no trigger check. A next run too big
        to absorb stops the pick, except that once compaction is triggered (two runs picked, or
        ``force_pick``) runs on level 0 or 1 are absorbed anyway. One run alone is no pick.
        """
        if candidate_count is None:
            if len(runs) < self.num_run_compaction_trigger:
                return None
            candidate_count = 1
        candidate_size = sum(r.run.total_size for r in runs[:candidate_count])
        triggered = force_pick or candidate_count > 1
        slack = 100.0 + self.size_ratio + self._ratio_for_off_peak()
        for nxt in runs[candidate_count:]:
            if candidate_size * slack / 100.0 < nxt.run.total_size and (not triggered or nxt.level > 1):
                break
            candidate_size += nxt.run.total_size
            candidate_count += 1
            triggered = True
        return self.create_unit(runs, max_level, candidate_count) if triggered else None

    def create_unit(self, runs: Sequence[LevelSortedRun], max_level: int, run_count: int) -> CompactUnit:
        """The unit of the first ``run_count`` runs and its output level (Java ``createUnit``).

        All runs → max level; else the next unpicked run's level - 1, never level 0: when that is
        0, runs are added until one above level 0 is included, and its level is the output.
        """
        if run_count == len(runs):
            output_level = max_level
        else:
            output_level = max(0, runs[run_count].level - 1)
        if output_level == 0:
            for nxt in runs[run_count:]:
                run_count += 1
                if nxt.level != 0:
                    output_level = nxt.level
                    break
        if run_count == len(runs):
            self._full_compaction_picked()
            output_level = max_level
        return CompactUnit.from_level_runs(output_level, runs[:run_count])

    def _full_compaction_picked(self) -> None:
        if self.early_full_compaction is not None:
            self.early_full_compaction.update_last_full_compaction()

    def _ratio_for_off_peak(self) -> int:
        if self.off_peak_hours is None:
            return 0
        return self.off_peak_hours.current_ratio(current_hour(self._clock, self._zone))
