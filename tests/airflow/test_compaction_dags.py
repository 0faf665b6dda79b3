"""``dag.test()`` runs of the compaction DAGs against real local warehouses: ``paimon_compaction``
(per-table mapping, registry strategy, the cross-DAG compaction lease, dry run),
``paimon_compact_database`` (plan, apply, a failing table reported, invalid Params) and the
``paimon_on_new_snapshot`` asset watcher."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileStoreTable, FileSystemCatalog
from paimon_core.table.health import table_health
from tests.airflow.conftest import DAGS_FOLDER
from tests.airflow.tables import rows

pytestmark = pytest.mark.integration

PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
LEASES = "_airflow/compaction-leases"


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dags(airflow_db: None) -> dict[str, Any]:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return dict(bag.dags)


def _states(run: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ti in run.get_task_instances():
        out.setdefault(ti.task_id, []).append(str(ti.state))
    return out


def _xcoms(run: Any, task_id: str, key: str = "return_value") -> dict[str, Any]:
    """The task's XCom per mapped instance label (or ``-1`` unmapped)."""
    out = {}
    for ti in run.get_task_instances():
        if ti.task_id == task_id:
            label = ti.rendered_map_index if ti.map_index >= 0 else "-1"
            out[str(label)] = ti.xcom_pull(task_ids=task_id, map_indexes=ti.map_index, key=key)
    return out


def _pk_table(wh: str, name: str, *, commits: int = 6) -> FileStoreTable:
    """A primary-key table with one level-0 sorted run per commit (write-only: no inline compaction)."""
    catalog = FileSystemCatalog(wh)
    table = catalog.create_table(
        name, PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"}
    )
    for i in range(commits):  # overlapping keys: every commit updates ids 0..9
        table.write_arrow(pa.table({"id": list(range(10 + i)), "v": [f"c{i}"] * (10 + i)}, schema=PK_SCHEMA))
    return catalog.get_table(name)


def _append_table(wh: str, name: str, *, commits: int = 6) -> FileStoreTable:
    catalog = FileSystemCatalog(wh)
    table = catalog.create_table(name, rows(0, 1).schema, options={"write-only": "true"})
    for i in range(commits):
        table.write_arrow(rows(i * 10, 10))
    return catalog.get_table(name)


def _hold_lease(wh: str, table: str) -> None:
    """Another DAG's task is compacting ``table`` right now: its live lease is in the warehouse."""
    path = os.path.join(wh, LEASES, f"{table}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    now = int(time.time() * 1000)
    with open(path, "w") as f:
        json.dump(
            {
                "table": table,
                "holder": "paimon_maintenance/r/table.compact/0",
                "acquired_millis": now,
                "expires_millis": now + 3_600_000,
            },
            f,
        )


def _shape(wh: str, name: str) -> tuple[int | None, int, int | None]:
    """(latest snapshot id, data files, most sorted runs in a bucket) of the table now."""
    h = table_health(FileSystemCatalog(wh).get_table(name))
    return h.snapshot_id, h.data_file_count, h.max_sorted_runs


# --- paimon_compaction --------------------------------------------------------------------------


def test_compaction_dag_compacts_each_table_under_its_lease(
    dags: dict[str, Any], paimon_warehouse: str
) -> None:
    wh = paimon_warehouse
    _pk_table(wh, "db.pk")
    _append_table(wh, "db.log")
    _pk_table(wh, "db.busy")
    assert _shape(wh, "db.pk") == (6, 6, 6) and _shape(wh, "db.busy") == (6, 6, 6)
    # another DAG's task is compacting db.busy right now: its live lease is in the warehouse
    _hold_lease(wh, "db.busy")

    # local: compaction without a JVM; dry_run off (a run started by a person plans by default)
    conf = {"compaction": "full", "compaction_mode": "local", "dry_run": False}
    run = dags["paimon_compaction"].test(run_conf=conf)
    states = _states(run)
    assert run.state == "success", states
    assert sorted(states["table.compact"]) == ["skipped", "success", "success"], states
    assert states["table.health"] == ["success"] * 3, states

    # one COMPACT snapshot each: one sorted run / one file left, the same rows
    pk = FileSystemCatalog(wh).get_table("db.pk")
    assert _shape(wh, "db.pk") == (7, 1, 1)
    latest = pk.snapshot_manager.latest_snapshot()
    assert latest is not None and str(latest.commit_kind).endswith("COMPACT")
    data = pk.to_arrow().sort_by("id")
    assert data.column("id").to_pylist() == list(range(15)) and set(data.column("v").to_pylist()[:10]) == {
        "c5"
    }
    snap, files, runs = _shape(wh, "db.log")
    assert (snap, files, runs) == (7, 1, None)
    assert FileSystemCatalog(wh).get_table("db.log").to_arrow().num_rows == 60
    # the busy table was left alone, and its holder's lease too; the others' leases are released
    assert _shape(wh, "db.busy") == (6, 6, 6)
    assert os.listdir(os.path.join(wh, LEASES)) == ["db.busy.json"]

    # mapped instances are labelled by table; health reports the shape after compaction
    compact = _xcoms(run, "table.compact")
    assert set(compact) == {"db.busy", "db.log", "db.pk"}
    assert compact["db.pk"]["snapshot_id"] == 7 and compact["db.busy"] is None
    health = _xcoms(run, "table.health")
    assert set(health) == {"db.busy", "db.log", "db.pk"}
    assert health["db.pk"]["max_sorted_runs"] == 1 and health["db.busy"]["max_sorted_runs"] == 6


def test_compaction_dag_dry_run_and_table_filter(dags: dict[str, Any], paimon_warehouse: str) -> None:
    wh = paimon_warehouse
    _pk_table(wh, "db.pk")
    _pk_table(wh, "db.other")
    conf = {"compaction": "full", "compaction_mode": "local", "dry_run": True, "include": r"db\.pk"}
    run = dags["paimon_compaction"].test(run_conf=conf)
    assert run.state == "success", _states(run)
    plan = _xcoms(run, "table.compact")
    assert list(plan) == ["db.pk"]  # the filter
    assert plan["db.pk"]["dry_run"] is True and plan["db.pk"]["snapshot_id"] is None
    [unit] = plan["db.pk"]["plan"]
    assert unit["bucket"] == 0 and unit["input_files"] == 6 and unit["sorted_runs_before"] == 6
    assert _shape(wh, "db.pk") == (6, 6, 6)  # nothing written
    assert not os.path.exists(os.path.join(wh, LEASES))  # a dry run takes no lease
    # partition_idle_time reaches the job: the table's files are minutes old, not a day
    idle = dags["paimon_compaction"].test(run_conf={**conf, "dry_run": False, "partition_idle_time": "1 d"})
    assert idle.state == "success", _states(idle)
    result = _xcoms(idle, "table.compact")["db.pk"]
    assert result["tasks"] == 0 and result["snapshot_id"] is None
    assert _shape(wh, "db.pk") == (6, 6, 6)


def test_compaction_dag_rejects_invalid_params(dags: dict[str, Any]) -> None:
    from airflow.sdk.exceptions import ParamValidationError

    dag = dags["paimon_compaction"]
    for bad in ({"compaction": "weekly"}, {"partition_idle_time": "soon"}, {"dry_run": "yes"}):
        with pytest.raises(ParamValidationError):
            dag.test(run_conf=bad)


# --- paimon_compact_database --------------------------------------------------------------------


def test_compact_database_plan_then_apply(dags: dict[str, Any], paimon_warehouse: str) -> None:
    wh = paimon_warehouse
    _pk_table(wh, "db.a")
    _pk_table(wh, "db.b_tmp")
    _append_table(wh, "db.c")
    _append_table(wh, "db.d")
    _hold_lease(wh, "db.d")
    dag = dags["paimon_compact_database"]
    conf = {
        "including_databases": "db",  # not paimon_maintenance: the ledger the runs record into
        "excluding_tables": r".*_tmp",
        "execution": "local",
        "table_options": {"write-only": "true"},
    }

    plan = dag.test(run_conf={**conf, "run_mode": "plan"})
    states = _states(plan)
    assert plan.state == "success" and states["compact_database"] == ["skipped"], states
    tables = {t["table"]: t for t in _xcoms(plan, "plan")["-1"]["tables"]}
    assert set(tables) == {"db.a", "db.c", "db.d"}  # excluding wins
    [unit] = tables["db.a"]["plan"]
    assert unit["input_files"] == 6 and unit["sorted_runs_before"] == 6 and tables["db.a"]["tasks"] == 1
    assert _shape(wh, "db.a") == (6, 6, 6)

    applied = dag.test(run_conf={**conf, "run_mode": "apply"})
    states = _states(applied)
    assert applied.state == "success" and states["compact_database"] == ["success"], states
    assert _shape(wh, "db.a") == (7, 1, 1) and _shape(wh, "db.c")[:2] == (7, 1)
    assert _shape(wh, "db.b_tmp") == (6, 6, 6)
    result = _xcoms(applied, "compact_database")["-1"]
    assert result["compacted_tables"] == 2 and result["failed_tables"] == []
    # db.d's lease is another task's: left out, reported as skipped, its lease untouched
    assert _shape(wh, "db.d")[:2] == (6, 6)
    assert {t["table"]: t["status"] for t in result["tables"]} == {
        "db.a": "ok",
        "db.c": "ok",
        "db.d": "skipped",
    }
    assert os.listdir(os.path.join(wh, LEASES)) == ["db.d.json"]


def test_compact_database_approved_in_the_ui(dags: dict[str, Any], paimon_warehouse: str) -> None:
    """``run_mode=approve_in_ui``: the run parks on Airflow's approval step (its body shows the
    plan) until a person approves; here a thread answers as the UI's HITL endpoint does (records
    the response, resumes the parked task) in the metadata DB that ``dag.test()`` runs on."""
    import threading

    from airflow._shared.timezones import timezone
    from airflow.models.hitl import HITLDetail
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.trigger import handle_event_submit
    from airflow.triggers.base import TriggerEvent
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState

    _pk_table(paimon_warehouse, "db.a")
    seen: dict[str, Any] = {}
    stop = threading.Event()

    def respond() -> None:
        deadline = time.monotonic() + 120
        while not stop.is_set() and time.monotonic() < deadline:
            with create_session() as session:
                row = session.query(HITLDetail).filter(HITLDetail.responded_at.is_(None)).first()
                ti = session.get(TaskInstance, row.ti_id) if row is not None else None
                if row is not None and ti is not None and ti.state == TaskInstanceState.AWAITING_INPUT:
                    seen.update(
                        body=row.body, options=list(row.options), before=_shape(paimon_warehouse, "db.a")
                    )
                    row.chosen_options = ["Approve"]
                    row.responded_by = {"id": "reviewer", "name": "reviewer"}
                    row.responded_at = timezone.utcnow()
                    session.add(row)
                    handle_event_submit(
                        TriggerEvent(row.as_resume_event_payload()), task_instance=ti, session=session
                    )
                    return
            time.sleep(0.2)

    def approve() -> None:
        try:
            respond()
            if "options" in seen:
                return
        except Exception as e:  # noqa: BLE001 - reported by the assertions below
            seen["error"] = repr(e)
        with (
            create_session() as session
        ):  # no approval given: fail the parked task, or dag.test() waits forever
            session.query(TaskInstance).filter(TaskInstance.state == TaskInstanceState.AWAITING_INPUT).update(
                {"state": TaskInstanceState.FAILED}
            )

    responder = threading.Thread(target=approve, daemon=True)
    responder.start()
    try:
        run = dags["paimon_compact_database"].test(
            run_conf={"execution": "local", "run_mode": "approve_in_ui"}
        )
    finally:
        stop.set()
        responder.join(10)
    states = _states(run)
    assert run.state == "success" and "error" not in seen, (states, seen)
    assert states["approve"] == ["success"] and states["no_approval_needed"] == ["skipped"], states
    assert states["compact_database"] == ["success"], states
    assert (
        seen["options"] == ["Approve", "Reject"]
        and '"db.a"' in seen["body"]
        and '"sorted_runs_before": 6' in seen["body"]
    )
    assert _shape(paimon_warehouse, "db.a") == (7, 1, 1)


def test_compact_database_apply_through_spark_submit(dags: dict[str, Any], paimon_warehouse: str) -> None:
    """The default execution: spark-submit of the compact_database job (local Spark, 2 cores)."""
    _pk_table(paimon_warehouse, "db.a")
    run = dags["paimon_compact_database"].test(run_conf={"run_mode": "apply", "compact_strategy": "full"})
    assert run.state == "success", _states(run)
    result = _xcoms(run, "compact_database")["-1"]
    assert result["compacted_tables"] == 1 and "in_task_process" not in result
    assert _shape(paimon_warehouse, "db.a") == (7, 1, 1)
    assert FileSystemCatalog(paimon_warehouse).get_table("db.a").to_arrow().num_rows == 15


def test_compact_database_reports_a_failing_table(dags: dict[str, Any], paimon_warehouse: str) -> None:
    wh = paimon_warehouse
    _pk_table(wh, "db.good")
    bad = _pk_table(wh, "db.bad")
    # a data file of db.bad is gone (storage loss): its compaction cannot read it
    data_file = sorted(os.listdir(os.path.join(bad.path, "bucket-0")))[0]
    os.remove(os.path.join(bad.path, "bucket-0", data_file))
    run = dags["paimon_compact_database"].test(run_conf={"execution": "local", "run_mode": "apply"})
    states = _states(run)
    assert run.state == "failed" and states["compact_database"] == ["failed"], states
    tables = {t["table"]: t for t in _xcoms(run, "compact_database", key="tables")["-1"]}
    assert tables["db.good"]["status"] == "ok" and tables["db.good"]["snapshot_id"] == 7
    assert tables["db.bad"]["status"] == "error" and data_file in tables["db.bad"]["error"]
    assert _shape(wh, "db.good") == (7, 1, 1)  # the good table was compacted all the same
    assert FileSystemCatalog(wh).get_table("db.bad").snapshot_manager.latest_snapshot_id() == 6


def test_compact_database_rejects_invalid_params(dags: dict[str, Any]) -> None:
    from airflow.sdk.exceptions import ParamValidationError

    dag = dags["paimon_compact_database"]
    for bad in (
        {"mode": "split"},
        {"including_tables": "db.(unclosed"},
        {"compact_strategy": "none"},
        {"table_options": {"write-only": True}},
        {"partition_idle_time": "a while"},
        {"run_mode": "now"},
    ):
        with pytest.raises(ParamValidationError):
            dag.test(run_conf=bad)


# --- paimon_on_new_snapshot ---------------------------------------------------------------------


def test_on_new_snapshot_watches_the_registry_tables(dags: dict[str, Any]) -> None:
    from airflow.sdk import Asset

    from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

    dag = dags["paimon_on_new_snapshot"]
    assets = [a for a in dag.timetable.asset_condition.objects if isinstance(a, Asset)]  # type: ignore[attr-defined]
    assert [a.uri for a in assets] == ["paimon://paimon_default/db.events"]  # the ingest table
    [watcher] = assets[0].watchers
    trigger = watcher.trigger
    assert isinstance(trigger, PaimonTableSnapshotTrigger)
    _, kwargs = trigger.serialize()
    assert kwargs["table"] == "db.events" and kwargs["fire_on"] == "compaction"
    # the registry's settings of the table, for the planner (the watch budget as its debt limit)
    assert kwargs["planner_settings"]["compaction"] == "minor"
    assert kwargs["planner_settings"]["max_compaction_debt"] == 0.8


def test_on_new_snapshot_manual_run_compacts_the_tables(dags: dict[str, Any], paimon_warehouse: str) -> None:
    _pk_table(paimon_warehouse, "db.events")
    dag = dags["paimon_on_new_snapshot"]
    run = dag.test(run_conf={"tables": ["db.events"]})
    assert run.state == "success", _states(run)
    # the registry's default strategy (minor) on 6 sorted runs: universal compaction merges them
    snap, _, runs = _shape(paimon_warehouse, "db.events")
    assert snap == 7 and runs is not None and runs < 6
    assert _xcoms(run, "table.health")["db.events"]["max_sorted_runs"] == runs
    with pytest.raises(Exception, match="pattern|does not match"):
        dag.test(run_conf={"tables": ["no_dot"]})


def test_compaction_dag_shape(dags: dict[str, Any]) -> None:
    dag = dags["paimon_compaction"]
    assert dag.max_active_runs == 1 and dag.catchup is False and dag.timetable.expression == "0 * * * *"
    compact = dag.get_task("table.compact")
    assert compact.pool == "paimon_spark" and compact.map_index_template == "{{ task.table }}"
    assert dag.get_task("table.health").trigger_rule == "none_failed"
    assert "table.compact" in dag.get_task("list_tables").downstream_task_ids


def test_on_new_snapshot_takes_the_tables_of_the_asset_events(dags: dict[str, Any]) -> None:
    """What the watcher's events carry (``extra["payload"]``, as the triggerer stores it) picks the tables."""
    from types import SimpleNamespace

    from airflow.sdk.execution_time.context import set_current_context

    task = dags["paimon_on_new_snapshot"].get_task("tables_over_budget")
    payload = {"table": "db.events", "violations": ["compaction_debt 1.2 > 0.8"]}
    events = {
        "paimon_health__db.events": [SimpleNamespace(extra={"from_trigger": True, "payload": payload})] * 2,
        "other": [SimpleNamespace(extra={})],
    }
    context: Any = {"params": {"tables": ["db.x"]}, "triggering_asset_events": events}
    with set_current_context(context):
        selected = task.python_callable()  # type: ignore[attr-defined]
    assert [r["table"] for r in selected] == ["db.events", "db.x"]  # once each, sorted
    assert selected[0] == {
        "table": "db.events",
        "compaction": "minor",
        "compaction_mode": "distributed",
        "partition_idle_time": None,
    }
