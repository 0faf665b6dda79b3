"""The whole production topology on loopback, driven through Airflow as a user would.

Started here, each as its own processes: the S3 API server (moto) holding the warehouse, a Spark
standalone cluster (a master and two 1-core workers whose environment carries the S3 endpoint and
credentials, as the ``spark-worker`` service of ``docker/compose.yaml`` has), PostgreSQL, and
Airflow on it (``docker/entrypoint.sh`` roles, LocalExecutor). The ``paimon_default`` connection
names an ``s3://`` warehouse with the credentials as Login/Password (the table is created there
up front, partitioned by day); ``spark_default`` names the
cluster's ``spark://`` master. ``spark-submit`` reads the cluster-wide executor size from
``$SPARK_CONF_DIR/spark-defaults.conf``, as a deployment configures it.

Over the REST API v2: a backfill of ``paimon_ingest`` over two days (the run conf points the
registry's ``db.events`` at local landing files, three Parquet files a day), each day's ingest
submitted to the cluster (the master lists the finished applications, executors ran on both
workers); then ``paimon_maintenance`` (planned: full compaction and orphan cleanup where due).
pypaimon, in its own process with its own S3 client, reads exactly the ingested rows, one
partition per day, from the same bucket; our reader sees the compaction and the tag.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from tests.distributed.airflow_topology import EntrypointAirflow, launch_topology
from tests.distributed.postgres import Postgres
from tests.distributed.s3_server import ACCESS_KEY, SECRET_KEY, S3Server
from tests.distributed.spark_cluster import EXECUTOR_MEMORY, WORKER_CORES, SparkCluster
from tests.peer_python import run_peer_script

pytestmark = pytest.mark.distributed

TABLE = "db.events"  # the registry's ingest entry (dags/paimon_tables.yaml)
INGEST, MAINTENANCE = "paimon_ingest", "paimon_maintenance"
DAYS = ("2026-11-01", "2026-11-02")
FILES_PER_DAY, ROWS_PER_FILE = 3, 10
RUN_TIMEOUT = 600.0

_PYPAIMON_READ = """
import json, sys
from pypaimon import CatalogFactory
endpoint, key, secret, warehouse, name = sys.argv[1:]
catalog = CatalogFactory.create({
    "warehouse": warehouse,
    "fs.s3.endpoint": endpoint,
    "fs.s3.accessKeyId": key,
    "fs.s3.accessKeySecret": secret,
    "fs.s3.region": "us-east-1",
    "fs.s3.path-style-access": "true",
})
table = catalog.get_table(name)
rb = table.new_read_builder()
t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
print(json.dumps({"id": t.column("id").to_pylist(), "dt": [str(d) for d in t.column("dt").to_pylist()]}))
"""


#: A driver on the cluster whose environment has other S3 credentials than the workers': what
#: do its executors see, and what does the driver's own REST API show of the forwarded secret?
_EXECUTOR_ENV_PROBE = """
import json, os, sys, urllib.request
from spark_jobs.common.args import JobConfig
from spark_jobs.common.session import get_spark
master, warehouse, conf = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = JobConfig(job="probe", warehouse=warehouse, table="db.t", master=master, conf=conf)
spark = get_spark(config.session_config())
sc = spark.sparkContext
keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
seen = sc.parallelize(range(4), 4).map(lambda _: [os.getcwd(), *(os.environ.get(k) for k in keys)]).collect()
url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/environment"
with urllib.request.urlopen(url, timeout=30) as resp:
    props = dict(json.load(resp)["sparkProperties"])
spark.stop()
print(json.dumps({"seen": seen, "props": {k: v for k, v in props.items() if "executorEnv.AWS" in k}}))
"""


@dataclass
class Topology:
    s3: S3Server
    cluster: SparkCluster
    pg: Postgres
    live: EntrypointAirflow
    token: str
    warehouse: str
    landing: Path
    started: float


def _landing(root: Path) -> Path:
    """``events/dt=D/part-N.parquet``: ids ``day * 1000 + n``, no ``dt`` column (ingest fills it)."""
    base = root / "landing" / "events"
    for d, day in enumerate(DAYS):
        folder = base / f"dt={day}"
        folder.mkdir(parents=True)
        for f in range(FILES_PER_DAY):
            ids = [d * 1000 + f * ROWS_PER_FILE + i for i in range(ROWS_PER_FILE)]
            table = pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{day}#{i}" for i in ids]})
            pq.write_table(table, folder / f"part-{f}.parquet")
    return base


def _create_table(warehouse: str, s3: S3Server) -> None:
    """``db.events`` as its owner would create it before the first ingest: partitioned by day,
    compacted once a partition has 2 files (Spark writes about one file per core and day here;
    Paimon's default of 5 would leave this little data alone)."""
    catalog = FileSystemCatalog(warehouse, storage_options=s3.storage_options())
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    catalog.create_table(TABLE, schema, partition_keys=["dt"], options={"compaction.min.file-num": "2"})


def _spark_conf_dir(root: Path, cluster: SparkCluster) -> Path:
    """``spark-defaults.conf`` of the Airflow side: executors sized for the 1-core/768m workers,
    the driver on loopback. ``spark.pyspark.python`` stays unset: tasks submit with their own
    interpreter (``PYSPARK_PYTHON``), which has the project installed."""
    conf = {k: v for k, v in cluster.driver_conf().items() if k != "spark.pyspark.python"}
    conf.update({"spark.executor.memory": EXECUTOR_MEMORY, "spark.executor.cores": str(WORKER_CORES)})
    out = root / "spark-conf"
    out.mkdir()
    (out / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in sorted(conf.items())))
    return out


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    root = tmp_path_factory.mktemp("full-topology")
    started = time.monotonic()
    landing = _landing(root)
    s3 = S3Server().start()
    cluster: SparkCluster | None = None
    pg: Postgres | None = None
    live: EntrypointAirflow | None = None
    try:
        # the spark-worker service's environment in docker/compose.yaml
        worker_env = {
            k: v
            for k, v in s3.env().items()
            if k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL")
        }
        cluster = SparkCluster.start(root / "spark", workers=2, worker_env=worker_env)
        pg = Postgres.start(root)
        warehouse = s3.url("wh")
        _create_table(warehouse, s3)
        paimon_conn = {
            "conn_type": "paimon",
            "login": ACCESS_KEY,
            "password": SECRET_KEY,
            "extra": {"warehouse": warehouse, "endpoint_url": s3.endpoint},
        }
        host, port = cluster.master_url.rsplit(":", 1)
        live = launch_topology(
            root / "airflow",
            pg.url,
            parallelism=3,
            pool_slots=2,
            extra_env={
                "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps(paimon_conn),
                "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
                    {"conn_type": "spark", "host": host, "port": int(port)}
                ),
                "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(root / "airflow" / "logs"),
                # only the runs made here: no scheduled run of a DAG once it is unpaused
                "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
                "PAIMON_RETRY_DELAY_SECONDS": "2",
                "SPARK_CONF_DIR": str(_spark_conf_dir(root, cluster)),
            },
        )
        live.wait_ready(timeout=240)
        print(f"\ntopology up in {time.monotonic() - started:.1f} s")
        yield Topology(s3, cluster, pg, live, live.token(), warehouse, landing, started)
    finally:
        if live is not None:
            live.stop()
        if pg is not None:
            pg.stop()
        if cluster is not None:
            cluster.stop()
        s3.stop()


def _runs(top: Topology, dag_id: str, run_type: str) -> list[dict[str, Any]]:
    runs = top.live.api("GET", f"/dags/{dag_id}/dagRuns?limit=100", token=top.token)["dag_runs"]
    return [r for r in runs if r["run_type"] == run_type]


def _tis(top: Topology, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    path = f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances?limit=100"
    return list(top.live.api("GET", path, token=top.token)["task_instances"])


def _fail(top: Topology, dag_id: str, run: dict[str, Any]) -> str:
    states = [
        (t["task_id"], t["rendered_map_index"], t["state"]) for t in _tis(top, dag_id, run["dag_run_id"])
    ]
    logs = sorted(Path(top.live.env["AIRFLOW__LOGGING__BASE_LOG_FOLDER"]).rglob("*.log"))
    tails = "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in logs[-4:])
    return (
        f"{dag_id} {run['dag_run_id']}: {run['state']} {states}\n{tails}\n{top.live.tail('scheduler', 2000)}"
    )


def _wait_runs(top: Topology, dag_id: str, run_type: str, n: int) -> list[dict[str, Any]]:
    """Until ``n`` runs of ``run_type`` are finished; all must have succeeded."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        runs = _runs(top, dag_id, run_type)
        failed = [r for r in runs if r["state"] == "failed"]
        assert not failed, _fail(top, dag_id, failed[0])
        if len(runs) == n and all(r["state"] == "success" for r in runs):
            return runs
        assert time.monotonic() < deadline, [(r["dag_run_id"], r["state"]) for r in runs]
        time.sleep(2)


def _xcom(top: Topology, dag_id: str, run_id: str, task_id: str, *, map_index: int = -1) -> Any:
    path = f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/xcomEntries/return_value?map_index={map_index}"
    value = top.live.api("GET", path, token=top.token)["value"]
    return json.loads(value) if isinstance(value, str) else value


def _executor_dirs(cluster: SparkCluster, app_id: str) -> list[Path]:
    """The executor directories ``app_id`` got on each worker (``work/<app>/<executor id>``)."""
    return [w.work_dir / app_id for w in cluster.workers if (w.work_dir / app_id).is_dir()]


def test_backfill_and_maintenance_through_airflow_on_the_cluster_and_s3(
    topology: Topology, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = topology
    t0 = time.monotonic()
    for dag_id in (INGEST, MAINTENANCE):
        top.live.api("PATCH", f"/dags/{dag_id}", {"is_paused": False}, token=top.token)

    # 1. a backfill of paimon_ingest over two days, each day's ingest submitted to the cluster
    backfill = top.live.api(
        "POST",
        "/backfills",
        {
            "dag_id": INGEST,
            "from_date": f"{DAYS[0]}T00:00:00Z",
            "to_date": f"{DAYS[-1]}T00:00:00Z",
            "max_active_runs": 1,
            "dag_run_conf": {"sources": {TABLE: str(top.landing / "dt={ds}")}},
        },
        token=top.token,
    )
    runs = _wait_runs(top, INGEST, "backfill", len(DAYS))
    assert backfill["dag_id"] == INGEST and backfill["dag_run_conf"]["sources"], backfill
    assert sorted(r["data_interval_start"][:10] for r in runs) == list(DAYS)
    t_backfill = time.monotonic() - t0

    results = {
        r["data_interval_start"][:10]: _xcom(top, INGEST, r["dag_run_id"], "ingest__db__events") for r in runs
    }
    for day, result in results.items():
        assert result["status"] == "ok" and result["logical_date"] == day, result
        assert result["delta_record_count"] == FILES_PER_DAY * ROWS_PER_FILE, result
        assert not result["already_committed"], result

    # the master ran one application per day; each had executors on both workers
    state = top.cluster.state()
    apps = [a for a in state["completedapps"] if "ingest" in a["name"]]
    assert len(apps) == len(DAYS) and not state["activeapps"], state
    for app in apps:
        assert app["state"] == "FINISHED", app
        assert len(_executor_dirs(top.cluster, app["id"])) == 2, (app, top.cluster.workers)

    # 2. paimon_maintenance, planned: full compaction and orphan cleanup are due; the snapshots are
    # within retention and the daily tag (yesterday's end) has no snapshot yet, so neither runs
    t1 = time.monotonic()
    at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    run = top.live.api(
        "POST",
        f"/dags/{MAINTENANCE}/dagRuns",
        {"logical_date": at.isoformat().replace("+00:00", "Z"), "conf": {"compaction": "full", "mode": "apply"}},
        token=top.token,
    )
    (done,) = _wait_runs(top, MAINTENANCE, "manual", 1)
    assert done["dag_run_id"] == run["dag_run_id"]
    steps = {t["task_id"]: t["state"] for t in _tis(top, MAINTENANCE, run["dag_run_id"])}
    assert steps == {
        "plan": "success",
        "decide": "success",
        "approve": "skipped",
        "go": "success",
        "batches": "success",
        "spark_groups": "success",
        "maintain": "success",  # one batch: every table's light actions and small compactions
        "compact_on_spark": "skipped",  # nothing over in_process_max_mb
        "lag_alerts": "success",
    }, steps
    t_maintenance = time.monotonic() - t1
    batch = _xcom(top, MAINTENANCE, run["dag_run_id"], "maintain", map_index=0)
    outcomes = {(o["table"], o["action"]): o for o in batch["outcomes"]}
    compacted = outcomes[(TABLE, "compact")]["result"]
    cleaned = outcomes[(TABLE, "remove_orphan_files")]
    assert (
        compacted["files_written"] == len(DAYS)
        and compacted["rows_written"] == len(DAYS) * FILES_PER_DAY * ROWS_PER_FILE
    ), compacted
    assert (TABLE, "expire_snapshots") not in outcomes and (TABLE, "create_tag") not in outcomes, outcomes
    # every file on the bucket is live or younger than the 2-day minimum age: nothing deleted
    assert cleaned["status"] == "no_op" and cleaned["result"]["candidates_scanned"] > 0, cleaned

    # 3. pypaimon (own process, own S3 client) reads exactly the ingested rows, a partition a day
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    out = json.loads(
        run_peer_script(_PYPAIMON_READ, top.s3.endpoint, ACCESS_KEY, SECRET_KEY, top.warehouse, TABLE)
    )
    expected = sorted(d * 1000 + i for d in range(len(DAYS)) for i in range(FILES_PER_DAY * ROWS_PER_FILE))
    assert sorted(out["id"]) == expected
    per_day = {day: out["dt"].count(day) for day in set(out["dt"])}
    assert per_day == dict.fromkeys(DAYS, FILES_PER_DAY * ROWS_PER_FILE)
    assert all(out["dt"][i] == DAYS[out["id"][i] // 1000] for i in range(len(out["id"])))

    # ... and our reader sees what maintenance did: compacted to one file a partition, tagged
    table = FileSystemCatalog(top.warehouse, storage_options=top.s3.storage_options()).get_table(TABLE)
    snapshots = list(table.snapshot_manager.snapshots())
    kinds = [str(s.commit_kind).rsplit(".", 1)[-1] for s in snapshots]
    assert len(snapshots) == len(DAYS) + 1 and kinds[-1] == "COMPACT" and "COMPACT" not in kinds[:-1], kinds
    before = table.new_file_store_scan().live_entries(snapshots[-2])
    after = table.new_file_store_scan().live_entries(snapshots[-1])
    assert len(before) > len(DAYS)  # a file per Spark task: several a day (Spark packs small landing files)
    assert len(after) == len(DAYS), after
    assert table.tag_manager.tags() == {}  # the daily tag holds a day's end: no snapshot that old yet
    assert sorted(table.to_arrow().column("id").to_pylist()) == expected

    wall = time.monotonic() - top.started
    print(
        f"\nfull topology: backfill of {len(DAYS)} days {t_backfill:.1f} s, maintenance {t_maintenance:.1f} s, "
        f"module wall (incl. start-up) {wall:.1f} s"
    )


def test_executors_get_the_drivers_s3_settings_redacted(topology: Topology, tmp_path: Path) -> None:
    """Credentials only the driver has (the Airflow connection's) reach the executors on the
    workers, over the workers' own; Spark's REST API shows the secret redacted."""
    conf = {k: v for k, v in topology.cluster.driver_conf().items() if k != "spark.pyspark.python"}
    conf.update({"spark.ui.enabled": "true", "spark.ui.port": "0"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        AWS_ACCESS_KEY_ID="key-of-the-connection",
        AWS_SECRET_ACCESS_KEY="secret-of-the-connection",
    )
    argv = [
        sys.executable,
        "-c",
        _EXECUTOR_ENV_PROBE,
        topology.cluster.master_url,
        topology.warehouse,
        json.dumps(conf),
    ]
    proc = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    work_dirs = tuple(str(w.work_dir) for w in topology.cluster.workers)
    for cwd, key, secret in out["seen"]:
        assert cwd.startswith(work_dirs), cwd  # ran in an executor on a worker
        assert (key, secret) == ("key-of-the-connection", "secret-of-the-connection")  # not the worker's
    assert out["props"]["spark.executorEnv.AWS_ACCESS_KEY_ID"] == "key-of-the-connection"
    shown = out["props"]["spark.executorEnv.AWS_SECRET_ACCESS_KEY"]
    assert "secret-of-the-connection" not in shown and "redacted" in shown, shown
