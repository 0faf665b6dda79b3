"""The snapshot trigger and the sensors against real tables: asyncio runs, the real shared-stream
manager, the real asset state store (through the in-process execution API), and ``dag.test()``."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileStoreTable, FileSystemCatalog
from tests.airflow.context import task_context
from tests.airflow.tables import rows, table_with_snapshots

pytestmark = pytest.mark.integration

PK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("v", pa.int64()),
    ]
)
WAIT = 20.0  # seconds an expected event may take (polls every 0.05 s)


def _pk_rows(ids: range, v: int, day: str = "a") -> pa.Table:
    return pa.table({"id": list(ids), "dt": [day] * len(ids), "v": [v] * len(ids)}, schema=PK_SCHEMA)


def _pk_table(wh: str, name: str = "db.pk", **options: str) -> FileStoreTable:
    opts = {"bucket": "2", "write-only": "true", **options}  # write-only: runs pile up, no inline compaction
    return FileSystemCatalog(wh).create_table(
        name, PK_SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts
    )


def _reload(wh: str, name: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table(name)


def _trigger(**kwargs: Any) -> Any:
    from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

    return PaimonTableSnapshotTrigger(**{"table": "db.t", "poll_interval": 0.05, **kwargs})


class _Events:
    """Drains a trigger's event stream in a background task, as the triggerer does.

    (Cancelling a pending ``anext`` would close the generator, so tests read from a queue.)
    """

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        async for event in self._stream:
            await self._queue.put(event)

    async def next(self, timeout: float = WAIT) -> dict[str, Any]:
        getter = asyncio.ensure_future(self._queue.get())
        done, _ = await asyncio.wait(
            {getter, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if getter not in done:
            getter.cancel()
            if self._task.done():
                self._task.result()  # the trigger raised or ended: surface it
                raise AssertionError("the trigger's stream ended")
            raise TimeoutError(f"no event within {timeout} s")
        event = getter.result()
        assert isinstance(event.payload, dict)
        return event.payload

    async def nothing(self, wait: float = 0.5) -> None:
        """No event within ``wait`` seconds."""
        await asyncio.sleep(wait)
        assert self._queue.empty(), self._queue.get_nowait().payload
        assert not self._task.done() or self._task.result() is None

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _later(fn: Callable[[], object], delay: float = 0.3) -> threading.Thread:
    """Run ``fn`` (a commit) in another thread after ``delay`` seconds, as a writer would."""

    def go() -> None:
        time.sleep(delay)
        fn()

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


# --- the trigger -----------------------------------------------------------------------------


def test_trigger_fires_on_a_commit_made_while_it_waits(paimon_warehouse: str) -> None:
    table_with_snapshots(paimon_warehouse, n=3)
    trigger = _trigger(last_seen_snapshot_id=3, share_poll=False)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        events = _Events(trigger.run())
        writer = _later(lambda: _reload(paimon_warehouse, "db.t").write_arrow(rows(100, 5)))
        first = await events.next()
        writer.join()
        _later(
            lambda: [_reload(paimon_warehouse, "db.t").write_arrow(rows(200 + i, 1)) for i in range(2)], 0.0
        )
        second = await events.next()
        while second["latest_snapshot_id"] < 6:  # the two commits may land in one poll or two
            second = await events.next()
        await events.close()
        return first, second

    first, second = asyncio.run(scenario())
    assert first["table"] == "db.t" and first["reason"] == "snapshot" and not first["rolled_back"]
    assert (first["snapshot_id"], first["previous_snapshot_id"], first["latest_snapshot_id"]) == (4, 3, 4)
    assert first["commit_kind"] == "APPEND" and first["snapshot_ids"] == [4]
    assert first["changed_partitions"] == [] and isinstance(first["commit_user"], str)
    snap = _reload(paimon_warehouse, "db.t").snapshot_manager.snapshot(4)
    assert first["time_millis"] == snap.time_millis and first["time"].startswith(
        dt.datetime.fromtimestamp(snap.time_millis / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    )
    assert (
        second["snapshot_id"] == 6
        and second["snapshot_ids"][-1] == 6
        and second["previous_snapshot_id"] in (4, 5)
    )
    assert trigger.last_seen_snapshot_id == 6


def test_trigger_without_watermark_reports_the_current_head_first(paimon_warehouse: str) -> None:
    table_with_snapshots(paimon_warehouse, n=2)

    async def scenario() -> dict[str, Any]:
        events = _Events(_trigger(share_poll=False).run())
        try:
            return await events.next()
        finally:
            await events.close()

    event = asyncio.run(scenario())
    assert (event["snapshot_id"], event["previous_snapshot_id"]) == (2, None)


def test_trigger_waits_for_a_table_that_does_not_exist_yet(paimon_warehouse: str) -> None:
    async def scenario() -> dict[str, Any]:
        events = _Events(_trigger(table="db.later", share_poll=False).run())
        await events.nothing(0.3)
        _later(lambda: table_with_snapshots(paimon_warehouse, "db.later", n=1), 0.0)
        try:
            return await events.next()
        finally:
            await events.close()

    assert asyncio.run(scenario())["snapshot_id"] == 1


def test_serialize_round_trips_through_airflow_encoding(paimon_warehouse: str) -> None:
    from airflow.sdk import Asset, AssetWatcher
    from airflow.serialization.decoders import smart_decode_trigger_kwargs
    from airflow.serialization.encoders import encode_trigger
    from airflow.triggers.base import BaseEventTrigger

    from paimon_airflow.triggers.paimon import CLASSPATH, PaimonTableSnapshotTrigger

    trigger = PaimonTableSnapshotTrigger(
        table="db.t",
        paimon_conn_id="lake",
        poll_interval=30,
        last_seen_snapshot_id=7,
        fire_on="health",
        commit_kinds="append, compact",
        max_compaction_debt=0.5,
        max_small_file_ratio=0.8,
        min_health_score=60,
        with_partitions=False,
        share_poll=False,
    )
    classpath, kwargs = trigger.serialize()
    assert classpath == CLASSPATH and kwargs["commit_kinds"] == ["APPEND", "COMPACT"]
    encoded = encode_trigger(trigger)
    decoded = {k: smart_decode_trigger_kwargs(v) for k, v in encoded["kwargs"].items()}
    assert encoded["classpath"] == CLASSPATH and decoded == kwargs
    again = PaimonTableSnapshotTrigger(**decoded)
    assert again.serialize() == (classpath, kwargs)
    assert BaseEventTrigger.hash(classpath, kwargs) == BaseEventTrigger.hash(*again.serialize())
    assert again.shared_stream_key() is None
    assert PaimonTableSnapshotTrigger(
        table="db.t", paimon_conn_id="lake", poll_interval=30
    ).shared_stream_key() == (
        "paimon-table-heads",
        "lake",
        30.0,
    )
    watcher = AssetWatcher(name="t_commits", trigger=trigger)  # accepted as an event trigger
    assert Asset("paimon://wh/db.t", watchers=[watcher]).watchers == [watcher]
    for bad in (
        {"table": "t"},
        {"table": "db.t", "fire_on": "health"},
        {"table": "db.t", "commit_kinds": ["MERGE"]},
        {"table": "db.t", "commit_identifier": 3},
        {"table": "db.t", "poll_interval": 0},
    ):
        with pytest.raises(ValueError):
            PaimonTableSnapshotTrigger(**bad)


def test_commit_kind_filter_skips_other_commits(paimon_warehouse: str) -> None:
    t = _pk_table(paimon_warehouse)
    t.write_arrow(_pk_rows(range(10), 1))

    async def scenario() -> dict[str, Any]:
        events = _Events(
            _trigger(table="db.pk", last_seen_snapshot_id=1, commit_kinds=["COMPACT"], share_poll=False).run()
        )
        t.write_arrow(_pk_rows(range(10), 2))  # an APPEND: no event
        await events.nothing()
        _later(lambda: _reload(paimon_warehouse, "db.pk").maintenance.compact(), 0.0)
        try:
            return await events.next()
        finally:
            await events.close()

    event = asyncio.run(scenario())
    assert (
        event["commit_kind"] == "COMPACT" and event["snapshot_id"] == 3 and event["previous_snapshot_id"] == 2
    )
    assert event["changed_partitions"] == ["dt=a"]


def test_new_partition_mode(paimon_warehouse: str) -> None:
    t = _pk_table(paimon_warehouse)
    t.write_arrow(_pk_rows(range(10), 1))

    async def scenario() -> dict[str, Any]:
        events = _Events(
            _trigger(table="db.pk", last_seen_snapshot_id=1, fire_on="partition", share_poll=False).run()
        )
        t.write_arrow(_pk_rows(range(10), 2))  # same partition: no event
        await events.nothing()
        t.write_arrow(_pk_rows(range(5), 3, day="b"))
        try:
            return await events.next()
        finally:
            await events.close()

    event = asyncio.run(scenario())
    assert (
        event["reason"] == "partition" and event["new_partitions"] == ["dt=b"] and event["snapshot_id"] == 3
    )
    assert event["previous_snapshot_id"] == 2


def test_health_mode_fires_once_per_crossing(paimon_warehouse: str) -> None:
    t = _pk_table(paimon_warehouse)  # stop trigger 8; budget 0.4 is crossed at 4 sorted runs
    t.write_arrow(_pk_rows(range(40), 0))

    async def scenario() -> list[dict[str, Any]]:
        trigger = _trigger(table="db.pk", last_seen_snapshot_id=1, fire_on="health", max_compaction_debt=0.4)
        events = _Events(trigger.run())
        seen = []
        for i in range(1, 3):  # 2, 3 runs: within budget
            t.write_arrow(_pk_rows(range(40), i))
        await events.nothing()
        t.write_arrow(_pk_rows(range(40), 3))  # 4 runs: over
        seen.append(await events.next())
        t.write_arrow(_pk_rows(range(40), 4))  # 5 runs: still over, no second event
        await events.nothing()
        _reload(paimon_warehouse, "db.pk").maintenance.compact()  # back within budget
        await events.nothing()
        for i in range(5, 9):
            t.write_arrow(_pk_rows(range(40), i))  # 1 + 4 = 5 runs: over again
        seen.append(await events.next())
        await events.close()
        return seen

    first, second = asyncio.run(scenario())
    assert (
        first["reason"] == "health" and first["snapshot_id"] == 4 and first["health"]["max_sorted_runs"] == 4
    )
    assert (
        first["health"]["compaction_debt"] == 0.5 and "compaction debt 0.50 > 0.4" in first["violations"][0]
    )
    assert second["health"]["max_sorted_runs"] >= 4 and second["snapshot_id"] > 6


def test_compaction_mode_fires_when_the_planner_plans_a_compaction(paimon_warehouse: str) -> None:
    """The planner's rules (the table's num-sorted-run.compaction-trigger 3 here), once per crossing."""
    t = _pk_table(paimon_warehouse, **{"num-sorted-run.compaction-trigger": "3"})
    t.write_arrow(_pk_rows(range(40), 0))

    async def scenario() -> list[dict[str, Any]]:
        trigger = _trigger(
            table="db.pk", last_seen_snapshot_id=1, fire_on="compaction", planner_settings={"compaction": "minor"}
        )
        events = _Events(trigger.run())
        t.write_arrow(_pk_rows(range(40), 1))  # 2 runs: under the trigger
        await events.nothing()
        t.write_arrow(_pk_rows(range(40), 2))  # 3 runs: compaction due
        first = await events.next()
        t.write_arrow(_pk_rows(range(40), 3))  # still due: no second event
        await events.nothing()
        await events.close()
        return [first]

    [first] = asyncio.run(scenario())
    assert first["reason"] == "compaction" and first["snapshot_id"] == 3, first
    assert first["compaction"]["action"] == "compact" and "num-sorted-run.compaction-trigger" in first["violations"][0]


# --- watermark in the real asset state store ------------------------------------------------------


@pytest.fixture
def asset_state_store(airflow_db: None) -> Iterator[Any]:
    """The asset state store accessors a triggerer gives a watcher, over the real metadata DB.

    Registers an asset, then routes the SDK's comms through an in-process execution API server
    (what ``dag.test()`` uses), so ``store.get``/``store.set`` go through the real API routes
    into the ``asset_state_store`` table.
    """
    import os

    import psutil
    import structlog
    from airflow.models.asset import AssetActive, AssetModel
    from airflow.sdk import Asset
    from airflow.sdk.execution_time.context import AssetStateStoreAccessors
    from airflow.sdk.execution_time.supervisor import (
        InProcessSupervisorComms,
        InProcessTestSupervisor,
        set_supervisor_comms,
    )
    from airflow.utils.session import create_session

    name = f"paimon_t_{uuid.uuid4().hex[:8]}"
    uri = f"paimon://wh/{name}"
    with create_session() as session:
        model = AssetModel(name=name, uri=uri)
        session.add(model)
        session.add(AssetActive.for_asset(model))
    supervisor = InProcessTestSupervisor(
        id=uuid.UUID(int=0),
        pid=os.getpid(),
        process=psutil.Process(),
        process_log=structlog.get_logger(logger_name="task").bind(),
        client=InProcessTestSupervisor._api_client(),
    )
    supervisor.comms = InProcessSupervisorComms(supervisor=supervisor)
    with set_supervisor_comms(supervisor.comms):
        yield AssetStateStoreAccessors(inlets=[Asset(name=name, uri=uri)])


def test_watermark_survives_a_triggerer_restart(paimon_warehouse: str, asset_state_store: Any) -> None:
    table_with_snapshots(paimon_warehouse, n=3)

    def started() -> Any:
        trigger = _trigger(share_poll=False)  # the kwargs as stored in the trigger row: no watermark
        trigger.asset_state_store = asset_state_store  # what the triggerer injects for a watcher
        return trigger

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        events = _Events(started().run())
        first = await events.next()  # no stored watermark: the current head
        await events.nothing(0.3)  # the triggerer has taken the event and resumed the trigger
        assert asset_state_store.get("snapshot_id") == 3
        await events.close()
        # the triggerer restarts: a new instance from the same kwargs, the store still has snapshot 3
        events = _Events(started().run())
        await events.nothing()  # snapshot 3 is not reported again
        _later(lambda: _reload(paimon_warehouse, "db.t").write_arrow(rows(50, 1)), 0.0)
        second = await events.next()
        await events.nothing(0.3)
        await events.close()
        return first, second

    first, second = asyncio.run(scenario())
    assert (first["snapshot_id"], first["previous_snapshot_id"]) == (3, None)
    assert (second["snapshot_id"], second["previous_snapshot_id"]) == (4, 3)
    assert asset_state_store.get("snapshot_id") == 4


def test_health_verdict_is_stored_with_the_watermark(paimon_warehouse: str, asset_state_store: Any) -> None:
    t = _pk_table(paimon_warehouse)
    for i in range(5):
        t.write_arrow(_pk_rows(range(40), i))

    async def once() -> list[dict[str, Any]]:
        trigger = _trigger(table="db.pk", fire_on="health", max_compaction_debt=0.4, share_poll=False)
        trigger.asset_state_store = asset_state_store
        events = _Events(trigger.run())
        out = []
        try:
            out.append(await events.next(1.0))
        except TimeoutError:
            pass
        await asyncio.sleep(0.3)  # the triggerer took the event and resumed the trigger
        await events.close()
        return out

    assert [e["snapshot_id"] for e in asyncio.run(once())] == [5]
    assert asset_state_store.get("over_budget") is True
    t.write_arrow(_pk_rows(range(40), 9))  # still over after the restart: no second event
    assert asyncio.run(once()) == []
    assert asset_state_store.get("snapshot_id") == 6


# --- one shared poll for many tables (Airflow's SharedStreamManager) -------------------------


def test_triggers_share_one_poll_through_the_shared_stream_manager(
    paimon_warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.triggers.shared_stream import SharedStreamManager

    from paimon_airflow.triggers import paimon as trigger_module

    for name in ("db.a", "db.b"):
        table_with_snapshots(paimon_warehouse, name, n=1)
    polls: list[list[str]] = []
    real_heads = trigger_module._Tables.heads

    def counting_heads(self: Any, names: list[str]) -> dict[str, int | None]:
        polls.append(list(names))
        return real_heads(self, names)

    monkeypatch.setattr(trigger_module._Tables, "heads", counting_heads)

    async def scenario() -> dict[str, dict[str, Any]]:
        manager = SharedStreamManager()
        triggers = {n: _trigger(table=n, last_seen_snapshot_id=1) for n in ("db.a", "db.b")}
        keys = {t.shared_stream_key() for t in triggers.values()}
        assert len(keys) == 1
        (key,) = keys
        streams = {
            n: _Events(t.filter_shared_stream(manager.subscribe(trigger_id=i, trigger=t, key=key)))
            for i, (n, t) in enumerate(triggers.items())
        }
        for events in streams.values():
            await events.nothing(0.3)
        _reload(paimon_warehouse, "db.b").write_arrow(rows(10, 1))
        got_b = await streams["db.b"].next()
        await streams["db.a"].nothing(0.3)
        _reload(paimon_warehouse, "db.a").write_arrow(rows(10, 1))
        got_a = await streams["db.a"].next()
        for i, events in enumerate(streams.values()):
            await events.close()
            await manager.unsubscribe(i, key)
        await manager.stop_all()
        return {"db.a": got_a, "db.b": got_b}

    got = asyncio.run(scenario())
    assert {n: (e["table"], e["snapshot_id"], e["previous_snapshot_id"]) for n, e in got.items()} == {
        "db.a": ("db.a", 2, 1),
        "db.b": ("db.b", 2, 1),
    }
    assert polls and all(names == ["db.a", "db.b"] for names in polls)  # one poll serves both tables
    assert trigger_module._WATCHED == {}  # both unsubscribed


# --- sensors ------------------------------------------------------------------------------------


def test_snapshot_sensor_pokes_for_a_newer_snapshot(paimon_warehouse: str) -> None:
    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor

    table_with_snapshots(paimon_warehouse, n=3)
    sensor = PaimonSnapshotSensor(task_id="wait", table="db.t", after_snapshot_id="{{ params.after }}")
    ctx = task_context()
    ctx["params"] = {"after": 3}
    sensor.render_template_fields(ctx)
    assert not sensor.poke(ctx)
    _reload(paimon_warehouse, "db.t").write_arrow(rows(100, 1))
    done = sensor.poke(ctx)
    assert done and done.xcom_value is not None
    assert (done.xcom_value["snapshot_id"], done.xcom_value["previous_snapshot_id"]) == (4, 3)
    # no after_snapshot_id: any snapshot; poke mode's execute returns the XCom
    any_snapshot = PaimonSnapshotSensor(task_id="any", table="db.t", poke_interval=0.01, timeout=5)
    assert any_snapshot.execute(task_context())["snapshot_id"] == 4


def test_snapshot_sensor_for_a_commit_user_and_identifier(paimon_warehouse: str) -> None:
    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor

    table_with_snapshots(paimon_warehouse, n=2)
    sensor = PaimonSnapshotSensor(task_id="wait", table="db.t", commit_user="ingest-1", commit_identifier=5)
    assert not sensor.poke(task_context())

    def commit(identifier: int) -> None:
        builder = _reload(paimon_warehouse, "db.t").new_batch_write_builder(commit_user="ingest-1")
        write = builder.new_write()
        write.write_arrow(rows(identifier * 100, 1))
        builder.new_commit().commit(write.prepare_commit(), identifier)

    commit(4)
    assert not sensor.poke(task_context())  # identifier 4 < 5
    _reload(paimon_warehouse, "db.t").write_arrow(rows(900, 1))  # another user's commit on top
    commit(5)
    done = sensor.poke(task_context())
    assert done and done.xcom_value["commit_user"] == "ingest-1" and done.xcom_value["commit_identifier"] == 5
    assert done.xcom_value["snapshot_id"] == 5


def test_snapshot_sensor_commit_kinds(paimon_warehouse: str) -> None:
    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor

    t = _pk_table(paimon_warehouse)
    t.write_arrow(_pk_rows(range(10), 1))
    sensor = PaimonSnapshotSensor(task_id="wait", table="db.pk", commit_kinds=["COMPACT"])
    assert not sensor.poke(task_context())
    t.maintenance.compact()
    t.write_arrow(_pk_rows(range(10), 2))
    done = sensor.poke(task_context())
    assert done and done.xcom_value["commit_kind"] == "COMPACT" and done.xcom_value["snapshot_id"] == 2


def test_snapshot_sensor_fails_at_once_on_a_missing_table(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor

    with pytest.raises(AirflowFailException, match="db.nope"):
        PaimonSnapshotSensor(task_id="wait", table="db.nope").poke(task_context())


def test_deferrable_snapshot_sensor_defers_then_completes(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import TaskDeferred

    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor
    from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

    table_with_snapshots(paimon_warehouse, n=3)
    sensor = PaimonSnapshotSensor(
        task_id="wait", table="db.t", after_snapshot_id=4, deferrable=True, poke_interval=0.05, timeout=60
    )
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute(task_context())
    trigger = deferred.value.trigger
    assert (
        isinstance(trigger, PaimonTableSnapshotTrigger) and deferred.value.method_name == "execute_complete"
    )
    assert trigger.serialize()[1]["last_seen_snapshot_id"] == 3 and deferred.value.timeout == dt.timedelta(
        seconds=60
    )

    async def fire(trig: PaimonTableSnapshotTrigger) -> dict[str, Any]:
        events = _Events(trig.run())
        try:
            return await events.next()
        finally:
            await events.close()

    _reload(paimon_warehouse, "db.t").write_arrow(rows(100, 1))  # snapshot 4: not past 4 yet
    event = asyncio.run(fire(trigger))
    assert event["snapshot_id"] == 4
    with pytest.raises(TaskDeferred) as again:  # re-defers from snapshot 4
        sensor.execute_complete(task_context(), event)
    assert again.value.trigger.serialize()[1]["last_seen_snapshot_id"] == 4
    _reload(paimon_warehouse, "db.t").write_arrow(rows(200, 1))
    event = asyncio.run(fire(again.value.trigger))
    assert sensor.execute_complete(task_context(), event)["snapshot_id"] == 5
    # already there: no deferral at all
    assert sensor.execute(task_context())["snapshot_id"] == 5


def _serialize_to_db(dag: Any) -> None:
    """Write a DAG built in a test to the metadata DB, as the DAG processor would (``dag.test()``
    only serializes the DAGs of the configured bundles, and this one lives in no bundle)."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.collection import update_dag_parsing_results_in_db
    from airflow.serialization.serialized_objects import LazyDeserializedDAG
    from airflow.utils.session import create_session

    with create_session() as session:
        DagBundlesManager().sync_bundles_to_db(session=session)
        session.commit()
        update_dag_parsing_results_in_db(
            "dags-folder", None, [LazyDeserializedDAG.from_dag(dag)], {}, None, set(), session=session
        )


def test_deferrable_sensor_in_dag_test_runs_the_trigger_in_process(
    paimon_warehouse: str, airflow_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.sdk import DAG, task

    from paimon_airflow.sensors.paimon import PaimonSnapshotSensor
    from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

    table_with_snapshots(paimon_warehouse, n=2)
    with DAG(dag_id=f"paimon_sensor_{uuid.uuid4().hex[:6]}", schedule=None, catchup=False) as dag:
        wait = PaimonSnapshotSensor(
            task_id="wait", table="db.t", after_snapshot_id=2, deferrable=True, poke_interval=0.1, timeout=120
        )

        @task
        def after(event: dict[str, Any]) -> int:
            return int(event["snapshot_id"])

        after(wait.output)

    _serialize_to_db(dag)
    trigger_started = threading.Event()
    real_load_state = PaimonTableSnapshotTrigger._load_state

    async def load_state(self: Any) -> Any:
        trigger_started.set()
        return await real_load_state(self)

    monkeypatch.setattr(PaimonTableSnapshotTrigger, "_load_state", load_state)

    def commit_once_deferred() -> None:
        assert trigger_started.wait(120), "the sensor never deferred"
        _reload(paimon_warehouse, "db.t").write_arrow(rows(100, 1))

    writer = _later(commit_once_deferred, 0.0)
    run = dag.test(logical_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    writer.join()
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert run.state == "success", states
    assert _reload(paimon_warehouse, "db.t").snapshot_manager.latest_snapshot_id() == 3
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        values = {
            x.task_id: XComModel.deserialize_value(x)
            for x in session.scalars(
                XComModel.get_many(run_id=run.run_id, dag_ids=dag.dag_id, key="return_value")
            )
        }
    # the sensor deferred, the trigger ran in-process until the commit, and the sensor resumed with the event
    assert values["wait"]["snapshot_id"] == 3 and values["wait"]["previous_snapshot_id"] == 2
    assert values["after"] == 3


def test_compaction_debt_sensor_waits_fails_and_passes(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.sensors.paimon import PaimonCompactionDebtSensor

    t = _pk_table(paimon_warehouse)
    for i in range(6):
        t.write_arrow(_pk_rows(range(40), i))  # 6 runs per bucket: debt 6/8
    wait = PaimonCompactionDebtSensor(task_id="gate", table="db.pk", max_compaction_debt="{{ params.debt }}")
    ctx = task_context()
    ctx["params"] = {"debt": 0.5}
    wait.render_template_fields(ctx)
    assert not wait.poke(ctx)
    fail = PaimonCompactionDebtSensor(task_id="gate", table="db.pk", max_compaction_debt=0.5, mode="fail")
    assert fail.on_over_budget == "fail" and fail.mode == "poke"
    with pytest.raises(AirflowFailException, match=r"compaction debt 0\.75 > 0\.5 \(6 sorted runs"):
        fail.execute(task_context())
    small = PaimonCompactionDebtSensor(
        task_id="gate",
        table="db.pk",
        max_compaction_debt=None,
        max_small_file_ratio=0.5,
        on_over_budget="fail",
    )
    with pytest.raises(AirflowFailException, match="small-file ratio 1.00 > 0.5"):
        small.poke(task_context())

    _reload(paimon_warehouse, "db.pk").maintenance.compact()
    done = wait.poke(ctx)
    assert done and done.xcom_value["compaction_debt"] == 1 / 8 and done.xcom_value["max_sorted_runs"] == 1
    assert fail.execute(task_context())["table"] == "db.pk"
    with pytest.raises(AirflowFailException, match="needs max_compaction_debt"):
        PaimonCompactionDebtSensor(task_id="g", table="db.pk", max_compaction_debt=None).poke(task_context())
