"""StreamingCompaction: rounds over the buckets new APPEND snapshots wrote, one commit identifier per
committed round under one commit user, restart without a duplicate commit, clean stops."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.operation.compact.streaming_compact import StreamingCompaction
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.store import FileStore
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def _table(wh: str) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    opts = {"bucket": "2", "write-only": "true", "num-sorted-run.compaction-trigger": "3"}
    return cat.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)


def _write(t: FileStoreTable, k: int, dts: Sequence[str] = ("d0", "d1")) -> None:
    ids = list(range(k * 10, k * 10 + 30))
    t.write_arrow(pa.table({"id": ids, "dt": [dts[i % len(dts)] for i in ids], "v": [k] * len(ids)}, schema=SCHEMA))


def _state(t: FileStoreTable) -> list[tuple[int, str, int]]:
    rows = t.to_arrow().sort_by([("dt", "ascending"), ("id", "ascending")])
    return list(zip(rows["id"].to_pylist(), rows["dt"].to_pylist(), rows["v"].to_pylist(), strict=True))


def _commits_of(t: FileStoreTable, user: str) -> list[tuple[int, int]]:
    """(identifier, snapshot id) of every snapshot ``user`` committed, in order."""
    return [(s.commit_identifier, s.id) for s in t.snapshot_manager.snapshots() if s.commit_user == user]


def test_compacts_while_a_writer_writes_then_stops_and_resumes_without_duplicates(local_warehouse: str) -> None:
    t = _table(local_warehouse)
    _write(t, 0)
    stop = threading.Event()
    job = StreamingCompaction(t.store, commit_user="sc", discovery_interval_ms=20, stop_event=stop)

    def writer() -> None:
        for k in range(1, 10):
            _write(t, k)
        # let the job see the last snapshots, then stop it as a SIGTERM would
        while job.store.snapshot_manager.latest_snapshot_of_user("sc") is None:
            stop.wait(0.02)
        stop.wait(0.3)
        stop.set()

    w = threading.Thread(target=writer)
    w.start()
    result = job.run()
    w.join()
    assert result.stopped_by == "stop" and result.commits >= 2 and result.compaction_rounds >= 2
    commits = _commits_of(t, "sc")
    assert [i for i, _ in commits] == list(range(1, len(commits) + 1)) == list(result.commit_identifiers)
    assert [s for _, s in commits] == list(result.snapshot_ids)
    assert all(t.snapshot_manager.snapshot(s).commit_kind == CommitKind.COMPACT for _, s in commits)
    want = _state(t)
    assert len(want) == 120 and unreferenced_files(t) == set()
    # a restart with the same user continues the identifiers and never commits one twice
    for k in range(10, 14):
        _write(t, k)
    again = StreamingCompaction(t.store, commit_user="sc", discovery_interval_ms=20, max_rounds=2).run()  # full + idle
    assert again.stopped_by == "max_rounds"
    after = _commits_of(t, "sc")
    idents = [i for i, _ in after]
    assert len(set(idents)) == len(idents) and idents == sorted(idents)
    assert again.commit_identifiers and min(again.commit_identifiers) == len(commits) + 1
    assert len(_state(t)) == 160


def test_later_rounds_plan_only_the_buckets_new_appends_wrote(local_warehouse: str) -> None:
    t = _table(local_warehouse)
    for k in range(4):
        _write(t, k)
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # between polls: a writer appends to partition d0 only
        waits.append(seconds)
        for k in range(4, 8):
            _write(t, k, dts=("d0",))

    # round 1: every bucket; round 2: nothing new (sleeps: the writer writes); round 3: d0's buckets
    result = StreamingCompaction(t.store, commit_user="sc", discovery_interval_ms=500, sleep=sleep, max_rounds=3).run()
    first, second = result.round_results
    assert first["buckets"] == "all" and first["snapshot_id"] is not None and waits == [0.5]
    latest = t.latest_snapshot()
    d0 = {(e.partition, e.bucket) for e in t.new_file_store_scan().live_entries(latest) if t.partition_path(e.partition) == "dt=d0"}
    assert second["buckets"] == len(d0) == 2 and second["snapshot_id"] == latest.id  # type: ignore[union-attr]
    compacted = t.new_file_store_scan().delta_entries(t.snapshot_manager.snapshot(second["snapshot_id"]))
    assert compacted and {t.partition_path(e.partition) for e in compacted} == {"dt=d0"}
    assert result.commit_identifiers == (1, 2) and result.stopped_by == "max_rounds"


def test_idle_timeout_with_an_injected_clock_and_sleep(local_warehouse: str) -> None:
    t = _table(local_warehouse)
    _write(t, 0)
    clock = ManualClock(5_000)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(int(seconds * 1000))

    result = StreamingCompaction(
        t.store, commit_user="sc", discovery_interval_ms=1_000, idle_timeout_ms=3_000, clock=clock, sleep=sleep
    ).run()
    # round 1 plans every bucket (nothing worth compacting), then idle rounds 1 s apart until 3 s passed
    assert result.stopped_by == "idle_timeout" and result.compaction_rounds == 1 and result.commits == 0
    assert waits == [1.0, 1.0, 1.0] and result.rounds == 5
    assert t.latest_snapshot() is not None and t.latest_snapshot().id == 1  # type: ignore[union-attr]


def test_an_interrupted_round_is_abandoned_and_its_files_deleted(
    local_warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(local_warehouse)
    for k in range(5):
        _write(t, k)
    want = _state(t)
    written: list[CommitMessage] = []

    def commit(self: FileStoreCommit, messages: Sequence[CommitMessage], *args: object, **kwargs: object) -> None:
        assert any(m.compact_after for m in messages)  # the round's files were written ...
        written.extend(messages)
        raise KeyboardInterrupt  # ... and a second SIGTERM arrives before the commit publishes

    monkeypatch.setattr(FileStoreCommit, "commit", commit)
    result = StreamingCompaction(t.store, commit_user="sc", discovery_interval_ms=10).run()
    monkeypatch.undo()
    assert result.stopped_by == "abandoned" and result.commits == 0 and written
    assert t.latest_snapshot().id == 5 and _state(t) == want  # type: ignore[union-attr]
    assert unreferenced_files(t) == set()


def test_bad_arguments_are_refused(local_warehouse: str) -> None:
    t = _table(local_warehouse)
    _write(t, 0)
    with pytest.raises(InvalidArgumentError, match="discovery_interval"):
        StreamingCompaction(t.store, discovery_interval_ms=0)
    with pytest.raises(InvalidArgumentError, match="max_rounds"):
        StreamingCompaction(t.store, max_rounds=0)
    t.maintenance.compact(commit_user="batch-user")  # a batch identifier (Long.MAX_VALUE) for this user
    with pytest.raises(InvalidArgumentError, match="its own commit user"):
        StreamingCompaction(t.store, commit_user="batch-user", max_rounds=1).run()


def test_a_conflicting_round_waits_the_discovery_interval_before_retrying(local_warehouse: str) -> None:
    """Buckets a writer keeps changing under every round are retried after the discovery
    interval, not at once (no busy loop of re-plans)."""
    from paimon_core.operation.compact.compact_task import CompactTask
    from paimon_core.operation.compact.table_compact import local_executor

    t = _table(local_warehouse)
    for k in range(4):
        _write(t, k)
    base = local_executor(1)

    def interfering(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = base(store, tasks)
        t.maintenance.compact(compact_strategy="full")  # removes what the round read: its commit conflicts
        for k in range(9, 12):  # and the buckets need compacting again
            _write(t, k)
        return out

    waits: list[float] = []
    result = StreamingCompaction(
        t.store, commit_user="sc", executor=interfering, discovery_interval_ms=250, sleep=waits.append, max_rounds=1
    ).run()
    assert result.conflicts == 1 and result.commits == 0
    assert waits == [0.25]
    assert unreferenced_files(t) == set()
