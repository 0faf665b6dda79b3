"""StreamingCompaction: a dedicated compaction that keeps compacting as new snapshots arrive.

Paimon's streaming dedicated compaction job (Flink ``compact`` action in streaming mode): a source
follows the table's snapshots and emits the (partition, bucket)s each new APPEND snapshot wrote
(Java's ``DeltaFollowUpScanner`` reads only APPEND snapshots), a compactor compacts those buckets
(``minor`` by default: the table's strategy decides), and each checkpoint commits as the job's one
commit user with the checkpoint id as commit identifier. Here one *round* is one checkpoint:

1. poll the latest snapshot every ``discovery_interval``;
2. the first round plans every bucket of the latest snapshot; later rounds plan the buckets the
   APPEND snapshots after the last one seen wrote, plus the buckets of a round that failed to
   commit (*pending*); if a snapshot in between is already expired, every bucket is planned;
3. run the round with :class:`~paimon_core.operation.compact.table_compact.TableCompact` (same
   planner, tasks, executor, conflict re-planning and cleanup as the one-shot job) and commit it
   with the next commit identifier.

Identifiers: the commit user is fixed for the job (give it to resume); the first identifier is
one more than the latest identifier this user committed, and each committed round takes the
next, so a restart never commits an identifier twice (and :meth:`FileStoreCommit.is_committed`
turns a replayed one into a no-op). A round commits atomically or not at all; files of a round
that does not commit are deleted by ``TableCompact`` (a crash leaves orphans for orphan cleanup).

Stopping: set ``stop_event`` (the job does on SIGTERM/SIGINT): a round in progress finishes and
commits, the loop ends before the next poll. A ``KeyboardInterrupt`` (the job raises one on a
second signal) abandons the round in progress: unless its commit landed, every file it wrote is
deleted, and the run ends with ``stopped_by = "abandoned"``. ``max_rounds`` (discovery rounds: one poll each,
with or without a compaction) and ``idle_timeout`` (no new APPEND snapshot for that long) bound a run. A schema change is picked
up before the next round (the table handle is reloaded), so rewritten files keep new columns.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.compact_task import CompactTask
from paimon_core.operation.compact.table_compact import (
    CompactResult,
    TableCompact,
    TaskExecutor,
    delete_written,
    local_executor,
)
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.postpone.postpone_utils import check_postpone_request
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.utils.clock import Clock

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

__all__ = ["DEFAULT_DISCOVERY_INTERVAL_MS", "StreamingCompactResult", "StreamingCompaction"]

logger = logging.getLogger(__name__)

DEFAULT_DISCOVERY_INTERVAL_MS = 10_000
#: How many per-round summaries the result keeps (the newest).
MAX_ROUND_SUMMARIES = 100
BucketKey = tuple[bytes, int]


@dataclass(frozen=True)
class StreamingCompactResult(_ToDict):
    """What a streaming compaction did until it stopped."""

    table: str
    strategy: str
    commit_user: str
    stopped_by: str  # "stop" (signal / stop event), "max_rounds", "idle_timeout" or "abandoned"
    rounds: int = 0  # discovery rounds: one poll of the latest snapshot each (what max_rounds bounds)
    compaction_rounds: int = 0  # rounds that found changed buckets and planned them
    commits: int = 0
    snapshot_ids: tuple[int, ...] = ()  # the COMPACT snapshots committed
    commit_identifiers: tuple[int, ...] = ()
    last_seen_snapshot_id: int | None = None
    tasks: int = 0
    files_read: int = 0
    bytes_read: int = 0
    files_written: int = 0
    bytes_written: int = 0
    rows_written: int = 0
    conflicts: int = 0  # rounds whose commit conflicted past the re-planning rounds (buckets kept pending)
    pending_buckets: int = 0
    schema_reloads: int = 0
    elapsed_ms: int = 0
    round_results: tuple[dict[str, Any], ...] = ()  # the newest rounds: identifier, snapshot, buckets, tasks


@dataclass
class _State:
    next_identifier: int
    last_activity: int  # clock millis of the last round (or the start)
    last_seen: int | None = None  # the last snapshot scanned; None: the next round plans every bucket
    pending: set[BucketKey] = field(default_factory=set)
    rounds: int = 0
    compaction_rounds: int = 0
    snapshot_ids: list[int] = field(default_factory=list)
    identifiers: list[int] = field(default_factory=list)
    results: list[CompactResult] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    conflicts: int = 0
    schema_reloads: int = 0


class StreamingCompaction:
    """Compacts a table's ``store`` round after round until stopped (see the module docstring)."""

    def __init__(
        self,
        store: FileStore,
        *,
        request: CompactRequest | None = None,
        commit_user: str | None = None,
        executor: TaskExecutor | None = None,
        discovery_interval_ms: int = DEFAULT_DISCOVERY_INTERVAL_MS,
        max_rounds: int | None = None,
        idle_timeout_ms: int | None = None,
        stop_event: threading.Event | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """``sleep`` (seconds) waits between polls; by default it waits on ``stop_event``, so a stop
        wakes it. ``clock`` measures ``idle_timeout`` (injectable for tests, as ``sleep``)."""
        if discovery_interval_ms <= 0:
            raise InvalidArgumentError(f"discovery_interval must be positive, got {discovery_interval_ms} ms")
        if max_rounds is not None and max_rounds < 1:
            raise InvalidArgumentError(f"max_rounds must be at least 1, got {max_rounds}")
        if idle_timeout_ms is not None and idle_timeout_ms < 0:
            raise InvalidArgumentError(f"idle_timeout must not be negative, got {idle_timeout_ms} ms")
        if store.options.bucket == POSTPONE_BUCKET:  # as Java's CompactAction: postpone tables compact in batch
            check_postpone_request(store.name, streaming=True)
        self.store = store
        self.request = request or CompactRequest(strategy="minor")
        self.request_validated = False
        self.commit_user = commit_user or new_commit_user(store.options.get("commit.user-prefix"))
        self.executor = executor or local_executor()
        self.discovery_interval_ms = discovery_interval_ms
        self.max_rounds = max_rounds
        self.idle_timeout_ms = idle_timeout_ms
        self.stop_event = stop_event or threading.Event()
        self.clock = clock or store.clock
        self.sleep = sleep or (lambda seconds: self.stop_event.wait(seconds) and None)
        self._round_messages: list[CommitMessage] = []

    def stop(self) -> None:
        """Ask the loop to end after the current round (thread- and signal-handler-safe)."""
        self.stop_event.set()

    # --- the loop --------------------------------------------------------------------------
    def run(self) -> StreamingCompactResult:
        started = time.monotonic()
        state = _State(next_identifier=self._first_identifier(), last_activity=self.clock.now_millis())
        while True:
            try:
                stopped_by = self._step(state)
            except KeyboardInterrupt:
                logger.warning("Streaming compaction of %s interrupted: stopping now", self.store.name)
                stopped_by = "abandoned"
            if stopped_by is not None:
                return self._result(state, stopped_by, started)

    def _step(self, state: _State) -> str | None:
        """One poll (and round, if anything changed); why the loop ends, or None to go on."""
        if self.stop_event.is_set():
            return "stop"
        if self.max_rounds is not None and state.rounds >= self.max_rounds:
            return "max_rounds"
        state.rounds += 1
        self._reload_schema(state)
        latest = self.store.snapshot_manager.latest_snapshot()
        keys = self._changed_buckets(state.last_seen, latest)
        if latest is not None and (keys is None or keys or state.pending):
            only = None if keys is None else frozenset(keys | state.pending)
            committed, failed = self._round(state, state.next_identifier, only, latest.id)
            if committed:
                state.next_identifier += 1
            # failed None: a round over every bucket did not commit; the next one plans every bucket again
            state.pending = failed or set()
            state.last_seen = None if failed is None else latest.id
            state.last_activity = self.clock.now_millis()
            if (failed is None or failed) and not self.stop_event.is_set():
                # the round conflicted: a writer keeps changing these buckets, give it the
                # discovery interval before trying them again (no busy loop of re-plans)
                self.sleep(self.discovery_interval_ms / 1000.0)
            return None  # new snapshots may have come in meanwhile: the next round polls at once
        if latest is not None:
            state.last_seen = latest.id
        if self.idle_timeout_ms is not None and self.clock.now_millis() - state.last_activity >= self.idle_timeout_ms:
            return "idle_timeout"
        if not self.stop_event.is_set():
            self.sleep(self.discovery_interval_ms / 1000.0)
        return None

    def _first_identifier(self) -> int:
        """One more than the latest identifier this commit user committed (1 for a new user)."""
        snap = self.store.snapshot_manager.latest_snapshot_of_user(self.commit_user)
        if snap is None:
            return 1
        if snap.commit_identifier >= 2**62:
            raise InvalidArgumentError(
                f"Commit user {self.commit_user!r} already committed batch identifier {snap.commit_identifier} "
                f"to {self.store.name} (snapshot {snap.id}); give the streaming compaction its own commit user"
            )
        return snap.commit_identifier + 1

    def _changed_buckets(self, last_seen: int | None, latest: Snapshot | None) -> set[BucketKey] | None:
        """The buckets the APPEND snapshots after ``last_seen`` wrote; None: plan every bucket."""
        if latest is None:
            return set()
        if last_seen is None:
            return None
        scan = self.store.new_file_store_scan()
        keys: set[BucketKey] = set()
        for sid in range(last_seen + 1, latest.id + 1):
            snap = latest if sid == latest.id else self.store.snapshot_manager.try_snapshot(sid)
            if snap is None:
                logger.warning("Snapshot %d of %s expired before it was scanned; planning every bucket", sid, self.store.name)
                return None
            if snap.commit_kind == CommitKind.APPEND:
                keys.update((e.partition, e.bucket) for e in scan.delta_entries(snap))
        return keys

    def _round(
        self, state: _State, identifier: int, only: frozenset[BucketKey] | None, seen: int
    ) -> tuple[bool, set[BucketKey] | None]:
        """One compaction round; returns (committed, the buckets left pending; None: every bucket)."""
        state.compaction_rounds += 1
        job = TableCompact(self.store, commit_user=self.commit_user, executor=self._recording, clock=self.clock)
        summary: dict[str, Any] = {
            "round": state.rounds,
            "compaction_round": state.compaction_rounds,
            "commit_identifier": identifier,
            "scanned_to_snapshot_id": seen,
            "buckets": "all" if only is None else len(only),
        }
        self._round_messages = []
        try:
            result = job.run(self.request, commit_identifier=identifier, only=only)
        except KeyboardInterrupt:
            if not job.store.new_commit(self.commit_user).is_committed(identifier):
                delete_written(self.store, self._round_messages)  # never referenced: the round did not land
                logger.warning("Abandoned round %d of %s; deleted what it wrote", state.rounds, self.store.name)
            raise
        except CommitConflictError as e:
            state.conflicts += 1
            logger.warning("Round %d of %s did not commit (%s); its buckets stay pending", state.rounds, self.store.name, e)
            summary["conflict"] = str(e)
            self._summary(state, summary)
            return False, None if only is None else set(only)
        state.results.append(result)
        committed = result.snapshot_id is not None
        if result.snapshot_id is not None:
            state.snapshot_ids += list(result.snapshot_ids or (result.snapshot_id,))
            state.identifiers.append(identifier)
        summary.update(
            snapshot_id=result.snapshot_id,
            tasks=result.tasks,
            files_read=result.files_read,
            files_written=result.files_written,
            conflict_rounds=result.conflict_rounds,
        )
        self._summary(state, summary)
        if committed:
            logger.info(
                "Round %d of %s: %d task(s), snapshot %s (identifier %d)",
                state.rounds,
                self.store.name,
                result.tasks,
                result.snapshot_id,
                identifier,
            )
        return committed, set()

    def _recording(self, store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        """The executor, remembering what the round wrote (to delete it if the round is abandoned)."""
        messages = self.executor(store, tasks)
        self._round_messages += messages
        return messages

    def _summary(self, state: _State, summary: dict[str, Any]) -> None:
        state.summaries.append(summary)
        del state.summaries[:-MAX_ROUND_SUMMARIES]

    def _reload_schema(self, state: _State) -> None:
        """A new schema (ALTER TABLE) is used from the next round on: the rewrite must not drop columns."""
        latest = self.store.schema_manager.latest()
        if latest is None or latest.id == self.store.schema.id:
            return
        from paimon_core.store.file_store import create_file_store

        t = self.store
        self.store = create_file_store(
            t.file_io,
            t.path,
            latest,
            name=t.name,
            dynamic_options=t.dynamic_options,
            clock=t.clock,
            commit_lock=t.commit_lock,
        )
        state.schema_reloads += 1
        logger.info("Streaming compaction of %s now uses schema %d", t.name, latest.id)

    def _result(self, state: _State, stopped_by: str, started: float) -> StreamingCompactResult:
        rs = state.results
        return StreamingCompactResult(
            table=self.store.name,
            strategy=self.request.strategy,
            commit_user=self.commit_user,
            stopped_by=stopped_by,
            rounds=state.rounds,
            compaction_rounds=state.compaction_rounds,
            commits=len(state.identifiers),
            snapshot_ids=tuple(state.snapshot_ids),
            commit_identifiers=tuple(state.identifiers),
            last_seen_snapshot_id=state.last_seen,
            tasks=sum(r.tasks for r in rs),
            files_read=sum(r.files_read for r in rs),
            bytes_read=sum(r.bytes_read for r in rs),
            files_written=sum(r.files_written for r in rs),
            bytes_written=sum(r.bytes_written for r in rs),
            rows_written=sum(r.rows_written for r in rs),
            conflicts=state.conflicts,
            pending_buckets=len(state.pending),
            schema_reloads=state.schema_reloads,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            round_results=tuple(state.summaries),
        )
