"""Compaction by writers, as Java's writers do when ``write-only`` is false (the default).

Java's ``MergeTreeWriter`` hands each flushed sorted run to its ``MergeTreeCompactManager``; a batch
``prepareCommit`` waits for the compaction, and the commit then writes two snapshots: APPEND with
the new files, COMPACT with the compaction's before/after files. Here, after a batch of a
primary-key table is flushed, each written bucket's levels are restored from the latest snapshot
plus its new level-0 files, the table's strategy picks (``UniversalCompaction``: nothing below
``num-sorted-run.compaction-trigger`` runs), and the picked unit is compacted before the messages
are handed to the committer. ``write-only = true`` writers skip this; a dedicated job
(``table.compact`` / ``spark_jobs compact``) compacts instead.

Not done inline (left to a dedicated job): overwrites (their levels start empty in Java too),
deletion-vector tables (their compaction must maintain vectors) and postponed buckets.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.scan import ScanFilter
from paimon_core.table.commit_message import CommitMessage

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["compact_on_write", "writer_compacts"]

logger = logging.getLogger(__name__)


def writer_compacts(table: FileStoreTable, *, overwrite: bool) -> bool:
    """Whether writers of ``table`` compact inline (see the module docstring)."""
    opts = table.options
    return (
        bool(table.schema.primary_keys)
        and not opts.write_only
        and not overwrite
        and opts.bucket != -2
        and opts.options.get("deletion-vectors.enabled", "false").strip().lower() != "true"
    )


def compact_on_write(table: FileStoreTable, messages: Sequence[CommitMessage]) -> list[CommitMessage]:
    """The messages with the compaction of each bucket the strategy picks added (before/after)."""
    from paimon_core.operation.compact.compact_planner import MergeTreeBucketPlanner
    from paimon_core.operation.compact.compact_task import run_compact_task
    from paimon_core.operation.compact.table_compact import delete_written

    written = [m for m in messages if m.new_files]
    if not written:
        return list(messages)
    latest = table.latest_snapshot()
    existing: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    if latest is not None:
        flt = ScanFilter(partitions=frozenset(m.partition for m in written))
        for e in table.new_file_store_scan().live_entries(latest, flt):
            existing.setdefault((e.partition, e.bucket), []).append(e.file)
    planner = MergeTreeBucketPlanner(table, clock=table.clock)
    out: list[CommitMessage] = []
    done: list[CommitMessage] = []
    try:
        for m in messages:
            restored = existing.get((m.partition, m.bucket), [])
            task = (
                planner.plan(
                    m.partition, m.bucket, m.total_buckets, [*restored, *m.new_files], strategy="minor", restored=restored
                )
                if m.new_files
                else None
            )
            if task is None:
                out.append(m)
                continue
            result = run_compact_task(table, task)
            done.append(result)
            out.append(dataclasses.replace(m, compact_before=result.compact_before, compact_after=result.compact_after))
            logger.info(
                "Writer compacted %d file(s) of %s bucket %d into level %d",
                len(result.compact_before),
                table.name,
                m.bucket,
                task.output_level,
            )
    except BaseException:
        delete_written(table, done)
        raise
    return out
