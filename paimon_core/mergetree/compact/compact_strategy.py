"""Picking what to compact: Java's ``CompactStrategy`` (org.apache.paimon.mergetree.compact).

``CompactStrategy.pick(num_levels, runs)`` is a policy over the runs of
``Levels.level_sorted_runs()``; :func:`pick_full_compaction` is the unit of a user-requested
full compaction; :func:`filter_trivial_unit` is the filter ``MergeTreeCompactManager`` applies to
what a strategy picks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import Protocol

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.sorted_run import LevelSortedRun

__all__ = ["CompactStrategy", "filter_trivial_unit", "pick_full_compaction"]


class CompactStrategy(Protocol):
    """Picks a compaction unit from the runs of one bucket.

    Compaction is run-based, not file-based: level 0 is one run per file, every other level
    one run; runs are picked as a prefix, from small (new) to large (old) levels.
    Implementations may keep state (the time of the last full compaction, a trigger count),
    but do no I/O.
    """

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None: ...


def pick_full_compaction(
    num_levels: int,
    runs: Sequence[LevelSortedRun],
    *,
    force_rewrite_all_files: bool = False,
    files_with_deletion_vectors: Set[str] = frozenset(),
    is_expired_file: Callable[[DataFileMeta], bool] | None = None,
) -> CompactUnit | None:
    """All files into the max level (Java ``CompactStrategy.pickFullCompaction``).

    When only one run remains and it is already on the max level, only the files that need a
    rewrite are picked, as a ``file_rewrite`` unit: every file when ``force_rewrite_all_files``,
    else files with expired records (``is_expired_file``, Java's ``RecordLevelExpire``) or with
    a deletion vector (their names in ``files_with_deletion_vectors``). None when nothing to do.
    """
    max_level = num_levels - 1
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == max_level:
        picked = [
            f
            for f in runs[0].run.files
            if force_rewrite_all_files
            or (is_expired_file is not None and is_expired_file(f))
            or f.file_name in files_with_deletion_vectors
        ]
        return CompactUnit.from_files(max_level, picked, file_rewrite=True) if picked else None
    return CompactUnit.from_level_runs(max_level, runs)


def filter_trivial_unit(unit: CompactUnit | None) -> CompactUnit | None:
    """Drop a picked unit with no files, or a single file already on the output level.

    This is what ``MergeTreeCompactManager.triggerCompaction`` does with a strategy's pick
    (not with :func:`pick_full_compaction`'s unit).
    """
    if unit is None or not unit.files:
        return None
    if len(unit.files) == 1 and unit.files[0].level == unit.output_level:
        return None
    return unit
