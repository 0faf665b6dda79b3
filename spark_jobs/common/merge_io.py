"""The Spark side of ``merge_into``: read a pinned snapshot with row identities, write changes.

* :func:`read_target`: the table's rows at one snapshot as a DataFrame, read by paimon_core on the
  executors (one Spark task per group of splits), with two extra columns: :data:`FILE_COLUMN`, the
  index of the split the row came from, and :data:`POS_COLUMN`, its position in that split's
  read. Append tables get one split per data file, so ``(file, pos)`` names a row of a file: what
  the copy-on-write rewrite needs.
* :func:`write_changes`: write a DataFrame into new files on the executors (``mapInArrow``, one
  :class:`~paimon_core.table.table_write.TableWrite` per task, rows of primary-key tables with
  their row kind from :data:`KIND_COLUMN` and routed by bucket), returning every task's commit
  messages to the driver, which commits them once (:func:`commit_changes`).
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

from paimon_core.exceptions import CommitStateUnknownError
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.results import CommitResult
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.source import DataSplit
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_commit import TableCommit
from spark_jobs.datasource.paimon_source import PaimonCommitMessage, check_routing
from spark_jobs.datasource.routing import distribute_for_table, needs_routing
from spark_jobs.datasource.task_write import BUCKET_COLUMN
from spark_jobs.datasource.types import spark_arrow_schema, spark_schema, to_spark_batch

__all__ = [
    "FILE_COLUMN",
    "KIND_COLUMN",
    "POS_COLUMN",
    "TargetRead",
    "commit_changes",
    "deleted_file_messages",
    "read_target",
    "write_changes",
]

logger = logging.getLogger(__name__)

#: Extra columns of the target read: split index and row position in the split.
FILE_COLUMN = "__merge_file"
POS_COLUMN = "__merge_pos"
#: Row kind of a written row (int8: 0 +I, 2 +U, 3 -D), primary-key tables only.
KIND_COLUMN = "__merge_kind"
#: Rows a write task hands to paimon_core at once.
WRITE_BATCH_ROWS = 65_536


@dataclass(frozen=True)
class TargetRead:
    """The pinned read of the target: its snapshot, splits and (append tables) live entries."""

    snapshot_id: int | None
    splits: tuple[DataSplit, ...]
    #: append tables: the live entry of ``splits[i]``'s single file (for the DELETE of a rewrite)
    entries: tuple[ManifestEntry, ...] = ()


def plan_target(table: FileStoreTable) -> TargetRead:
    """Pin the latest snapshot: primary-key tables read by the scan's (merging) splits, append
    tables one split per data file."""
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return TargetRead(None, ())
    if table.schema.primary_keys:
        pinned = table.copy({"scan.snapshot-id": str(snapshot.id)})
        return TargetRead(snapshot.id, tuple(pinned.new_read_builder().new_scan().plan().splits))
    entries = tuple(table.new_file_store_scan().live_entries(snapshot))
    splits = tuple(
        DataSplit(snapshot.id, e.partition, e.bucket, table.bucket_path(e.partition, e.bucket), (e.file,))
        for e in entries
    )
    return TargetRead(snapshot.id, splits, entries)


def target_schema(table: FileStoreTable) -> StructType:
    """The table's Spark schema plus :data:`FILE_COLUMN` and :data:`POS_COLUMN`."""
    base = spark_schema(table.schema.fields)
    return StructType(
        [*base.fields, StructField(FILE_COLUMN, IntegerType(), False), StructField(POS_COLUMN, LongType(), False)]
    )


def read_target(spark: SparkSession, table: FileStoreTable, read: TargetRead) -> DataFrame:
    """The rows of ``read`` as a DataFrame (see the module doc); empty for an empty table."""
    schema = target_schema(table)
    splits = read.splits
    arrow_target = spark_arrow_schema(schema)
    table_target = pa.schema(list(arrow_target)[:-2])

    def read_splits(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader = table.new_read_builder().new_read()
        for ids in batches:
            for idx in ids.column(0).to_pylist():
                pos = 0
                for batch in reader.to_batches([splits[idx]]):
                    out = to_spark_batch(batch, table_target)
                    n = out.num_rows
                    files = pa.array(np.full(n, idx, dtype=np.int32))
                    positions = pa.array(np.arange(pos, pos + n, dtype=np.int64))
                    pos += n
                    yield pa.RecordBatch.from_arrays([*out.columns, files, positions], schema=arrow_target)

    from spark_jobs.common.ledger import worker_cpu

    slices = max(1, min(len(splits), spark.sparkContext.defaultParallelism * 4))
    ids = spark.range(0, len(splits), 1, numPartitions=slices)
    return ids.mapInArrow(worker_cpu(spark).partitions(read_splits), schema)


def write_changes(df: DataFrame, table: FileStoreTable, *, with_kind: bool) -> list[PaimonCommitMessage]:
    """Write ``df`` (the table's columns, plus :data:`KIND_COLUMN` when ``with_kind``) into new
    files; returns each task's commit messages. A failing task deletes what it wrote."""
    columns = [f.name for f in table.schema.fields]
    routed = df
    if table.schema.primary_keys:
        if needs_routing(table):
            routed = distribute_for_table(df, table)
        else:  # dynamic-bucket primary keys: one writer, so sequence numbers never collide
            routed = df.coalesce(1)
    names = routed.columns
    bucket_column = BUCKET_COLUMN if BUCKET_COLUMN in names and BUCKET_COLUMN not in columns else None
    kind_column = KIND_COLUMN if with_kind else None
    keep = [*columns, *([kind_column] if kind_column else []), *([bucket_column] if bucket_column else [])]
    routed = routed.select(*[f"`{c}`" for c in keep])
    task = _writer_task(table, kind_column, bucket_column)
    out_schema = StructType([StructField("task", IntegerType(), False), StructField("messages", BinaryType(), False)])
    from spark_jobs.common.ledger import worker_cpu

    rows = routed.mapInArrow(worker_cpu(routed.sparkSession).partitions(task), out_schema).collect()
    return [PaimonCommitMessage(tuple(pickle.loads(r["messages"])), r["task"]) for r in rows]


def _writer_task(
    table: FileStoreTable, kind_column: str | None, bucket_column: str | None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task_id = ctx.partitionId() if ctx is not None else -1
        tw = table.new_batch_write_builder().new_write()
        try:
            pending: list[pa.RecordBatch] = []
            rows = 0
            for batch in batches:
                if batch.num_rows:
                    pending.append(batch)
                    rows += batch.num_rows
                if rows >= WRITE_BATCH_ROWS:
                    _write_group(tw, pending, kind_column, bucket_column)
                    pending, rows = [], 0
            if pending:
                _write_group(tw, pending, kind_column, bucket_column)
            messages = tw.prepare_commit()
        except BaseException:
            tw.abort()
            raise
        finally:
            tw.close()
        payload = pickle.dumps(messages)
        yield pa.RecordBatch.from_arrays(
            [pa.array([task_id], pa.int32()), pa.array([payload], pa.binary())], names=["task", "messages"]
        )

    return write


def _write_group(tw: object, batches: list[pa.RecordBatch], kind_column: str | None, bucket_column: str | None) -> None:
    data = pa.Table.from_batches(batches)
    kinds = data.column(kind_column).combine_chunks().cast(pa.int8()) if kind_column else None
    buckets = data.column(bucket_column).combine_chunks() if bucket_column else None
    drop = [c for c in (kind_column, bucket_column) if c]
    if drop:
        data = data.drop_columns(drop)
    tw.write_arrow(data, row_kinds=kinds, buckets=buckets)  # type: ignore[attr-defined]


def deleted_file_messages(table: FileStoreTable, entries: Sequence[ManifestEntry]) -> list[CommitMessage]:
    """Commit messages that remove ``entries``' files (one per partition and bucket)."""
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault((e.partition, e.bucket), []).append(e)
    return [
        CommitMessage(partition, bucket, es[0].total_buckets, deleted_files=tuple(e.file for e in es))
        for (partition, bucket), es in groups.items()
    ]


def commit_changes(
    table: FileStoreTable,
    written: Sequence[PaimonCommitMessage],
    *,
    removed: Sequence[CommitMessage] = (),
    commit_user: str,
    commit_identifier: int,
) -> CommitResult:
    """One commit of the written files (and the removal of ``removed``' files) through the one
    commit path (:class:`~paimon_core.table.table_commit.TableCommit`: the identity check, the
    postpone fixed-bucket step, precommit-compact, a landed APPEND kept when a writer's inline
    compaction loses to a dedicated compaction, post-commit maintenance). If it fails (a
    concurrent commit removed a file this one removes: :class:`CommitConflictError`), the written
    files are deleted unless the commit landed after all, and the error raised: the table is as
    before."""
    check_routing(
        table, written, scope=" of merge_into", remedy="This is a bug: merge_into routes primary-key rows by bucket."
    )
    new = [m for w in written for m in w.messages]
    committer = TableCommit(table, commit_user, check_committed=True)
    try:
        return committer.commit([*new, *removed], commit_identifier)
    except CommitStateUnknownError:
        raise  # the snapshot may reference the files: keep them
    except BaseException as e:
        if committer.abort_unless_landed(new, commit_identifier):
            logger.warning("merge_into on %s: commit failed (%s); deleted the %d new message(s)' files", table.name, e, len(new))
        raise
