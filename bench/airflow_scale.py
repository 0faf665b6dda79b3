"""One ``paimon_maintenance`` pass over many small tables, through ``dag.test()``: where the time goes.

::

    python -m bench.airflow_scale                        # 100 tables, as the DAG runs today
    python -m bench.airflow_scale --tables 5 --no-in-process --out bench/results/airflow-scale-jvm.json
    python -m bench.airflow_scale --live --tables 20 --out bench/results/airflow-scale-live.json

Builds, in a temporary directory, a warehouse of ``--tables`` small tables (half append tables,
half primary-key tables with one bucket; ``--snapshots`` commits each, so each has that many
small files and minor compaction has work), a registry (``paimon_tables.yaml``: every table of
the warehouse, the defaults: minor compaction in ``distributed`` mode, a daily tag, expiry,
orphan cleanup) next to copies of ``paimon_maintenance.py`` and its shared modules, and a fresh
SQLite Airflow metadata DB; then runs the DAG once with ``dag.test()`` (every task in this
process, one after the other, as a single worker would).

Measured: wall and CPU time of the pass (this process and its children: spark-submit, the JVMs,
job subprocesses), the task instances by task and state, each task type's total and mean
duration (from the task instances' start and end), the spark-submits (JVM starts) and job
subprocesses the operators launched, with their time, and how many compactions were settled in
the task process. ``--no-in-process`` turns the operators' in-process shortcut off (every
compaction goes to spark-submit, as before it existed) to measure the JVM cost per table.
``--live`` runs the pass on a real Airflow on loopback instead (``tests.airflow.live``: api-server,
scheduler, dag-processor; LocalExecutor, parallelism 2, SQLite; every task instance its own
process), triggered and read over REST; its JVM count comes from the compactions' XCom results.
Prints and writes one JSON document (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DAG_FILES = ("_paimon_common.py", "_paimon_registry.py", "paimon_maintenance.py")

REGISTRY = """\
# bench.airflow_scale: every table of the bench warehouse, the registry's defaults
paimon_conn_id: paimon_default
spark_conn_id: spark_default
include: "bench\\\\..*"
exclude: ""
defaults:
  compaction: minor
  compaction_mode: distributed
  snapshot_retain_max: null
  snapshot_retain_min: null
  tag_period: daily
  tag_retention: "7 d"
  orphan_min_age_days: 2
"""


def _configure(home: Path, dags: Path, warehouse: str) -> None:
    """Airflow's environment, before airflow is imported (it reads its configuration once)."""
    assert "airflow" not in sys.modules
    os.environ.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": "paimon", "extra": {"warehouse": warehouse}}),
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
    )
    for path in (str(REPO / "plugins"), str(REPO), str(dags)):
        if path not in sys.path:
            sys.path.insert(0, path)


def _warehouse(warehouse: str, tables: int, snapshots: int) -> dict[str, Any]:
    """``tables`` small tables of ``snapshots`` commits each (1,000 rows a commit)."""
    import pyarrow as pa

    from paimon_core import FileSystemCatalog

    started = time.monotonic()
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("bench")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("x", pa.float64())])
    n = 1000
    for i in range(tables):
        pk = i % 2 == 1
        table = catalog.create_table(
            f"bench.t{i:03d}",
            schema,
            primary_keys=["id"] if pk else [],
            options={"bucket": "1"} if pk else {},
        )
        for s in range(snapshots):
            ids = pa.array(range(s * n // 2, s * n // 2 + n), pa.int64())  # PK: half of them updates
            table.write_arrow(
                pa.table({"id": ids, "v": pa.array([f"r{s}"] * n), "x": pa.array([float(s)] * n)}, schema=schema)
            )
    return {"tables": tables, "snapshots_each": snapshots, "rows_per_commit": n, "seconds": round(time.monotonic() - started, 1)}


class _Launches:
    """Counts and times the operators' spark-submits and job subprocesses (this process runs the tasks)."""

    def __init__(self, *, in_process: bool) -> None:
        from paimon_airflow.operators import spark_job

        self.calls: dict[str, list[float]] = defaultdict(list)
        op = spark_job.PaimonSparkJobOperator
        for name, kind in (("_run_spark_submit", "spark_submit"), ("_run_subprocess", "subprocess")):
            original = getattr(op, name)

            def timed(self_op: Any, argv: list[str], _original: Any = original, _kind: str = kind) -> Any:
                started = time.monotonic()
                try:
                    return _original(self_op, argv)
                finally:
                    self.calls[f"{_kind}:{self_op.job}"].append(time.monotonic() - started)

            setattr(op, name, timed)
        if not in_process:

            def never(_op: Any, _argv: list[str]) -> dict[str, Any] | None:
                return None

            spark_job.PaimonCompactOperator.result_in_task_process = never  # type: ignore[method-assign,assignment]

    def to_dict(self) -> dict[str, Any]:
        return {k: {"count": len(v), "total_s": round(sum(v), 1), "mean_s": round(sum(v) / len(v), 2)} for k, v in self.calls.items()}


def _proc_cpu(roots: set[int]) -> float:
    """CPU seconds of these processes, their live descendants and the children each reaped
    (``/proc/<pid>/stat``: utime, stime, cutime, cstime)."""
    stats: dict[int, list[str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            stats[int(stat.parent.name)] = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue
    tree, grew = set(roots), True
    while grew:
        found = {pid for pid, f in stats.items() if int(f[1]) in tree} - tree
        grew = bool(found)
        tree |= found
    ticks = sum(sum(int(x) for x in stats[pid][11:15]) for pid in tree if pid in stats)
    return ticks / os.sysconf("SC_CLK_TCK")


def _live(ns: argparse.Namespace, root: Path, dags: Path, warehouse: str) -> dict[str, Any]:
    """The pass on a real Airflow on loopback (api-server, scheduler, dag-processor; LocalExecutor,
    parallelism 2, SQLite), triggered and read over REST: every task instance is its own process."""
    import datetime as dt

    from tests.airflow import conftest
    from tests.airflow.live import launch

    shutil.rmtree(conftest._HOME, ignore_errors=True)  # the test conftest's home: not used here
    live = launch(
        root / "airflow",
        ("api-server", "scheduler", "dag-processor"),
        migrate=True,
        reserialize=True,
        extra_env={
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": "paimon", "extra": {"warehouse": warehouse}}),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(root / "airflow" / "logs"),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        },
    )
    try:
        live.cli("pools", "set", "paimon_spark", "2", "Spark jobs")
        live.wait_ready()
        token = live.token()
        pids = {p.pid for p in live.procs.values()}
        load = os.getloadavg()
        cpu0, wall0 = _proc_cpu(pids), time.monotonic()
        logical = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        run = live.api("POST", "/dags/paimon_maintenance/dagRuns", {"logical_date": logical, "conf": {}}, token=token)
        live.api("PATCH", "/dags/paimon_maintenance", {"is_paused": False}, token=token)
        path = f"/dags/paimon_maintenance/dagRuns/{run['dag_run_id']}"
        while (state := live.api("GET", path, token=token)["state"]) not in ("success", "failed"):
            time.sleep(2)
        wall, cpu = time.monotonic() - wall0, _proc_cpu(pids) - cpu0
        tis: list[dict[str, Any]] = []
        while page := live.api("GET", f"{path}/taskInstances?limit=100&offset={len(tis)}", token=token)["task_instances"]:
            tis += page  # the API's pages hold at most 100
        compacts = []
        for ti in tis:
            if ti["task_id"] == "table.compact" and ti["state"] == "success":
                entry = live.api(
                    "GET", f"{path}/taskInstances/table.compact/xcomEntries/return_value?map_index={ti['map_index']}", token=token
                )
                value = entry["value"]
                compacts.append(json.loads(value) if isinstance(value, str) else value)
    finally:
        live.stop()
    per_task: dict[str, list[float]] = defaultdict(list)
    for ti in tis:
        if ti.get("duration") is not None:
            per_task[ti["task_id"]].append(float(ti["duration"]))
    jvms = sum(1 for r in compacts if not r.get("in_task_process") and r.get("mode") != "local")
    return {
        "run_state": state,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_note": "api-server, scheduler, dag-processor and the task processes they reaped (incl. JVMs)",
        "load_before": load,
        "tis": [(ti["task_id"], ti["state"]) for ti in tis],
        "per_task": per_task,
        "jvm_starts": jvms,
        "launches": {"spark_submit:compact (from XCom)": {"count": jvms}},
        "compacts": compacts,
    }


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _report(ns: argparse.Namespace, setup: dict[str, Any], m: dict[str, Any]) -> int:
    """Print and write the JSON report of one pass; exit status 0 if the run succeeded."""
    import datetime as dt

    per_task: dict[str, list[float]] = m["per_task"]
    compacts = [r for r in m["compacts"] if isinstance(r, dict)]
    task_total = sum(sum(v) for v in per_task.values())
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_before": m["load_before"],
            "load_after": os.getloadavg(),
        },
        "args": vars(ns),
        "warehouse": setup,
        "run_state": m["run_state"],
        "wall_s": m["wall_s"],
        "cpu_s": m["cpu_s"],
        "cpu_note": m["cpu_note"],
        "task_instances": len(m["tis"]),
        "task_states": {f"{t} {s}": c for (t, s), c in sorted(Counter(map(tuple, m["tis"])).items())},
        "per_task_type": {
            t: {"count": len(v), "total_s": round(sum(v), 1), "mean_s": round(sum(v) / len(v), 3), "max_s": round(max(v), 2)}
            for t, v in sorted(per_task.items())
        },
        "task_time_total_s": round(task_total, 1),
        "wall_minus_task_time_s": round(m["wall_s"] - task_total, 1),  # dag.test(): its scheduling loop
        "jvm_starts": m["jvm_starts"],
        "launches": m["launches"],
        "compactions": {
            "results": len(compacts),
            "in_task_process": sum(1 for r in compacts if r.get("in_task_process")),
            "with_tasks": sum(1 for r in compacts if r.get("tasks")),
            "files_read": sum(int(r.get("files_read") or 0) for r in compacts),
            "files_written": sum(int(r.get("files_written") or 0) for r in compacts),
            "bytes_read": sum(int(r.get("bytes_read") or 0) for r in compacts),
        },
    }
    print(json.dumps(report, indent=2))
    Path(ns.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["run_state"] == "success" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--snapshots", type=int, default=6, help="commits (small files) per table")
    parser.add_argument("--no-in-process", action="store_true", help="every compaction through spark-submit")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "airflow-scale.json"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--live", action="store_true", help="on a real Airflow on loopback instead of dag.test()")
    ns = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="paimon-airflow-scale-"))
    try:
        home, dags, warehouse = root / "airflow", root / "dags", str(root / "wh")
        home.mkdir()
        dags.mkdir()
        for name in DAG_FILES:
            shutil.copy(REPO / "dags" / name, dags / name)
        (dags / "paimon_tables.yaml").write_text(REGISTRY)
        if ns.live:
            for path in (str(REPO / "plugins"), str(REPO)):
                sys.path.insert(0, path)
        else:
            _configure(home, dags, warehouse)
        setup = _warehouse(warehouse, ns.tables, ns.snapshots)
        print(f"warehouse: {setup}", flush=True)
        if ns.live:
            return _report(ns, setup, _live(ns, root, dags, warehouse))

        import datetime as dt

        from airflow.dag_processing.dagbag import BundleDagBag
        from airflow.utils import db

        db.initdb()
        launches = _Launches(in_process=not ns.no_in_process)
        bag = BundleDagBag(dag_folder=str(dags), bundle_path=dags)
        assert bag.import_errors == {}, bag.import_errors
        dag = bag.dags["paimon_maintenance"]
        load = os.getloadavg()
        cpu0, wall0 = _cpu(), time.monotonic()
        run = dag.test(logical_date=dt.datetime.now(dt.UTC).replace(microsecond=0))
        wall, cpu = time.monotonic() - wall0, _cpu() - cpu0

        tis = list(run.get_task_instances())
        per_task: dict[str, list[float]] = defaultdict(list)
        for ti in tis:
            if ti.start_date and ti.end_date:
                per_task[ti.task_id].append((ti.end_date - ti.start_date).total_seconds())
        compacts = [
            ti.xcom_pull(task_ids=ti.task_id, map_indexes=ti.map_index) for ti in tis if ti.task_id == "table.compact"
        ]
        measured = {
            "run_state": str(run.state),
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "cpu_note": "this process (every task: dag.test()) and its children (spark-submit, JVMs, job subprocesses)",
            "load_before": load,
            "tis": [(ti.task_id, str(ti.state)) for ti in tis],
            "per_task": per_task,
            "jvm_starts": sum(v["count"] for k, v in launches.to_dict().items() if k.startswith("spark_submit")),
            "launches": launches.to_dict(),
            "compacts": compacts,
        }
        return _report(ns, setup, measured)
    finally:
        if ns.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
