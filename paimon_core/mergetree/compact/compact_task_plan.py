"""What a merge-tree compaction does with a unit: the pure part of Java's ``MergeTreeCompactTask.doCompact``.

The unit's files are split into key-disjoint sections (:func:`interval_partition`), visited in
key order. A section of several runs (overlapping files) must be merged. In a section of one run,
each file smaller than ``min_file_size`` joins the pending rewrite together with its neighbours;
a large file first flushes the pending rewrite and is then *upgraded* (a metadata-only level
change) instead of rewritten, unless the output is the max level and it may contain deletes
(``delete_row_count`` > 0 or unknown), it has expired records, or ``force_rewrite_all_files``;
then it is rewritten alone. A file already on the output level is left alone. Pending work
that is a single run is upgraded file by file rather than rewritten.

A file-rewrite unit (Java ``FileRewriteCompactTask``) rewrites each file on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.compact.interval_partition import interval_partition
from paimon_core.mergetree.keys import KeyOf
from paimon_core.mergetree.sorted_run import SortedRun

__all__ = ["CompactStep", "RewriteStep", "UpgradeStep", "drop_delete", "plan_compact_task"]


@dataclass(frozen=True, slots=True)
class UpgradeStep:
    """Move ``file`` to ``output_level`` without rewriting it (Java ``rewriter.upgrade``).

    The compaction result is before = ``file``, after = :attr:`upgraded`.
    """

    file: DataFileMeta
    output_level: int

    @property
    def upgraded(self) -> DataFileMeta:
        return self.file.with_level(self.output_level)


@dataclass(frozen=True, slots=True)
class RewriteStep:
    """Merge ``sections`` into new files on ``output_level`` (Java ``rewriter.rewrite``).

    ``sections`` are key-disjoint and in key order; each is a list of sorted runs to merge-sort.
    ``drop_delete``: whether delete records may be dropped from the output. Before = every file
    of every section.
    """

    sections: tuple[tuple[SortedRun, ...], ...]
    output_level: int
    drop_delete: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "sections", tuple(tuple(s) for s in self.sections))

    @property
    def files(self) -> list[DataFileMeta]:
        """All input files, section by section, run by run."""
        return [f for section in self.sections for run in section for f in run.files]


CompactStep = UpgradeStep | RewriteStep


def drop_delete(
    output_level: int, non_empty_highest_level: int, *, dv_maintained: bool, force_keep_delete: bool = False
) -> bool:
    """Whether a compaction into ``output_level`` may drop delete records (Java ``MergeTreeCompactManager``).

    Never into level 0 (older data may remain on level 0). Otherwise only when nothing older is
    left outside the unit (``output_level >= non_empty_highest_level``), or when deletion vectors
    are maintained. ``force_keep_delete`` is Java's chain-table switch.
    """
    return (
        not force_keep_delete
        and output_level != 0
        and (output_level >= non_empty_highest_level or dv_maintained)
    )


def _may_contain_deletes(file: DataFileMeta) -> bool:
    return file.delete_row_count is None or file.delete_row_count > 0


def plan_compact_task(
    unit: CompactUnit,
    key_of: KeyOf,
    *,
    max_level: int,
    min_file_size: int,
    non_empty_highest_level: int,
    dv_maintained: bool = False,
    force_keep_delete: bool = False,
    force_rewrite_all_files: bool = False,
    is_expired_file: Callable[[DataFileMeta], bool] | None = None,
) -> list[CompactStep]:
    """The ordered steps that compact ``unit`` (Java ``MergeTreeCompactTask`` / ``FileRewriteCompactTask``).

    ``max_level`` is ``Levels.max_level``; ``min_file_size`` is ``target-file-size`` ×
    ``compaction.small-file-ratio`` (``compact_options.compaction_file_size``);
    ``non_empty_highest_level`` (``Levels.non_empty_highest_level()`` when the unit is picked),
    ``dv_maintained`` and ``force_keep_delete`` decide :func:`drop_delete` for every rewrite;
    ``is_expired_file`` is Java's ``RecordLevelExpire.isExpireFile``.
    Executing the steps in order and concatenating their before/after files gives Java's
    ``CompactResult``.
    """
    level = unit.output_level
    dropping = drop_delete(
        level, non_empty_highest_level, dv_maintained=dv_maintained, force_keep_delete=force_keep_delete
    )
    if unit.file_rewrite:
        return [RewriteStep(((SortedRun.from_single(f),),), level, dropping) for f in unit.files]

    steps: list[CompactStep] = []
    candidate: list[Sequence[SortedRun]] = []

    def upgrade(file: DataFileMeta) -> None:
        if (
            (level == max_level and _may_contain_deletes(file))
            or force_rewrite_all_files
            or (is_expired_file is not None and is_expired_file(file))
        ):
            steps.append(RewriteStep(((SortedRun.from_single(file),),), level, dropping))
        elif file.level != level:
            steps.append(UpgradeStep(file, level))

    def flush() -> None:
        if not candidate:
            return
        if len(candidate) == 1 and len(candidate[0]) <= 1:
            for run in candidate[0]:
                for file in run.files:
                    upgrade(file)
        else:
            steps.append(RewriteStep(tuple(tuple(s) for s in candidate), level, dropping))
        candidate.clear()

    for section in interval_partition(unit.files, key_of):
        if len(section) > 1:
            candidate.append(section)
            continue
        for file in section[0].files:
            if file.file_size < min_file_size:
                candidate.append((SortedRun.from_single(file),))
            else:
                flush()
                upgrade(file)
    flush()
    return steps
