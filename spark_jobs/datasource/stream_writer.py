"""Streaming write into a Paimon table: ``df.writeStream.format("paimon")`` (Paimon Spark's
``PaimonSink``, on PySpark's ``DataSourceStreamArrowWriter``).

::

    (df.writeStream.format("paimon").option("warehouse", W)
       .option("checkpointLocation", C).start("db.t"))

**Exactly once.** Every micro-batch commits at most one snapshot, with commit identifier = the
micro-batch id and a commit user that is stable for the checkpoint: ``spark-stream-<query id>``.
Spark stores the query id in ``<checkpoint>/metadata`` and reuses it on every restart from that
checkpoint (it is handed to each write task as the ``sql.streaming.queryId`` local property;
tasks put it in their commit message). That is exactly "one user per checkpoint location",
whatever spelling of the path is used (or ``spark.sql.streaming.checkpointLocation``), with
nothing extra stored in the table. A replayed batch (Spark re-runs the last batch after a crash
between our commit and its commit log, or calls ``commit`` again) finds (user, batch id) already
in the snapshot history (paimon_core's ``is_committed``), commits nothing and deletes the files
the replay wrote. A new checkpoint means a new query id, so its batch ids never collide with an
old query's. ``.option("commit-user", U)`` overrides the user (e.g. a pipeline name kept across
checkpoints: then batch ids must keep increasing).

``outputMode("append")`` appends; ``outputMode("complete")`` overwrites the whole table each batch
(Paimon Spark's ``Overwrite(AlwaysTrue)``); ``update`` is refused by Spark.

**Primary-key (fixed-bucket) tables** need every (partition, bucket) written by one task per
commit, and a stream sink cannot shuffle its input. A commit where two tasks wrote the same
bucket is refused (its files are deleted by ``abort``) with an error that says what to do:
route in ``foreachBatch`` with :func:`foreach_batch_writer`, which runs
:func:`~spark_jobs.datasource.write.write_table` (routing + an idempotent commit with the batch
id) on each micro-batch. A stream whose micro-batches have a single partition works directly.
Routed micro-batches carry each row's bucket (computed once, for the shuffle) into the writer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError
from paimon_core.operation.commit.committer import OverwriteSpec
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import check_column_names
from paimon_core.table.table_commit import TableCommit, delete_uncommitted
from spark_jobs.datasource.options import SourceOptions
from spark_jobs.datasource.paimon_source import PaimonCommitMessage, check_routing, load_table
from spark_jobs.datasource.task_write import routed_bucket_column, write_task

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["QUERY_ID_PROPERTY", "PaimonStreamCommitMessage", "PaimonStreamWriter", "foreach_batch_writer"]

logger = logging.getLogger(__name__)

#: Local property Spark sets on every task of a streaming query (StreamExecution.QUERY_ID_KEY).
QUERY_ID_PROPERTY = "sql.streaming.queryId"
COMMIT_USER_PREFIX = "spark-stream-"


@dataclass(frozen=True)
class PaimonStreamCommitMessage(PaimonCommitMessage):
    """A write task's files plus the streaming query id it ran under."""

    query_id: str | None = None


def _task_context() -> tuple[int, int, str | None]:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return -1, 0, None
    return ctx.partitionId(), ctx.attemptNumber(), ctx.getLocalProperty(QUERY_ID_PROPERTY)


class PaimonStreamWriter(DataSourceStreamArrowWriter):
    """Writes each micro-batch's rows into new files; one idempotent commit per batch id."""

    def __init__(self, options: SourceOptions, schema: StructType, overwrite: bool) -> None:
        if options.commit_identifier is not None:
            raise InvalidArgumentError(
                "Streaming writes commit with the micro-batch id; drop 'commit-identifier'"
            )
        if options.overwrite_partition is not None:
            raise InvalidArgumentError("'overwrite-partition' is for batch writes; streaming writes append")
        self.options = options
        self.table = load_table(options)
        self.schema = schema
        self.overwrite = overwrite
        names = [f.name for f in schema.fields]
        self.bucket_column = routed_bucket_column(names, self.table)
        check_column_names(
            [n for n in names if n != self.bucket_column],
            self.table.schema.field_names,
            what="stream",
            table=self.table.name,
        )

    # --- executors ------------------------------------------------------------------------
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonStreamCommitMessage:
        """Write this task's rows into new files; return them with the query id."""
        task_id, attempt, query_id = _task_context()
        tw = self.table.new_batch_write_builder().new_write()
        try:
            rows = write_task(
                tw, iterator, batch_rows=self.options.write_batch_rows, bucket_column=self.bucket_column
            )
            messages = tw.prepare_commit()
        except BaseException:
            tw.abort()
            raise
        finally:
            tw.close()
        return PaimonStreamCommitMessage(tuple(messages), task_id, attempt, rows, query_id=query_id)

    # --- the query's sink process -------------------------------------------------------------
    def commit_user(self, messages: Sequence[PaimonStreamCommitMessage]) -> str | None:
        """``commit-user`` if given, else ``spark-stream-<query id>`` (None: no task ran)."""
        if self.options.commit_user is not None:
            return self.options.commit_user
        ids = {m.query_id for m in messages if m.query_id}
        if len(ids) > 1:
            raise InvalidArgumentError(
                f"Write tasks of one micro-batch report different query ids {sorted(ids)}"
            )
        if not ids:
            if any(m.messages for m in messages):
                raise InvalidArgumentError(
                    "Cannot tell which streaming query wrote these files (no sql.streaming.queryId); "
                    "set .option('commit-user', ...)"
                )
            return None
        return COMMIT_USER_PREFIX + ids.pop()

    def check_routing(self, messages: Sequence[PaimonCommitMessage]) -> None:
        check_routing(
            self.table,
            messages,
            scope=" of one micro-batch",
            remedy="A stream sink cannot route rows; use writeStream.foreachBatch("
            "spark_jobs.datasource.stream_writer.foreach_batch_writer(...)) (routes each micro-batch, "
            "commits it idempotently with the batch id).",
        )

    def _delete_files(self, messages: Sequence[CommitMessage]) -> None:
        delete_uncommitted(self.table, messages)

    def _table_commit(self, user: str) -> TableCommit:
        """The query's commit (the one commit path: precommit-compact, a landed APPEND kept when its
        inline compaction loses to a dedicated compaction, post-commit maintenance), kept across
        micro-batches on the driver so that ``partition.expiration-check-interval`` runs from the
        first commit (Java's sink). A stream's commit: postpone-bucket rows stay staged."""
        commits: dict[str, TableCommit] = self.__dict__.setdefault("_commits", {})
        commit = commits.get(user)
        if commit is None:
            overwrite = OverwriteSpec(None, dynamic=False) if self.overwrite else None
            commit = TableCommit(self.table, user, overwrite=overwrite, check_committed=True, batch=False)
            commits[user] = commit
        return commit

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Commit micro-batch ``batchId`` once: a replay commits nothing and drops its files."""
        ours = [m for m in messages if isinstance(m, PaimonStreamCommitMessage)]
        user = self.commit_user(ours)
        flat = [cm for m in ours for cm in m.messages]
        if user is None:
            if self.overwrite:
                logger.warning(
                    "paimon %s: complete-mode micro-batch %d ran no write task; table left as is",
                    self.table.name,
                    batchId,
                )
            return
        self.check_routing(ours)
        result = self._table_commit(user).commit(flat, batchId)
        if result.already_committed:
            self._delete_files(flat)
            logger.warning(
                "paimon %s: micro-batch %d of %s was already committed; dropped the %d file(s) of the replay",
                self.table.name,
                batchId,
                user,
                sum(len(m.new_files) for m in flat),
            )
            return
        logger.info(
            "paimon %s: micro-batch %d committed as snapshot %s by %s: %d file(s), %+d row(s)",
            self.table.name,
            batchId,
            result.snapshot_id,
            user,
            result.added_files,
            result.added_rows - result.deleted_rows,
        )

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Delete the files of the messages received, unless the batch was committed after all."""
        ours = [m for m in messages if isinstance(m, PaimonStreamCommitMessage)]
        flat = [cm for m in ours for cm in m.messages]
        try:
            user = self.commit_user(ours)
            if user is not None and self._table_commit(user).is_committed(batchId):
                logger.warning(
                    "paimon %s: abort of micro-batch %d after it committed; keeping files",
                    self.table.name,
                    batchId,
                )
                return
        except (InvalidArgumentError, CommitStateUnknownError):
            return  # cannot tell: keep the files (orphans for orphan-file cleanup)
        self._delete_files(flat)
        logger.warning(
            "paimon %s: micro-batch %d aborted; deleted %d file(s)",
            self.table.name,
            batchId,
            sum(len(m.new_files) for m in flat),
        )


def foreach_batch_writer(
    warehouse: str,
    table: str,
    *,
    commit_user: str | None = None,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function that routes each micro-batch for ``table`` and commits it with
    (commit user, batch id), exactly once per checkpoint. The commit user defaults to the sink's
    ``spark-stream-<query id>`` (the query id is a local property of the thread Spark runs the
    batch function on); pass ``commit_user`` to pin another stable name::

        df.writeStream.foreachBatch(foreach_batch_writer(W, "db.pk")).option("checkpointLocation", C).start()
    """
    from spark_jobs.datasource.write import write_table

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        user = commit_user
        if user is None:
            query_id = batch.sparkSession.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
            if not query_id:
                raise InvalidArgumentError("Not inside a streaming query's foreachBatch: pass commit_user")
            user = COMMIT_USER_PREFIX + query_id
        write_table(
            batch,
            warehouse,
            table,
            commit_user=user,
            commit_identifier=batch_id,
            options=options,
            storage_options=storage_options,
        )

    return write_batch
