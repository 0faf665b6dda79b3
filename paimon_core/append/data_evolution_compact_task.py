"""Execute one data-evolution compaction task (Java ``DataEvolutionNormalCompactTask.doCompact``).

The task's files (whole row-id groups of one partition, contiguous, planned by
:mod:`paimon_core.append.data_evolution_compact_coordinator`) are read merged by row id, as a
table read merges them (:class:`paimon_core.operation.data_evolution_split_read.DataEvolutionSplitRead`:
every column from the newest file that wrote it), in row-id order, and written into ONE file
holding every column of the table's current schema (``write_cols`` empty, as Java leaves it when
the write type is the whole row). Deletion vectors are NOT applied: deleted rows are written too,
so the positions stay those of the row ids and the vectors move to the new file
(:mod:`paimon_core.append.data_evolution_compact_commit`). The output file:

* ``first_row_id`` = the first input range's (Java ``assignFirstRowId``): a row's ``_ROW_ID`` is
  ``first_row_id + position``, the same id it had (checked: the file holds exactly the range's
  row count);
* min/max sequence number = min/max over the inputs (Java ``assignSequenceNumber``); it holds no
  ``_SEQUENCE_NUMBER`` column, so every row of it reads the file's max sequence number, as Java's
  output does (before, a row read its range's newest file's);
* ``FileSource.COMPACT`` at level 0, in bucket 0 (unaware bucket).

This is exactly Java's output, and pypaimon 2.1.0 and pypaimon-rust 0.4.0 read it with the same
rows and row ids (``tests/interop/test_data_evolution_compaction.py``): the ``first_row_id`` form
both peers need (see :mod:`paimon_core.append.row_tracking` for the row-tracking compaction,
where Java's output is not readable by them). The result is a :class:`CommitMessage`; nothing
is committed here; on failure the file written is deleted and the error re-raised.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.append.append_compact_rewriter import new_compact_writer
from paimon_core.append.data_evolution_compact_coordinator import check_contiguous_row_range
from paimon_core.exceptions import CorruptFileError
from paimon_core.io.data_file_reader import partition_scalars
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.data_evolution_split_read import DataEvolutionSplitRead, merge_ranges_and_sort

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["UNLIMITED_FILE_SIZE", "run_data_evolution_compact_task"]

logger = logging.getLogger(__name__)

#: The output never rolls (Java's ``DYNAMIC_WRITE_OPTIONS``: ``target-file-size`` 99999 G): one file.
UNLIMITED_FILE_SIZE = 99999 * 1024**3
#: Rows per batch read from the input files.
READ_BATCH_ROWS = 65536


def run_data_evolution_compact_task(store: FileStore, partition: bytes, files: Sequence[DataFileMeta]) -> CommitMessage:
    """Merge ``files`` (one task) into one file; see the module docstring.

    Raises:
        CorruptFileError: the files leave a row-id gap, overlap without spanning the same range,
            or do not hold their ranges' rows.
        UnsupportedTableKindError: a blob or vector-store file, or a file without ``first_row_id``.
    """
    total_buckets = -1  # unaware bucket (Java: null)
    if not files:
        return CommitMessage(partition, 0, total_buckets)
    lo, hi = check_contiguous_row_range(files)
    groups = merge_ranges_and_sort(files)  # newest first in each group; refuses blob/vector files
    rows = hi - lo + 1
    if sum(g[0].row_count for g in groups) != rows:  # overlapping groups would be one group
        raise CorruptFileError(f"Data evolution compact files {[f.file_name for f in files]} do not cover rows {lo}..{hi}")
    fields = list(store.schema.fields)
    schema = store.arrow_schema
    part_fields = store.schema.partition_fields
    values = partition_scalars(part_fields, store.partition_codec.decode(partition)) if part_fields else None
    bucket_path = store.bucket_path(partition, 0)
    reader = DataEvolutionSplitRead(store, batch_size=READ_BATCH_ROWS)
    writer = new_compact_writer(
        store,
        partition,
        0,
        first_sequence_number=min(f.min_sequence_number for f in files),
        target_file_size=UNLIMITED_FILE_SIZE,
    )
    try:
        for group in groups:
            for batch in reader.read_group(bucket_path, group, fields, partition_values=values):
                writer.write(pa.Table.from_batches([pa.RecordBatch.from_arrays(batch.columns, schema=schema)]))
        after = writer.close()
    except BaseException:
        writer.abort()
        raise
    if len(after) != 1 or after[0].row_count != rows:
        part_path = store.partition_path(partition)
        for m in after:
            store.file_io.delete(m.external_path or store.paths.data_file_path(part_path, 0, m.file_name))
        raise CorruptFileError(
            f"Data evolution compaction of rows {lo}..{hi} ({rows} rows) wrote {len(after)} file(s) of "
            f"{sum(f.row_count for f in after)} rows; it should produce one file of the range's rows"
        )
    meta = after[0].copy(
        first_row_id=lo,
        min_sequence_number=min(f.min_sequence_number for f in files),
        max_sequence_number=max(f.max_sequence_number for f in files),
    )
    logger.debug(
        "Data-evolution compaction of %s: %d file(s) of rows %d..%d into %s",
        store.name,
        len(files),
        lo,
        hi,
        meta.file_name,
    )
    return CommitMessage(partition, 0, total_buckets, compact_before=tuple(files), compact_after=(meta,))
