"""Compaction by writers, as Java's writers do when ``write-only`` is false (the default).

Java's ``MergeTreeWriter`` hands each flushed sorted run to its ``MergeTreeCompactManager``; a batch
``prepareCommit`` waits for the compaction, and the commit then writes two snapshots: APPEND with
the new files, COMPACT with the compaction's before/after files. Here, after a batch of a
primary-key table is flushed, each written bucket's levels are restored from the latest snapshot
plus its new level-0 files and compacted before the messages are handed to the committer:

* a full compaction (every run into the max level) when the bucket is due by
  ``full-compaction.delta-commits`` (every commit with ``changelog-producer = full-compaction``
  and no ``delta-commits``; see :mod:`~paimon_core.table.full_compaction_trigger`);
* else what the table's strategy picks (``UniversalCompaction``: nothing below
  ``num-sorted-run.compaction-trigger`` runs);
* then, as Java's writer waits while the bucket has more than ``num-sorted-run.stop-trigger``
  sorted runs (``shouldWaitForLatestCompaction``), further compactions until it has no more.

Successive compactions of one bucket make one compaction result (files a later one consumed are
neither added nor kept); a full-compaction changelog rides along (``compact_changelog_files``).
``write-only = true`` writers skip all of this; a dedicated job (``table.compact`` /
``spark_jobs compact``) compacts instead.

Deletion-vector and ``changelog-producer = lookup`` tables compact with lookup
(:mod:`~paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter`): their level-0 files are
compacted at once (``ForceUpLevel0Compaction``), so written rows become readable with the commit.
Not done inline (left to a dedicated job): overwrites (their levels start empty in Java too) and
postponed buckets.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DataFileMeta, IndexFileMeta
from paimon_core.operation.scan import ScanFilter
from paimon_core.table.commit_message import CommitMessage

if TYPE_CHECKING:
    from paimon_core.append.append_deletion_index import DeletionIndex
    from paimon_core.operation.compact.compact_planner import MergeTreeBucketPlanner, Strategy
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.table.table import FileStoreTable

__all__ = ["compact_on_write", "writer_compacts"]

logger = logging.getLogger(__name__)

#: a bound on the compactions of one bucket in one commit (each one lowers its sorted runs)
MAX_STALL_COMPACTIONS = 64


def writer_compacts(table: FileStoreTable, *, overwrite: bool) -> bool:
    """Whether writers of ``table`` compact inline (see the module docstring)."""
    opts = table.options
    return (
        bool(table.schema.primary_keys)
        and not opts.write_only
        and not overwrite
        and opts.bucket != -2
    )


def compact_on_write(table: FileStoreTable, messages: Sequence[CommitMessage]) -> list[CommitMessage]:
    """The messages with the compaction of each written bucket added (before/after/changelog)."""
    written = [m for m in messages if m.new_files]
    if not written:
        return list(messages)
    from paimon_core.operation.stale_snapshot import read_from_latest

    # A concurrent commit plus expiry may delete restored files before they are read: start again
    # from the latest snapshot (what a failed attempt wrote is deleted before it raises).
    return read_from_latest(
        table.snapshot_manager,
        lambda latest: _compact_from(table, messages, written, latest),
        table=table.name,
        what="Compacting on write",
    )


def _compact_from(
    table: FileStoreTable, messages: Sequence[CommitMessage], written: Sequence[CommitMessage], latest: Snapshot | None
) -> list[CommitMessage]:
    """:func:`compact_on_write` with the levels restored from ``latest``."""
    from paimon_core.mergetree.compact.compact_options import num_levels
    from paimon_core.operation.compact.compact_planner import MergeTreeBucketPlanner
    from paimon_core.operation.compact.table_compact import delete_written
    from paimon_core.table.full_compaction_trigger import FullCompactionTrigger, full_compaction_delta_commits

    existing: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    if latest is not None:
        flt = ScanFilter(partitions=frozenset(m.partition for m in written))
        for e in table.new_file_store_scan().live_entries(latest, flt):
            existing.setdefault((e.partition, e.bucket), []).append(e.file)
    planner = MergeTreeBucketPlanner(table.store, clock=table.clock)
    due: frozenset[tuple[bytes, int]] = frozenset()
    delta_commits = full_compaction_delta_commits(table.options.options)
    if delta_commits is not None:
        files = {(m.partition, m.bucket): existing.get((m.partition, m.bucket), []) for m in written}
        top = num_levels(planner.opts) - 1  # Levels.max_level: grows with files restored above it
        levels = {k: max([top, *(f.level for f in fs)]) for k, fs in files.items()}
        trigger = FullCompactionTrigger.compute(table, latest, delta_commits, files, levels)
        due = trigger.due
        logger.debug("Full compaction trigger of %s: %s", table.name, trigger.to_dict())
    out: list[CommitMessage] = []
    done: list[CommitMessage] = []
    try:
        for m in messages:
            if not m.new_files:
                out.append(m)
                continue
            restored = existing.get((m.partition, m.bucket), [])
            strategy: Strategy = "full" if (m.partition, m.bucket) in due else "minor"
            results = _compact_bucket(table, planner, m, restored, strategy, done)
            out.append(_combine(table, m, [*restored, *m.new_files], results))
    except BaseException:
        delete_written(table.store, done)
        raise
    return out


def _compact_bucket(
    table: FileStoreTable,
    planner: MergeTreeBucketPlanner,
    m: CommitMessage,
    restored: Sequence[DataFileMeta],
    strategy: Strategy,
    done: list[CommitMessage],
) -> list[CommitMessage]:
    """Compact one written bucket: the picked (or full) unit, then more while it has more sorted
    runs than the stop trigger. Every result is also appended to ``done`` (to undo on failure)."""
    from paimon_core.mergetree.compact.compact_options import num_levels, num_sorted_run_stop_trigger
    from paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter import deletion_index_after
    from paimon_core.mergetree.levels import Levels
    from paimon_core.operation.compact.compact_task import run_compact_task

    stop = num_sorted_run_stop_trigger(planner.opts)
    files = [*restored, *m.new_files]
    results: list[CommitMessage] = []
    dv_index: DeletionIndex | None = None
    for _ in range(MAX_STALL_COMPACTIONS):
        task = planner.plan(
            m.partition, m.bucket, m.total_buckets, files, strategy=strategy, restored=restored
        )
        runs = Levels(planner.key_of, files, num_levels(planner.opts)).number_of_sorted_runs()
        if task is None and runs > stop:  # nothing picked, yet too many runs: Java waits, we compact all
            task = planner.plan(
                m.partition, m.bucket, m.total_buckets, files, strategy="full", restored=restored
            )
        if task is None:
            break
        if dv_index is not None:  # deletion vectors: start from the previous compaction's
            task = dataclasses.replace(task, deletion_index=dv_index)
        result = run_compact_task(table.store, task)
        done.append(result)
        results.append(result)
        dv_index = deletion_index_after(table.store, task, result)
        gone = {f.file_name for f in result.compact_before}
        files = [f for f in files if f.file_name not in gone] + list(result.compact_after)
        logger.info(
            "Writer compacted %d file(s) of %s bucket %d into level %d (%s, %d sorted runs before)",
            len(result.compact_before),
            table.name,
            m.bucket,
            task.output_level,
            strategy,
            task.sorted_runs,
        )
        if Levels(planner.key_of, files, num_levels(planner.opts)).number_of_sorted_runs() <= stop:
            break
        strategy = "minor"
    else:
        logger.warning(
            "%s bucket %d still has more than %d sorted runs after %d compactions",
            table.name,
            m.bucket,
            stop,
            MAX_STALL_COMPACTIONS,
        )
    return results


def _combine(
    table: FileStoreTable, m: CommitMessage, inputs: Sequence[DataFileMeta], results: Sequence[CommitMessage]
) -> CommitMessage:
    """One compaction result from successive ones: a file (data or index) written by one and
    consumed by a later one is neither before nor after (and is deleted: nothing references it);
    the changelog files of all of them ride along, in order."""
    if not results:
        return m
    input_names = {f.file_name for f in inputs}
    before: list[DataFileMeta] = []
    after: list[DataFileMeta] = []
    for r in results:
        produced = {f.file_name for f in after}
        for f in r.compact_before:
            if f.file_name in produced:
                after = [a for a in after if a.file_name != f.file_name]
            else:
                before.append(f)
        after += r.compact_after
    final = {f.file_name for f in after}
    bucket_path = table.bucket_path(m.partition, m.bucket)
    for r in results[:-1]:
        for f in r.compact_after:
            if f.file_name not in final and f.file_name not in input_names:
                table.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
    new_index: list[IndexFileMeta] = []
    deleted_index: list[IndexFileMeta] = []
    for r in results:  # index files (deletion vectors): the same rule
        created = {i.file_name for i in new_index}
        for i in r.compact_deleted_index_files:
            if i.file_name in created:
                new_index = [n for n in new_index if n.file_name != i.file_name]
                table.file_io.delete(index_file_path(table.store, m.partition, m.bucket, i))
            else:
                deleted_index.append(i)
        new_index += r.compact_new_index_files
    return dataclasses.replace(
        m,
        compact_before=tuple(before),
        compact_after=tuple(after),
        compact_changelog_files=tuple(f for r in results for f in r.compact_changelog_files),
        compact_new_index_files=tuple(new_index),
        compact_deleted_index_files=tuple(deleted_index),
    )
