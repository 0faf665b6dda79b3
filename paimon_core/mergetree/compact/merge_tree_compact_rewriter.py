"""MergeTreeCompactRewriter: merge the sections of a compaction unit into new files (Java's
``MergeTreeCompactRewriter.rewriteCompaction``).

All sections of one rewrite step go, in key order, through one rolling writer on the step's output
level: each section's sorted runs are read file by file (schema evolution by field id, deletion
vectors applied), merged by key with the table's merge engine in a streaming k-way merge (memory
bounded by runs x batch size, not by the bucket), and delete records are dropped exactly when the
step says so (Java's ``dropDelete``). Output files are marked ``FileSource.COMPACT``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.mergetree.compact.compact_task_plan import RewriteStep
from paimon_core.mergetree.kv_file_writer import RollingKeyValueFileWriter
from paimon_core.mergetree.merge_reader import merge_sorted_runs, read_sorted_run
from paimon_core.stats.collector import stats_modes_for

if TYPE_CHECKING:
    from paimon_core.store.key_value_file_store import KeyValueFileStore

__all__ = ["MergeTreeCompactRewriter"]

logger = logging.getLogger(__name__)


class MergeTreeCompactRewriter:
    """Rewrites compaction steps of one (partition, bucket) of a primary-key table."""

    def __init__(self, store: KeyValueFileStore, partition: bytes, bucket: int, *, batch_rows: int = 65536) -> None:
        self.store = store
        self.partition = partition
        self.bucket = bucket
        self.batch_rows = batch_rows
        self.fields = list(store.schema.fields)
        # the store's key, merge function and order: the read and the write of this handle use the same
        self.key_fields = store.key_fields
        self.key_names = store.key_names
        self.merge_function = store.new_merge_function()
        self.sort_keys = store.sort_keys
        self.bucket_path = store.bucket_path(partition, bucket)
        self.reader = DataFileReader(
            store.file_io, store.schema_manager_cached, table_name=store.name, batch_size=batch_rows, paths=store.paths
        )
        self._writers: list[RollingKeyValueFileWriter] = []

    def _new_writer(self, level: int) -> RollingKeyValueFileWriter:
        store = self.store
        opts = store.options.options
        writer = RollingKeyValueFileWriter(
            file_io=store.file_io,
            paths=store.paths,
            partition_path=store.partition_path(self.partition),
            bucket=self.bucket,
            key_fields=self.key_fields,
            value_fields=self.fields,
            file_format=store.options.file_format,
            options=opts,
            target_file_size=store.options.target_file_size(has_primary_key=True),
            schema_id=store.schema.id,
            key_stats_modes=stats_modes_for(self.key_fields, opts),
            value_stats_modes=stats_modes_for(self.fields, opts),
            level=level,
            file_source=FileSource.COMPACT,
        )
        self._writers.append(writer)
        return writer

    def rewrite(self, step: RewriteStep) -> list[DataFileMeta]:
        """Merge the step's sections into new files on ``step.output_level``; returns their metas."""
        writer = self._new_writer(step.output_level)
        rows_in = 0
        for section in step.sections:
            runs = [read_sorted_run(self.reader, self.bucket_path, run.files, self.fields) for run in section]
            rows_in += sum(f.row_count for run in section for f in run.files)
            for merged in merge_sorted_runs(
                runs,
                key_names=self.key_names,
                sort_keys=self.sort_keys,
                merge_function=self.merge_function,
                drop_retracts=step.drop_delete,
                batch_rows=self.batch_rows,
            ):
                writer.write(merged)
        files = writer.close()
        logger.debug(
            "Rewrote %d rows of %d file(s) of %s bucket %d into %d file(s) at level %d",
            rows_in,
            len(step.files),
            self.store.name,
            self.bucket,
            len(files),
            step.output_level,
        )
        return files

    def abort(self) -> None:
        """Delete every file this rewriter wrote (the unit failed; nothing was committed)."""
        for w in self._writers:
            w.abort()
        self._writers.clear()
