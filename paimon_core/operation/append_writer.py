"""Rolling data-file writer for one (partition, bucket) of an append table.

Rows go into the current file until it reaches ``target-file-size``; then a new
file starts. Each finished file becomes a :class:`DataFileMeta` with value stats
(per ``metadata.stats-mode``) and a run of sequence numbers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pyarrow as pa

from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.fileindex.data_file_index_writer import (
    INDEX_PATH_SUFFIX,
    DataFileIndexWriter,
    file_index_options_of,
)
from paimon_core.format.file_format import FormatWriter, open_writer
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta, FileSource, SimpleStats
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import ColumnStats, SimpleStatsCollector, StatsMode

logger = logging.getLogger(__name__)

#: The file size is checked for rolling after every slice of this many rows.
ROLL_CHECK_ROWS = 16384


def stats_to_simple(stats: Sequence[ColumnStats], fields: Sequence[DataField]) -> SimpleStats:
    """Column stats (internal values) to the manifest's BinaryRow form."""
    if all(s.null_count is None and s.min is None and s.max is None for s in stats):
        return SimpleStats(EMPTY_ROW, EMPTY_ROW, ())
    types = [f.type for f in fields]
    return SimpleStats(
        serialize_binary_row([s.min for s in stats], types),
        serialize_binary_row([s.max for s in stats], types),
        tuple(s.null_count for s in stats),
    )


class RollingAppendWriter:
    """Writes one (partition, bucket) of an append table into rolling files."""

    def __init__(
        self,
        *,
        file_io: FileIO,
        paths: PathFactory,
        partition_path: str,
        bucket: int,
        fields: Sequence[DataField],
        arrow_schema: pa.Schema,
        file_format: str,
        options: dict[str, str],
        target_file_size: int,
        stats_modes: Sequence[StatsMode],
        schema_id: int,
        first_sequence_number: int = 0,
        file_source: FileSource = FileSource.APPEND,
    ) -> None:
        """``file_source``: what the files are marked as (COMPACT for a compaction's rewrite)."""
        self.file_io = file_io
        self.paths = paths
        self.partition_path = partition_path
        self.bucket = bucket
        self.fields = list(fields)
        self.arrow_schema = arrow_schema
        self.file_format = file_format
        self.options = options
        self.target_file_size = target_file_size
        self.stats_modes = list(stats_modes)
        self.schema_id = schema_id
        self.next_seq = first_sequence_number
        self.file_source = file_source
        self._writer: FormatWriter | None = None
        self._file_name = ""
        self._path = ""
        #: the data-file index (``file-index.*``), written with each file (Java's DataFileIndexWriter)
        self._index_options = file_index_options_of(options)
        self._index: DataFileIndexWriter | None = None
        self._stats: SimpleStatsCollector | None = None
        self._rows = 0
        self._first_seq = 0
        self.files: list[DataFileMeta] = []
        self.written_paths: list[str] = []

    def write(self, data: pa.Table) -> None:
        if data.num_rows == 0:
            return
        for batch in data.to_batches(max_chunksize=ROLL_CHECK_ROWS):
            if self._writer is None:
                self._open()
            assert self._writer is not None and self._stats is not None
            self._writer.write(batch)
            self._stats.collect(batch)
            if self._index is not None:
                self._index.write(batch)
            self._rows += batch.num_rows
            if self._writer.bytes_written() >= self.target_file_size:
                self._close_current()

    def _open(self) -> None:
        self._file_name = self.paths.new_data_file_name(extension=self.file_format)
        path = self._path = self.paths.data_file_path(self.partition_path, self.bucket, self._file_name)
        self.written_paths.append(path)
        self._writer = open_writer(self.file_io, path, self.arrow_schema, self.file_format, self.options)
        self._index = DataFileIndexWriter.create(self.fields, self._index_options)
        self._stats = SimpleStatsCollector(self.fields, self.stats_modes)
        self._rows = 0
        self._first_seq = self.next_seq

    def _close_current(self) -> None:
        if self._writer is None:
            return
        assert self._stats is not None
        size = self._writer.close()
        disabled = self._stats.is_disabled
        rows = self._rows
        self.next_seq = self._first_seq + rows
        meta = DataFileMeta.new_level0(
            self._file_name,
            size,
            rows,
            value_stats=None if disabled else stats_to_simple(self._stats.result(), self.fields),
            min_sequence_number=self._first_seq,
            max_sequence_number=self._first_seq + rows - 1,
            schema_id=self.schema_id,
        )
        if self.file_source != FileSource.APPEND:
            meta = meta.copy(file_source=int(self.file_source))
        if self._index is not None:
            self.written_paths.append(self._path + INDEX_PATH_SUFFIX)  # if written: aborted with the file
            meta = self._index.finish(self.file_io, self._path).apply(meta)
            self._index = None
        self.files.append(meta)
        self._writer = None
        self._stats = None

    def close(self) -> list[DataFileMeta]:
        """Finish the current file; return every file written since the last call."""
        self._close_current()
        files, self.files = self.files, []
        # Handed to the committer: from now on they are the commit's (or orphan clean's) to remove.
        self.written_paths.clear()
        return files

    def abort(self) -> None:
        """Delete every file this writer wrote (none of them was committed)."""
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - aborting anyway
                pass
            self._writer = None
        for p in self.written_paths:
            self.file_io.delete(p)
        self.written_paths.clear()
        self.files.clear()

