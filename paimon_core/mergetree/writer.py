"""MergeTreeWriter: the write side of one (partition, bucket) of a primary-key table.

Rows get sequence numbers in arrival order (continuing the bucket's history),
collect in a buffer bounded by ``write-buffer-size``, and each flush sorts the
buffer by key (then ``sequence.field``, then sequence number), folds rows of the
same key with the table's merge function, and writes one sorted run of level-0
files, rolled at ``target-file-size``
(:class:`~paimon_core.mergetree.kv_file_writer.RollingKeyValueFileWriter`, shared with the
compaction rewriter). Everything is vectorized over Arrow.

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

from paimon_core.format.key_value import SEQUENCE_NUMBER, VALUE_KIND, key_value_arrow_schema
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.mergetree.kv_file_writer import RollingKeyValueFileWriter, canonical_layout
from paimon_core.mergetree.merge_function import MergeFunction
from paimon_core.mergetree.segments import in_key_order
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import StatsMode

__all__ = ["MergeTreeWriter", "canonical_layout", "sort_keys_for"]

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
        changelog_prefix: str | None = None,
    ) -> None:
        """``changelog_prefix``: set for ``changelog-producer = input``: every flush also writes the
        buffered rows as they came (sorted, unmerged, with their row kinds) into changelog files
        with this name prefix, as Java's ``MergeTreeWriter.flushWriteBuffer`` does."""
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
        self.changelog_files: list[DataFileMeta] = []
        self.changelog_prefix = changelog_prefix
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
        if self.changelog_prefix is not None:
            self.changelog_files += self._write_files(data, prefix=self.changelog_prefix)
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
    def new_file_writer(
        self, *, level: int = 0, file_source: FileSource = FileSource.APPEND, file_prefix: str | None = None
    ) -> RollingKeyValueFileWriter:
        """A rolling writer of this bucket's data files (level-0 flushes; compaction output)."""
        return RollingKeyValueFileWriter(
            file_io=self.file_io,
            paths=self.paths,
            partition_path=self.partition_path,
            bucket=self.bucket,
            key_fields=self.key_fields,
            value_fields=self.value_fields,
            file_format=self.file_format,
            options=self.options,
            target_file_size=self.target_file_size,
            schema_id=self.schema_id,
            key_stats_modes=self.key_stats_modes,
            value_stats_modes=self.value_stats_modes,
            level=level,
            file_source=file_source,
            file_prefix=file_prefix,
        )

    def _write_run(self, merged: pa.Table) -> None:
        """Write one sorted run of level-0 files."""
        self.files.extend(self._write_files(merged))

    def _write_files(self, rows: pa.Table, *, prefix: str | None = None) -> list[DataFileMeta]:
        writer = self.new_file_writer(file_prefix=prefix)
        try:
            writer.write(rows)
            files = writer.close()
        except BaseException:
            writer.abort()
            raise
        self.written_paths.extend(writer.written_paths)
        return files

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> list[DataFileMeta]:
        """Flush and hand over every file written since the last call."""
        self.flush()
        files, self.files = self.files, []
        self.written_paths.clear()
        return files

    def take_changelog_files(self) -> list[DataFileMeta]:
        """The changelog files written since the last call (``changelog-producer = input``);
        call after :meth:`close`."""
        files, self.changelog_files = self.changelog_files, []
        return files

    def abort(self) -> None:
        self._buffer.clear()
        self.changelog_files.clear()
        for p in self.written_paths:
            self.file_io.delete(p)
        self.written_paths.clear()
        self.files.clear()

