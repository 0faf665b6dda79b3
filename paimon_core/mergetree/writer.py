"""MergeTreeWriter: the write side of one (partition, bucket) of a primary-key table.

Rows get sequence numbers in arrival order (continuing the bucket's history),
collect in a buffer bounded by ``write-buffer-size``, and each flush sorts the
buffer by key (then ``sequence.field``, then sequence number), folds rows of the
same key with the table's merge function, and writes one sorted run of level-0
files, rolled at ``target-file-size``. Everything is vectorized over Arrow.

Fast paths (same files, byte for byte): a buffer that arrives in key order (a
routed Spark task reading a key-ordered source) is not sorted again, and the
merge function passes keys without duplicates through (see :mod:`.base`).
Mirrors Java's ``MergeTreeWriter`` with its ``SortBufferWriteBuffer``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.data.binary_row import serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal
from paimon_core.data.row_kind import RETRACT_KINDS
from paimon_core.format.file_format import FormatWriter, open_writer
from paimon_core.format.key_value import SEQUENCE_NUMBER, VALUE_KIND, key_value_arrow_schema
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.merge_function import MergeFunction
from paimon_core.mergetree.segments import in_key_order
from paimon_core.operation.append_writer import stats_to_simple
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import SimpleStatsCollector, StatsMode

logger = logging.getLogger(__name__)


def sort_keys_for(
    key_names: Sequence[str], sequence_fields: Sequence[str], *, sequence_descending: bool = False
) -> list[tuple[str, str, str]]:
    """Sort order inside a bucket: key, then ``sequence.field``, then arrival (sequence number)."""
    order = "descending" if sequence_descending else "ascending"
    keys = [(k, "ascending", "at_start") for k in key_names]
    keys += [(f, order, "at_start") for f in sequence_fields]
    keys.append((SEQUENCE_NUMBER, "ascending", "at_start"))
    return keys


def canonical_layout(table: pa.Table) -> pa.Table:
    """``table`` as one chunk per column without all-valid validity bitmaps (nested columns:
    as Arrow's ``take`` lays them out).

    The file writer cuts row groups by the Arrow size of the batches it gets, which counts
    validity bitmaps; whether one exists for a column without nulls depends on how the rows
    got here (``take`` allocates one for strings, a concatenation of the input keeps the
    input's). Writing this layout makes the files (row groups, sizes) the same whichever path
    produced the rows -- sorted or not, merged or passed through.
    """
    if any(c.num_chunks > 1 for c in table.columns):
        table = table.combine_chunks()
    columns = [_canonical(c.chunk(0)) if c.num_chunks == 1 else c for c in table.columns]
    return pa.Table.from_arrays(columns, schema=table.schema)


def _canonical(array: pa.Array) -> pa.Array:
    if not _flat(array.type):
        # nested: Arrow's take decides every level's buffers from the type and the nulls alone
        return array.take(pa.array(np.arange(len(array), dtype=np.int64)))
    return _without_validity(array)


def _flat(t: pa.DataType) -> bool:
    """Types whose buffers are (validity, values...) with no child arrays."""
    return bool(
        pa.types.is_primitive(t)
        or pa.types.is_decimal(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    )


def _without_validity(array: pa.Array) -> pa.Array:
    buffers = array.buffers()
    if not _flat(array.type) or array.null_count or buffers[0] is None:
        return array
    return pa.Array.from_buffers(array.type, len(array), [None, *buffers[1:]], null_count=0, offset=array.offset)


class MergeTreeWriter:
    """Buffers, sorts, merges and writes level-0 sorted runs for one bucket."""

    def __init__(
        self,
        *,
        file_io: FileIO,
        paths: PathFactory,
        partition_path: str,
        bucket: int,
        key_fields: Sequence[DataField],
        value_fields: Sequence[DataField],
        merge_function: MergeFunction,
        sequence_fields: Sequence[str],
        sequence_descending: bool,
        file_format: str,
        options: dict[str, str],
        target_file_size: int,
        buffer_size: int,
        key_stats_modes: Sequence[StatsMode],
        value_stats_modes: Sequence[StatsMode],
        schema_id: int,
        first_sequence_number: int,
    ) -> None:
        self.file_io = file_io
        self.paths = paths
        self.partition_path = partition_path
        self.bucket = bucket
        self.key_fields = list(key_fields)
        self.value_fields = list(value_fields)
        self.merge_function = merge_function
        self.key_names = [f.name for f in key_fields]
        self.has_sequence_fields = bool(sequence_fields)
        self.sort_keys = sort_keys_for(self.key_names, sequence_fields, sequence_descending=sequence_descending)
        self.file_format = file_format
        self.options = options
        self.target_file_size = target_file_size
        self.buffer_size = buffer_size
        self.key_stats_modes = list(key_stats_modes)
        self.value_stats_modes = list(value_stats_modes)
        self.schema_id = schema_id
        self.next_seq = first_sequence_number
        self.file_schema = key_value_arrow_schema(self.key_fields, self.value_fields, thin_mode=False)
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0
        self.files: list[DataFileMeta] = []
        self.written_paths: list[str] = []

    # --- buffering ----------------------------------------------------------------
    def write(self, data: pa.Table, kinds: pa.Array) -> None:
        """Buffer rows (value columns in table order) with their row kinds (int8)."""
        n = data.num_rows
        if n == 0:
            return
        seq = pa.array(np.arange(self.next_seq, self.next_seq + n, dtype=np.int64))
        self.next_seq += n
        t = data.append_column(SEQUENCE_NUMBER, seq).append_column(VALUE_KIND, kinds)
        self._buffer.append(t)
        self._buffered_bytes += t.nbytes
        if self._buffered_bytes >= self.buffer_size:
            self.flush()

    def flush(self) -> None:
        """Sort, merge and write the buffer as one sorted run of level-0 files."""
        if not self._buffer:
            return
        data = pa.concat_tables(self._buffer)
        self._buffer, self._buffered_bytes = [], 0
        if not self._in_sort_order(data):
            data = data.take(pc.sort_indices(data, sort_keys=self.sort_keys))
        merged = self.merge_function.merge(data, drop_retracts=False)
        self._write_run(merged)

    def _in_sort_order(self, data: pa.Table) -> bool:
        """Whether ``data`` (the buffer, in arrival order) is already sorted by :attr:`sort_keys`.

        Sequence numbers grow with arrival, so rows already in key order (non-decreasing keys)
        are exactly the sorted order: the sort would be the identity. With ``sequence.field``
        equal keys would be ordered by it first, so then the keys must be strictly increasing.
        """
        return in_key_order(data, self.key_names, strict=self.has_sequence_fields)

    # --- files ------------------------------------------------------------------------
    def _file_table(self, merged: pa.Table) -> pa.Table:
        cols: list[pa.Array | pa.ChunkedArray] = [merged.column(f.name) for f in self.key_fields]
        cols += [merged.column(SEQUENCE_NUMBER), merged.column(VALUE_KIND).cast(pa.int8())]
        cols += [merged.column(f.name) for f in self.value_fields]
        return pa.Table.from_arrays(cols, schema=self.file_schema)

    def _write_run(self, merged: pa.Table) -> None:
        table = canonical_layout(self._file_table(merged))
        start = 0
        n = table.num_rows
        while start < n:
            writer, name, path = self._open()
            end = start
            for batch in table.slice(start).to_batches(max_chunksize=65536):
                writer.write(batch)
                end += batch.num_rows
                if writer.bytes_written() >= self.target_file_size:
                    break
            size = writer.close()
            self.files.append(self._meta(name, size, merged.slice(start, end - start)))
            start = end

    def _open(self) -> tuple[FormatWriter, str, str]:
        name = self.paths.new_data_file_name(extension=self.file_format)
        path = self.paths.data_file_path(self.partition_path, self.bucket, name)
        self.written_paths.append(path)
        return open_writer(self.file_io, path, self.file_schema, self.file_format, self.options), name, path

    def _meta(self, name: str, size: int, part: pa.Table) -> DataFileMeta:
        key_types = [f.type for f in self.key_fields]
        first = [arrow_scalar_to_internal(part.column(f.name)[0], f.type) for f in self.key_fields]
        last = [arrow_scalar_to_internal(part.column(f.name)[-1], f.type) for f in self.key_fields]
        key_stats = SimpleStatsCollector(self.key_fields, self.key_stats_modes)
        key_stats.collect(part)
        value_stats = SimpleStatsCollector(self.value_fields, self.value_stats_modes)
        value_stats.collect(part)
        seqs = part.column(SEQUENCE_NUMBER)
        mm = pc.min_max(seqs)
        retracts = int(pc.sum(pc.is_in(part.column(VALUE_KIND), RETRACT_KINDS)).as_py() or 0)
        disabled = value_stats.is_disabled
        return DataFileMeta.new_level0(
            name,
            size,
            part.num_rows,
            value_stats=None if disabled else stats_to_simple(value_stats.result(), self.value_fields),
            min_sequence_number=int(mm["min"].as_py()),
            max_sequence_number=int(mm["max"].as_py()),
            schema_id=self.schema_id,
            min_key=serialize_binary_row(first, key_types),
            max_key=serialize_binary_row(last, key_types),
            key_stats=stats_to_simple(key_stats.result(), self.key_fields),
            delete_row_count=retracts,
        )

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> list[DataFileMeta]:
        """Flush and hand over every file written since the last call."""
        self.flush()
        files, self.files = self.files, []
        self.written_paths.clear()
        return files

    def abort(self) -> None:
        self._buffer.clear()
        for p in self.written_paths:
            self.file_io.delete(p)
        self.written_paths.clear()
        self.files.clear()

