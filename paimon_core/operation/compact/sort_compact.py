"""Sort compaction: rewrite the files of the selected partitions ordered by ``order``, ``zorder``
or ``hilbert`` keys (Paimon's ``CALL sys.compact(table, partitions, ..., order_strategy,
order_by)``), so min/max statistics skip files on the sort columns.

Where Paimon allows it, as Paimon checks it: unaware-bucket append tables only (Spark's
``CompactProcedure``; fixed buckets, postponed buckets, data-evolution tables and tables with
incremental clustering are refused); not together with ``partition_idle_time`` or ``buckets``;
order columns must exist and not be partition columns. Dynamic-bucket primary-key tables, which
Flink's ``SortCompactAction`` rewrites by overwrite (re-assigning keys to buckets), are refused
here: moving keys between buckets under a concurrent writer can put one key in two buckets.

Unlike Paimon (whose Spark procedure commits a dynamic partition OVERWRITE, which drops rows a
concurrent writer appended meanwhile, apache/paimon#7595), the rewrite is pinned to one snapshot:
it reads exactly the live files of the selected partitions in the planned snapshot and commits a
COMPACT snapshot whose DELETE entries are those files and whose ADD entries are the sorted files.
A file appended after the planned snapshot is untouched and stays. When the commit conflicts
(another compaction, an overwrite or an expiry removed a file this one read), the written files
of the changed partitions are deleted, those partitions are re-planned on the latest snapshot and
sorted again, at most ``max_conflict_rounds`` times; then the conflict error is raised with every
written file deleted.

Per partition (one task, :mod:`paimon_core.operation.compact.sort_task`): rows are read
(deletion vectors of the planned snapshot applied), keyed, sorted and cut into
``ceil(bytes / target-file-size)`` ranges of equal weight (``sort-compaction.range-strategy``:
input bytes or rows), each range written as its own file by the compaction writer, so output
files are even in size. The local executor holds one partition's rows at a time; the Spark job
(``spark_jobs.sort_compact``) samples and range-shuffles instead.

:meth:`SortCompaction.incremental_clustering` runs the same machinery for tables with
``clustering.incremental``: only the files :mod:`paimon_core.append.incremental_cluster` picks
are sorted, and the sorted files land on the unit's output level.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.operation.commit_maintenance import maintain_after_commit
from paimon_core.operation.compact.compact_planner import CompactPlanner, CompactRequest
from paimon_core.operation.compact.sort_task import (
    SortCompactTask,
    SortExecutor,
    local_sort_executor,
    read_task_rows,
    write_sorted_ranges,
)
from paimon_core.operation.compact.table_compact import CompactResult, delete_written
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.sort.table_sorter import SortSpec

if TYPE_CHECKING:
    from paimon_core.append.incremental_cluster import IncrementalClusterPlanner
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

__all__ = ["SortCompactTask", "SortCompaction", "SortExecutor", "local_sort_executor", "read_task_rows", "write_sorted_ranges"]

logger = logging.getLogger(__name__)

CLUSTERING_INCREMENTAL = "clustering.incremental"
DATA_EVOLUTION = "data-evolution.enabled"
ROW_TRACKING = "row-tracking.enabled"


class SortCompaction:
    """One sort compaction of a table's ``store`` (see the module docstring)."""

    def __init__(
        self,
        store: FileStore,
        spec: SortSpec,
        *,
        commit_user: str | None = None,
        executor: SortExecutor | None = None,
        max_conflict_rounds: int = 3,
        clustering: IncrementalClusterPlanner | None = None,
        full: bool = False,
    ) -> None:
        """``clustering`` (see :meth:`incremental_clustering`): pick files per partition as
        incremental clustering does (``full``: every run) instead of all of them."""
        self.store = store
        self.spec = spec
        self.clustering = clustering
        self.full = full
        self.user_given = commit_user is not None
        self.commit_user = commit_user or new_commit_user(store.options.get("commit.user-prefix"))
        self.executor = executor or local_sort_executor()
        self.max_conflict_rounds = max_conflict_rounds
        self._check_table()
        spec.validate(store.schema.fields, store.schema.partition_keys)

    @classmethod
    def incremental_clustering(
        cls,
        store: FileStore,
        *,
        full: bool = False,
        commit_user: str | None = None,
        executor: SortExecutor | None = None,
        max_conflict_rounds: int = 3,
    ) -> SortCompaction:
        """Incremental clustering of a table with ``clustering.incremental = true``
        (:mod:`paimon_core.append.incremental_cluster`): ``full`` clusters every run of each
        partition, else the universal strategy picks."""
        from paimon_core.append.incremental_cluster import IncrementalClusterPlanner

        planner = IncrementalClusterPlanner(store)
        return cls(store, planner.spec, commit_user=commit_user, executor=executor,
                   max_conflict_rounds=max_conflict_rounds, clustering=planner, full=full)  # fmt: skip

    def _check_table(self) -> None:
        t, opts = self.store, self.store.options
        if (opts.get(DATA_EVOLUTION) or "false").lower() == "true":
            raise InvalidArgumentError(f"Data Evolution table cannot be sorted! ({t.name})")
        if (opts.get(ROW_TRACKING) or "false").lower() == "true":
            # Java's Spark sort compaction overwrites with fresh APPEND files: every row gets a new
            # _ROW_ID. Rewriting here keeps none of them either way: refused (paimon_core.append.row_tracking).
            raise InvalidArgumentError(
                f"Cannot sort or cluster table {t.name}: it is a row-tracking table (row-tracking.enabled = true) "
                "and a sorted rewrite would not keep its rows' _ROW_IDs (Java's sort compaction renumbers them); "
                "use the plain compaction, which keeps them"
            )
        if self.clustering is None and (opts.get(CLUSTERING_INCREMENTAL) or "false").lower() == "true":
            raise InvalidArgumentError(
                f"The table {t.name} has enabled incremental clustering, do not support sort compact."
            )
        if t.schema.primary_keys:
            mode = "dynamic-bucket" if opts.bucket == -1 else f"bucket = {opts.bucket}"
            raise InvalidArgumentError(
                f"{t.name} is a primary-key table ({mode}): sort compaction only supports unaware-bucket append "
                "tables (bucket = -1, no primary key). Paimon's Spark procedure refuses it too; its Flink action "
                "rewrites dynamic-bucket tables by overwrite, which can move a key a concurrent writer updates "
                "into a second bucket"
            )
        if opts.bucket != -1:
            raise InvalidArgumentError(
                f"Spark compact with sort_type {self.spec.strategy} only support unaware-bucket append-only table "
                f"yet; {t.name} has bucket = {opts.bucket}"
            )

    def plan(self, request: CompactRequest, *, only: frozenset[bytes] | None = None) -> tuple[int | None, list[SortCompactTask]]:
        """Tasks over the live files of the selected partitions in the latest snapshot."""
        if request.partition_idle_time_ms is not None:
            if self.clustering is not None:
                raise InvalidArgumentError(
                    "incremental clustering does not take 'partition_idle_time'; idle partitions are clustered "
                    "in full by 'clustering.history-partition.idle-to-full-sort'"
                )
            raise InvalidArgumentError("sort compact do not support 'partition_idle_time'.")
        if request.buckets is not None:
            raise InvalidArgumentError("Specifying buckets is not supported for sort compact.")
        planner = CompactPlanner(self.store, clock=self.store.clock)
        flt = planner._scan_filter(request)  # noqa: SLF001 - the same partition filter as compaction
        latest = self.store.latest_snapshot()
        if latest is None:
            return None, []
        groups: dict[bytes, list[DataFileMeta]] = {}
        for e in self.store.new_file_store_scan().live_entries(latest, flt):
            if only is None or e.partition in only:
                groups.setdefault(e.partition, []).append(e.file)
        levels: dict[bytes, int] = {}
        if self.clustering is not None:
            groups, levels = self._cluster_units(request, latest, groups, only)
        with_dv = self.store.options.deletion_vectors_enabled
        if with_dv:
            from paimon_core.append.append_deletion_index import DeletionIndex
        tasks = [
            SortCompactTask(
                p,
                self.store.partition_path(p),
                tuple(sorted(fs, key=lambda f: f.min_sequence_number)),
                DeletionIndex.load(self.store, p, 0, snapshot=latest) if with_dv else None,
                levels.get(p, 0),
            )
            for p, fs in sorted(groups.items())
        ]
        return latest.id, tasks

    def _cluster_units(
        self, request: CompactRequest, latest: Snapshot, groups: dict[bytes, list[DataFileMeta]], only: frozenset[bytes] | None
    ) -> tuple[dict[bytes, list[DataFileMeta]], dict[bytes, int]]:
        """The files incremental clustering picks per partition, and their output levels."""
        assert self.clustering is not None
        named = bool(request.partitions or request.where)
        all_files: dict[bytes, list[DataFileMeta]] = groups
        if named and self.clustering.history_idle_ms is not None and only is None:
            all_files = {}
            for e in self.store.new_file_store_scan().live_entries(latest):
                all_files.setdefault(e.partition, []).append(e.file)
        units = self.clustering.units(groups, all_files, full=self.full, named_partitions=named and only is None,
                                      now_ms=self.store.clock.now_millis())  # fmt: skip
        return {p: list(u.files) for p, u in units.items()}, {p: u.output_level for p, u in units.items()}

    def run(
        self,
        request: CompactRequest | None = None,
        *,
        dry_run: bool = False,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
    ) -> CompactResult:
        """Plan on the latest snapshot, sort, and commit once (see the module docstring)."""
        request = request or CompactRequest()
        started = time.monotonic()
        base = CompactResult(table=self.store.name, strategy=self.spec.strategy, dry_run=dry_run, planned_snapshot_id=None,
                             commit_user=self.commit_user, commit_identifier=commit_identifier)  # fmt: skip
        committer = self.store.new_file_store_commit(self.commit_user)
        if self.user_given and committer.is_committed(commit_identifier):
            return replace(base, already_committed=True, elapsed_ms=_ms(started))
        snapshot_id, tasks = self.plan(request)
        base = replace(base, planned_snapshot_id=snapshot_id, plan=tuple(t.to_dict() for t in tasks))
        if dry_run or not tasks:
            return replace(base, tasks=len(tasks), elapsed_ms=_ms(started))
        written = self.executor(self.store, self.spec, tasks)
        rounds = 0
        while True:
            messages = self._messages(tasks, written)
            try:
                commit = committer.commit(messages, commit_identifier, check_committed=self.user_given)
                commit = maintain_after_commit(self.store, commit)
                break
            except CommitConflictError as conflict:
                rounds += 1
                if rounds > self.max_conflict_rounds:
                    delete_written(self.store, messages)
                    raise
                logger.warning("Sort compaction of %s conflicted (%s); re-planning the changed partitions", self.store.name, conflict)
                tasks, written = self._replan(request, tasks, written, messages)
                if not tasks:  # the partitions are gone (dropped, expired): nothing left to sort
                    return replace(base, conflict_rounds=rounds, elapsed_ms=_ms(started))
        read = [f for t in tasks for f in t.files]
        out = [f for fs in written for f in fs]
        logger.info("Sort compaction (%s by %s) of %s: %d file(s) -> %d, snapshot %s", self.spec.strategy,
                    ",".join(self.spec.columns), self.store.name, len(read), len(out), commit.snapshot_id)  # fmt: skip
        return replace(
            base,
            snapshot_id=commit.snapshot_id,
            snapshot_ids=commit.snapshot_ids,
            already_committed=commit.already_committed,
            tasks=len(tasks),
            files_read=len(read),
            bytes_read=sum(f.file_size for f in read),
            rows_read=sum(f.row_count - (f.delete_row_count or 0) for f in read),
            files_written=len(out),
            bytes_written=sum(f.file_size for f in out),
            rows_written=sum(f.row_count for f in out),
            conflict_rounds=rounds,
            buckets=tuple({"partition": t.partition_name, "bucket": 0, "files_before": len(t.files), "files_after": len(w)}
                          for t, w in zip(tasks, written, strict=True)),  # fmt: skip
            expired_snapshots=commit.expired_snapshots,
            maintenance_error=commit.maintenance_error,
            elapsed_ms=_ms(started),
        )

    def _messages(self, tasks: Sequence[SortCompactTask], written: Sequence[Sequence[DataFileMeta]]) -> list[CommitMessage]:
        """One COMPACT message per partition: before = the files read, after = the sorted files;
        with deletion vectors, the vectors of the files read are dropped from the index."""
        out = []
        for task, files in zip(tasks, written, strict=True):
            index = task.deletion_index
            changes = index.remove(self.store, [f.file_name for f in task.files]) if index is not None else None
            out.append(
                CommitMessage(
                    task.partition, 0, -1,
                    compact_before=task.files,
                    compact_after=tuple(f.copy(level=task.output_level) if task.output_level else f for f in files),
                    compact_new_index_files=changes.new_index_files if changes is not None else (),
                    compact_deleted_index_files=changes.deleted_index_files if changes is not None else (),
                )
            )  # fmt: skip
        return out

    def _replan(
        self,
        request: CompactRequest,
        tasks: Sequence[SortCompactTask],
        written: Sequence[list[DataFileMeta]],
        messages: Sequence[CommitMessage],
    ) -> tuple[list[SortCompactTask], list[list[DataFileMeta]]]:
        """Keep the sorted files of partitions whose files and vectors are as planned in the latest
        snapshot; delete the others' and re-plan and sort those partitions again. The DV index
        files of the failed attempt are deleted either way (the next attempt writes its own)."""
        _, now = self.plan(request, only=frozenset(t.partition for t in tasks))
        current = {t.partition: t for t in now}
        kept: list[tuple[SortCompactTask, list[DataFileMeta]]] = []
        changed: set[bytes] = set()
        for task, files, message in zip(tasks, written, messages, strict=True):
            fresh = current.get(task.partition)
            planned = {f.file_name for f in task.files}
            still = fresh is not None and planned <= {f.file_name for f in fresh.files} and _same_vectors(task, fresh)
            if still:
                kept.append((task, files))
                index_only = replace(message, compact_after=(), compact_changelog_files=())
                delete_written(self.store, [index_only])
            else:
                changed.add(task.partition)
                delete_written(self.store, [message])
        redo = [t for t in now if t.partition in changed]
        out_tasks = [t for t, _ in kept] + redo
        out_written = [w for _, w in kept] + (self.executor(self.store, self.spec, redo) if redo else [])
        return out_tasks, out_written


def _same_vectors(a: SortCompactTask, b: SortCompactTask) -> bool:
    """The partition has the same DV index files in both plans (its vectors did not change)."""
    if a.deletion_index is None or b.deletion_index is None:
        return a.deletion_index is b.deletion_index
    return {f.file_name for f in a.deletion_index.index_files} == {f.file_name for f in b.deletion_index.index_files}


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
