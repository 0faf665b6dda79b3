"""Airflow with its metadata in a real PostgreSQL and the LocalExecutor running tasks in parallel.

The topology's own commands (``docker/entrypoint.sh postgres|airflow-init|api-server|scheduler|
dag-processor|triggerer``) on loopback: Debian's PostgreSQL server with password auth, Airflow
migrated into it, the LocalExecutor with parallelism 3. ``paimon_maintenance`` triggered over the
REST API v2 maintains 3 tables (full compaction without a JVM, a tag, snapshot expiry, orphan
cleanup; one table per batch); the batches run on the LocalExecutor (never more at once than the
parallelism), Airflow's rows are in PostgreSQL, and each table is
compacted, tagged, expired and rid of its orphan with every row kept.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg2  # type: ignore[import-untyped]
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import paimon_conn
from tests.airflow.tables import millis, rows
from tests.distributed.airflow_topology import EntrypointAirflow, launch_topology
from tests.distributed.postgres import Postgres

pytestmark = pytest.mark.distributed

TABLES = ("db.a", "db.b", "db.c")
PARALLELISM = 3
#: 6 commits (compaction.min.file-num is 5), at most 3 snapshots kept on commit
COMMIT_TIMES = [millis("2026-01-03", h) for h in range(1, 7)]
KEEP3 = {"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1"}
DAG_ID = "paimon_maintenance"


def _warehouse(root: Path) -> tuple[str, dict[str, str]]:
    """3 tables of 6 snapshots each (only the last 3 kept), each with an old orphan data file."""
    from paimon_core.utils.clock import ManualClock

    wh = str(root / "wh")
    clock = ManualClock(COMMIT_TIMES[0])
    catalog = FileSystemCatalog(wh, clock=clock)
    catalog.create_database("db")
    orphans = {}
    old = dt.datetime(2025, 12, 1, tzinfo=dt.UTC).timestamp()
    for name in TABLES:
        clock.set(COMMIT_TIMES[0])
        table = catalog.create_table(name, rows(0, 1).schema, options=KEEP3)
        for i, t in enumerate(COMMIT_TIMES):
            clock.set(t)
            table.write_arrow(rows(i * 10, 10))
        orphan = os.path.join(table.path, "bucket-0", "data-orphan.parquet")
        with open(orphan, "wb") as f:
            f.write(b"orphan")
        os.utime(orphan, (old, old))
        orphans[name] = orphan
    return wh, orphans


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("airflow-pg")
    wh, orphans = _warehouse(root)
    started = time.monotonic()
    pg = Postgres.start(root)
    pg_up = time.monotonic() - started
    live: EntrypointAirflow | None = None
    try:
        live = launch_topology(
            root / "airflow",
            pg.url,
            parallelism=PARALLELISM,
            pool_slots=PARALLELISM,
            extra_env={
                "AIRFLOW_CONN_PAIMON_DEFAULT": paimon_conn(wh),
                "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[1]"}),
                "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(root / "airflow" / "logs"),
                # only the runs triggered here: no scheduled run of a DAG once it is unpaused
                "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
            },
        )
        live.wait_ready(timeout=180)
        print(f"\nPostgreSQL up in {pg_up:.1f} s; Airflow on it up in {time.monotonic() - started:.1f} s")
        yield {"pg": pg, "live": live, "wh": wh, "orphans": orphans, "token": live.token()}
    finally:
        if live is not None:
            live.stop()
        pg.stop()


def _wait_run(live: EntrypointAirflow, token: str, run_id: str, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        run = live.api("GET", f"/dags/{DAG_ID}/dagRuns/{run_id}", token=token)
        if run["state"] in ("success", "failed"):
            if run["state"] == "failed":
                tis = _tis(live, token, run_id)
                states = [(t["task_id"], t["rendered_map_index"], t["state"]) for t in tis]
                raise AssertionError(f"{run_id} failed: {states}\n{live.tail('scheduler', 3000)}")
            return dict(run)
        assert time.monotonic() < deadline, f"{run_id}: {run['state']} after {timeout} s"
        time.sleep(1)


def _tis(live: EntrypointAirflow, token: str, run_id: str) -> list[dict[str, Any]]:
    path = f"/dags/{DAG_ID}/dagRuns/{run_id}/taskInstances?limit=100"
    return list(live.api("GET", path, token=token)["task_instances"])


def _max_concurrent(intervals: list[tuple[dt.datetime, dt.datetime]]) -> int:
    """The most intervals open at one instant (a start at the very end of another does not count)."""
    events = sorted(
        [(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1])
    )
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def test_max_concurrent_counts_overlaps_only() -> None:
    t = [dt.datetime(2026, 1, 1, 0, 0, s, tzinfo=dt.UTC) for s in range(6)]
    assert _max_concurrent([(t[0], t[1]), (t[1], t[2]), (t[2], t[3])]) == 1  # back to back
    assert _max_concurrent([(t[0], t[3]), (t[1], t[2]), (t[2], t[4])]) == 2
    assert _max_concurrent([(t[0], t[5]), (t[1], t[4]), (t[2], t[3])]) == 3


def test_metadata_is_in_postgres(topology: dict[str, Any]) -> None:
    live, token, pg = topology["live"], topology["token"], topology["pg"]
    assert live.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == pg.url
    health = live.api("GET", "/monitor/health", token=token)
    assert health["metadatabase"]["status"] == "healthy", health
    with psycopg2.connect(pg.dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT dag_id FROM dag WHERE dag_id = %s", (DAG_ID,))
        assert cur.fetchall() == [(DAG_ID,)]
        cur.execute("SELECT slots FROM slot_pool WHERE pool = 'paimon_spark'")
        assert cur.fetchall() == [(PARALLELISM,)]
    assert not list((live.home).glob("*.db"))  # no SQLite database anywhere


def test_postgres_wants_the_password(topology: dict[str, Any]) -> None:
    pg = topology["pg"]
    with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
        psycopg2.connect(pg.dsn.replace(f"password={pg.password}", "password=wrong"), connect_timeout=5)


def test_maintenance_runs_tables_in_parallel_on_local_executor(topology: dict[str, Any]) -> None:
    live, token, wh, pg = topology["live"], topology["token"], topology["wh"], topology["pg"]
    started = time.monotonic()
    live.api("PATCH", f"/dags/{DAG_ID}", {"is_paused": False}, token=token)
    # one table per batch, so the three batches can run at once; compaction in the task, no JVM
    conf = {"compaction": "full", "compaction_mode": "local", "mode": "apply", "batch_size": 1}
    run = live.api(
        "POST", f"/dags/{DAG_ID}/dagRuns", {"logical_date": "2026-01-05T00:00:00Z", "conf": conf}, token=token
    )
    run = _wait_run(live, token, run["dag_run_id"])
    elapsed = time.monotonic() - started

    every = _tis(live, token, run["dag_run_id"])
    tis = [t for t in every if t["task_id"] == "maintain"]
    assert len(tis) == len(TABLES), [(t["task_id"], t["map_index"]) for t in every]
    assert {t["state"] for t in tis} == {"success"}, [(t["task_id"], t["state"]) for t in every]
    labels = sorted(str(t["rendered_map_index"]) for t in tis)  # each batch named by what it does
    assert len(set(labels)) == len(TABLES) and all(labels), labels
    spans = {
        (t["task_id"], str(t["map_index"])): (
            dt.datetime.fromisoformat(t["start_date"]),
            dt.datetime.fromisoformat(t["end_date"]),
        )
        for t in tis
    }
    overlapping_tables = {
        (a[1], b[1])
        for a, (sa, ea) in spans.items()
        for b, (sb, eb) in spans.items()
        if a[1] < b[1] and sa < eb and sb < ea
    }
    peak = _max_concurrent(list(spans.values()))
    # never more batches at once than the executor's parallelism (each batch is a second or two of
    # work here, so whether two overlap depends on when the executor picks them up)
    assert 1 <= peak <= PARALLELISM, (peak, spans)
    with psycopg2.connect(pg.dsn) as conn, conn.cursor() as cur:  # the same facts, in PostgreSQL
        cur.execute(
            "SELECT count(*) FROM task_instance WHERE dag_id = %s AND run_id = %s AND task_id = 'maintain' "
            "AND state = 'success'",
            (DAG_ID, run["dag_run_id"]),
        )
        assert cur.fetchone() == (len(TABLES),)

    # the daily tag: the last whole UTC day before the run's data interval end, as of that day's end
    end = dt.datetime.fromisoformat(run["data_interval_end"].replace("Z", "+00:00"))
    tag_day = (end - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    catalog = FileSystemCatalog(wh)
    for name in TABLES:
        table = catalog.get_table(name)
        latest = table.snapshot_manager.latest_snapshot()
        assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT"), name
        assert {k: v.id for k, v in table.tag_manager.tags().items()} == {tag_day: 6}, name
        assert (table.snapshot_manager.earliest_snapshot_id() or 0) >= 5, name
        assert not os.path.exists(topology["orphans"][name]), name
        data = table.to_arrow()
        assert sorted(data.column("id").to_pylist()) == list(range(60)), name
    print(
        f"\npaimon_maintenance over {len(TABLES)} tables on PostgreSQL + LocalExecutor: {elapsed:.1f} s; "
        f"peak {peak} tasks at once; overlapping tables {sorted(overlapping_tables)}"
    )
