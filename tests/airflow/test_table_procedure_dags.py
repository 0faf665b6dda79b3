"""Tag management, clear consumers, remove unexisting files and rollback as latest / to a time, in
Airflow: the operators' ``execute`` (retries included) and ``dag.test()`` runs of the manual DAGs
against real local warehouses."""

from __future__ import annotations

import os
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.io.file_io import join
from tests.airflow.conftest import DAGS_FOLDER
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import millis, table_with_snapshots

pytestmark = pytest.mark.integration

TIMES = [millis("2026-11-01", h) for h in (1, 2, 3, 4)]


def _reload(wh: str, name: str = "db.t") -> Any:
    return FileSystemCatalog(wh).get_table(name)


def _states(run: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ti in run.get_task_instances():
        out.setdefault(ti.task_id, []).append(str(ti.state))
    return out


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dags(airflow_db: None) -> dict[str, Any]:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return dict(bag.dags)


# --- operators --------------------------------------------------------------------------------


def test_manage_tags_operator_actions_and_retries(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.table_procedures import PaimonManageTagsOperator
    from paimon_airflow.utils.errors import PaimonTerminalFailure

    table_with_snapshots(paimon_warehouse, commit_times=TIMES)

    def op(**kw: Any) -> Any:
        return PaimonManageTagsOperator(task_id="tags", table="db.t", **kw)

    create = op(
        tag_action="create_from_timestamp", tag="t", timestamp="2026-11-01T01:30:00", time_retained="7 d"
    )
    assert render_and_execute(op(**{**_kw(create), "dry_run": True}), task_context())["snapshot_id"] == 2
    assert _reload(paimon_warehouse).tag_manager.list_names() == []
    out = render_and_execute(create, task_context())
    assert out["snapshot_id"] == 2 and out["dry_run"] is False
    again = render_and_execute(create, task_context())  # a retry after the landed attempt
    assert again["done_before"] is True and _reload(paimon_warehouse).tag_manager.get("t").id == 2

    replace = op(tag_action="replace", tag="t", snapshot_id="3")
    assert render_and_execute(replace, task_context())["previous_snapshot_id"] == 2
    rename = op(tag_action="rename", tag="t", target_tag="release")
    assert render_and_execute(rename, task_context())["snapshot_id"] == 3
    assert render_and_execute(rename, task_context())["done_before"] is True  # retry
    assert _reload(paimon_warehouse).tag_manager.list_names() == ["release"]

    expire = op(tag_action="expire", older_than="2999-01-01T00:00:00", dry_run="{{ params.dry }}")
    ctx = task_context()
    ctx["params"] = {"dry": True}
    assert render_and_execute(expire, ctx)["expired_tags"] == ["release"]
    assert _reload(paimon_warehouse).tag_manager.list_names() == ["release"]

    for bad in (
        op(tag_action="bogus"),
        op(tag_action="rename", tag="release"),  # no target_tag
        op(tag_action="replace", tag="nope"),  # unknown tag: terminal, no retry
        op(tag_action="create_from_timestamp", tag="x", timestamp="2999-01-01T00:00:00"),
    ):
        with pytest.raises(PaimonTerminalFailure):
            render_and_execute(bad, task_context())
    assert _reload(paimon_warehouse).tag_manager.list_names() == ["release"]


def _kw(op: Any) -> dict[str, Any]:
    return {f: getattr(op, f) for f in ("tag_action", "tag", "timestamp", "time_retained")}


def test_clear_consumers_and_remove_unexisting_files_operators(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.table_procedures import (
        PaimonClearConsumersOperator,
        PaimonRemoveUnexistingFilesOperator,
    )
    from paimon_airflow.utils.errors import PaimonTerminalFailure

    t = table_with_snapshots(paimon_warehouse, commit_times=TIMES)
    for cid in ("a1", "a2", "b"):
        t.consumer_manager.reset_consumer(cid, Consumer(2))
    clear = PaimonClearConsumersOperator(
        task_id="c", table="db.t", including_consumers="a.*", excluding_consumers="", dry_run=False
    )
    assert sorted(render_and_execute(clear, task_context())["cleared_consumers"]) == ["a1", "a2"]
    assert render_and_execute(clear, task_context())["cleared_consumers"] == []  # retry: nothing left
    with pytest.raises(PaimonTerminalFailure):
        render_and_execute(
            PaimonClearConsumersOperator(task_id="c", table="db.t", including_consumers="("), task_context()
        )
    assert dict(_reload(paimon_warehouse).consumer_manager.consumers()) == {"b": 2}

    e = t.new_file_store_scan().live_entries(t.latest_snapshot())[1]
    rows = t.latest_snapshot().total_record_count
    assert t.file_io.delete(join(t.bucket_path(e.partition, e.bucket), e.file.file_name))
    plan = render_and_execute(PaimonRemoveUnexistingFilesOperator(task_id="r", table="db.t"), task_context())
    assert (
        plan["dry_run"] is True
        and plan["removed_files"] == 1
        and _reload(paimon_warehouse).latest_snapshot().id == 4
    )
    repair = PaimonRemoveUnexistingFilesOperator(task_id="r", table="db.t", dry_run="false", parallelism="2")
    assert render_and_execute(repair, task_context())["committed_snapshot_id"] == 5
    assert render_and_execute(repair, task_context())["removed_files"] == 0  # retry
    assert _reload(paimon_warehouse).to_arrow().num_rows == rows - e.file.row_count


# --- DAG runs -----------------------------------------------------------------------------------


def test_manage_tags_dag_plans_then_applies(dags: dict[str, Any], paimon_warehouse: str) -> None:
    table_with_snapshots(paimon_warehouse, commit_times=TIMES)
    dag = dags["paimon_manage_tags"]
    conf = {
        "table": "db.t",
        "tag_action": "create_from_timestamp",
        "tag": "nov",
        "timestamp": "2026-11-01T02:30:00",
    }
    plan = dag.test(run_conf={**conf, "mode": "plan"})
    assert plan.state == "success" and _states(plan)["manage_tags"] == ["skipped"], _states(plan)
    assert _reload(paimon_warehouse).tag_manager.list_names() == []
    applied = dag.test(run_conf={**conf, "mode": "apply"})
    assert applied.state == "success" and _states(applied)["manage_tags"] == ["success"], _states(applied)
    assert _reload(paimon_warehouse).tag_manager.get("nov").id == 3
    bad = dag.test(
        run_conf={"table": "db.t", "tag_action": "rename", "tag": "nope", "target_tag": "x", "mode": "apply"}
    )
    assert bad.state == "failed" and _states(bad)["plan"] == ["failed"]  # the plan catches it; nothing ran
    assert _reload(paimon_warehouse).tag_manager.list_names() == ["nov"]


def test_rollback_dag_as_latest_and_to_a_time(dags: dict[str, Any], paimon_warehouse: str) -> None:
    table_with_snapshots(paimon_warehouse, commit_times=TIMES)
    dag = dags["paimon_rollback"]
    run = dag.test(run_conf={"table": "db.t", "snapshot_id": 2, "as_latest": True, "mode": "apply"})
    assert run.state == "success" and _states(run)["rollback"] == ["success"], _states(run)
    t = _reload(paimon_warehouse)
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5]  # history kept
    assert (
        t.to_arrow().num_rows == _reload(paimon_warehouse).copy({"scan.snapshot-id": "2"}).to_arrow().num_rows
    )
    conf = {"table": "db.t", "snapshot_id": None, "as_latest": False, "timestamp": "2026-11-01T03:30:00"}
    run = dag.test(run_conf={**conf, "mode": "apply"})
    assert run.state == "success", _states(run)
    assert _reload(paimon_warehouse).snapshot_manager.latest_snapshot_id() == 3  # newest at or before 03:30


def test_remove_unexisting_files_and_clear_consumers_dags(
    dags: dict[str, Any], paimon_warehouse: str
) -> None:
    t = table_with_snapshots(paimon_warehouse, commit_times=TIMES)
    t.consumer_manager.reset_consumer("stale", Consumer(2))
    e = t.new_file_store_scan().live_entries(t.latest_snapshot())[0]
    rows = t.latest_snapshot().total_record_count
    path = join(t.bucket_path(e.partition, e.bucket), e.file.file_name)
    assert t.file_io.delete(path)
    run = dags["paimon_remove_unexisting_files"].test(run_conf={"table": "db.t", "mode": "apply"})
    assert run.state == "success" and _states(run)["remove_unexisting_files"] == ["success"], _states(run)
    repaired = _reload(paimon_warehouse)
    assert repaired.latest_snapshot().commit_kind.value == "OVERWRITE" and not os.path.exists(path)
    assert repaired.to_arrow().num_rows == rows - e.file.row_count
    run = dags["paimon_clear_consumers"].test(run_conf={"table": "db.t", "mode": "apply"})
    assert run.state == "success", _states(run)
    assert dict(_reload(paimon_warehouse).consumer_manager.consumers()) == {}
