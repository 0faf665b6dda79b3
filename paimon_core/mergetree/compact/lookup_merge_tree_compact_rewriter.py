"""LookupMergeTreeCompactRewriter: the compaction of primary-key tables that look keys up --
``deletion-vectors.enabled`` and ``changelog-producer = lookup`` (Java's
``LookupMergeTreeCompactRewriter`` over ``ChangelogMergeTreeRewriter``).

A rewrite whose input has level-0 files and whose output level is above 0 merges with lookup
(:class:`~.lookup_changelog_merge_function_wrapper.LookupChangelogMergeFunctionWrapper`): keys
without a higher-level row among the inputs are looked up on the levels above the output level
(``LookupLevels.lookup(key, outputLevel + 1)``); with deletion vectors each row found is marked
deleted in its (not rewritten) file; with the lookup producer the changelog is written to
changelog files. Other rewrites merge as usual. Every rewrite reads its inputs minus their
deletion vectors and drops those vectors (Java ``notifyRewriteCompactBefore``).

An *upgrade* of a level-0 file (Java ``upgradeStrategy``) still merges it with lookup (that is
what marks the superseded rows and yields the changelog): rewritten when deletion vectors are on
and it may hold retractions, or when the engine is not deduplicate (or has a ``sequence.field``)
and the output is not the max level; otherwise the file is moved up unchanged.

:func:`run_lookup_compact_task` runs a whole task and returns its message, with the changelog
files and the bucket's new DV index file (Java ``BucketedDvMaintainer``) in the compact increment.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.append.append_deletion_index import DeletionIndex, DeletionIndexChanges
from paimon_core.deletionvectors.bucketed_dv_maintainer import BucketedDvMaintainer
from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.mergetree.compact.changelog_rows import row_deduplicate_fields
from paimon_core.mergetree.compact.compact_task_plan import RewriteStep, UpgradeStep
from paimon_core.mergetree.compact.lookup_changelog_merge_function_wrapper import (
    LookupChangelogMergeFunctionWrapper,
)
from paimon_core.mergetree.compact.merge_tree_compact_rewriter import MergeTreeCompactRewriter
from paimon_core.mergetree.kv_file_writer import RollingKeyValueFileWriter
from paimon_core.mergetree.lookup_levels import LEVEL, LookupLevels
from paimon_core.mergetree.merge_options import engine_of
from paimon_core.mergetree.merge_reader import merge_sorted_runs
from paimon_core.mergetree.sorted_run import SortedRun
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.options_support import check_lookup_merge_engine
from paimon_core.store.key_value_file_store import KeyValueFileStore

if TYPE_CHECKING:
    from paimon_core.operation.compact.compact_task import CompactTask
    from paimon_core.store.file_store import FileStore

__all__ = [
    "LookupMergeTreeCompactRewriter",
    "check_lookup_compaction_supported",
    "deletion_index_after",
    "run_lookup_compact_task",
    "uses_lookup_rewriter",
]

logger = logging.getLogger(__name__)

DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
CHANGELOG_PRODUCER = "changelog-producer"
CHANGELOG_FILE_PREFIX = "changelog-file.prefix"


def _true(options: dict[str, str], key: str) -> bool:
    return (options.get(key) or "false").strip().lower() == "true"


def uses_lookup_rewriter(options: dict[str, str]) -> bool:
    """Whether compactions of a primary-key table with ``options`` go through this rewriter."""
    return _true(options, DELETION_VECTORS_ENABLED) or (options.get(CHANGELOG_PRODUCER) or "").strip().lower() == "lookup"


def check_lookup_compaction_supported(store: FileStore) -> None:
    """Refuse what paimon_core cannot compact with lookup exactly (the rule of
    :func:`~paimon_core.options_support.check_lookup_merge_engine`, for tables another engine
    created, or options given to this job only)."""
    check_lookup_merge_engine(store.options.options, action=f"compact table {store.name}")


class LookupMergeTreeCompactRewriter(MergeTreeCompactRewriter):
    """Rewrites and upgrades the steps of one (partition, bucket) of a lookup table (see the module docstring)."""

    def __init__(
        self,
        store: KeyValueFileStore,
        partition: bytes,
        bucket: int,
        *,
        lookup_files: Sequence[DataFileMeta],
        max_level: int,
        dv_maintainer: BucketedDvMaintainer | None,
        batch_rows: int = 65536,
    ) -> None:
        super().__init__(store, partition, bucket, batch_rows=batch_rows)
        opts = store.options.options
        self.dv_maintainer = dv_maintainer
        self.max_level = max_level
        self.engine = engine_of(opts)
        self.first_row = self.engine == "first-row"
        self.produce_changelog = (opts.get(CHANGELOG_PRODUCER) or "").strip().lower() == "lookup"
        self.no_sequence_field = not store.sequence_fields
        self.row_deduplicate_fields = row_deduplicate_fields(opts, self.fields)
        # Java: values are looked up for a changelog, a non-deduplicate engine or a sequence field;
        # first-row only asks whether the key exists.
        with_values = not self.first_row and (
            self.produce_changelog or self.engine != "deduplicate" or not self.no_sequence_field
        )
        self.lookup_levels = LookupLevels(
            self.reader,
            self.bucket_path,
            lookup_files,
            self.fields,
            self.key_names,
            with_values=with_values,
            deletion_file=dv_maintainer.deletion_file if dv_maintainer is not None else (lambda _: None),
        )
        self.changelog_files: list[DataFileMeta] = []

    # --- reading ----------------------------------------------------------------------------
    def _read_run(self, files: Sequence[DataFileMeta]) -> Iterator[pa.RecordBatch]:
        """A sorted run's batches (minus deletion vectors) with each row's ``_LEVEL``."""
        for f in files:
            deletion = self.dv_maintainer.deletion_file(f.file_name) if self.dv_maintainer is not None else None
            for batch in self.reader.read(self.bucket_path, f, self.fields, with_kind=True, with_seq=True, deletion=deletion):
                level = pa.array(np.full(batch.num_rows, f.level, dtype=np.int32))
                yield pa.RecordBatch.from_arrays([*batch.columns, level], names=[*batch.schema.names, LEVEL])

    def _changelog_writer(self, level: int) -> RollingKeyValueFileWriter:
        store = self.store
        prefix = store.options.get(CHANGELOG_FILE_PREFIX) or "changelog-"
        writer = self._new_writer(level)
        writer.file_prefix = prefix
        writer.file_source = FileSource.APPEND
        return writer

    # --- the steps -------------------------------------------------------------------------
    def rewrite(self, step: RewriteStep) -> list[DataFileMeta]:
        """Merge the step's sections into new files on its output level (with lookup when it has level-0 input)."""
        with_lookup = step.output_level > 0 and any(f.level == 0 for f in step.files)
        files = self._merge(step.sections, step.output_level, step.drop_delete, with_lookup=with_lookup, write=True)
        if self.dv_maintainer is not None:
            self.dv_maintainer.remove_deletion_vector_of([f.file_name for f in step.files])
        return files

    def upgrade(self, step: UpgradeStep) -> list[DataFileMeta]:
        """Move a file to the output level; a level-0 file is merged with lookup on the way (Java ``upgrade``)."""
        file, level = step.file, step.output_level
        if file.level != 0:
            return [step.upgraded]
        rewrite = self._upgrade_rewrites(file, level)
        if not rewrite and not self.produce_changelog and not any(lv > level for lv in self.lookup_levels.levels):
            return [step.upgraded]  # the merge would find nothing to mark and write nothing
        sections = ((SortedRun.from_single(file),),)
        drop = self.dv_maintainer is not None  # Java's forceDropDelete
        files = self._merge(sections, level, drop, with_lookup=True, write=rewrite)
        if not rewrite:
            return [step.upgraded]
        if self.dv_maintainer is not None:
            self.dv_maintainer.remove_deletion_vector_of([file.file_name])
        return files

    def _upgrade_rewrites(self, file: DataFileMeta, output_level: int) -> bool:
        """Java ``LookupMergeTreeCompactRewriter.upgradeStrategy`` for a level-0 file: rewrite or not
        (paimon_core writes one file format on every level)."""
        if self.dv_maintainer is not None and (file.delete_row_count is None or file.delete_row_count > 0):
            return True
        if output_level == self.max_level:
            return False
        return not (self.engine == "deduplicate" and self.no_sequence_field)

    def _merge(
        self,
        sections: Sequence[Sequence[SortedRun]],
        output_level: int,
        drop_delete: bool,
        *,
        with_lookup: bool,
        write: bool,
    ) -> list[DataFileMeta]:
        wrapper = None
        if with_lookup:
            wrapper = LookupChangelogMergeFunctionWrapper(
                self.merge_function,
                key_names=self.key_names,
                sort_keys=self.sort_keys,
                lookup=self.lookup_levels,
                start_level=output_level + 1,
                produce_changelog=self.produce_changelog,
                dv_maintainer=self.dv_maintainer,
                row_deduplicate_fields=self.row_deduplicate_fields,
                first_row=self.first_row,
            )
        writer = self._new_writer(output_level) if write else None
        changelog = self._changelog_writer(output_level) if wrapper is not None and self.produce_changelog else None
        for section in sections:
            runs = [self._read_run(run.files) for run in section]
            for merged in merge_sorted_runs(
                runs,
                key_names=self.key_names,
                sort_keys=self.sort_keys,
                merge_function=wrapper if wrapper is not None else self.merge_function,
                drop_retracts=drop_delete,
                batch_rows=self.batch_rows,
            ):
                if writer is not None:
                    writer.write(merged)
                if changelog is not None and wrapper is not None:
                    for part in wrapper.take_changelog():
                        changelog.write(part)
            if changelog is not None and wrapper is not None:  # chunks that merged to nothing
                for part in wrapper.take_changelog():
                    changelog.write(part)
        if changelog is not None:
            self.changelog_files += changelog.close()
        files = writer.close() if writer is not None else []
        if wrapper is not None:
            logger.debug(
                "Lookup compaction of %s bucket %d into level %d: %d key(s) looked up, %d found, %d lookup file(s) read",
                self.store.name,
                self.bucket,
                output_level,
                wrapper.looked_up,
                wrapper.found,
                self.lookup_levels.files_read,
            )
        return files


def run_lookup_compact_task(store: FileStore, task: CompactTask) -> CommitMessage:
    """Run a merge-tree task of a lookup table; the message carries the compaction's changelog
    files and DV index changes. On failure everything written is deleted."""
    from paimon_core.mergetree.compact.compact_options import num_levels

    assert isinstance(store, KeyValueFileStore)  # merge-tree tasks are planned for primary-key tables only
    check_lookup_compaction_supported(store)
    opts = store.options.options
    dv: BucketedDvMaintainer | None = None
    if store.options.deletion_vectors_enabled:
        dv = (
            BucketedDvMaintainer(store, task.deletion_index)
            if task.deletion_index is not None
            else BucketedDvMaintainer.load(store, task.partition, task.bucket)
        )
    max_level = task.max_level
    if max_level is None:  # Levels.max_level of the bucket
        levels = [f.level for f in (*task.input_files, *task.lookup_files)]
        max_level = max(num_levels(opts), max(levels, default=0) + 1) - 1
    rewriter = LookupMergeTreeCompactRewriter(
        store, task.partition, task.bucket, lookup_files=task.lookup_files, max_level=max_level, dv_maintainer=dv
    )
    before: list[DataFileMeta] = []
    after: list[DataFileMeta] = []
    changes = DeletionIndexChanges()
    try:
        for step in task.steps:
            if isinstance(step, UpgradeStep):
                before.append(step.file)
                after += rewriter.upgrade(step)
            else:
                before += step.files
                after += rewriter.rewrite(step)
        if dv is not None:
            changes = dv.write_index()
    except BaseException:
        rewriter.abort()
        for p in changes.written_paths:
            store.file_io.delete(p)
        raise
    return CommitMessage(
        task.partition,
        task.bucket,
        task.total_buckets,
        compact_before=tuple(before),
        compact_after=tuple(after),
        compact_changelog_files=tuple(rewriter.changelog_files),
        compact_new_index_files=changes.new_index_files,
        compact_deleted_index_files=changes.deleted_index_files,
    )


def deletion_index_after(store: FileStore, task: CompactTask, result: CommitMessage) -> DeletionIndex | None:
    """The bucket's vectors once ``result`` (of ``task``) lands, for a further compaction of the
    bucket before it is committed; None for tables without deletion vectors."""
    if not store.options.deletion_vectors_enabled:
        return None
    start = task.deletion_index or DeletionIndex.load(store, task.partition, task.bucket)
    if not result.compact_new_index_files and not result.compact_deleted_index_files:
        return start
    gone = {i.file_name for i in result.compact_deleted_index_files}
    files = [f for f in start.index_files if f.file_name not in gone] + list(result.compact_new_index_files)
    paths: dict[str, str] = {}
    deletions: dict[str, DeletionFile] = {}
    for f in files:
        path = start.paths.get(f.file_name) or index_file_path(store, task.partition, task.bucket, f)
        paths[f.file_name] = path
        for r in f.dv_ranges or ():
            deletions[r.data_file_name] = DeletionFile(path, r.offset, r.length, r.cardinality)
    return DeletionIndex(task.partition, task.bucket, tuple(files), paths, deletions)
