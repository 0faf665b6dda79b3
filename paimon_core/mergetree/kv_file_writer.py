"""RollingKeyValueFileWriter: key-ordered merged rows into primary-key data files, rolled at a target size.

Mirrors Java's ``KeyValueFileWriterFactory`` (``createRollingMergeTreeFileWriter``) with its
``RollingFileWriter`` of ``KeyValueDataFileWriter``: the same writer serves the merge-tree
writer's level-0 flushes (``level=0``, ``FileSource.APPEND``) and the compaction rewriter's
output (any level, ``FileSource.COMPACT``).

Input is merge output (:mod:`.base`): the key columns under their field names, the value
columns, ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, in key order, possibly in many consecutive
chunks. Files are laid out as :func:`paimon_core.format.key_value.key_value_arrow_schema`
(``_KEY_<k>``, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, values), written in batches of
:data:`ROLL_CHECK_ROWS` rows whatever the chunking of the input, and a file is rolled once its
size estimate reaches ``target-file-size`` (checked after every batch). Each file's meta is
filled as Java's ``KeyValueDataFileWriter.result``: key range from its first and last key,
key and value stats, min/max sequence number, ``deleteRowCount`` = retraction rows, the given
level and file source, created now.
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
from paimon_core.fileindex.data_file_index_writer import (
    INDEX_PATH_SUFFIX,
    DataFileIndexWriter,
    file_index_options_of,
)
from paimon_core.format.file_format import FormatWriter, open_writer
from paimon_core.format.key_value import SEQUENCE_NUMBER, VALUE_KIND, key_value_arrow_schema
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.operation.append_writer import stats_to_simple
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import SimpleStatsCollector, StatsMode

__all__ = ["ROLL_CHECK_ROWS", "RollingKeyValueFileWriter", "canonical_layout"]

logger = logging.getLogger(__name__)

#: Rows per batch handed to the format writer; the target size is checked after each batch.
ROLL_CHECK_ROWS = 65536


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
    return pa.Array.from_buffers(
        array.type, len(array), [None, *buffers[1:]], null_count=0, offset=array.offset
    )


class _OpenFile:
    """The file being written and what its meta needs, accumulated batch by batch."""

    def __init__(
        self,
        writer: FormatWriter,
        name: str,
        key_stats: SimpleStatsCollector,
        value_stats: SimpleStatsCollector,
        path: str = "",
        index: DataFileIndexWriter | None = None,
    ) -> None:
        self.writer = writer
        self.name = name
        self.path = path
        self.index = index
        self.key_stats = key_stats
        self.value_stats = value_stats
        self.rows = 0
        self.min_seq = np.iinfo(np.int64).max
        self.max_seq = np.iinfo(np.int64).min
        self.retracts = 0
        self.first: pa.RecordBatch | None = None
        self.last: pa.RecordBatch | None = None


class RollingKeyValueFileWriter:
    """Writes one key-ordered stream of merged rows of a (partition, bucket) as rolled data files."""

    def __init__(
        self,
        *,
        file_io: FileIO,
        paths: PathFactory,
        partition_path: str,
        bucket: int,
        key_fields: Sequence[DataField],
        value_fields: Sequence[DataField],
        file_format: str,
        options: dict[str, str],
        target_file_size: int,
        schema_id: int,
        key_stats_modes: Sequence[StatsMode],
        value_stats_modes: Sequence[StatsMode],
        level: int,
        file_source: FileSource,
        file_prefix: str | None = None,
    ) -> None:
        """``file_prefix``: the file name prefix (default: the path factory's ``data-file.prefix``;
        changelog files of the ``input`` producer use ``changelog-file.prefix``)."""
        self.file_io = file_io
        self.paths = paths
        self.partition_path = partition_path
        self.bucket = bucket
        self.key_fields = list(key_fields)
        self.value_fields = list(value_fields)
        self.file_format = file_format
        self.options = options
        self.target_file_size = target_file_size
        self.schema_id = schema_id
        self.key_stats_modes = list(key_stats_modes)
        self.value_stats_modes = list(value_stats_modes)
        self.level = level
        self.file_source = file_source
        self.file_prefix = file_prefix
        self.file_schema = key_value_arrow_schema(self.key_fields, self.value_fields, thin_mode=False)
        self._pending: pa.Table | None = None  # fewer than ROLL_CHECK_ROWS rows, file layout
        self._current: _OpenFile | None = None
        self._files: list[DataFileMeta] = []
        self._written: list[str] = []
        #: the data-file index over the value columns (Java's KeyValueDataFileWriter); changelog
        #: files get none (Java's KeyValueFileWriterFactory)
        self._index_options = file_index_options_of(options)
        self._changelog_prefix = options.get("changelog-file.prefix", "changelog-")

    @property
    def written_paths(self) -> list[str]:
        """Every file this writer created (closed or not); :meth:`abort` deletes them."""
        return list(self._written)

    # --- writing ----------------------------------------------------------------------
    def write(self, merged: pa.Table) -> None:
        """Append merged rows; their keys follow (are not below) the keys already written."""
        if merged.num_rows == 0:
            return
        table = self._file_table(merged)
        if self._pending is not None:
            need = ROLL_CHECK_ROWS - self._pending.num_rows
            head = canonical_layout(pa.concat_tables([self._pending, table.slice(0, need)]))
            self._pending = None
            table = table.slice(need)
            if head.num_rows < ROLL_CHECK_ROWS:
                self._pending = head
                return
            self._write_batch(head.to_batches()[0])
            if table.num_rows == 0:
                return
        table = canonical_layout(table)
        full = table.num_rows - table.num_rows % ROLL_CHECK_ROWS
        if full:
            for batch in table.slice(0, full).to_batches(max_chunksize=ROLL_CHECK_ROWS):
                self._write_batch(batch)
        if full < table.num_rows:
            self._pending = table.slice(full)

    def _file_table(self, merged: pa.Table) -> pa.Table:
        cols: list[pa.Array | pa.ChunkedArray] = [merged.column(f.name) for f in self.key_fields]
        cols += [merged.column(SEQUENCE_NUMBER), merged.column(VALUE_KIND).cast(pa.int8())]
        cols += [merged.column(f.name) for f in self.value_fields]
        return pa.Table.from_arrays(cols, schema=self.file_schema)

    def _write_batch(self, batch: pa.RecordBatch) -> None:
        current = self._current if self._current is not None else self._open()
        current.writer.write(batch)
        nkeys = len(self.key_fields)
        keys = pa.RecordBatch.from_arrays(batch.columns[:nkeys], names=[f.name for f in self.key_fields])
        current.key_stats.collect(keys)
        current.value_stats.collect(batch)
        if current.index is not None:
            current.index.write(batch)
        mm = pc.min_max(batch.column(SEQUENCE_NUMBER))
        current.min_seq = min(current.min_seq, int(mm["min"].as_py()))
        current.max_seq = max(current.max_seq, int(mm["max"].as_py()))
        current.retracts += int(pc.sum(pc.is_in(batch.column(VALUE_KIND), RETRACT_KINDS)).as_py() or 0)
        current.rows += batch.num_rows
        if current.first is None:
            current.first = keys.slice(0, 1)
        current.last = keys.slice(keys.num_rows - 1, 1)
        if current.writer.bytes_written() >= self.target_file_size:
            self._roll()

    def _open(self) -> _OpenFile:
        name = self.paths.new_data_file_name(extension=self.file_format, prefix=self.file_prefix)
        path = self.paths.data_file_path(self.partition_path, self.bucket, name)
        self._written.append(path)
        writer = open_writer(self.file_io, path, self.file_schema, self.file_format, self.options)
        changelog = self.file_prefix is not None and self.file_prefix == self._changelog_prefix
        self._current = _OpenFile(
            writer,
            name,
            SimpleStatsCollector(self.key_fields, self.key_stats_modes),
            SimpleStatsCollector(self.value_fields, self.value_stats_modes),
            path,
            None if changelog else DataFileIndexWriter.create(self.value_fields, self._index_options),
        )
        return self._current

    def _roll(self) -> None:
        current, self._current = self._current, None
        if current is None:
            return
        size = current.writer.close()
        meta = self._meta(current, size)
        if current.index is not None:
            self._written.append(current.path + INDEX_PATH_SUFFIX)  # if written: aborted with the file
            meta = current.index.finish(self.file_io, current.path).apply(meta)
        self._files.append(meta)
        logger.debug("Wrote %s (%d rows, %d bytes, level %d)", current.name, current.rows, size, self.level)

    def _meta(self, f: _OpenFile, size: int) -> DataFileMeta:
        assert f.first is not None and f.last is not None
        key_types = [k.type for k in self.key_fields]
        first = [arrow_scalar_to_internal(f.first.column(i)[0], t) for i, t in enumerate(key_types)]
        last = [arrow_scalar_to_internal(f.last.column(i)[0], t) for i, t in enumerate(key_types)]
        disabled = f.value_stats.is_disabled
        meta = DataFileMeta.new_level0(
            f.name,
            size,
            f.rows,
            value_stats=None if disabled else stats_to_simple(f.value_stats.result(), self.value_fields),
            min_sequence_number=f.min_seq,
            max_sequence_number=f.max_seq,
            schema_id=self.schema_id,
            min_key=serialize_binary_row(first, key_types),
            max_key=serialize_binary_row(last, key_types),
            key_stats=stats_to_simple(f.key_stats.result(), self.key_fields),
            delete_row_count=f.retracts,
        )
        if self.level == 0 and self.file_source == FileSource.APPEND:
            return meta
        return meta.copy(level=self.level, file_source=int(self.file_source))

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> list[DataFileMeta]:
        """Write what is pending, finish the current file and return the metas of all files
        finished since the last call, in key order."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._write_batch(pending.to_batches()[0])
        self._roll()
        files, self._files = self._files, []
        return files

    def abort(self) -> None:
        """Delete every file this writer wrote (also after :meth:`close`: none was committed)."""
        self._pending = None
        current, self._current = self._current, None
        if current is not None:
            try:
                current.writer.abort()
            except Exception:  # noqa: BLE001 - aborting anyway, the path is deleted below
                logger.debug("Aborting %s failed", current.name, exc_info=True)
        for p in self._written:
            self.file_io.delete(p)
        self._written.clear()
        self._files.clear()
