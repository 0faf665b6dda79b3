"""One unit of dedicated compaction: planned on the driver, run anywhere, committed on the driver.

A :class:`CompactTask` is plain picklable data (Spark ships it to an executor) describing the
work for one (partition, bucket):

* ``merge-tree`` (primary-key tables): the steps of Java's ``MergeTreeCompactTask`` for the unit
  the strategy picked: metadata-only upgrades and merge rewrites into ``output_level``
  (``changelog-producer = full-compaction``: rewrites and upgrades into the max level also write
  the changelog, Java's ``FullChangelogMergeTreeCompactRewriter``);
* ``append``: the files of one append bin (Java's ``AppendCompactTask``) or of one fixed bucket
  (``BucketedAppendCompactManager``), rewritten into files of ``target-file-size``;
* ``data-evolution``: whole row-id groups of one partition merged into one file keeping the row
  ids (Java's ``DataEvolutionNormalCompactTask``, :mod:`paimon_core.append.data_evolution_compact_task`).

:func:`run_compact_task` executes it and returns the :class:`CommitMessage` with the files before
and after (Java's ``CompactIncrement``); nothing is visible until the driver commits the messages.
If it fails, the files it wrote are deleted again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_task_plan import CompactStep, RewriteStep, UpgradeStep
from paimon_core.operation.commit.commit_message import CommitMessage

if TYPE_CHECKING:
    from paimon_core.append.append_deletion_index import DeletionIndex
    from paimon_core.store.file_store import FileStore

__all__ = ["CompactTask", "TaskKind", "run_compact_task"]

logger = logging.getLogger(__name__)

TaskKind = Literal["merge-tree", "append", "data-evolution"]


@dataclass(frozen=True)
class CompactTask:
    """The work of one (partition, bucket); see the module docstring."""

    kind: TaskKind
    partition: bytes
    partition_name: str  # e.g. "dt=2024-01-01" ("" when unpartitioned), for plans and logs
    bucket: int
    total_buckets: int
    output_level: int
    steps: tuple[CompactStep, ...] = ()  # merge-tree
    files: tuple[DataFileMeta, ...] = ()  # append: rewritten together, oldest first; data-evolution: merged
    sorted_runs: int = 0  # sorted runs of the bucket before (merge-tree)
    max_level: int | None = None  # merge-tree: the bucket's Levels.max_level (full-compaction changelog)
    #: merge-tree of lookup tables (deletion vectors, lookup changelog): the bucket's files on the
    #: levels above ``output_level``, where the compaction looks keys up
    lookup_files: tuple[DataFileMeta, ...] = ()
    #: deletion-vector tables: the bucket's vectors to start from (None: the latest snapshot's);
    #: a writer compacting a bucket twice before one commit passes the first result's
    deletion_index: DeletionIndex | None = None

    @property
    def input_files(self) -> list[DataFileMeta]:
        if self.kind != "merge-tree":
            return list(self.files)
        out: list[DataFileMeta] = []
        for step in self.steps:
            out += [step.file] if isinstance(step, UpgradeStep) else step.files
        return out

    @property
    def rewrite_files(self) -> list[DataFileMeta]:
        """Files whose rows are read and written again (the others are only upgraded)."""
        if self.kind != "merge-tree":
            return list(self.files)
        return [f for s in self.steps if isinstance(s, RewriteStep) for f in s.files]

    @property
    def upgrade_files(self) -> list[DataFileMeta]:
        return [s.file for s in self.steps if isinstance(s, UpgradeStep)]

    def to_dict(self) -> dict[str, Any]:
        """The dry-run view: what would be read, rewritten and upgraded, and the write amplification
        (bytes rewritten per byte of level-0 input; None without level-0 input)."""
        inputs = self.input_files
        rewrite_bytes = sum(f.file_size for f in self.rewrite_files)
        level0_bytes = sum(f.file_size for f in inputs if f.level == 0)
        return {
            "kind": self.kind,
            "partition": self.partition_name,
            "bucket": self.bucket,
            "output_level": self.output_level,
            "input_files": len(inputs),
            "input_bytes": sum(f.file_size for f in inputs),
            "input_rows": sum(f.row_count for f in inputs),
            "rewrite_files": len(self.rewrite_files),
            "rewrite_bytes": rewrite_bytes,
            "upgrade_files": len(self.upgrade_files),
            "input_levels": sorted({f.level for f in inputs}),
            "sorted_runs_before": self.sorted_runs,
            "write_amplification": round(rewrite_bytes / level0_bytes, 3) if level0_bytes else None,
        }


def run_compact_task(store: FileStore, task: CompactTask) -> CommitMessage:
    """Execute ``task`` on ``store`` (the compaction's table handle's store); see the module docstring."""
    if task.kind == "data-evolution":
        from paimon_core.append.data_evolution_compact_task import run_data_evolution_compact_task

        return run_data_evolution_compact_task(store, task.partition, task.files)
    if task.kind == "append":
        from paimon_core.append.append_compact_rewriter import rewrite_append_files

        return rewrite_append_files(store, task.partition, task.bucket, task.files)
    from paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter import (
        run_lookup_compact_task,
        uses_lookup_rewriter,
    )

    if uses_lookup_rewriter(store.options.options):
        return run_lookup_compact_task(store, task)
    from paimon_core.mergetree.compact.full_changelog_merge_tree_compact_rewriter import (
        FullChangelogMergeTreeCompactRewriter,
        produces_full_changelog,
    )
    from paimon_core.mergetree.compact.merge_tree_compact_rewriter import MergeTreeCompactRewriter
    from paimon_core.store.key_value_file_store import KeyValueFileStore

    assert isinstance(store, KeyValueFileStore)  # merge-tree tasks are planned for primary-key tables only
    rewriter: MergeTreeCompactRewriter
    steps: Sequence[CompactStep] = task.steps
    full_changelog: FullChangelogMergeTreeCompactRewriter | None = None
    if produces_full_changelog(store) and task.max_level is not None:
        rewriter = full_changelog = FullChangelogMergeTreeCompactRewriter(
            store, task.partition, task.bucket, max_level=task.max_level
        )
        steps = full_changelog.changelog_steps(task.steps)
    else:
        rewriter = MergeTreeCompactRewriter(store, task.partition, task.bucket)
    before: list[DataFileMeta] = []
    after: list[DataFileMeta] = []
    try:
        for step in steps:
            if isinstance(step, UpgradeStep):
                before.append(step.file)
                after.append(step.upgraded)
            else:
                before += step.files
                after += rewriter.rewrite(step)
    except BaseException:
        rewriter.abort()
        raise
    return CommitMessage(
        task.partition,
        task.bucket,
        task.total_buckets,
        compact_before=tuple(before),
        compact_after=tuple(after),
        compact_changelog_files=tuple(full_changelog.changelog_files) if full_changelog is not None else (),
    )
