"""Always move level 0 up: Java's ``ForceUpLevel0Compaction``.

Universal compaction first; when it picks nothing, all level-0 runs are picked (extended by
size ratio) so that lookup/deletion-vector tables do not keep level-0 files. With
``max_compact_interval`` (``lookup-compact`` = GENTLE) the forced pick happens only every
``max_compact_interval``-th time universal compaction picked nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction
from paimon_core.mergetree.sorted_run import LevelSortedRun

__all__ = ["ForceUpLevel0Compaction"]

logger = logging.getLogger(__name__)


class ForceUpLevel0Compaction:
    """A :class:`CompactStrategy` wrapping :class:`UniversalCompaction`."""

    def __init__(self, universal: UniversalCompaction, *, max_compact_interval: int | None = None) -> None:
        self.universal = universal
        self.max_compact_interval = max_compact_interval
        self._trigger_count = 0

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        unit = self.universal.pick(num_levels, runs)
        if unit is not None:
            return unit
        if self.max_compact_interval is None:
            return self.universal.force_pick_l0(num_levels, runs)
        self._trigger_count += 1
        if self._trigger_count == self.max_compact_interval:
            self._trigger_count = 0
            logger.debug("Universal compaction due to max lookup compaction interval %d", self.max_compact_interval)
            return self.universal.force_pick_l0(num_levels, runs)
        logger.debug(
            "Skip forced level-0 compaction: trigger count %d is below the max interval %d",
            self._trigger_count,
            self.max_compact_interval,
        )
        return None
