"""Batch writes: split rows by (partition, bucket) and hand them to per-bucket writers.

Append tables get rolling files (:class:`RollingAppendWriter`); primary-key tables
get LSM level-0 sorted runs (:class:`MergeTreeWriter`). ``write_arrow`` may be called
many times; ``prepare_commit`` closes the files and returns one :class:`CommitMessage`
per (partition, bucket). Splitting is vectorized (:mod:`.write_split`): a batch of one
(partition, bucket) is handed over whole, otherwise one grouping per input batch gives the
row indices of every group, then one ``take`` per group. Buckets computed by the caller
(Spark's routing) can be passed with the rows instead of hashing every row again.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.bucket import check_bucket_function, compute_buckets
from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal
from paimon_core.data.row_kind import (
    DELETE,
    INSERT,
    RETRACT_KINDS,
    UPDATE_BEFORE,
    constant_kinds,
    kinds_from_strings,
)
from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.append_writer import RollingAppendWriter
from paimon_core.operation.scan import ScanFilter
from paimon_core.options import parse_memory_size
from paimon_core.options_support import check_file_index_options, check_supported_options
from paimon_core.options_validation import check_maintenance_options
from paimon_core.paths import PathFactory, partition_dir
from paimon_core.stats.collector import stats_modes_for
from paimon_core.store.key_value_file_store import KeyValueFileStore
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import check_stream_item, check_write_input, conform
from paimon_core.table.write_split import I32, check_buckets, split_rows

if TYPE_CHECKING:
    from paimon_core.crosspartition.global_index_assigner import GlobalIndexAssigner
    from paimon_core.index.hash_index import HashIndexMaintainer
    from paimon_core.operation.commit.committer import OverwriteSpec
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)

WRITE_BUFFER_SIZE = "write-buffer-size"
ROWKIND_FIELD = "rowkind.field"

PartitionKey = tuple[bytes, int]
WriteInput: TypeAlias = pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch]


class BucketWriter(Protocol):
    def close(self) -> list[DataFileMeta]: ...

    def abort(self) -> None: ...


class TableWrite:
    """Writes Arrow data into new files of one table; nothing is visible until committed."""

    def __init__(
        self, table: FileStoreTable, *, overwrite: OverwriteSpec | None = None, commit_user: str | None = None
    ) -> None:
        """``overwrite``: the overwrite this write feeds (dynamic-bucket tables then start their
        bucket index empty, as Java's overwrite does; the commit drops the old index files).
        ``commit_user``: names the ``bucket-postpone`` files of postpone-bucket tables."""
        schema = table.schema
        self.table = table
        self.schema = schema
        # Table options plus this handle's dynamic options (table.copy({...})), resolved once by the table.
        self.options = table.options
        opts = self.options.options
        self.table_options = opts
        check_supported_options(opts, action=f"write table {table.name}")
        check_file_index_options(schema.fields, opts, action=f"write table {table.name}", table=table.name)
        check_maintenance_options(self.options, table=table.name)
        self.has_pk = bool(schema.primary_keys)
        self.bucket_mode = self.options.bucket  # -1: unaware/dynamic; > 0: fixed buckets; -2: postpone
        from paimon_core.crosspartition.setup import is_cross_partition

        self.cross_partition = is_cross_partition(list(schema.primary_keys), list(schema.partition_keys))
        #: postpone-bucket table (bucket = -2): rows go to 'bucket-postpone' as they came (Java's
        #: PostponeBucketFileStoreWrite); the postpone compaction assigns their buckets
        self.postpone = self.has_pk and self.bucket_mode == -2
        self.postpone_prefix: str | None = None
        if self.postpone:
            if self.cross_partition:
                raise InvalidArgumentError(
                    f"Table {table.name}: a postpone-bucket table (bucket = -2) whose primary key does not "
                    "contain the partition keys cannot be written here"
                )
            from paimon_core.operation.commit.committer import new_commit_user
            from paimon_core.postpone.postpone_bucket_writer import postpone_file_prefix

            self.postpone_prefix = postpone_file_prefix(self.options.data_file_prefix, commit_user or new_commit_user())
        self.dynamic = self.has_pk and self.bucket_mode == -1
        self.total_buckets = self.bucket_mode if self.bucket_mode > 0 or self.postpone else -1
        self.paths = PathFactory(
            table.path, data_file_prefix=self.options.data_file_prefix, file_format=self.options.file_format
        )
        self.arrow_schema = table.arrow_schema
        self.partition_fields = schema.partition_fields
        self.bucket_fields = schema.fields_of(schema.bucket_keys) if self.bucket_mode > 0 else []
        # Java's BucketFunction.create: checked against the bucket key when the writer is made
        self.bucket_function = (
            check_bucket_function(self.options.bucket_function_type, [f.type for f in self.bucket_fields])
            if self.bucket_mode > 0
            else "default"
        )
        self.stats_modes = stats_modes_for(list(schema.fields), self.table_options)
        self.target_file_size = self.options.target_file_size(has_primary_key=self.has_pk)
        self.legacy_partition_name = self.table_options.get("partition.legacy-name", "true").lower() == "true"
        self.rowkind_field = self.table_options.get(ROWKIND_FIELD)
        if self.has_pk:
            # the store's key, merge function and order (the resolved options): the read and the
            # compaction of this handle merge the same way
            store = table.store
            assert isinstance(store, KeyValueFileStore)
            self.key_fields = store.key_fields
            self.merge_function = store.new_merge_function()
            self.sequence_fields = store.sequence_fields  # unknown sequence fields: clear error
            self.sequence_descending = store.sequence_descending
            self.buffer_size = parse_memory_size(self.table_options.get(WRITE_BUFFER_SIZE, "256 mb"), key=WRITE_BUFFER_SIZE)
            self.key_stats_modes = stats_modes_for(self.key_fields, self.table_options)
        # changelog-producer = input: the input rows are also written as changelog files
        producer = self.table_options.get("changelog-producer", "none").strip().lower()
        self.changelog_prefix: str | None = (
            self.table_options.get("changelog-file.prefix", "changelog-") if self.has_pk and producer == "input" else None
        )
        self.hash_index: HashIndexMaintainer | None = None
        self.cross: GlobalIndexAssigner | None = None
        if self.cross_partition:
            from paimon_core.crosspartition.setup import new_global_index_assigner
            from paimon_core.table.index_bootstrap import bootstrap_keys

            self.cross = new_global_index_assigner(
                table.store,
                options=opts,
                overwrite=overwrite,
                path_of=self._partition_path,
                rowkind_field=self.rowkind_field,
                bootstrap_keys=functools.partial(bootstrap_keys, table),
            )
        elif self.dynamic:
            from paimon_core.index.bucket_assigner import DynamicBucketAssigner, DynamicBucketConfig
            from paimon_core.index.hash_index import HashIndexMaintainer

            self.hash_index = HashIndexMaintainer(
                file_io=table.file_io,
                paths=self.paths,
                snapshot_manager=table.snapshot_manager,
                key_fields=self.key_fields,
                assigner=DynamicBucketAssigner.from_config(DynamicBucketConfig.from_options(opts)),
                overwrite=overwrite is not None,
                table_name=table.name,
            )
        from paimon_core.table.write_compaction import writer_compacts

        # write-only = false (the default): compact as Java's writers do, before the commit
        self._compacts = writer_compacts(table, overwrite=overwrite is not None)
        self._writers: dict[PartitionKey, BucketWriter] = {}
        self._restored_seq: dict[bytes, dict[int, int]] = {}
        self._overwrite = overwrite is not None
        self._closed = False

    # --- writing -----------------------------------------------------------------
    def write_arrow(
        self,
        data: WriteInput,
        *,
        row_kinds: pa.Array | None = None,
        buckets: pa.Array | pa.ChunkedArray | None = None,
    ) -> None:
        """Write rows (a Table, a RecordBatch, or a stream of batches).

        Primary-key tables take row kinds from the ``rowkind.field`` column, from
        ``row_kinds`` (int8: 0 +I, 1 -U, 2 +U, 3 -D; single-table input only), or
        treat every row as an insert/upsert.

        ``buckets`` (fixed-bucket tables, single-table input only): each row's bucket, already
        computed with the table's bucket function (Spark's routing does, to shuffle by it), so
        it is not hashed again. int32, no nulls, in ``[0, bucket)``; a few rows are recomputed
        as a spot check. Anything else raises :class:`InvalidArgumentError`, nothing written.
        """
        if self._closed:
            raise InvalidArgumentError("This TableWrite was already committed or aborted; create a new one")
        check_write_input(data, api="write_arrow")
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            conformed = conform(data, self.schema, self.arrow_schema)
            given = None if buckets is None else self._check_buckets(conformed, buckets)
            self._write_table(conformed, row_kinds, buckets=given)
            return
        if row_kinds is not None or buckets is not None:
            raise InvalidArgumentError("row_kinds and buckets can only be given with a single Table or RecordBatch")
        for batch in data:
            self._write_table(conform(check_stream_item(batch, api="write_arrow"), self.schema, self.arrow_schema), None)

    def delete_arrow(self, keys: pa.Table | pa.RecordBatch) -> None:
        """Delete rows by primary key (other columns may be missing: they are written as nulls).

        On a cross-partition upsert table a key names one row wherever it lives: the delete goes
        to the key's current partition and bucket, and unknown keys are ignored.
        """
        if not self.has_pk:
            raise InvalidArgumentError(f"Table {self.table.name} has no primary key: rows cannot be deleted by key")
        if not isinstance(keys, (pa.Table, pa.RecordBatch)):
            raise InvalidArgumentError(
                f"delete_arrow expects a pyarrow.Table or RecordBatch of keys; got {type(keys).__name__}"
            )
        t = pa.Table.from_batches([keys]) if isinstance(keys, pa.RecordBatch) else keys
        missing_keys = [k for k in self.schema.primary_keys if k not in t.schema.names]
        if missing_keys:
            raise SchemaMismatchError(f"Deletes need the primary key columns; missing {missing_keys}")
        for f in self.arrow_schema:
            if f.name not in t.schema.names:
                t = t.append_column(f.name, pa.nulls(t.num_rows, f.type))
        kinds = constant_kinds(t.num_rows, DELETE)
        conformed = conform(t.select(self.arrow_schema.names), self.schema, self.arrow_schema, check_not_null=False)
        self._write_table(conformed, kinds, locate=True)

    def _check_buckets(self, table: pa.Table, buckets: pa.Array | pa.ChunkedArray) -> I32:
        if self.bucket_mode <= 0 or self.cross is not None:
            raise InvalidArgumentError(
                f"Table {self.table.name} has no fixed buckets (bucket = {self.bucket_mode}): buckets cannot be given"
            )
        columns = [table.column(f.name) for f in self.bucket_fields]
        return check_buckets(
            buckets, table.num_rows, self.bucket_mode, columns, self.bucket_fields, function=self.bucket_function
        )

    def _kinds(self, table: pa.Table, row_kinds: pa.Array | None) -> pa.Array:
        if self.rowkind_field:
            return kinds_from_strings(table.column(self.rowkind_field), self.rowkind_field)
        if row_kinds is not None:
            if len(row_kinds) != table.num_rows:
                raise InvalidArgumentError(f"row_kinds has {len(row_kinds)} values for {table.num_rows} rows")
            return row_kinds.cast(pa.int8())
        return constant_kinds(table.num_rows, INSERT)

    def _filter_row_kinds(self, table: pa.Table, kinds: pa.Array) -> tuple[pa.Table, pa.Array, pa.Array | None]:
        """Java's RowKindFilter: ``ignore-delete`` drops -D and -U rows before they are written,
        ``ignore-update-before`` drops -U rows. Also returns the mask of kept rows (None: all)."""
        if self.options.ignore_delete:
            drop = pc.is_in(kinds, RETRACT_KINDS)
        elif self.options.ignore_update_before:
            drop = pc.equal(kinds, pa.scalar(UPDATE_BEFORE, pa.int8()))
        else:
            return table, kinds, None
        if not pc.any(drop).as_py():
            return table, kinds, None
        keep = pc.invert(drop)
        return table.filter(keep), kinds.filter(keep), keep

    def _write_table(
        self, table: pa.Table, row_kinds: pa.Array | None, *, locate: bool = False, buckets: I32 | None = None
    ) -> None:
        if table.num_rows == 0:
            return
        kinds: pa.Array | None = None
        if self.has_pk:
            for k in self.schema.primary_keys:
                if table.column(k).null_count:
                    raise SchemaMismatchError(
                        f"Primary key column '{k}' has {table.column(k).null_count} null value(s)", column=k
                    )
            kinds = self._kinds(table, row_kinds)
            table, kinds, kept = self._filter_row_kinds(table, kinds)
            if kept is not None and buckets is not None:
                buckets = buckets[np.asarray(kept.to_numpy(zero_copy_only=False), dtype=np.bool_)]
            if table.num_rows == 0:
                return
        elif row_kinds is not None:
            raise InvalidArgumentError(f"Table {self.table.name} is an append table: row kinds are not supported")
        if self.cross is not None:
            assert kinds is not None
            for routed in self.cross.process(table, kinds, locate=locate):
                self._write_group(routed.partition, routed.partition_path, routed.bucket, routed.rows, routed.kinds)
            return
        keys: list[str] = [f.name for f in self.partition_fields]
        if self.bucket_mode > 0 and buckets is None:
            cols = [table.column(f.name) for f in self.bucket_fields]
            buckets = compute_buckets(
                cols, [f.type for f in self.bucket_fields], self.bucket_mode, function=self.bucket_function
            )
        if not keys and buckets is None:
            if self.dynamic:
                self._write_dynamic(EMPTY_ROW, "", table, kinds)
            else:
                self._write_group(EMPTY_ROW, "", self.total_buckets if self.postpone else 0, table, kinds)
            return
        key_columns = [table.column(k) for k in keys]
        part_types = [f.type for f in self.partition_fields]
        for group in split_rows(table, keys, buckets):
            first, rows = group.first, group.rows
            values = [arrow_scalar_to_internal(key_columns[i][first], f.type) for i, f in enumerate(self.partition_fields)]
            bucket = int(buckets[first]) if buckets is not None else (self.total_buckets if self.postpone else 0)
            part, part_kinds = table, kinds
            if rows is not None:
                part, part_kinds = table.take(rows), (kinds.take(rows) if kinds is not None else None)
            partition_bytes = serialize_binary_row(values, part_types) if part_types else EMPTY_ROW
            if self.dynamic:
                self._write_dynamic(partition_bytes, self._partition_path(values), part, part_kinds)
            else:
                self._write_group(partition_bytes, self._partition_path(values), bucket, part, part_kinds)

    # --- dynamic buckets ---------------------------------------------------------------
    def _write_dynamic(self, partition: bytes, path: str, part: pa.Table, kinds: pa.Array | None) -> None:
        from paimon_core.index.bucket_assigner import group_indices

        assert self.hash_index is not None
        buckets = self.hash_index.assign(partition, part)
        groups = group_indices(buckets)
        if len(groups) == 1:
            self._write_group(partition, path, groups[0][0], part, kinds)
            return
        for b, idx in groups:
            rows = pa.array(idx)
            self._write_group(partition, path, b, part.take(rows), kinds.take(rows) if kinds is not None else None)

    def _write_group(self, partition: bytes, path: str, bucket: int, part: pa.Table, kinds: pa.Array | None) -> None:
        writer = self._writer_for(partition, path, bucket)
        if kinds is None:
            writer.write(part)  # type: ignore[attr-defined]
        else:
            writer.write(part, kinds)  # type: ignore[attr-defined]

    def _partition_path(self, values: list[object | None]) -> str:
        return partition_dir(
            self.partition_fields,
            values,
            default_partition_name=self.options.partition_default_name,
            legacy_name=self.legacy_partition_name,
        )

    def _writer_for(self, partition: bytes, partition_path: str, bucket: int) -> BucketWriter:
        key = (partition, bucket)
        w = self._writers.get(key)
        if w is not None:
            return w
        common = {
            "file_io": self.table.file_io,
            "paths": self.paths,
            "partition_path": partition_path,
            "bucket": bucket,
            "file_format": self.options.file_format,
            "options": self.table_options,
            "target_file_size": self.target_file_size,
            "schema_id": self.schema.id,
            "first_sequence_number": 0 if self.postpone else self._restore_sequence(partition, bucket),
        }
        if self.has_pk:
            from paimon_core.mergetree.writer import MergeTreeWriter

            kv = {
                "key_fields": self.key_fields,
                "value_fields": list(self.schema.fields),
                "merge_function": self.merge_function,
                "sequence_fields": self.sequence_fields,
                "sequence_descending": self.sequence_descending,
                "buffer_size": self.buffer_size,
                "key_stats_modes": self.key_stats_modes,
            }
            if self.postpone:
                from paimon_core.postpone.postpone_bucket_writer import (
                    POSTPONE_FILE_FORMAT,
                    PostponeBucketWriter,
                )

                assert self.postpone_prefix is not None
                no_stats = {**self.table_options, "metadata.stats-mode": "none"}
                common.update(file_format=POSTPONE_FILE_FORMAT, options=no_stats)
                w = PostponeBucketWriter(
                    file_prefix=self.postpone_prefix,
                    value_stats_modes=stats_modes_for(list(self.schema.fields), no_stats),
                    **kv,
                    **common,
                )
            else:
                w = MergeTreeWriter(
                    value_stats_modes=self.stats_modes,
                    changelog_prefix=self.changelog_prefix,
                    **kv,  # type: ignore[arg-type]
                    **common,  # type: ignore[arg-type]
                )
        else:
            w = RollingAppendWriter(
                fields=list(self.schema.fields),
                arrow_schema=self.arrow_schema,
                stats_modes=self.stats_modes,
                **common,  # type: ignore[arg-type]
            )
        self._writers[key] = w
        return w

    def _restore_sequence(self, partition: bytes, bucket: int) -> int:
        """Buckets continue their sequence numbers (unaware append buckets start at 0)."""
        if self.bucket_mode <= 0 and not self.has_pk:
            return 0
        seqs = self._restored_seq.get(partition)
        if seqs is None:
            from paimon_core.operation.stale_snapshot import read_from_latest

            flt = ScanFilter(partitions=frozenset([partition]))
            entries = read_from_latest(
                self.table.snapshot_manager,
                lambda latest: self.table.new_file_store_scan().live_entries(latest, flt),
                table=self.table.name,
                what="Restoring sequence numbers",
            )
            seqs = {}
            for e in entries:
                seqs[e.bucket] = max(seqs.get(e.bucket, -1), e.file.max_sequence_number)
            if not self._overwrite:
                self._check_bucket_count(partition, {e.total_buckets for e in entries})
            self._restored_seq[partition] = seqs
        return seqs.get(bucket, -1) + 1

    def _check_bucket_count(self, partition: bytes, totals: set[int]) -> None:
        """Java's write-time check: a partition written with another bucket count (before an
        ``ALTER TABLE ... SET ('bucket' = ...)``, or by a rescale to another count) takes new rows
        only after ``rescale`` (an overwrite) rewrote it; mixing counts would split keys."""
        other = sorted(t for t in totals if t > 0 and t != self.total_buckets)
        if self.bucket_mode > 0 and other:
            raise InvalidArgumentError(
                f"Partition {self.table.partition_path(partition) or '(unpartitioned)'} of {self.table.name} was "
                f"written with {other[0]} buckets, the table now has {self.total_buckets}: rescale the partition "
                "first (python -m spark_jobs rescale ... or an overwrite of it)",
                partition=self.table.partition_path(partition),
            )

    # --- finishing -----------------------------------------------------------------
    def prepare_commit(self) -> list[CommitMessage]:
        """Close every open file and describe them; the writer can go on writing afterwards."""
        messages = []
        index_changes = self.hash_index.prepare_commit() if self.hash_index is not None else {}
        items = list(self._writers.items())
        # Flushing sorts, merges and encodes (Arrow releases the GIL): one bucket per thread.
        workers = min(len(items), os.cpu_count() or 1)
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                closed = list(pool.map(lambda kv: kv[1].close(), items))
        else:
            closed = [w.close() for _, w in items]
        for ((partition, bucket), writer), files in zip(items, closed, strict=True):
            new_index, old_index = index_changes.pop((partition, bucket), ((), ()))
            take = getattr(writer, "take_changelog_files", None)
            changelog = tuple(take()) if take is not None else ()
            if files or new_index or changelog:
                messages.append(
                    CommitMessage(
                        partition=partition,
                        bucket=bucket,
                        total_buckets=self.total_buckets,
                        new_files=tuple(files),
                        changelog_files=changelog,
                        new_index_files=new_index,
                        deleted_index_files=old_index,
                    )
                )
        if self._compacts:
            from paimon_core.table.write_compaction import compact_on_write

            messages = compact_on_write(self.table, messages)
        return messages

    def abort(self) -> None:
        """Delete all files written so far (used when the write fails before commit)."""
        for w in self._writers.values():
            w.abort()
        self._writers.clear()
        self._closed = True

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> TableWrite:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc is not None:
            self.abort()
        self.close()
