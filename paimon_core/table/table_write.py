"""Batch writes of an append table: split rows by (partition, bucket), write rolling files.

``write_arrow`` may be called many times; ``prepare_commit`` closes the files and
returns one :class:`CommitMessage` per (partition, bucket) for a committer.
Splitting is vectorized: one Arrow ``group_by`` per input batch gives the row
indices of every (partition, bucket) group, then one ``take`` per group.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.bucket import compute_buckets
from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal, escape_path_name, partition_dir_value
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.append_writer import RollingAppendWriter
from paimon_core.operation.scan import ScanFilter
from paimon_core.paths import PathFactory
from paimon_core.stats.collector import stats_modes_for
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import conform

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)

_ROW_INDEX = "__paimon_row_index"
_BUCKET_COL = "__paimon_bucket"

PartitionKey = tuple[bytes, int]


class TableWrite:
    """Writes Arrow data into new files of one table; nothing is visible until committed."""

    def __init__(self, table: FileStoreTable) -> None:
        schema = table.schema
        if schema.primary_keys:
            raise InvalidArgumentError(
                f"Table {table.name} has a primary key; primary-key writes are not supported yet "
                "(append tables only in this version)"
            )
        self.table = table
        self.schema = schema
        self.options = schema.core_options
        self.bucket_mode = self.options.bucket  # -1: unaware; > 0: fixed buckets by bucket-key
        self.total_buckets = self.bucket_mode if self.bucket_mode > 0 else -1
        self.paths = PathFactory(
            table.path, data_file_prefix=self.options.data_file_prefix, file_format=self.options.file_format
        )
        self.arrow_schema = table.arrow_schema
        self.partition_fields = schema.partition_fields
        self.bucket_fields = schema.fields_of(schema.bucket_keys) if self.bucket_mode > 0 else []
        self.stats_modes = stats_modes_for(list(schema.fields), schema.options)
        self.target_file_size = self.options.target_file_size(has_primary_key=False)
        self.legacy_partition_name = schema.options.get("partition.legacy-name", "true").lower() == "true"
        self._writers: dict[PartitionKey, RollingAppendWriter] = {}
        self._restored_seq: dict[PartitionKey, int] | None = None
        self._closed = False

    # --- writing -----------------------------------------------------------------
    def write_arrow(self, data: pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch]) -> None:
        """Write rows (a Table, a RecordBatch, or a stream of batches)."""
        if self._closed:
            raise InvalidArgumentError("This TableWrite was already committed or aborted; create a new one")
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            self._write_table(conform(data, self.schema, self.arrow_schema))
            return
        for batch in data:
            self._write_table(conform(batch, self.schema, self.arrow_schema))

    def _write_table(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        keys: list[str] = [f.name for f in self.partition_fields]
        work = table
        if self.bucket_mode > 0:
            cols = [table.column(f.name) for f in self.bucket_fields]
            buckets = compute_buckets(cols, [f.type for f in self.bucket_fields], self.bucket_mode)
            work = work.append_column(_BUCKET_COL, pa.array(buckets, pa.int32()))
            keys.append(_BUCKET_COL)
        if not keys:
            self._writer_for(EMPTY_ROW, "", 0).write(table)
            return
        indexed = work.select(keys).append_column(_ROW_INDEX, pa.array(np.arange(table.num_rows, dtype=np.int64)))
        groups = indexed.group_by(keys, use_threads=False).aggregate([(_ROW_INDEX, "list")])
        index_lists = groups.column(f"{_ROW_INDEX}_list")
        key_columns = [groups.column(k) for k in keys]
        for g in range(groups.num_rows):
            values = [arrow_scalar_to_internal(key_columns[i][g], f.type) for i, f in enumerate(self.partition_fields)]
            bucket = key_columns[-1][g].as_py() if self.bucket_mode > 0 else 0
            rows = index_lists[g].values
            part = table if groups.num_rows == 1 else table.take(rows)
            partition_bytes = serialize_binary_row(values, [f.type for f in self.partition_fields])
            self._writer_for(partition_bytes, self._partition_path(values), bucket).write(part)

    def _partition_path(self, values: list[object | None]) -> str:
        default = self.options.partition_default_name
        return "/".join(
            f"{escape_path_name(f.name)}="
            + partition_dir_value(v, f.type, default_partition_name=default, legacy_name=self.legacy_partition_name)
            for f, v in zip(self.partition_fields, values, strict=True)
        )

    def _writer_for(self, partition: bytes, partition_path: str, bucket: int) -> RollingAppendWriter:
        key = (partition, bucket)
        w = self._writers.get(key)
        if w is None:
            w = RollingAppendWriter(
                file_io=self.table.file_io,
                paths=self.paths,
                partition_path=partition_path,
                bucket=bucket,
                fields=list(self.schema.fields),
                arrow_schema=self.arrow_schema,
                file_format=self.options.file_format,
                options=self.schema.options,
                target_file_size=self.target_file_size,
                stats_modes=self.stats_modes,
                schema_id=self.schema.id,
                first_sequence_number=self._restore_sequence(key),
            )
            self._writers[key] = w
        return w

    def _restore_sequence(self, key: PartitionKey) -> int:
        """Fixed-bucket files continue the bucket's sequence numbers (unaware buckets start at 0)."""
        if self.bucket_mode <= 0:
            return 0
        if self._restored_seq is None:
            latest = self.table.snapshot_manager.latest_snapshot()
            seqs: dict[PartitionKey, int] = {}
            for e in self.table.new_file_store_scan().live_entries(latest, ScanFilter()):
                k = (e.partition, e.bucket)
                seqs[k] = max(seqs.get(k, -1), e.file.max_sequence_number)
            self._restored_seq = seqs
        return self._restored_seq.get(key, -1) + 1

    # --- finishing -----------------------------------------------------------------
    def prepare_commit(self) -> list[CommitMessage]:
        """Close every open file and describe them; the writer can go on writing afterwards."""
        messages = []
        for (partition, bucket), w in self._writers.items():
            files = w.close()
            if files:
                messages.append(
                    CommitMessage(partition=partition, bucket=bucket, total_buckets=self.total_buckets, new_files=tuple(files))
                )
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

