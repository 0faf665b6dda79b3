"""TableRead: turn splits into Arrow data, streaming, with bounded memory.

* Columns are matched to each file's schema by field id (schema evolution):
  renamed columns are found under their old name, added columns read as nulls,
  widened columns are cast.
* Append splits stream batch by batch; the predicate is applied exactly.
* Primary-key splits with several files are merged by key with the table's merge engine,
  streaming: a k-way merge of the bucket's sorted runs (:mod:`paimon_core.mergetree.merge_reader`)
  holds about a batch per run, not the bucket.
* Deletion vectors of a split drop their row positions from each file as it is read,
  before any merge or filter (Java's ``ApplyDeletionVectorReader``).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.append.row_tracking import data_evolution_enabled
from paimon_core.data.row_kind import RETRACT_KINDS, SHORT_STRINGS
from paimon_core.deletionvectors import DeletionFile
from paimon_core.fileindex.file_index_evaluator import FileIndexEvaluator, file_index_read_enabled
from paimon_core.format.arrow_types import to_arrow_field
from paimon_core.format.key_value import VALUE_KIND
from paimon_core.io.data_file_reader import DataFileReader, partition_scalars
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.predicate import Predicate
from paimon_core.schema.data_types import DataField
from paimon_core.store.key_value_file_store import KeyValueFileStore
from paimon_core.table.data_evolution_read import DataEvolutionSplitRead
from paimon_core.table.diff_split_read import diff_changes
from paimon_core.table.source import DataSplit

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

#: Column added by ``row_kind=True``: +I, -U, +U, -D. Incremental reads of primary-key tables
#: return every change with its kind (retractions included); other reads are all +I.
ROW_KIND = "_ROW_KIND"


class TableRead:
    """Reads splits of one table into Arrow."""

    def __init__(
        self,
        table: FileStoreTable,
        *,
        projection: Sequence[str] | None = None,
        predicate: Predicate | None = None,
        limit: int | None = None,
        batch_size: int = 65536,
        parallelism: int | None = None,
        row_kind: bool = False,
    ) -> None:
        self.table = table
        schema = table.schema
        self.output_fields: list[DataField] = schema.fields_of(projection) if projection else list(schema.fields)
        self.predicate = predicate
        needed = {f.name for f in self.output_fields}
        if predicate is not None:
            needed |= predicate.field_names()
        self.read_fields = [f for f in schema.fields if f.name in needed]
        self.key_fields = schema.fields_of(schema.primary_keys) if schema.primary_keys else []
        self.row_kind = row_kind
        out_fields = [to_arrow_field(f, field_ids=False) for f in self.output_fields]
        if row_kind:
            out_fields.append(pa.field(ROW_KIND, pa.string(), nullable=False))
        self.output_schema = pa.schema(out_fields)
        self.limit = limit
        self.batch_size = batch_size
        self.parallelism = parallelism or (os.cpu_count() or 1)
        self._filter_expr = predicate.to_arrow() if predicate is not None else None
        self._partition_cache: dict[bytes, dict[int, pa.Scalar]] = {}
        self._files = DataFileReader(
            table.file_io, table.schema_manager_cached, table_name=table.name, batch_size=batch_size, paths=table.paths
        )
        #: skips files of raw splits whose index proves no row matches (Java's RawFileSplitRead)
        self._file_index: FileIndexEvaluator | None = None
        if predicate is not None and file_index_read_enabled(table.options.options):
            self._file_index = FileIndexEvaluator(
                predicate, schema.fields, table.schema_manager_cached, file_io=table.file_io, paths=table.paths
            )
        self._data_evolution: DataEvolutionSplitRead | None = None
        if not self.key_fields and data_evolution_enabled({**schema.options, **table.dynamic_options}):
            self._data_evolution = DataEvolutionSplitRead(table, batch_size=batch_size)
        if self.key_fields:
            # the store's merge function: the resolved options (schema options plus this handle's
            # dynamic options), the same the write and the compaction of this handle use
            store = table.store
            assert isinstance(store, KeyValueFileStore)
            self._merge_key_fields = store.key_fields
            self._merge_key_names = store.key_names
            self._merge_function = store.new_merge_function()
            self._merge_sort_keys = store.sort_keys

    # --- public -----------------------------------------------------------------------
    def to_arrow(self, splits: Sequence[DataSplit]) -> pa.Table:
        batches = list(self.to_batches(splits))
        return pa.Table.from_batches(batches, schema=self.output_schema)

    def to_arrow_batch_reader(self, splits: Sequence[DataSplit]) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.output_schema, self.to_batches(splits))

    def to_batches(self, splits: Sequence[DataSplit]) -> Iterator[pa.RecordBatch]:
        """Batches of all splits in split order.

        With several splits, up to ``parallelism`` splits (default: the CPU count) are
        decoded and merged ahead in threads (Arrow releases the GIL), so memory stays bounded
        by that many splits; a single split streams batch by batch.
        """
        remaining = self.limit
        for batch in self._ordered_split_batches(splits):
            if remaining is not None:
                if remaining <= 0:
                    return
                if batch.num_rows > remaining:
                    batch = batch.slice(0, remaining)
                remaining -= batch.num_rows
            if batch.num_rows:
                yield batch

    def _ordered_split_batches(self, splits: Sequence[DataSplit]) -> Iterator[pa.RecordBatch]:
        workers = self.parallelism
        if len(splits) <= 1 or workers <= 1:
            for split in splits:
                yield from self._read_split(split)
            return
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque[Future[list[pa.RecordBatch]]] = deque()
            it = iter(splits)
            try:
                for split in it:
                    pending.append(pool.submit(lambda s: list(self._read_split(s)), split))
                    if len(pending) >= workers:
                        yield from pending.popleft().result()
                while pending:
                    yield from pending.popleft().result()
            finally:
                for f in pending:
                    f.cancel()

    # --- splits -------------------------------------------------------------------------
    def _read_split(self, split: DataSplit) -> Iterator[pa.RecordBatch]:
        if split.diff:
            yield from self._diff_split(split)
            return
        if self.key_fields and not split.raw_convertible:
            yield from self._merge_split(split)
            return
        if self._data_evolution is not None:  # columns of a row-id range merged from its files
            for batch in self._data_evolution.read(
                split, self.read_fields, partition_values=self._partition_values(split.partition)
            ):
                yield from self._finish(batch)
            return
        for i, f in enumerate(split.files):
            if self._file_index is not None and not self._file_index.remain(split.bucket_path, f):
                continue
            batches = self._read_file(
                split, f, self.read_fields, with_kind=bool(self.key_fields), deletion=split.deletion_file(i)
            )
            keep_retracts = self.row_kind and split.incremental
            # a file that says it holds no retraction (delete_row_count 0) is not filtered for them
            may_retract = f.delete_row_count is None or f.delete_row_count > 0
            for batch in batches:
                if self.key_fields and not keep_retracts and may_retract:
                    kinds = batch.column(VALUE_KIND)
                    batch = batch.filter(pc.invert(pc.is_in(kinds, RETRACT_KINDS)))
                yield from self._finish(batch)

    def _finish(self, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        if self._filter_expr is not None:
            batch = pa.Table.from_batches([batch]).filter(self._filter_expr).combine_chunks().to_batches()
            batches = batch
        else:
            batches = [batch]
        for b in batches:
            cols = [b.column(f.name) for f in self.output_fields]
            if self.row_kind:
                if VALUE_KIND in b.schema.names:
                    cols.append(pc.take(SHORT_STRINGS, b.column(VALUE_KIND).cast(pa.int32())))
                else:
                    cols.append(pa.array(["+I"] * b.num_rows, pa.string()))
            yield pa.RecordBatch.from_arrays(cols, schema=self.output_schema)

    def _merge_split(self, split: DataSplit) -> Iterator[pa.RecordBatch]:
        """Merge the files of a primary-key bucket with the table's merge engine, streaming."""
        deletions = [split.deletion_file(i) for i in range(len(split.files))]
        stream = self._postpone_merge_stream(split) if split.postpone_files else self._merge_stream(split, split.files, deletions)
        for merged in stream:
            for batch in merged.to_batches(max_chunksize=self.batch_size):
                yield from self._finish(batch)

    def _merge_stream(
        self, split: DataSplit, files: Sequence[DataFileMeta], deletions: Sequence[DeletionFile | None]
    ) -> Iterator[pa.Table]:
        """``files`` of the split's bucket merged by key, in key order (Java's
        ``MergeTreeReaders.readerForMergeTree``): key-disjoint sections one after another, each
        a streaming merge of its sorted runs with deletion vectors applied per file."""
        from paimon_core.mergetree.merge_reader import read_sorted_run

        fields = list(self.table.schema.fields)  # merge engines may need every value column
        dv_of = {f.file_name: d for f, d in zip(files, deletions, strict=True)}
        for section in self._sections(files):
            runs = [
                read_sorted_run(
                    self._files,
                    split.bucket_path,
                    run,
                    fields,
                    deletion_files=[dv_of[f.file_name] for f in run],
                    snapshot_id=split.snapshot_id,
                )
                for run in section
            ]
            yield from self._merge_runs(runs)

    def _postpone_merge_stream(self, split: DataSplit) -> Iterator[pa.Table]:
        """``postpone.merge-on-read``: the bucket's files merged with the partition's postpone rows
        hashed to this bucket, those in replay order with sequence numbers after the bucket's
        (Java's ``MergeFileSplitRead.createPostponeMergeReader``): what a compaction would make."""
        from paimon_core.mergetree.merge_reader import read_sorted_run

        fields = list(self.table.schema.fields)
        runs: list[Iterator[pa.RecordBatch]] = [
            read_sorted_run(
                self._files,
                split.bucket_path,
                (f,),
                fields,
                deletion_files=[split.deletion_file(i)],
                snapshot_id=split.snapshot_id,
            )
            for i, f in enumerate(split.files)
        ]
        routed = self._routed_postpone_rows(split, fields)
        if routed is not None:
            runs.append(iter(routed.to_batches(max_chunksize=self.batch_size)))
        yield from self._merge_runs(runs)

    def _merge_runs(self, runs: Sequence[Iterator[pa.RecordBatch]]) -> Iterator[pa.Table]:
        """Key-sorted runs merged with the table's merge engine, retractions dropped."""
        from paimon_core.mergetree.merge_reader import merge_sorted_runs

        return merge_sorted_runs(
            runs,
            key_names=self._merge_key_names,
            sort_keys=self._merge_sort_keys,
            merge_function=self._merge_function,
            drop_retracts=True,
            batch_rows=self.batch_size,
        )

    def _routed_postpone_rows(self, split: DataSplit, fields: Sequence[DataField]) -> pa.Table | None:
        """The split's postpone rows of its bucket, sequenced after its files, sorted for merging."""
        import numpy as np

        from paimon_core.bucket import compute_buckets
        from paimon_core.format.key_value import SEQUENCE_NUMBER

        schema = self.table.schema
        bucket_fields = schema.fields_of(schema.bucket_keys)
        parts: list[pa.Table] = []
        for f in split.postpone_files:
            for batch in self._files.read(
                split.postpone_bucket_path,
                f,
                fields,
                with_kind=True,
                with_seq=True,
                snapshot_id=split.snapshot_id,
                partition_values=self._partition_values(split.partition),
            ):
                if not batch.num_rows:
                    continue
                buckets = compute_buckets(
                    [batch.column(b.name) for b in bucket_fields],
                    [b.type for b in bucket_fields],
                    split.postpone_num_buckets,
                    function=schema.core_options.bucket_function_type,
                )
                mask = np.asarray(buckets) == split.bucket
                if mask.any():
                    part = pa.Table.from_batches([batch]).filter(pa.array(mask))
                    kinds = part.schema.get_field_index(VALUE_KIND)  # int32 from some Avro writers
                    parts.append(part.set_column(kinds, VALUE_KIND, part.column(kinds).cast(pa.int8())))
        if not parts:
            return None
        rows = pa.concat_tables(parts, promote_options="permissive")
        start = max([-1, *(f.max_sequence_number for f in split.files)]) + 1
        seq = pa.array(np.arange(start, start + rows.num_rows, dtype=np.int64))
        rows = rows.set_column(rows.schema.get_field_index(SEQUENCE_NUMBER), SEQUENCE_NUMBER, seq)
        return rows.take(pc.sort_indices(rows, sort_keys=list(self._merge_sort_keys)))

    def _sections(self, files: Sequence[DataFileMeta]) -> list[list[tuple[DataFileMeta, ...]]]:
        """Key-disjoint sections of sorted runs (Java's ``IntervalPartition``); every file its own
        run in one section where file key ranges cannot be ordered like the rows (float keys,
        files without a key range)."""
        from paimon_core.data.binary_row import binary_row_arity
        from paimon_core.mergetree.compact.interval_partition import interval_partition
        from paimon_core.mergetree.keys import binary_key_of
        from paimon_core.schema.data_types import DoubleType, FloatType

        key_types = [f.type for f in self._merge_key_fields]
        def has_key(row: bytes) -> bool:
            return len(row) >= 4 and binary_row_arity(row) == len(key_types)

        orderable = not any(isinstance(t, (FloatType, DoubleType)) for t in key_types) and all(
            has_key(f.min_key) and has_key(f.max_key) for f in files
        )
        if not orderable:
            return [[(f,) for f in files]] if files else []
        return [[run.files for run in section] for section in interval_partition(files, binary_key_of(key_types))]

    def _merged(
        self, split: DataSplit, files: Sequence[DataFileMeta], *, with_deletions: bool
    ) -> pa.Table | None:
        """``files`` of the split's bucket merged by key (None when they hold no row)."""
        deletions = [split.deletion_file(i) if with_deletions else None for i in range(len(files))]
        parts = list(self._merge_stream(split, files, deletions))
        return pa.concat_tables(parts) if parts else None

    def _diff_split(self, split: DataSplit) -> Iterator[pa.RecordBatch]:
        """The changes of an overwrite in one bucket (see :mod:`.diff_split_read`)."""
        out = diff_changes(
            self._merged(split, split.before_files, with_deletions=False),
            self._merged(split, split.files, with_deletions=False),
            [f.name for f in self.table.schema.fields],
            [f.name for f in self.key_fields],
            retractions=self.row_kind,  # a reader without row kinds sees the new rows only
        )
        if out is None:
            return
        for batch in out.to_batches(max_chunksize=self.batch_size):
            yield from self._finish(batch)

    # --- files ---------------------------------------------------------------------------
    def _read_file(
        self,
        split: DataSplit,
        f: DataFileMeta,
        fields: Sequence[DataField],
        *,
        with_kind: bool = False,
        with_seq: bool = False,
        deletion: DeletionFile | None = None,
    ) -> Iterator[pa.RecordBatch]:
        return self._files.read(
            split.bucket_path,
            f,
            fields,
            with_kind=with_kind,
            with_seq=with_seq,
            deletion=deletion,
            snapshot_id=split.snapshot_id,
            partition_values=self._partition_values(split.partition),
        )

    def _partition_values(self, partition: bytes) -> dict[int, pa.Scalar] | None:
        """The split's partition as field id -> value, for files that lack partition columns."""
        fields = self.table.schema.partition_fields
        if not fields:
            return None
        cached = self._partition_cache.get(partition)
        if cached is None:
            cached = partition_scalars(fields, self.table.partition_codec.decode(partition))
            self._partition_cache[partition] = cached
        return cached
