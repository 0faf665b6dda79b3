"""The DAGs on a real Airflow started here on loopback (api-server, scheduler, dag-processor,
triggerer; SQLite in tmp_path, LocalExecutor, parallelism 2), driven over the REST API v2:

1. a manual DAG triggered over REST with ``conf`` runs to success, its XCom read back over REST;
2. a 3-day backfill of ``paimon_ingest`` makes 3 partitions and one of ``paimon_tags`` 3 tags;
   the same backfills again (reprocessing completed runs) add no rows and no tags;
3. an ingest task killed (SIGKILL of its process group: task, spark-submit, JVM, Python driver)
   right after its commit landed, and retried by Airflow, leaves exactly one commit of its
   commit user and no duplicate rows.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.utils.clock import ManualClock
from tests.airflow.conftest import paimon_conn
from tests.airflow.live import LiveAirflow, http, launch
from tests.airflow.tables import millis

pytestmark = pytest.mark.integration

TODAY = dt.datetime.now(dt.UTC).date()
#: backfilled days: the 3 latest complete daily intervals (catchup after them has nothing to do)
DAYS = [(TODAY - dt.timedelta(days=d)).isoformat() for d in (3, 2, 1)]
#: the day of the manual ingest run that is killed and retried
KILL_DAY = (TODAY - dt.timedelta(days=5)).isoformat()
ROWS = {DAYS[0]: 30, DAYS[1]: 40, DAYS[2]: 50, KILL_DAY: 60}


def _landing(root: Path) -> Path:
    for day, n in ROWS.items():
        d = root / f"dt={day}"
        d.mkdir(parents=True)
        pq.write_table(
            pa.table({"id": pa.array(range(n), pa.int64()), "v": [f"{day}-{i}" for i in range(n)]}),
            d / "part-0.parquet",
        )
    return root


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One Airflow for the module, with a warehouse (db.t: 3 snapshots) and landing files."""
    root = tmp_path_factory.mktemp("live")
    wh = str(root / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    # db.t: one commit on each backfilled day (06:00 UTC), so each day's tag has a snapshot to hold
    clock = ManualClock(millis(DAYS[0], 6))
    t = FileSystemCatalog(wh, clock=clock).create_table(
        "db.t", pa.schema([("id", pa.int64()), ("v", pa.string())])
    )
    for i, day in enumerate(DAYS):
        clock.set(millis(day, 6))
        t.write_arrow(pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]}))
    landing = _landing(root / "landing")
    started = time.monotonic()
    live = launch(
        root / "airflow",
        ("api-server", "scheduler", "dag-processor", "triggerer"),
        migrate=True,
        reserialize=True,
        extra_env={
            "AIRFLOW_CONN_PAIMON_DEFAULT": paimon_conn(wh),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(root / "airflow" / "logs"),
        },
    )
    try:
        live.cli("pools", "set", "paimon_spark", "2", "Spark jobs")
        live.wait_ready()
        print(f"\nAirflow up in {time.monotonic() - started:.1f} s at {live.base}")
        yield {"live": live, "wh": wh, "landing": str(landing), "token": live.token()}
    finally:
        live.stop()


def _runs(live: LiveAirflow, token: str, dag_id: str, query: str = "") -> list[dict[str, Any]]:
    return list(live.api("GET", f"/dags/{dag_id}/dagRuns?limit=100{query}", token=token)["dag_runs"])


def _tis(live: LiveAirflow, token: str, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    return list(
        live.api("GET", f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances", token=token)["task_instances"]
    )


def _wait_runs(
    live: LiveAirflow, token: str, dag_id: str, run_ids: set[str], timeout: float = 240
) -> dict[str, dict[str, Any]]:
    """Wait until every run is done; fail with the task states (and log tail) of a failed one."""
    deadline = time.monotonic() + timeout
    while True:
        runs = {r["dag_run_id"]: r for r in _runs(live, token, dag_id) if r["dag_run_id"] in run_ids}
        for rid, r in runs.items():
            if r["state"] == "failed":
                states = [(t["task_id"], t["map_index"], t["state"]) for t in _tis(live, token, dag_id, rid)]
                raise AssertionError(f"{dag_id} {rid} failed: {states}\n{live.tail('scheduler', 2000)}")
        if len(runs) == len(run_ids) and all(r["state"] == "success" for r in runs.values()):
            return runs
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{dag_id}: runs not done after {timeout} s: {[r['state'] for r in runs.values()]}"
            )
        time.sleep(1)


def _xcom(live: LiveAirflow, token: str, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> Any:
    q = f"?map_index={map_index}" if map_index >= 0 else ""
    entry = live.api(
        "GET",
        f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/xcomEntries/return_value{q}",
        token=token,
    )
    value = entry["value"]
    return json.loads(value) if isinstance(value, str) else value


def _backfill(live: LiveAirflow, token: str, dag_id: str, conf: dict[str, Any]) -> set[str]:
    """Backfill DAYS (reprocessing completed runs); the run ids of those days."""
    body = {
        "dag_id": dag_id,
        "from_date": f"{DAYS[0]}T00:00:00Z",
        "to_date": f"{DAYS[-1]}T00:00:00Z",
        "run_backwards": False,
        "dag_run_conf": conf,
        "reprocess_behavior": "completed",
        "max_active_runs": 2,
    }
    for _ in range(20):
        # SQLite: "Database is locked" (503) while the scheduler writes; try again
        status, payload = http(
            "POST", f"{live.base}/api/v2/backfills", body, {"Authorization": f"Bearer {token}"}
        )
        if status != 503:
            break
        time.sleep(0.5)
    if status == 409:  # a try answered 503 may still have created it: then it is the newest one
        listed = live.api("GET", f"/backfills?dag_id={dag_id}&limit=100", token=token)["backfills"]
        backfill = max(listed, key=lambda b: int(b["id"]))
        assert backfill["completed_at"] is None and int(backfill["id"]) > _BACKFILLS.get(dag_id, 0), listed
    else:
        assert status in (200, 201), payload
        backfill = json.loads(payload)
    runs = _runs(live, token, dag_id, "&run_type=backfill")
    ids = {r["dag_run_id"] for r in runs if r["logical_date"][:10] in DAYS}
    assert len(ids) == 3, runs
    _BACKFILLS[dag_id] = int(backfill["id"])
    return ids


#: the latest backfill id per DAG
_BACKFILLS: dict[str, int] = {}


def _wait_backfill_done(live: LiveAirflow, token: str, dag_id: str, timeout: float = 60) -> None:
    """A DAG has one running backfill at a time: wait until the scheduler marks it completed."""
    deadline = time.monotonic() + timeout
    while live.api("GET", f"/backfills/{_BACKFILLS[dag_id]}", token=token)["completed_at"] is None:
        assert time.monotonic() < deadline, f"backfill of {dag_id} not completed"
        time.sleep(0.5)


def _unpause_after_backfill(live: LiveAirflow, token: str, dag_id: str) -> None:
    """Unpause a catchup DAG once its next scheduled run is after the backfilled days (re-parsed so
    the scheduler does not catch up from the registry's start_date)."""
    for _ in range(10):
        nxt = live.api("GET", f"/dags/{dag_id}", token=token)["next_dagrun_logical_date"]
        if nxt and nxt[:10] > DAYS[-1]:
            break
        live.cli("dags", "reserialize")
    else:
        raise AssertionError(f"{dag_id}: next run {nxt} is not after {DAYS[-1]}")
    live.api("PATCH", f"/dags/{dag_id}", {"is_paused": False}, token=token)


def _table(wh: str, name: str) -> Any:
    return FileSystemCatalog(wh).get_table(name)


def test_rest_trigger_with_conf_runs_and_xcom_reads_back(env: dict[str, Any]) -> None:
    live, token, wh = env["live"], env["token"], env["wh"]
    started = time.monotonic()
    live.api("PATCH", "/dags/paimon_reset_consumer", {"is_paused": False}, token=token)
    conf = {"table": "db.t", "consumer_id": "reader", "next_snapshot_id": 2, "mode": "apply"}
    run = live.api(
        "POST", "/dags/paimon_reset_consumer/dagRuns", {"logical_date": None, "conf": conf}, token=token
    )
    assert run["conf"] == conf and run["run_type"] == "manual"
    _wait_runs(live, token, "paimon_reset_consumer", {run["dag_run_id"]}, timeout=120)
    result = _xcom(live, token, "paimon_reset_consumer", run["dag_run_id"], "reset_consumer")
    assert result["consumer_id"] == "reader" and result["next_snapshot_id"] == 2
    assert result["previous_next_snapshot_id"] is None
    plan = _xcom(live, token, "paimon_reset_consumer", run["dag_run_id"], "plan")
    assert plan["dry_run"] is True
    assert _table(wh, "db.t").consumer_manager.consumers() == {"reader": 2}
    # an invalid conf is refused by the Param schema before any run exists
    status, body = http(
        "POST",
        f"{live.base}/api/v2/dags/paimon_reset_consumer/dagRuns",
        {"logical_date": None, "conf": {**conf, "next_snapshot_id": 0}},
        {"Authorization": f"Bearer {token}"},
    )
    assert status == 400 and b"next_snapshot_id" in body
    print(f"\nREST-triggered run with conf: {time.monotonic() - started:.1f} s; xcom {result}")


def test_backfill_three_days_then_again_adds_nothing(env: dict[str, Any]) -> None:
    live, token, wh = env["live"], env["token"], env["wh"]
    started = time.monotonic()
    ingest_conf = {"sources": {"db.events": env["landing"] + "/dt={ds}"}}
    ingest_runs = _backfill(live, token, "paimon_ingest", ingest_conf)
    tag_runs = _backfill(live, token, "paimon_tags", {"include": r"db\.t"})
    for dag_id in ("paimon_ingest", "paimon_tags"):
        _unpause_after_backfill(live, token, dag_id)
    _wait_runs(live, token, "paimon_ingest", ingest_runs)
    _wait_runs(live, token, "paimon_tags", tag_runs)
    first = time.monotonic() - started

    events = _table(wh, "db.events")
    data = events.to_arrow()
    by_day = {d: data.column("dt").to_pylist().count(d) for d in DAYS}
    assert by_day == {d: ROWS[d] for d in DAYS} and data.num_rows == sum(by_day.values())
    assert sorted(set(map(str, data.column("dt").to_pylist()))) == DAYS  # 3 partitions
    snapshots = list(events.snapshot_manager.snapshots())
    assert len(snapshots) == 3
    tags = _table(wh, "db.t").tag_manager.tags()
    assert {name: snap.id for name, snap in tags.items()} == {d: i + 1 for i, d in enumerate(DAYS)}

    # the same backfills again: completed runs are re-run, and change nothing
    _wait_backfill_done(live, token, "paimon_ingest")
    _wait_backfill_done(live, token, "paimon_tags")
    again_ingest = _backfill(live, token, "paimon_ingest", ingest_conf)
    again_tags = _backfill(live, token, "paimon_tags", {"include": r"db\.t"})
    assert again_ingest == ingest_runs and again_tags == tag_runs  # the same runs, cleared and re-run
    _wait_runs(live, token, "paimon_ingest", ingest_runs)
    _wait_runs(live, token, "paimon_tags", tag_runs)
    events = _table(wh, "db.events")
    assert len(list(events.snapshot_manager.snapshots())) == 3  # no new commit at all
    assert events.to_arrow().num_rows == data.num_rows
    assert sorted(_table(wh, "db.t").tag_manager.tags()) == DAYS
    for rid in ingest_runs:
        result = _xcom(live, token, "paimon_ingest", rid, "ingest__db__events")
        assert result["already_committed"] is True, result
        tis = {t["task_id"]: t for t in _tis(live, token, "paimon_ingest", rid)}
        assert tis["ingest__db__events"]["try_number"] == 2  # really ran again
    # the tags still point at each day's own snapshot (a re-run replaced none). Their re-run's XCom is
    # not asserted: a reprocessing backfill leaves already-successful runs 'success' until it re-queues
    # them, so the wait above can return before the tags' second pass (seen once under load).
    tags = _table(wh, "db.t").tag_manager.tags()
    assert {name: snap.id for name, snap in tags.items()} == {d: i + 1 for i, d in enumerate(DAYS)}
    print(
        f"\nbackfill of 3 days (ingest + tags): {first:.1f} s; again: {time.monotonic() - started - first:.1f} s"
    )


def test_task_killed_after_commit_and_retried_commits_once(env: dict[str, Any]) -> None:
    live, token, wh = env["live"], env["token"], env["wh"]
    started = time.monotonic()
    conf = {"sources": {"db.events": env["landing"] + "/dt={ds}"}}
    logical = (dt.date.fromisoformat(KILL_DAY) + dt.timedelta(days=1)).isoformat() + "T00:00:00Z"
    run = live.api(
        "POST", "/dags/paimon_ingest/dagRuns", {"logical_date": logical, "conf": conf}, token=token
    )
    run_id = run["dag_run_id"]
    assert run["data_interval_start"][:10] == KILL_DAY, run
    # the commit user the ingest job derives from the task instance (same on every try)
    commit_user = f"ingest-db.events-paimon_ingest/{run_id}/ingest__db__events/-1"
    before = {s.id for s in _table(wh, "db.events").snapshot_manager.snapshots()}

    killed_at_state = None
    deadline = time.monotonic() + 180
    while killed_at_state is None:
        assert time.monotonic() < deadline, "the ingest never committed"
        events = _table(wh, "db.events")
        if events.snapshot_manager.latest_snapshot_of_user(commit_user) is not None:
            ti = live.api(
                "GET", f"/dags/paimon_ingest/dagRuns/{run_id}/taskInstances/ingest__db__events", token=token
            )
            killed_at_state = ti["state"]
            assert ti["state"] == "running" and ti["pid"], ti  # committed, not finished
            pid = int(ti["pid"])
            # the task process leads its own process group (task, spark-submit, JVM, Python driver);
            # never signal a group it does not lead (that would be the scheduler's)
            assert os.getpgid(pid) == pid, (pid, os.getpgid(pid))
            os.killpg(pid, signal.SIGKILL)
        time.sleep(0.05)

    _wait_runs(live, token, "paimon_ingest", {run_id}, timeout=240)
    ti = live.api(
        "GET", f"/dags/paimon_ingest/dagRuns/{run_id}/taskInstances/ingest__db__events", token=token
    )
    assert ti["try_number"] == 2 and ti["state"] == "success", ti
    result = _xcom(live, token, "paimon_ingest", run_id, "ingest__db__events")
    assert result["already_committed"] is True and result["commit_user"] == commit_user, result
    events = _table(wh, "db.events")
    new = [s for s in events.snapshot_manager.snapshots() if s.id not in before]
    assert [(s.commit_user, s.commit_identifier) for s in new] == [(commit_user, 1)]
    data = events.to_arrow()
    assert data.column("dt").to_pylist().count(KILL_DAY) == ROWS[KILL_DAY]
    keys = list(zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), strict=True))
    assert len(keys) == len(set(keys))  # no duplicate rows anywhere
    print(f"\nkilled after commit, retried: one commit ({new[0].id}); {time.monotonic() - started:.1f} s")
