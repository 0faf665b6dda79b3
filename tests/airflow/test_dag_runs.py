"""``dag.test()`` runs of the DAGs against real local warehouses (and real local Spark for ingest)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import DAGS_FOLDER
from tests.airflow.tables import millis, rows

pytestmark = pytest.mark.integration


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dags(airflow_db: None) -> dict[str, Any]:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return dict(bag.dags)


def _utc(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


def _states(run: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ti in run.get_task_instances():
        out.setdefault(ti.task_id, []).append(str(ti.state))
    assert out, "the run has no task instances (a logical date before the DAG's start_date?)"
    return out


def _table(wh: str, name: str, *, commit_times: list[int], options: dict[str, str] | None = None) -> None:
    from paimon_core.utils.clock import ManualClock

    clock = ManualClock(commit_times[0])
    catalog = FileSystemCatalog(wh, clock=clock)
    if not catalog.database_exists(name.split(".")[0]):
        catalog.create_database(name.split(".")[0])
    table = catalog.create_table(name, rows(0, 1).schema, options=options)
    for i, t in enumerate(commit_times):
        clock.set(t)
        table.write_arrow(rows(i * 10, 10))


def test_expire_snapshots_dag(dags: dict[str, Any], paimon_warehouse: str) -> None:
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    keep2 = {"snapshot.num-retained.max": "2", "snapshot.num-retained.min": "1"}
    _table(paimon_warehouse, "db.a", commit_times=[now - 5000 + i for i in range(5)], options=keep2)
    _table(paimon_warehouse, "db.b", commit_times=[now - 5000 + i for i in range(3)], options=keep2)
    # dry_run off: a run started by a person only reports by default
    run = dags["paimon_expire_snapshots"].test(logical_date=_utc("2026-01-10"), run_conf={"dry_run": False})
    assert run.state == "success", _states(run)
    catalog = FileSystemCatalog(paimon_warehouse)
    for name, latest in (("db.a", 5), ("db.b", 3)):
        sm = catalog.get_table(name).snapshot_manager
        assert (sm.earliest_snapshot_id(), sm.latest_snapshot_id()) == (latest - 1, latest)
    mapped = [ti for ti in run.get_task_instances() if ti.task_id == "table.expire_snapshots"]
    assert sorted(ti.rendered_map_index for ti in mapped) == ["db.a", "db.b"]


def test_tags_dag_backfill_three_days_then_rerun(dags: dict[str, Any], paimon_warehouse: str) -> None:
    times = [
        millis("2026-11-01", 10),
        millis("2026-11-02", 10),
        millis("2026-11-02", 20),
        millis("2026-11-03", 5),
        millis("2026-11-04", 1),
    ]
    _table(paimon_warehouse, "db.t", commit_times=times)
    dag = dags["paimon_tags"]
    # dag.test(logical_date=D) runs the interval [D - 1 day, D), as a scheduled run at D would
    only_db = {"include": r"db\..*"}  # not the maintenance ledger the runs record into
    for day in ("2026-11-02", "2026-11-03", "2026-11-04"):
        run = dag.test(logical_date=_utc(day), run_conf=only_db)
        states = _states(run)
        assert run.state == "success" and states["table.create_tag"] == ["success"], states
    tags = FileSystemCatalog(paimon_warehouse).get_table("db.t").tag_manager.tags()
    # each day's tag holds the day's last snapshot, not the table's latest (5)
    assert {name: snap.id for name, snap in tags.items()} == {
        "2026-11-01": 1,
        "2026-11-02": 3,
        "2026-11-03": 4,
    }
    rerun = dag.test(logical_date=_utc("2026-11-03"), run_conf=only_db)
    assert rerun.state == "success", _states(rerun)
    xcom = [ti.xcom_pull(task_ids="table.create_tag", map_indexes=0) for ti in rerun.get_task_instances()][:1]
    assert xcom and xcom[0]["created"] is False
    assert len(FileSystemCatalog(paimon_warehouse).get_table("db.t").tag_manager.list_names()) == 3


def test_maintenance_dag_orders_steps_per_table(dags: dict[str, Any], paimon_warehouse: str) -> None:
    import os

    # at most 3 snapshots: commits expire older ones as they land (Paimon's expire-on-commit)
    keep3 = {"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1"}
    times = [millis("2026-01-03", h) for h in range(1, 7)]  # 6 small files (compaction.min.file-num 5)
    _table(paimon_warehouse, "db.a", commit_times=times, options=keep3)
    _table(paimon_warehouse, "db.b", commit_times=times[:2], options=keep3)
    table_a = FileSystemCatalog(paimon_warehouse).get_table("db.a")
    orphan = os.path.join(table_a.path, "bucket-0", "data-orphan.parquet")
    with open(orphan, "wb") as f:
        f.write(b"orphan")
    old = dt.datetime(2025, 12, 1, tzinfo=dt.UTC).timestamp()
    os.utime(orphan, (old, old))
    conf = {"compaction": "full", "compaction_mode": "local", "mode": "apply"}  # compaction without a JVM
    run = dags["paimon_maintenance"].test(logical_date=_utc("2026-01-05"), run_conf=conf)
    states = _states(run)
    assert run.state == "success", states
    assert states["maintain"] == ["success"]  # both tables in one batch
    outcomes = {
        (o["table"], o["action"]): o["status"]
        for o in run.get_task_instance("maintain", map_index=0).xcom_pull(task_ids="maintain", map_indexes=0)["outcomes"]
    }
    assert outcomes[("db.a", "compact")] == "success"
    assert outcomes[("db.a", "remove_orphan_files")] == "success"
    assert ("db.b", "compact") not in outcomes  # 2 files: nothing to compact, not planned
    catalog = FileSystemCatalog(paimon_warehouse)
    a = catalog.get_table("db.a")
    # the daily tag names the last whole UTC day before the run's data interval end and holds the
    # table as it was at that day's end: the last commit (6), never the compaction that runs now
    latest = a.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT")
    day = (run.data_interval_end - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    assert {k: v.id for k, v in a.tag_manager.tags().items()} == {day: 6}
    assert (a.snapshot_manager.earliest_snapshot_id() or 0) >= 5  # older snapshots expired
    assert not os.path.exists(orphan)
    assert a.to_arrow().num_rows == 60 and catalog.get_table("db.b").to_arrow().num_rows == 20
    maintain = [ti for ti in run.get_task_instances() if ti.task_id == "maintain"]
    assert [ti.rendered_map_index for ti in maintain] == [run.get_task_instance("batches").xcom_pull(task_ids="batches")[0]["label"]]


def test_rollback_dag_plans_then_applies(dags: dict[str, Any], paimon_warehouse: str) -> None:
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    _table(paimon_warehouse, "db.t", commit_times=[now - 3000 + i for i in range(3)])
    dag = dags["paimon_rollback"]
    plan = dag.test(run_conf={"table": "db.t", "snapshot_id": 1, "mode": "plan"})
    states = _states(plan)
    assert plan.state == "success" and states["rollback"] == ["skipped"], states
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.latest_snapshot_id() == 3
    applied = dag.test(run_conf={"table": "db.t", "snapshot_id": 1, "mode": "apply"})
    states = _states(applied)
    assert applied.state == "success" and states["rollback"] == ["success"], states
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.latest_snapshot_id() == 1


def test_rollback_dag_rejects_invalid_params(dags: dict[str, Any]) -> None:
    from airflow.sdk.exceptions import ParamValidationError

    with pytest.raises(ParamValidationError):
        dags["paimon_rollback"].test(run_conf={"table": "no_dot", "mode": "plan"})
    with pytest.raises(ParamValidationError):
        dags["paimon_rollback"].test(run_conf={"table": "db.t", "snapshot_id": 0, "mode": "plan"})


def test_ingest_dag_with_local_spark_is_idempotent(
    dags: dict[str, Any], paimon_warehouse: str, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    for day, n in (("2026-11-01", 4), ("2026-11-02", 6)):
        (landing / f"dt={day}").mkdir(parents=True)
        ids = list(range(n))
        pq.write_table(
            pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{day}-{i}" for i in ids]}),
            landing / f"dt={day}" / "part-0.parquet",
        )
    conf = {"sources": {"db.events": str(landing / "dt={ds}")}}
    dag = dags["paimon_ingest"]
    # logical date D runs the interval [D - 1 day, D): days 11-01, 11-02, then 11-01 again
    for day in ("2026-11-02", "2026-11-03", "2026-11-02"):
        run = dag.test(logical_date=_utc(day), run_conf=conf)
        assert run.state == "success", _states(run)
    data = FileSystemCatalog(paimon_warehouse).get_table("db.events").to_arrow()
    assert data.num_rows == 10
    by_day = dict.fromkeys(("2026-11-01", "2026-11-02"), 0)
    for d in data.column("dt").to_pylist():
        by_day[str(d)] += 1
    assert by_day == {"2026-11-01": 4, "2026-11-02": 6}
    assert sorted(zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), strict=True)) == sorted(
        {
            (str(r[0]), r[1])
            for r in zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), strict=True)
        }
    )
