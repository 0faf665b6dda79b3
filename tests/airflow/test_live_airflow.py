"""The DAGs on a real Airflow started here on loopback (api-server, scheduler, dag-processor,
triggerer; SQLite in tmp_path, LocalExecutor, parallelism 2), driven over the REST API v2:

1. a manual DAG triggered over REST with ``conf`` runs to success, its XCom read back over REST;
2. a 3-day backfill of ``paimon_ingest`` makes 3 partitions and one of ``paimon_tags`` 3 tags;
   the same backfills again (reprocessing completed runs) add no rows and no tags, and each
   re-run's XCom says so (ingest ``already_committed``, settled without a JVM; tag ``exists``).
   A backfill is waited for by its own state (``completed_at``: none of its runs queued or
   running), after checking that it queued each day's run itself;
3. an ingest task killed (SIGKILL of its process group: task, spark-submit, JVM, Python driver)
   right after its commit landed, and retried by Airflow (``PAIMON_RETRY_DELAY_SECONDS``: 2 s),
   leaves exactly one commit of its commit user and no duplicate rows.
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

from paimon_airflow.utils.sqlite_connect import is_locked_answer
from paimon_core import FileSystemCatalog
from paimon_core.utils.clock import ManualClock
from tests.airflow.conftest import paimon_conn
from tests.airflow.live import LiveAirflow, http, launch
from tests.airflow.tables import millis

pytestmark = [pytest.mark.integration, pytest.mark.scenario]  # steps of one story on one live server

TODAY = dt.datetime.now(dt.UTC).date()
#: backfilled days: the 3 latest complete daily intervals (catchup after them has nothing to do)
DAYS = [(TODAY - dt.timedelta(days=d)).isoformat() for d in (3, 2, 1)]
#: the day of the manual ingest run that is killed and retried
KILL_DAY = (TODAY - dt.timedelta(days=5)).isoformat()
ROWS = {DAYS[0]: 30, DAYS[1]: 40, DAYS[2]: 50, KILL_DAY: 60}
#: Seconds a run (or a backfill of runs) may take: only a hang should reach it. Each ingest starts
#: a JVM; on a 2-core machine other jobs load (load average 20+) one took over 4 minutes.
RUN_TIMEOUT = 600.0


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
            "PAIMON_RETRY_DELAY_SECONDS": "2",  # the killed task's retry (DEFAULT_ARGS; 30 s by default)
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
    live: LiveAirflow, token: str, dag_id: str, run_ids: set[str], timeout: float = RUN_TIMEOUT
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


def _days_runs(live: LiveAirflow, token: str, dag_id: str) -> dict[str, dict[str, Any]]:
    return {r["dag_run_id"]: r for r in _runs(live, token, dag_id) if (r["logical_date"] or "")[:10] in DAYS}


def _completed(
    live: LiveAirflow, token: str, backfill_id: int, timeout: float = RUN_TIMEOUT
) -> dict[str, Any]:
    """Wait until the scheduler marks the backfill completed (none of its runs queued or running)."""
    deadline = time.monotonic() + timeout
    while (backfill := live.api("GET", f"/backfills/{backfill_id}", token=token))["completed_at"] is None:
        assert time.monotonic() < deadline, f"backfill {backfill_id} not completed: {backfill}"
        time.sleep(1)
    return dict(backfill)


def _backfill(live: LiveAirflow, token: str, dag_id: str, conf: dict[str, Any]) -> tuple[int, set[str]]:
    """Backfill DAYS, reprocessing completed runs: the backfill's id and its 3 runs, each of them
    created or re-queued by it (a new ``queued_at``; clearing a run sets it).

    On SQLite, a create that meets the scheduler's writes answers 503 ("database is locked") and
    may leave its backfill behind (then the next try gets 409) with none, some or all of the days
    queued (Airflow re-queues run by run): all, it is ours; some, it runs them and we backfill
    again once it is done; none, we cancel it (it holds no run) and try again."""
    before = {rid: r["queued_at"] for rid, r in _days_runs(live, token, dag_id).items()}

    def queued_by_it() -> set[str]:
        return {
            rid for rid, r in _days_runs(live, token, dag_id).items() if before.get(rid) != r["queued_at"]
        }

    body = {
        "dag_id": dag_id,
        "from_date": f"{DAYS[0]}T00:00:00Z",
        "to_date": f"{DAYS[-1]}T00:00:00Z",
        "run_backwards": False,
        "dag_run_conf": conf,
        "reprocess_behavior": "completed",
        "max_active_runs": 2,
    }
    locked = False
    deadline = time.monotonic() + 60
    while True:
        try:
            status, payload = http(
                "POST", f"{live.base}/api/v2/backfills", body, {"Authorization": f"Bearer {token}"}
            )
        except TimeoutError:  # no answer in time (waiting for SQLite's lock): as a locked answer
            status, payload = 503, b"no answer in time"
        if status in (200, 201):
            backfill_id = int(json.loads(payload)["id"])
            break
        # SQLite "database is locked" while the scheduler writes: 503, or 500 "Database error"
        db_locked = is_locked_answer(status, payload)
        assert (status == 409 or db_locked) and time.monotonic() < deadline, (status, payload[:2000])
        if db_locked:  # try again
            locked = True
        else:  # 409 after a 503: that try's backfill was left behind
            assert locked, f"{dag_id}: another backfill is running: {payload[:2000]!r}"
            listed = live.api("GET", f"/backfills?dag_id={dag_id}&limit=100", token=token)["backfills"]
            (active,) = [b for b in listed if b["completed_at"] is None]
            queued = queued_by_it()
            if len(queued) == len(DAYS):
                backfill_id = int(active["id"])
                break
            if queued:
                _completed(live, token, int(active["id"]))
                before = {rid: r["queued_at"] for rid, r in _days_runs(live, token, dag_id).items()}
            else:
                live.api("PUT", f"/backfills/{active['id']}/cancel", token=token)
            locked = False
        time.sleep(0.5)
    ids = queued_by_it()
    assert len(ids) == len(DAYS), (before, _days_runs(live, token, dag_id))
    return backfill_id, ids


def _wait_backfill(
    live: LiveAirflow, token: str, dag_id: str, backfill: tuple[int, set[str]], timeout: float = RUN_TIMEOUT
) -> dt.datetime:
    """Wait until the scheduler marks the backfill completed (none of its runs queued or running),
    then check that every run of it succeeded; fail at once, with the task states, on a failed run.
    Returns when the backfill was created."""
    backfill_id, run_ids = backfill
    deadline = time.monotonic() + timeout
    while True:
        state = live.api("GET", f"/backfills/{backfill_id}", token=token)
        completed = state["completed_at"] is not None
        runs = _days_runs(live, token, dag_id)
        for rid in run_ids:
            if runs[rid]["state"] == "failed":
                states = [(t["task_id"], t["map_index"], t["state"]) for t in _tis(live, token, dag_id, rid)]
                raise AssertionError(f"{dag_id} {rid} failed: {states}\n{live.tail('scheduler', 2000)}")
        if completed:
            assert {rid: runs[rid]["state"] for rid in run_ids} == dict.fromkeys(run_ids, "success")
            return dt.datetime.fromisoformat(state["created_at"])
        if time.monotonic() > deadline:
            every = [(r["dag_run_id"], r["run_type"], r["state"]) for r in _runs(live, token, dag_id)]
            raise AssertionError(
                f"{dag_id}: backfill {backfill_id} not completed after {timeout} s: {state}\n"
                f"runs: {every}\n{live.tail('scheduler', 3000)}"
            )
        time.sleep(1)


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


INGEST_TASK = "ingest__db__events"
TAG_TASK = "table.create_tag"


def _ti(live: LiveAirflow, token: str, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> Any:
    suffix = f"/{map_index}" if map_index >= 0 else ""
    return live.api("GET", f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}{suffix}", token=token)


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
    tags_conf = {"include": r"db\.t"}
    ingest = _backfill(live, token, "paimon_ingest", ingest_conf)
    tags = _backfill(live, token, "paimon_tags", tags_conf)
    for dag_id in ("paimon_ingest", "paimon_tags"):
        _unpause_after_backfill(live, token, dag_id)
    _wait_backfill(live, token, "paimon_ingest", ingest)
    _wait_backfill(live, token, "paimon_tags", tags)
    first = time.monotonic() - started

    events = _table(wh, "db.events")
    data = events.to_arrow()
    by_day = {d: data.column("dt").to_pylist().count(d) for d in DAYS}
    assert by_day == {d: ROWS[d] for d in DAYS} and data.num_rows == sum(by_day.values())
    assert sorted(set(map(str, data.column("dt").to_pylist()))) == DAYS  # 3 partitions
    snapshots = list(events.snapshot_manager.snapshots())
    assert len(snapshots) == 3
    day_tags = {name: snap.id for name, snap in _table(wh, "db.t").tag_manager.tags().items()}
    assert day_tags == {d: i + 1 for i, d in enumerate(DAYS)}

    # the same backfills again: completed runs are cleared and re-run by a new backfill, and change nothing
    again_ingest = _backfill(live, token, "paimon_ingest", ingest_conf)
    again_tags = _backfill(live, token, "paimon_tags", tags_conf)
    assert again_ingest[1] == ingest[1] and again_tags[1] == tags[1]  # the same runs
    assert again_ingest[0] > ingest[0] and again_tags[0] > tags[0]
    ingest_created = _wait_backfill(live, token, "paimon_ingest", again_ingest)
    tags_created = _wait_backfill(live, token, "paimon_tags", again_tags)
    events = _table(wh, "db.events")
    assert len(list(events.snapshot_manager.snapshots())) == 3  # no new commit at all
    assert events.to_arrow().num_rows == data.num_rows
    tags_now = {name: snap.id for name, snap in _table(wh, "db.t").tag_manager.tags().items()}
    assert tags_now == day_tags  # each tag still on its day's own snapshot
    # every task ran again (started after the second backfill was created) and had nothing to do
    for rid in ingest[1]:
        result = _xcom(live, token, "paimon_ingest", rid, INGEST_TASK)
        assert result["already_committed"] is True and result["in_task_process"] is True, result  # no JVM
        ti = _ti(live, token, "paimon_ingest", rid, INGEST_TASK)
        assert dt.datetime.fromisoformat(ti["start_date"]) > ingest_created and ti["state"] == "success", ti
    for rid in tags[1]:
        result = _xcom(live, token, "paimon_tags", rid, TAG_TASK, 0)
        assert result["created"] is False and result["reason"] == "exists", result
        assert result["snapshot_id"] == day_tags[result["tag_name"]], result
        ti = _ti(live, token, "paimon_tags", rid, TAG_TASK, 0)
        assert dt.datetime.fromisoformat(ti["start_date"]) > tags_created and ti["state"] == "success", ti
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
    deadline = time.monotonic() + RUN_TIMEOUT
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

    _wait_runs(live, token, "paimon_ingest", {run_id})
    ti = live.api(
        "GET", f"/dags/paimon_ingest/dagRuns/{run_id}/taskInstances/ingest__db__events", token=token
    )
    assert ti["try_number"] == 2 and ti["state"] == "success", ti
    result = _xcom(live, token, "paimon_ingest", run_id, "ingest__db__events")
    assert result["already_committed"] is True and result["commit_user"] == commit_user, result
    assert result["in_task_process"] is True  # the retry started no JVM
    events = _table(wh, "db.events")
    new = [s for s in events.snapshot_manager.snapshots() if s.id not in before]
    assert [(s.commit_user, s.commit_identifier) for s in new] == [(commit_user, 1)]
    data = events.to_arrow()
    assert data.column("dt").to_pylist().count(KILL_DAY) == ROWS[KILL_DAY]
    keys = list(zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), strict=True))
    assert len(keys) == len(set(keys))  # no duplicate rows anywhere
    print(f"\nkilled after commit, retried: one commit ({new[0].id}); {time.monotonic() - started:.1f} s")
