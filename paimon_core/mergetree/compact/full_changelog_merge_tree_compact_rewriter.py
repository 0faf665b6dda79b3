"""FullChangelogMergeTreeCompactRewriter: compaction that produces the changelog of full
compactions (``changelog-producer = full-compaction``; Java's ``FullChangelogMergeTreeCompactRewriter``
on top of ``ChangelogMergeTreeRewriter``).

A rewrite into the max level (only a full compaction writes there) reads every file of its
sections with a flag telling whether the file is on the max level, merges them as
:class:`~paimon_core.mergetree.compact.merge_tree_compact_rewriter.MergeTreeCompactRewriter` does
and, per key, diffs the old max-level row against the merged row
(:class:`~.full_changelog_merge_function_wrapper.FullChangelogMergeFunctionWrapper`). The diff is
written, in key order, as changelog files (``changelog-file.prefix``, on the output level) that
the compaction's commit message carries as ``compact_changelog_files``: the COMPACT snapshot's
changelog manifests. An upgrade into the max level is a rewrite here (Java's ``upgradeChangelog``):
its rows are new to the max level, so they must reach the changelog. Rewrites into lower levels
are plain rewrites without changelog.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.mergetree.compact.changelog_rows import row_deduplicate_fields
from paimon_core.mergetree.compact.compact_task_plan import CompactStep, RewriteStep, UpgradeStep
from paimon_core.mergetree.compact.full_changelog_merge_function_wrapper import (
    TOP_LEVEL,
    FullChangelogMergeFunctionWrapper,
)
from paimon_core.mergetree.compact.merge_tree_compact_rewriter import MergeTreeCompactRewriter
from paimon_core.mergetree.kv_file_writer import RollingKeyValueFileWriter
from paimon_core.mergetree.merge_reader import merge_sorted_runs
from paimon_core.mergetree.sorted_run import SortedRun

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore
    from paimon_core.store.key_value_file_store import KeyValueFileStore

__all__ = [
    "FullChangelogMergeTreeCompactRewriter",
    "changelog_producer",
    "produces_full_changelog",
]

logger = logging.getLogger(__name__)

def changelog_producer(store: FileStore) -> str:
    return (store.options.options.get("changelog-producer") or "none").strip().lower()


def produces_full_changelog(store: FileStore) -> bool:
    """Whether compactions of ``table`` produce the full-compaction changelog."""
    return bool(store.schema.primary_keys) and changelog_producer(store) == "full-compaction"


class FullChangelogMergeTreeCompactRewriter(MergeTreeCompactRewriter):
    """Rewrites compaction steps of one bucket; rewrites into ``max_level`` also write changelog."""

    def __init__(
        self, store: KeyValueFileStore, partition: bytes, bucket: int, *, max_level: int, batch_rows: int = 65536
    ) -> None:
        super().__init__(store, partition, bucket, batch_rows=batch_rows)
        opts = store.options.options
        self.max_level = max_level
        compare = row_deduplicate_fields(opts, self.fields)
        self.row_deduplicate = compare is not None
        self.compare_names = compare or []
        self.changelog_prefix = opts.get("changelog-file.prefix", "changelog-")
        #: changelog files written so far (the message's ``compact_changelog_files``)
        self.changelog_files: list[DataFileMeta] = []

    def changelog_steps(self, steps: Sequence[CompactStep]) -> list[CompactStep]:
        """``steps`` with every upgrade into the max level turned into a rewrite of that file
        (Java's ``upgradeChangelog``); other steps unchanged."""
        out: list[CompactStep] = []
        for step in steps:
            if isinstance(step, UpgradeStep) and step.output_level == self.max_level:
                out.append(RewriteStep(((SortedRun.from_single(step.file),),), step.output_level, True))
            else:
                out.append(step)
        return out

    def rewrite(self, step: RewriteStep) -> list[DataFileMeta]:
        if step.output_level != self.max_level:
            return super().rewrite(step)
        if not step.drop_delete:
            raise InvalidArgumentError(
                "Delete records should be dropped from the result of a full compaction "
                "(changelog-producer = full-compaction cannot be combined with keeping deletes)"
            )
        return self._rewrite_changelog(step)

    def _rewrite_changelog(self, step: RewriteStep) -> list[DataFileMeta]:
        wrapper = FullChangelogMergeFunctionWrapper(
            self.merge_function,
            key_names=self.key_names,
            compare_names=self.compare_names,
            row_deduplicate=self.row_deduplicate,
        )
        data_writer = self._new_writer(step.output_level)
        changelog_writer = RollingKeyValueFileWriter(
            file_io=self.store.file_io,
            paths=self.store.paths,
            partition_path=self.store.partition_path(self.partition),
            bucket=self.bucket,
            key_fields=self.key_fields,
            value_fields=self.fields,
            file_format=self.store.options.file_format,
            options=self.store.options.options,
            target_file_size=data_writer.target_file_size,
            schema_id=self.store.schema.id,
            key_stats_modes=data_writer.key_stats_modes,
            value_stats_modes=data_writer.value_stats_modes,
            level=step.output_level,
            file_source=FileSource.APPEND,
            file_prefix=self.changelog_prefix,
        )
        self._writers.append(changelog_writer)
        for section in step.sections:
            runs = [self._read_run(run) for run in section]
            for merged in merge_sorted_runs(
                runs,
                key_names=self.key_names,
                sort_keys=self.sort_keys,
                merge_function=wrapper,
                drop_retracts=True,
                batch_rows=self.batch_rows,
            ):
                data_writer.write(merged)
                for changes in wrapper.take_pending():
                    changelog_writer.write(changes)
            for changes in wrapper.take_pending():  # chunks whose merge left no row
                changelog_writer.write(changes)
        files = data_writer.close()
        changelog = changelog_writer.close()
        self.changelog_files += changelog
        logger.debug(
            "Full compaction of %s bucket %d: %d file(s) into %d at level %d, %d changelog row(s)",
            self.store.name,
            self.bucket,
            len(step.files),
            len(files),
            step.output_level,
            sum(f.row_count for f in changelog),
        )
        return files

    def _read_run(self, run: SortedRun) -> Iterator[pa.RecordBatch]:
        """The run's batches (as ``read_sorted_run``) with the :data:`TOP_LEVEL` flag of their file."""
        for f in run.files:
            top = f.level == self.max_level
            for batch in self.reader.read(self.bucket_path, f, self.fields, with_kind=True, with_seq=True):
                flag = pa.array(np.full(batch.num_rows, top, dtype=np.bool_))
                yield pa.RecordBatch.from_arrays(
                    [*batch.columns, flag], names=[*batch.schema.names, TOP_LEVEL]
                )

    def abort(self) -> None:
        super().abort()
        self.changelog_files.clear()
