"""One Spark write task's rows into paimon_core (batch and streaming writers share it).

Spark hands a Python write task small Arrow batches; they are grouped into calls of about
``write.batch-rows`` rows to :meth:`~paimon_core.table.table_write.TableWrite.write_arrow`.
Primary-key tables get each group as one Table without copying (the merge-tree writer buffers
and combines rows itself); append tables one concatenated batch (their files are cut from the
batches as given). A DataFrame routed by :func:`.routing.distribute_for_table` carries each
row's bucket in :data:`BUCKET_COLUMN`: it is passed as ``buckets`` (rows are not hashed a
second time; paimon_core checks it) and never written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable
    from paimon_core.table.table_write import TableWrite

__all__ = ["BUCKET_COLUMN", "routed_bucket_column", "write_batches", "write_task"]

#: Column the routing adds with each row's bucket (INT); the writers use it and drop it.
BUCKET_COLUMN = "__paimon_bucket"


def routed_bucket_column(column_names: Sequence[str], table: FileStoreTable) -> str | None:
    """:data:`BUCKET_COLUMN` if the written DataFrame carries it (added by the routing, which
    computed each row's bucket) and it is not a table column; else None."""
    if BUCKET_COLUMN in column_names and BUCKET_COLUMN not in table.schema.field_names:
        return BUCKET_COLUMN
    return None


def write_batches(tw: TableWrite, batches: list[pa.RecordBatch], bucket_column: str | None) -> None:
    """Hand one group of a task's Arrow batches to paimon_core (see the module docstring)."""
    data: pa.Table | pa.RecordBatch
    if tw.has_pk:
        data = pa.Table.from_batches(batches)
    else:
        data = batches[0] if len(batches) == 1 else pa.concat_batches(batches)
    if bucket_column is None:
        tw.write_arrow(data)
        return
    buckets = data.column(bucket_column)
    tw.write_arrow(data.drop_columns([bucket_column]), buckets=buckets)


def write_task(
    tw: TableWrite, batches: Iterator[pa.RecordBatch], *, batch_rows: int, bucket_column: str | None
) -> int:
    """Write a task's batches in groups of at least ``batch_rows`` rows; return the row count."""
    rows = 0
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        pending_rows += batch.num_rows
        if pending_rows >= batch_rows:
            write_batches(tw, pending, bucket_column)
            rows += pending_rows
            pending, pending_rows = [], 0
    if pending:
        write_batches(tw, pending, bucket_column)
        rows += pending_rows
    return rows
