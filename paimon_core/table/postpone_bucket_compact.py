"""Compaction of postpone-bucket tables (``bucket = -2``): it assigns the real buckets.

Writers of a postpone-bucket table put rows into ``bucket-postpone`` (Java's
``PostponeBucketFileStoreWrite``: files in arrival order, sequence numbers that restart per writer);
batch reads skip them (``AbstractBatchTableScan.onlyReadRealBuckets``) until this compaction has
moved them into real buckets. As Java's ``CompactAction.buildForPostponeBucketCompaction`` and
Spark's ``SparkPostponeCompactProcedure``, planned on the latest snapshot ``S``:

* per partition the bucket count (``PostponeUtils.createPostponeBucketNumResolver``): the count
  of the partition's real buckets if it has any; else ``postpone.default-bucket-num``; else an
  estimate, ``ceil(postpone rows / postpone.target-row-num-per-bucket)`` when that is set, or
  ``ceil(postpone file bytes / postpone.target-size-per-bucket)`` (default 1 gb), at least 1;
* the partition's postpone files are replayed in creation-time order (a stable sort of the scan
  order, ``PostponeBucketCompactSplitSource``), each row with its row kind, into the table's
  own merge-tree writer with that bucket count (``PostponeUtils.tableForPostponeRewrite``:
  ``bucket = N``, ``write-only = false``, ``commit.strict-mode.last-safe-snapshot = S``), which
  hashes each row to its bucket with Paimon's bucket function, continues the bucket's sequence
  numbers (so rows from ``bucket-postpone`` win over the rows already in the bucket), merges and
  sorts them into level-0 files and compacts the bucket as Java's writer does
  (``PostponeBucketCompactOperator``: ``compact(partition, bucket, false)``); real buckets of the
  partition with level-0 files and no new rows are compacted the same way
  (``PostponeUtils.getLevel0Buckets``);
* what was written becomes a compaction result (``BucketFiles``: new files are compact-after,
  files a compaction consumed again are dropped), the postpone files are compact-before
  (``RemovePostponeBucketFilesOperator``), and all of it is ONE COMPACT commit through the
  table's committer, in strict mode from ``S``: a COMPACT or OVERWRITE of the same partitions by
  another user after ``S`` (another postpone compaction, a rescale) fails it, as does a file it
  deletes being gone already; then every file it wrote is deleted and the table is unchanged.

Work is planned per partition (:class:`PostponePartitionTask`, picklable) and run by an
executor: threads locally (one partition each, :func:`run_postpone_partition`); on Spark
(``spark_jobs compact``) map tasks route each postpone file's rows to their buckets
(:func:`route_postpone_file`) and reduce tasks replay and compact one bucket each
(:func:`run_postpone_bucket`), as Java's Spark procedure shuffles by (partition, bucket). The
commit happens once, on the driver. As Java, the compaction takes no ``partitions``/``where`` and
runs in batch only. ``postpone.merge-on-read`` reads (:mod:`paimon_core.table.table_scan`) and
fixed-bucket batch writes (:mod:`paimon_core.table.fixed_bucket_commit`) share the bucket
numbers (:mod:`paimon_core.postpone.postpone_utils`) and the replay.

Table-level (issue 26): the replay writes through the table's own writer
(:class:`~paimon_core.table.table_write.TableWrite` of a handle with ``bucket = N``), so this job
takes the table; the dedicated compaction below the table
(:class:`~paimon_core.operation.compact.table_compact.TableCompact`) refuses postpone tables and
``table.maintenance.compact()`` and ``spark_jobs compact`` run this instead.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError
from paimon_core.format.key_value import VALUE_KIND
from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.operation.commit_maintenance import maintain_after_commit
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.table_compact import CompactResult, delete_written
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.postpone.postpone_utils import (
    STRICT_MODE_LAST_SAFE_SNAPSHOT,
    check_postpone_compact_request,
    resolve_bucket_nums,
)
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.operation.commit.committer import OverwriteSpec
    from paimon_core.table.table import FileStoreTable
    from paimon_core.utils.clock import Clock

__all__ = [
    "PostponeBucketCompact",
    "PostponeCompactPlan",
    "PostponeExecutor",
    "PostponePartitionTask",
    "local_postpone_executor",
    "route_postpone_file",
    "run_postpone_bucket",
    "run_postpone_partition",
    "table_for_postpone_rewrite",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PostponePartitionTask:
    """The work of one partition: replay ``files`` (postpone files, in replay order) into
    ``num_buckets`` real buckets, and compact ``level0_buckets`` (real buckets with level-0
    files). Plain data, shipped to a Spark executor as is."""

    partition: bytes
    partition_name: str
    num_buckets: int
    snapshot_id: int
    files: tuple[DataFileMeta, ...] = ()
    level0_buckets: tuple[int, ...] = ()
    #: the total-buckets value the postpone files were committed with (their DELETE entries keep it)
    postpone_total_buckets: int = POSTPONE_BUCKET

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition_name,
            "num_buckets": self.num_buckets,
            "postpone_files": len(self.files),
            "postpone_rows": sum(f.row_count for f in self.files),
            "postpone_bytes": sum(f.file_size for f in self.files),
            "level0_buckets": list(self.level0_buckets),
        }


@dataclass(frozen=True)
class PostponeCompactPlan:
    """The partition tasks of one postpone compaction, planned on ``snapshot_id``."""

    snapshot_id: int | None
    tasks: tuple[PostponePartitionTask, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "tasks": [t.to_dict() for t in self.tasks]}


#: Runs partition tasks; one list of messages per task, in task order.
PostponeExecutor = Callable[["FileStoreTable", Sequence[PostponePartitionTask]], list[list[CommitMessage]]]


def table_for_postpone_rewrite(
    table: FileStoreTable, num_buckets: int, snapshot_id: int, *, compact: bool = True
) -> FileStoreTable:
    """Java's ``PostponeUtils.tableForPostponeRewrite``: the table writing ``num_buckets`` real
    buckets, committing in strict mode from ``snapshot_id``; with ``compact`` its writers compact
    (``write-only = false``), else the table's ``write-only`` holds (a fixed-bucket batch write)."""
    from paimon_core.table.table import FileStoreTable

    schema = dataclasses.replace(table.schema, options={**table.schema.options, "bucket": str(num_buckets)})
    dynamic = {**table.dynamic_options, STRICT_MODE_LAST_SAFE_SNAPSHOT: str(snapshot_id)}
    if compact:
        dynamic["write-only"] = "false"
    return FileStoreTable(
        table.file_io,
        table.path,
        schema,
        name=table.name,
        dynamic_options=dynamic,
        clock=table.clock,
        commit_lock=table.commit_lock,
    )


# --- one partition (runs on an executor) -------------------------------------------------------
def _postpone_batches(table: FileStoreTable, task: PostponePartitionTask, f: DataFileMeta) -> Iterator[pa.RecordBatch]:
    """The rows of one postpone file of the task: the value columns, then ``_VALUE_KIND``."""
    from paimon_core.io.data_file_reader import DataFileReader, partition_scalars

    fields = list(table.schema.fields)
    reader = DataFileReader(table.file_io, table.schema_manager_cached, table_name=table.name, paths=table.paths)
    part_fields = table.schema.partition_fields
    part_values = partition_scalars(part_fields, table.partition_codec.decode(task.partition)) if part_fields else None
    path = table.bucket_path(task.partition, POSTPONE_BUCKET)
    for batch in reader.read(path, f, fields, with_kind=True, snapshot_id=task.snapshot_id, partition_values=part_values):
        if batch.num_rows:
            yield batch


def _replay(
    table: FileStoreTable,
    task: PostponePartitionTask,
    batches: Iterable[pa.RecordBatch],
    *,
    compact: bool,
    overwrite: OverwriteSpec | None = None,
    bucket: int | None = None,
) -> list[CommitMessage]:
    """Write ``batches`` (value columns and ``_VALUE_KIND``, in replay order) with the task's
    bucket count (``bucket``: all of them go to that bucket, already routed); the writer's
    messages. What it wrote is deleted if it fails."""
    from paimon_core.table.table_write import TableWrite

    rewrite = table_for_postpone_rewrite(table, task.num_buckets, task.snapshot_id, compact=compact)
    names = [f.name for f in table.schema.fields]
    write = TableWrite(rewrite, overwrite=overwrite)
    try:
        for batch in batches:
            rows = pa.Table.from_batches([batch.select(names)])
            given = None if bucket is None else pa.array(np.full(rows.num_rows, bucket, dtype=np.int32))
            write.write_arrow(rows, row_kinds=batch.column(VALUE_KIND), buckets=given)
        return write.prepare_commit()
    except BaseException:
        write.abort()
        raise
    finally:
        write.close()


def _finish(table: FileStoreTable, task: PostponePartitionTask, messages: list[CommitMessage], written: set[int]) -> list[CommitMessage]:
    """The writer's messages plus the level-0 markers' compaction (of the task's ``level0_buckets``
    not in ``written``), as compaction results; all deleted again if it fails."""
    rewrite = table_for_postpone_rewrite(table, task.num_buckets, task.snapshot_id)
    try:
        messages = messages + _compact_level0_buckets(rewrite, task, written)
        return [_as_compaction(table, m) for m in messages]
    except BaseException:
        delete_written(table.store, [_as_compaction(table, m, delete_consumed=False) for m in messages])
        raise


def run_postpone_partition(
    table: FileStoreTable,
    task: PostponePartitionTask,
    *,
    as_compaction: bool = True,
    overwrite: OverwriteSpec | None = None,
) -> list[CommitMessage]:
    """Replay the task's postpone files into its real buckets and compact them; the compaction
    results of the real buckets (the postpone files' removal is the driver's). What it wrote is
    deleted again if it fails. ``as_compaction=False`` (a fixed-bucket batch write): the writer's
    messages as they are (new files, its compaction), by a writer of the table's ``write-only``;
    ``overwrite``: the overwrite they feed."""
    messages: list[CommitMessage] = []
    if task.files:
        batches = (b for f in task.files for b in _postpone_batches(table, task, f))
        messages = _replay(table, task, batches, compact=as_compaction, overwrite=overwrite)
    if not as_compaction:
        return messages
    return _finish(table, task, messages, {m.bucket for m in messages})


def route_postpone_file(table: FileStoreTable, task: PostponePartitionTask, index: int) -> list[tuple[int, bytes]]:
    """The rows of the task's ``index``-th postpone file by target bucket (Paimon's bucket hash
    over the task's bucket count), each bucket's rows in file order as Arrow IPC bytes: the map
    side of the per-bucket Spark compaction."""
    from paimon_core.bucket import compute_buckets

    schema = table.schema
    bucket_fields = schema.fields_of(schema.bucket_keys)
    parts: dict[int, list[pa.RecordBatch]] = {}
    for batch in _postpone_batches(table, task, task.files[index]):
        buckets = np.asarray(
            compute_buckets(
                [batch.column(f.name) for f in bucket_fields],
                [f.type for f in bucket_fields],
                task.num_buckets,
                function=table.options.bucket_function_type,
            )
        )
        for b in np.unique(buckets).tolist():
            parts.setdefault(int(b), []).append(batch.filter(pa.array(buckets == b)))
    out = []
    for b, batches in parts.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batches[0].schema) as ipc:
            for rb in batches:
                ipc.write_batch(rb.cast(batches[0].schema) if rb.schema != batches[0].schema else rb)
        out.append((b, sink.getvalue().to_pybytes()))
    return out


def run_postpone_bucket(
    table: FileStoreTable, task: PostponePartitionTask, bucket: int, routed: Sequence[tuple[int, bytes]]
) -> list[CommitMessage]:
    """The reduce side: the routed rows of one bucket (``(file index, IPC bytes)``, from
    :func:`route_postpone_file`) replayed in file order into the bucket, compacted; with no rows
    a level-0 marker's compaction. Compaction results; deleted again if it fails."""
    batches = (
        rb for _, blob in sorted(routed, key=lambda r: r[0]) for rb in pa.ipc.open_stream(pa.BufferReader(blob))
    )
    messages = _replay(table, task, batches, compact=True, bucket=bucket) if routed else []
    marker = dataclasses.replace(task, level0_buckets=(bucket,) if bucket in task.level0_buckets else ())
    return _finish(table, marker, messages, {m.bucket for m in messages})


def _compact_level0_buckets(rewrite: FileStoreTable, task: PostponePartitionTask, written: set[int]) -> list[CommitMessage]:
    """Java's level-0 ``CompactBucket`` markers: the partition's real buckets with level-0 files
    and no new rows get the writer's compaction (the table's strategy) too."""
    todo = [b for b in task.level0_buckets if b not in written]
    if not todo:
        return []
    from paimon_core.operation.compact.compact_planner import MergeTreeBucketPlanner
    from paimon_core.operation.compact.compact_task import run_compact_task
    from paimon_core.operation.scan import ScanFilter

    snapshot = rewrite.snapshot_manager.snapshot(task.snapshot_id)
    flt = ScanFilter(partitions=frozenset([task.partition]), buckets=frozenset(todo))
    files: dict[int, list[ManifestEntry]] = {}
    for e in rewrite.new_file_store_scan().live_entries(snapshot, flt):
        files.setdefault(e.bucket, []).append(e)
    planner = MergeTreeBucketPlanner(rewrite.store, clock=rewrite.clock)
    out: list[CommitMessage] = []
    try:
        for bucket in todo:
            entries = files.get(bucket, [])
            if not entries:
                continue
            planned = planner.plan(
                task.partition, bucket, entries[0].total_buckets, [e.file for e in entries], strategy="minor"
            )
            if planned is not None:
                out.append(run_compact_task(rewrite.store, planned))
    except BaseException:
        delete_written(rewrite.store, out)
        raise
    return out


def _as_compaction(table: FileStoreTable, m: CommitMessage, *, delete_consumed: bool = True) -> CommitMessage:
    """Java's ``BucketFiles``: a writer's message as a compaction result. New files become
    compact-after; a new file a compaction consumed again is neither before nor after (and is
    deleted: nothing references it), unless the compaction upgraded it (then it is after, on its
    new level); changelog and index files go to the compact increment."""
    new = {f.file_name: f for f in m.new_files}
    consumed = {f.file_name for f in m.compact_before if f.file_name in new}
    before = tuple(f for f in m.compact_before if f.file_name not in new)
    after = tuple(f for f in m.new_files if f.file_name not in consumed) + tuple(m.compact_after)
    upgraded = {f.file_name for f in m.compact_after}  # an upgrade keeps the file, on a higher level
    if delete_consumed and consumed - upgraded:
        bucket_path = table.bucket_path(m.partition, m.bucket)
        for name in consumed - upgraded:
            f = new[name]
            table.file_io.delete(f.external_path or f"{bucket_path}/{name}")
    return CommitMessage(
        partition=m.partition,
        bucket=m.bucket,
        total_buckets=m.total_buckets,
        compact_before=before,
        compact_after=after,
        compact_changelog_files=tuple(m.changelog_files) + tuple(m.compact_changelog_files),
        compact_new_index_files=tuple(m.new_index_files) + tuple(m.compact_new_index_files),
        compact_deleted_index_files=tuple(m.deleted_index_files) + tuple(m.compact_deleted_index_files),
    )


def local_postpone_executor(parallelism: int | None = None) -> PostponeExecutor:
    """Partition tasks in a thread pool (default: CPU count); what finished tasks wrote is
    deleted again when one fails."""

    def run(table: FileStoreTable, tasks: Sequence[PostponePartitionTask]) -> list[list[CommitMessage]]:
        workers = max(1, min(len(tasks), parallelism or os.cpu_count() or 1))
        results: list[list[CommitMessage]] = []
        error: BaseException | None = None
        if workers == 1:
            for t in tasks:
                try:
                    results.append(run_postpone_partition(table, t))
                except BaseException as e:  # noqa: BLE001 - clean up what succeeded, re-raise
                    error = e
                    break
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(run_postpone_partition, table, t) for t in tasks]
                for fut in futures:
                    try:
                        results.append(fut.result())
                    except BaseException as e:  # noqa: BLE001 - collect, clean up, re-raise
                        error = error or e
        if error is not None:
            delete_written(table.store, [m for ms in results for m in ms])
            raise error
        return results

    return run


# --- the job (driver) ----------------------------------------------------------------------------
class PostponeBucketCompact:
    """One compaction of a postpone-bucket table (see the module docstring)."""

    def __init__(
        self,
        table: FileStoreTable,
        *,
        commit_user: str | None = None,
        executor: PostponeExecutor | None = None,
        clock: Clock | None = None,
    ) -> None:
        if table.options.bucket != POSTPONE_BUCKET:
            raise InvalidArgumentError(
                f"Table {table.name} has bucket = {table.options.bucket}: postpone-bucket compaction is for bucket = -2"
            )
        self.table = table
        self.user_given = commit_user is not None
        self.commit_user = commit_user or new_commit_user(table.options.get("commit.user-prefix"))
        self.executor = executor or local_postpone_executor()
        self.clock = clock or table.clock

    @classmethod
    def for_request(
        cls,
        table: FileStoreTable,
        request: CompactRequest,
        *,
        commit_user: str | None = None,
        executor: PostponeExecutor | None = None,
    ) -> PostponeBucketCompact:
        """The compaction ``table.maintenance.compact()`` (or a job) runs for a postpone-bucket table: the
        request's arguments Java's postpone compaction refuses are refused first, naming them."""
        check_postpone_compact_request(table.name, request)
        return cls(table, commit_user=commit_user, executor=executor)

    def plan(self) -> PostponeCompactPlan:
        """The partitions with postpone files or real level-0 buckets on the latest snapshot."""
        latest = self.table.latest_snapshot()
        if latest is None:
            return PostponeCompactPlan(None)
        entries = self.table.new_file_store_scan().live_entries(latest)
        postpone: dict[bytes, list[ManifestEntry]] = {}
        level0: dict[bytes, set[int]] = {}
        for e in entries:  # scan order: a stable sort by creation time keeps it for equal times
            if e.bucket == POSTPONE_BUCKET:
                postpone.setdefault(e.partition, []).append(e)
            elif e.bucket >= 0 and e.total_buckets > 0 and e.file.level == 0:
                level0.setdefault(e.partition, set()).add(e.bucket)
        affected = list(dict.fromkeys([*postpone, *level0]))
        if not affected:
            return PostponeCompactPlan(latest.id)
        nums = resolve_bucket_nums(self.table.options.options, entries, describe=self.table.partition_path)
        tasks = []
        for partition in affected:
            es = sorted(postpone.get(partition, []), key=lambda e: e.file.creation_time or 0)
            tasks.append(
                PostponePartitionTask(
                    partition=partition,
                    partition_name=self.table.partition_path(partition),
                    num_buckets=nums[partition],
                    snapshot_id=latest.id,
                    files=tuple(e.file for e in es),
                    level0_buckets=tuple(sorted(level0.get(partition, ()))),
                    postpone_total_buckets=es[0].total_buckets if es else POSTPONE_BUCKET,
                )
            )
        return PostponeCompactPlan(latest.id, tuple(tasks))

    def run(self, *, dry_run: bool = False, commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> CompactResult:
        """Plan, run the partition tasks and commit once (see the module docstring)."""
        from paimon_core.options_validation import check_maintenance_options

        started = time.monotonic()
        base = CompactResult(
            table=self.table.name,
            strategy="postpone",
            dry_run=dry_run,
            planned_snapshot_id=None,
            commit_user=self.commit_user,
            commit_identifier=commit_identifier,
        )
        committer = self.table.new_file_store_commit(self.commit_user)
        if self.user_given and committer.is_committed(commit_identifier):
            logger.info("Compaction %s/%d of %s already committed", self.commit_user, commit_identifier, self.table.name)
            return dataclasses.replace(base, already_committed=True, elapsed_ms=_ms(started))
        plan = self.plan()
        base = dataclasses.replace(
            base, planned_snapshot_id=plan.snapshot_id, plan=tuple(t.to_dict() for t in plan.tasks), tasks=len(plan.tasks)
        )
        if dry_run or not plan.tasks:
            return dataclasses.replace(base, elapsed_ms=_ms(started))
        check_maintenance_options(self.table.options, table=self.table.name)  # its commit expires snapshots
        assert plan.snapshot_id is not None
        written = [m for ms in self.executor(self.table, plan.tasks) for m in ms]
        messages = self.removal_messages(plan) + [m for m in written if not m.is_empty()]
        if not any(m.compact_before or m.compact_after for m in messages):
            return dataclasses.replace(base, elapsed_ms=_ms(started))
        result = self.commit(plan, messages, commit_identifier)
        result = maintain_after_commit(self.table.store, result)
        return self._result(base, plan, written, result, started)

    @staticmethod
    def removal_messages(plan: PostponeCompactPlan) -> list[CommitMessage]:
        """The postpone files read, as compact-before (Java's ``RemovePostponeBucketFilesOperator``)."""
        return [
            CommitMessage(
                partition=t.partition,
                bucket=POSTPONE_BUCKET,
                total_buckets=t.postpone_total_buckets,
                compact_before=t.files,
            )
            for t in plan.tasks
            if t.files
        ]

    def commit(self, plan: PostponeCompactPlan, messages: Sequence[CommitMessage], commit_identifier: int) -> Any:
        """ONE COMPACT commit of ``messages``, in strict mode from the planned snapshot; on any
        failure but an unknown commit state the written files are deleted again."""
        assert plan.snapshot_id is not None
        first = plan.tasks[0].num_buckets if plan.tasks else 1
        committer = table_for_postpone_rewrite(self.table, first, plan.snapshot_id).new_file_store_commit(
            self.commit_user
        )
        try:
            return committer.commit(messages, commit_identifier, check_committed=self.user_given)
        except CommitStateUnknownError:
            raise  # the snapshot may reference the files: keep them
        except BaseException:
            delete_written(self.table.store, messages)
            raise

    def _result(
        self,
        base: CompactResult,
        plan: PostponeCompactPlan,
        written: Sequence[CommitMessage],
        commit: Any,
        started: float,
    ) -> CompactResult:
        read = [f for t in plan.tasks for f in t.files]
        new: list[DataFileMeta] = []
        for m in written:
            before = {f.file_name for f in m.compact_before}
            after = {f.file_name for f in m.compact_after}
            read += [f for f in m.compact_before if f.file_name not in after]
            new += [f for f in m.compact_after if f.file_name not in before]
        buckets: dict[tuple[str, int], int] = {}
        for m in written:
            key = (self.table.partition_path(m.partition), m.bucket)
            buckets[key] = buckets.get(key, 0) + len(m.compact_after)
        return dataclasses.replace(
            base,
            snapshot_id=commit.snapshot_id,
            snapshot_ids=commit.snapshot_ids,
            already_committed=commit.already_committed,
            files_read=len(read),
            bytes_read=sum(f.file_size for f in read),
            rows_read=sum(f.row_count for f in read),
            files_written=len(new),
            bytes_written=sum(f.file_size for f in new),
            rows_written=sum(f.row_count for f in new),
            buckets=tuple(
                {"partition": p, "bucket": b, "files_added": n, "total_buckets": t.num_buckets}
                for t in plan.tasks
                for (p, b), n in sorted(buckets.items())
                if p == t.partition_name
            ),
            expired_snapshots=commit.expired_snapshots,
            maintenance_error=commit.maintenance_error,
            elapsed_ms=_ms(started),
        )


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
