"""A ``paimon_maintenance`` pass over a warehouse of many tables, on a real Airflow: today's DAG
(plan, then batches) against the per-table DAG it replaced, in the same run.

::

    python -m bench.maintenance_pass --tables 1000 --old-tables 20 --out bench/results/maintenance-pass.json

Builds a mixed warehouse (:mod:`bench.maintenance_warehouse`: append, fixed-bucket and
dynamic-bucket primary-key tables, partitioned; ``--need-compaction`` of them due for
compaction, every one over its snapshot retention) with ``--tables`` tables in database
``bench`` and ``--old-tables`` of the same mix in database ``old``; starts Airflow on loopback
(api-server, scheduler, dag-processor; LocalExecutor, parallelism 2, SQLite: every task instance
its own process) with copies of the DAG files (their schedule removed, so only the bench's runs
happen), then runs, one after the other, each triggered over REST and timed to its end:

1. ``old``: the per-table DAG (``bench/legacy_dags``) over the ``old`` tables;
2. ``work``: today's DAG over the ``bench`` tables, ``mode=apply``: compaction where due,
   expiry, tags, orphan cleanup;
3. ``idle``: the same pass again: nothing is due.

For each: wall time, CPU of the Airflow processes and every task process they started, task
instances (count and time), and for today's DAG the plan's own figures (tables scanned or
unchanged, planning wall and CPU) and the time the batches spent in Paimon calls. Then it checks
that every table reads the same rows and that exactly the due tables were compacted. Prints and
writes one JSON document.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DAG_FILES = ("_paimon_common.py", "_paimon_registry.py", "paimon_maintenance.py")
LEGACY = REPO / "bench" / "legacy_dags" / "paimon_maintenance_per_table.py"

REGISTRY = """\
paimon_conn_id: paimon_default
spark_conn_id: spark_default
include: ".*"
exclude: ""
defaults:
  compaction: minor
  compaction_mode: distributed
  tag_period: daily
  tag_retention: "7 d"
  orphan_min_age_days: 2
maintenance_pass:
  batch_size: {batch_size}
  spark_group_size: 8
alerts:
  fail_task: false
"""


def _copy_dags(dags: Path, batch_size: int) -> None:
    for name in DAG_FILES:
        text = (REPO / "dags" / name).read_text()
        # no schedule: only the runs the bench triggers (an unpaused scheduled DAG adds its own)
        text = re.sub(r'schedule="[^"]*"', "schedule=None", text)
        (dags / name).write_text(text)
    legacy = re.sub(r'schedule="[^"]*"', "schedule=None", LEGACY.read_text())
    (dags / LEGACY.name).write_text(legacy)
    (dags / "paimon_tables.yaml").write_text(REGISTRY.format(batch_size=batch_size))


def _rows(warehouse: str, names: tuple[str, ...]) -> dict[str, Any]:
    from paimon_core import FileSystemCatalog

    catalog = FileSystemCatalog(warehouse)
    out = {}
    for name in names:
        t = catalog.get_table(name)
        data = t.to_arrow()
        kinds = [str(s.commit_kind.value) for s in t.snapshot_manager.snapshots()]
        out[name] = {"rows": data.num_rows, "sum": int(sum(data.column("id").to_pylist())), "kinds": kinds}
    return out


def _run(live: Any, token: str, dag_id: str, conf: dict[str, Any], pids: set[int]) -> dict[str, Any]:
    from bench.airflow_scale import _proc_cpu

    load = os.getloadavg()
    cpu0, wall0 = _proc_cpu(pids), time.monotonic()
    logical = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    run = live.api("POST", f"/dags/{dag_id}/dagRuns", {"logical_date": logical, "conf": conf}, token=token)
    path = f"/dags/{dag_id}/dagRuns/{run['dag_run_id']}"
    while (state := live.api("GET", path, token=token)["state"]) not in ("success", "failed"):
        time.sleep(1)
    wall, cpu = time.monotonic() - wall0, _proc_cpu(pids) - cpu0
    tis: list[dict[str, Any]] = []
    while page := live.api("GET", f"{path}/taskInstances?limit=100&offset={len(tis)}", token=token)["task_instances"]:
        tis += page
    per_task: dict[str, list[float]] = defaultdict(list)
    for ti in tis:
        if ti.get("duration") is not None:
            per_task[ti["task_id"]].append(float(ti["duration"]))
    task_time = sum(sum(v) for v in per_task.values())
    out: dict[str, Any] = {
        "dag_id": dag_id,
        "conf": conf,
        "state": state,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_before": [round(x, 2) for x in load],
        "task_instances": len(tis),
        "task_states": dict(Counter(f"{ti['task_id']} {ti['state']}" for ti in tis)),
        "task_time_s": round(task_time, 1),
        "per_task_type": {
            t: {"count": len(v), "total_s": round(sum(v), 1), "mean_s": round(sum(v) / len(v), 2)}
            for t, v in sorted(per_task.items())
        },
    }
    if dag_id == "paimon_maintenance":
        plan = live.api("GET", f"{path}/taskInstances/plan/xcomEntries/return_value", token=token)["value"]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        out["plan"] = plan["summary"]
        paimon_s = float(plan["summary"]["plan_seconds"])
        actions: Counter[str] = Counter()
        for ti in tis:
            if ti["task_id"] != "maintain" or ti["state"] != "success":
                continue
            entry = live.api(
                "GET", f"{path}/taskInstances/maintain/xcomEntries/return_value?map_index={ti['map_index']}", token=token
            )["value"]
            value = json.loads(entry) if isinstance(entry, str) else entry
            paimon_s += sum(float(o["seconds"]) for o in value["outcomes"])
            actions.update(f"{o['action']} {o['status']}" for o in value["outcomes"])
        out["actions"] = dict(sorted(actions.items()))
        out["paimon_work_s"] = round(paimon_s, 1)
        out["paimon_share_of_task_time"] = round(paimon_s / task_time, 2) if task_time else None
    return out


def run(
    root: Path,
    *,
    tables: int,
    old_tables: int = 0,
    need_compaction: float = 0.1,
    batch_size: int = 200,
    idle_pass: bool = True,
) -> dict[str, Any]:
    """Build the warehouse under ``root``, run the passes, return the report (see the module docs)."""
    for path in (str(REPO / "plugins"), str(REPO)):
        if path not in sys.path:
            sys.path.insert(0, path)
    from bench.maintenance_warehouse import build
    from tests.airflow.live import launch

    dags, warehouse = root / "dags", str(root / "wh")
    dags.mkdir()
    _copy_dags(dags, batch_size)
    new = build(warehouse, tables, need_compaction=need_compaction)
    old = build(warehouse, old_tables, need_compaction=need_compaction, database="old") if old_tables else None
    print(f"warehouse: {new.to_dict()}, old: {old.to_dict() if old else None}", flush=True)
    before = _rows(warehouse, new.tables)
    live = launch(
        root / "airflow",
        ("api-server", "scheduler", "dag-processor"),
        migrate=True,
        reserialize=True,
        extra_env={
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": "paimon", "extra": {"warehouse": warehouse}}),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        },
    )
    runs: dict[str, Any] = {}
    try:
        live.cli("pools", "set", "paimon_spark", "2", "Spark jobs")
        live.wait_ready()
        token = live.token()
        for dag_id in ("paimon_maintenance", "paimon_maintenance_per_table"):
            live.api("PATCH", f"/dags/{dag_id}", {"is_paused": False}, token=token)
        pids = {p.pid for p in live.procs.values()}
        if old is not None:
            runs["old"] = _run(live, token, "paimon_maintenance_per_table", {"include": r"old\..*"}, pids)
            print(json.dumps(runs["old"]), flush=True)
        conf = {"include": r"bench\..*", "mode": "apply"}
        runs["work"] = _run(live, token, "paimon_maintenance", conf, pids)
        print(json.dumps(runs["work"]), flush=True)
        if idle_pass:
            runs["idle"] = _run(live, token, "paimon_maintenance", conf, pids)
            print(json.dumps(runs["idle"]), flush=True)
    finally:
        live.stop()
    after = _rows(warehouse, new.tables)
    lost = [t for t in new.tables if (before[t]["rows"], before[t]["sum"]) != (after[t]["rows"], after[t]["sum"])]
    compacted = sorted(t for t in new.tables if after[t]["kinds"].count("COMPACT") > before[t]["kinds"].count("COMPACT"))
    report: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_after": os.getloadavg()},
        "warehouse_path": warehouse,
        "warehouse": new.to_dict(),
        "tables": list(new.tables),
        "due": list(new.needs_compaction),
        "old_warehouse": old.to_dict() if old else None,
        "runs": runs,
        "checks": {
            "tables_with_other_rows": lost,
            "compacted_exactly_the_due_tables": compacted == sorted(new.needs_compaction),
            "compacted": len(compacted),
            "due": len(new.needs_compaction),
        },
    }
    if old is not None and runs.get("old"):
        per = runs["old"]["wall_s"] / max(1, old_tables)
        report["old_extrapolated_to_tables"] = {
            "tables": tables,
            "wall_s": round(per * tables, 0),
            "task_instances": round(runs["old"]["task_instances"] / max(1, old_tables) * tables),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--old-tables", type=int, default=20, help="tables of the per-table DAG's run (0: none)")
    parser.add_argument("--need-compaction", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "maintenance-pass.json"))
    parser.add_argument("--keep", action="store_true")
    ns = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="paimon-maintenance-pass-"))
    try:
        report = run(
            root,
            tables=ns.tables,
            old_tables=ns.old_tables,
            need_compaction=ns.need_compaction,
            batch_size=ns.batch_size,
        )
        report["args"] = vars(ns)
        print(json.dumps(report, indent=2))
        Path(ns.out).write_text(json.dumps(report, indent=2) + "\n")
        checks = report["checks"]
        ok = all(r["state"] == "success" for r in report["runs"].values())
        return 0 if ok and not checks["tables_with_other_rows"] and checks["compacted_exactly_the_due_tables"] else 1
    finally:
        if ns.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
