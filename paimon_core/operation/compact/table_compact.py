"""TableCompact: a dedicated compaction of one table, planned, executed and committed once.

Paimon's ``compact`` procedure: the table is compacted with ``write-only`` forced off, planned on
the latest snapshot (:mod:`.compact_planner`), its tasks run by an executor (threads here; Spark
tasks in ``spark_jobs.compact``), and every task's result goes into ONE commit: a COMPACT snapshot
whose DELETE entries are the files read and whose ADD entries are the files written (or the same
file on a higher level, for an upgrade). Safety:

* Idempotent: with a caller-given ``commit_user`` a (user, identifier) already in the history is
  a no-op, checked before any file is read, so a retried job rewrites nothing.
* Concurrent writers: appends to the same buckets do not conflict (their files are new). When the
  commit conflicts (another compaction, an overwrite or an expiry removed a file this one read, or
  an LSM overlap), the buckets that changed since planning are re-planned on the new latest
  snapshot and run again; the others are kept. After ``max_conflict_rounds`` the compaction fails
  with the conflict error, having deleted every file it wrote. Files written by a crashed run are
  never referenced by a snapshot; orphan cleanup removes them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.append.data_evolution_compact_commit import prepare_compact_commit
from paimon_core.deletionvectors.deletion_file import DELETION_VECTORS_INDEX
from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DataFileMeta, FileKind
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.operation.commit_maintenance import maintain_after_commit
from paimon_core.operation.compact.compact_planner import CompactPlan, CompactPlanner, CompactRequest
from paimon_core.operation.compact.compact_task import CompactTask, run_compact_task
from paimon_core.operation.scan import ScanFilter
from paimon_core.options_validation import check_maintenance_options
from paimon_core.results import CommitResult, _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.utils.clock import Clock

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["CompactResult", "TableCompact", "TaskExecutor", "local_executor"]

logger = logging.getLogger(__name__)

#: Runs tasks and returns one message per task, in order (threads locally, Spark in the job).
TaskExecutor = Callable[["FileStore", Sequence[CompactTask]], list[CommitMessage]]


def local_executor(parallelism: int | None = None) -> TaskExecutor:
    """Tasks in a thread pool of ``parallelism`` (default: CPU count); Arrow releases the GIL."""

    def run(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        workers = max(1, min(len(tasks), parallelism or os.cpu_count() or 1))
        if workers == 1:
            done: list[CommitMessage] = []
            try:
                for t in tasks:
                    done.append(run_compact_task(store, t))
            except BaseException:  # an interrupt too: what the finished tasks wrote is never committed
                delete_written(store, done)
                raise
            return done
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_compact_task, store, t) for t in tasks]
            results: list[CommitMessage] = []
            error: BaseException | None = None
            for f in futures:
                try:
                    results.append(f.result())
                except BaseException as e:  # noqa: BLE001 - collect, clean up what succeeded, re-raise
                    error = error or e
            if error is not None:
                delete_written(store, results)
                raise error
            return results

    return run


def delete_written(store: FileStore, messages: Sequence[CommitMessage]) -> None:
    """Delete the files the messages wrote (never an upgraded file: it is the same file as before)."""
    for m in messages:
        before = {f.file_name for f in m.compact_before}
        bucket_path = store.bucket_path(m.partition, m.bucket)
        for f in m.compact_after:
            if f.file_name not in before:
                path = f.external_path or f"{bucket_path}/{f.file_name}"
                store.file_io.delete(path)
                for extra in f.extra_files:  # the file's data-file index (``.index``)
                    store.file_io.delete(f"{path.rsplit('/', 1)[0]}/{extra}")
        for f in m.compact_changelog_files:
            store.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
        for i in m.compact_new_index_files:
            store.file_io.delete(index_file_path(store, m.partition, m.bucket, i))


@dataclass(frozen=True)
class CompactResult(_ToDict):
    """What a compaction did (or, with ``dry_run``, would do: see ``plan``)."""

    table: str
    strategy: str
    dry_run: bool
    planned_snapshot_id: int | None
    snapshot_id: int | None = None  # the COMPACT snapshot (None: nothing to do, dry run, or already committed)
    snapshot_ids: tuple[int, ...] = ()
    commit_user: str = ""
    commit_identifier: int = BATCH_COMMIT_IDENTIFIER
    already_committed: bool = False
    tasks: int = 0
    files_read: int = 0
    bytes_read: int = 0
    rows_read: int = 0
    files_written: int = 0
    bytes_written: int = 0
    rows_written: int = 0
    files_upgraded: int = 0
    conflict_rounds: int = 0
    elapsed_ms: int = 0
    buckets: tuple[dict[str, Any], ...] = ()  # per task: partition, bucket, sorted runs/levels before and after
    plan: tuple[dict[str, Any], ...] = ()  # the tasks' dry-run view
    expired_snapshots: int = 0
    maintenance_error: str | None = None


@dataclass
class _Done:
    tasks: list[CompactTask] = field(default_factory=list)
    messages: list[CommitMessage] = field(default_factory=list)


class TableCompact:
    """One dedicated compaction of ``table`` (see the module docstring)."""

    def __init__(
        self,
        store: FileStore,
        *,
        commit_user: str | None = None,
        executor: TaskExecutor | None = None,
        clock: Clock | None = None,
        max_conflict_rounds: int = 3,
    ) -> None:
        # Paimon's procedure forces write-only off so that its writer compacts; this job compacts
        # regardless, and keeps the table's write-only: with write-only = true (a dedicated job owns
        # maintenance) its commit runs no post-commit expiry, which the orchestrated expiry step does.
        self.store = store
        self.user_given = commit_user is not None
        self.commit_user = commit_user or new_commit_user(self.store.options.get("commit.user-prefix"))
        self.executor = executor or local_executor()
        self.clock = clock or store.clock
        self.max_conflict_rounds = max_conflict_rounds
        self.planner = CompactPlanner(self.store, clock=self.clock)

    def plan(self, request: CompactRequest) -> CompactPlan:
        return self.planner.plan(request)

    def run(
        self,
        request: CompactRequest,
        *,
        dry_run: bool = False,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        only: frozenset[tuple[bytes, int]] | None = None,
    ) -> CompactResult:
        """Plan, run and commit once; ``only``: plan just these (partition, bucket)s (streaming rounds)."""
        if self.planner.postpone:  # bucket = -2: the compaction assigns the buckets
            return self._postpone(request, dry_run=dry_run, commit_identifier=commit_identifier, only=only)
        started = time.monotonic()
        base = CompactResult(
            table=self.store.name,
            strategy=request.strategy,
            dry_run=dry_run,
            planned_snapshot_id=None,
            commit_user=self.commit_user,
            commit_identifier=commit_identifier,
        )
        committer = self.store.new_file_store_commit(self.commit_user)
        if self.user_given and committer.is_committed(commit_identifier):
            logger.info("Compaction %s/%d of %s already committed", self.commit_user, commit_identifier, self.store.name)
            return _replace(base, already_committed=True, elapsed_ms=_ms(started))
        plan = self.planner.plan(request, only=only)
        base = _replace(base, planned_snapshot_id=plan.snapshot_id, plan=tuple(t.to_dict() for t in plan.tasks))
        if dry_run or not plan.tasks:
            return _replace(base, tasks=len(plan.tasks), elapsed_ms=_ms(started))
        check_maintenance_options(self.store.options, table=self.store.name)  # its commit expires snapshots
        done = _Done(list(plan.tasks), self.executor(self.store, plan.tasks))
        bucket_files = dict(plan.bucket_files)
        bucket_vectors = self._vector_files(plan.snapshot_id, plan.tasks)
        rounds = 0
        while True:
            messages = [m for m in done.messages if not m.is_empty()]
            # data-evolution tables: deletion vectors move to the merged files (Java's
            # DataEvolutionCompactionCommitPreparation), prepared on the latest snapshot per attempt
            extra = prepare_compact_commit(self.store, messages)
            try:
                commit = committer.commit([*messages, *extra], commit_identifier, check_committed=self.user_given)
                commit = maintain_after_commit(self.store, commit)
                break
            except CommitConflictError as conflict:
                delete_written(self.store, extra)
                rounds += 1
                if rounds > self.max_conflict_rounds:
                    delete_written(self.store, done.messages)
                    raise
                logger.warning("Compaction of %s conflicted (%s); re-planning the changed buckets", self.store.name, conflict)
                done = self._replan(request, bucket_files, bucket_vectors, done)
        result = self._result(base, done, commit, rounds)
        return _replace(result, elapsed_ms=_ms(started))

    def _postpone(
        self, request: CompactRequest, *, dry_run: bool, commit_identifier: int, only: frozenset[tuple[bytes, int]] | None
    ) -> CompactResult:
        """Postpone-bucket tables (``bucket = -2``): their compaction assigns the buckets by replaying
        the rows through the table's writer, a table-level job
        (:class:`paimon_core.table.postpone_bucket_compact.PostponeBucketCompact`, which
        ``table.maintenance.compact()`` and ``spark_jobs compact`` run). Arguments it refuses are named first."""
        from paimon_core.postpone.postpone_utils import check_postpone_compact_request

        check_postpone_compact_request(self.store.name, request, streaming=only is not None)
        raise InvalidArgumentError(
            f"Table {self.store.name} has postpone buckets (bucket = -2): its compaction assigns the buckets through "
            "the table's writer; run table.maintenance.compact() or spark_jobs compact "
            "(paimon_core.table.postpone_bucket_compact.PostponeBucketCompact)"
        )

    def _vector_files(self, snapshot_id: int | None, tasks: Sequence[CompactTask]) -> dict[tuple[bytes, int], frozenset[str]]:
        """Per task's bucket: the DV index files holding its vectors in ``snapshot_id`` (empty
        without deletion vectors). A bucket whose vectors changed (a writer's lookup marked rows
        of its files) is re-planned like one whose files changed."""
        keys = {(t.partition, t.bucket) for t in tasks}
        out: dict[tuple[bytes, int], set[str]] = {k: set() for k in keys}
        if snapshot_id is None or not self.store.options.deletion_vectors_enabled:
            return {k: frozenset(v) for k, v in out.items()}
        snapshot = self.store.snapshot_manager.snapshot(snapshot_id)
        if snapshot.index_manifest is not None:
            unaware = not self.store.schema.primary_keys and self.store.options.bucket == -1
            by_partition: dict[bytes, list[set[str]]] = {}
            for (p, _), names in out.items():
                by_partition.setdefault(p, []).append(names)
            for e in read_index_manifest(self.store.file_io, self.store.paths.manifest_path(snapshot.index_manifest)):
                if e.index_file.index_type != DELETION_VECTORS_INDEX or e.kind != FileKind.ADD:
                    continue
                if unaware:
                    for names in by_partition.get(e.partition, ()):
                        names.add(e.index_file.file_name)
                elif (e.partition, e.bucket) in out:
                    out[(e.partition, e.bucket)].add(e.index_file.file_name)
        return {k: frozenset(v) for k, v in out.items()}

    def _replan(
        self,
        request: CompactRequest,
        bucket_files: dict[tuple[bytes, int], frozenset[str]],
        bucket_vectors: dict[tuple[bytes, int], frozenset[str]],
        done: _Done,
    ) -> _Done:
        """Keep the tasks of buckets unchanged (files and vectors) since planning; re-plan and
        re-run the others."""
        latest = self.store.latest_snapshot()
        vectors = self._vector_files(latest.id if latest is not None else None, done.tasks)
        keys = frozenset((t.partition, t.bucket) for t in done.tasks)
        live: dict[tuple[bytes, int], set[str]] = {k: set() for k in keys}
        flt = ScanFilter(partitions=frozenset(p for p, _ in keys))
        for e in self.store.new_file_store_scan().live_entries(latest, flt):
            if (e.partition, e.bucket) in live:
                live[(e.partition, e.bucket)].add(e.file.file_name)
        kept = _Done()
        changed: set[tuple[bytes, int]] = set()
        for task, message in zip(done.tasks, done.messages, strict=True):
            key = (task.partition, task.bucket)
            if live[key] == set(bucket_files.get(key, frozenset())) and vectors[key] == bucket_vectors.get(key, frozenset()):
                kept.tasks.append(task)
                kept.messages.append(message)
            else:
                changed.add(key)
        delete_written(self.store, [m for t, m in zip(done.tasks, done.messages, strict=True) if (t.partition, t.bucket) in changed])
        if changed:
            fresh = self.planner.plan(request, only=frozenset(changed))
            bucket_files.update(fresh.bucket_files)
            bucket_vectors.update(self._vector_files(fresh.snapshot_id, fresh.tasks))
            if fresh.tasks:
                kept.tasks += fresh.tasks
                kept.messages += self.executor(self.store, fresh.tasks)
        return kept

    def _result(self, base: CompactResult, done: _Done, commit: CommitResult, rounds: int) -> CompactResult:
        read: list[DataFileMeta] = []
        written: list[DataFileMeta] = []
        upgraded = 0
        for m in done.messages:
            before = {f.file_name for f in m.compact_before}
            after = {f.file_name for f in m.compact_after}
            read += [f for f in m.compact_before if f.file_name not in after]
            written += [f for f in m.compact_after if f.file_name not in before]
            upgraded += len(before & after)
        return _replace(
            base,
            snapshot_id=commit.snapshot_id,
            snapshot_ids=commit.snapshot_ids,
            already_committed=commit.already_committed,
            tasks=len(done.tasks),
            files_read=len(read),
            bytes_read=sum(f.file_size for f in read),
            rows_read=sum(f.row_count for f in read),
            files_written=len(written),
            bytes_written=sum(f.file_size for f in written),
            rows_written=sum(f.row_count for f in written),
            files_upgraded=upgraded,
            conflict_rounds=rounds,
            buckets=self._bucket_summaries(done.tasks, commit.snapshot_id),
            expired_snapshots=commit.expired_snapshots,
            maintenance_error=commit.maintenance_error,
        )

    def _bucket_summaries(self, tasks: Sequence[CompactTask], snapshot_id: int | None) -> tuple[dict[str, Any], ...]:
        """Per compacted bucket: sorted runs (level-0 files + non-empty higher levels; append: files)
        before, and after in the committed snapshot."""
        if snapshot_id is None:
            return ()
        keys = {(t.partition, t.bucket) for t in tasks}
        files: dict[tuple[bytes, int], list[DataFileMeta]] = {k: [] for k in keys}
        snap = self.store.snapshot_manager.snapshot(snapshot_id)
        flt = ScanFilter(partitions=frozenset(p for p, _ in keys))
        for e in self.store.new_file_store_scan().live_entries(snap, flt):
            if (e.partition, e.bucket) in files:
                files[(e.partition, e.bucket)].append(e.file)
        out = []
        for t in tasks:
            now = files[(t.partition, t.bucket)]
            runs = sum(1 for f in now if f.level == 0) + len({f.level for f in now if f.level > 0})
            out.append(
                {
                    "partition": t.partition_name,
                    "bucket": t.bucket,
                    "sorted_runs_before": t.sorted_runs if t.kind == "merge-tree" else len(t.files),
                    "sorted_runs_after": runs if t.kind == "merge-tree" else len(now),
                    "files_after": len(now),
                    "output_level": t.output_level,
                }
            )
        return tuple(out)


def _replace(result: CompactResult, **changes: Any) -> CompactResult:
    import dataclasses

    return dataclasses.replace(result, **changes)


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
