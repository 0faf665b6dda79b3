"""``paimon_table_admin`` (issue 25): the manual plan -> approve -> apply DAG over the procedures
that delete or rewrite. ``dag.test()`` runs against real local warehouses: the plan (a dry run)
changes nothing, ``apply`` runs the procedure, a bad argument fails the plan with nothing changed;
the operator's own refusals (missing argument, unknown procedure) and its ledger action."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import DAGS_FOLDER
from tests.airflow.context import render_and_execute, task_context

pytestmark = pytest.mark.integration


def _reload(wh: str) -> Any:
    return FileSystemCatalog(wh).get_table("db.t")


def _files(wh: str) -> dict[str, int]:
    root = os.path.join(wh, "db.db", "t")
    return {
        os.path.relpath(os.path.join(d, f), root): os.path.getsize(os.path.join(d, f))
        for d, _, fs in os.walk(root)
        for f in fs
    }


def _states(run: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ti in run.get_task_instances():
        out.setdefault(ti.task_id, []).append(str(ti.state))
    return out


def _table(wh: str) -> Any:
    """db.t (id, dt) partitioned by dt: partitions a, b, c, one commit each; the last two with
    watermarks 1000 and 2000."""
    t = FileSystemCatalog(wh).create_table("db.t", pa.schema([("id", pa.int64()), ("dt", pa.string())]), partition_keys=["dt"])
    for i, (dt_, wm) in enumerate((("a", None), ("b", 1000), ("c", 2000))):
        write = t.new_batch_write_builder().new_write()
        write.write_arrow(pa.table({"id": pa.array([i], pa.int64()), "dt": [dt_]}))
        t.new_file_store_commit(str(uuid.uuid4())).commit(write.prepare_commit(), 2**63 - 1, watermark=wm)
    return _reload(wh)


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dag(airflow_db: None) -> Any:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return bag.dags["paimon_table_admin"]


def test_params_default_to_a_plan_of_a_harmless_procedure(dag: Any) -> None:
    from paimon_airflow.operators.table_admin import ADMIN_PROCEDURES

    params = dag.params
    assert params["mode"] == "plan" and params["procedure"] == "remove_unexisting_manifests"
    assert params.get_param("procedure").schema["enum"] == list(ADMIN_PROCEDURES)
    assert {t.task_id for t in dag.tasks} >= {"plan", "decide", "approve", "no_approval_needed", "apply"}
    assert dag.get_task("plan").is_dry_run is True and dag.get_task("apply").is_dry_run is False


def test_drop_partition_plan_then_apply(dag: Any, paimon_warehouse: str) -> None:
    _table(paimon_warehouse)
    before = _files(paimon_warehouse)
    conf = {"table": "db.t", "procedure": "drop_partition", "partitions": "dt=a"}
    plan = dag.test(run_conf={**conf, "mode": "plan"})
    assert plan.state == "success" and _states(plan)["apply"] == ["skipped"], _states(plan)
    assert _files(paimon_warehouse) == before
    applied = dag.test(run_conf={**conf, "mode": "apply"})
    assert applied.state == "success" and _states(applied)["apply"] == ["success"], _states(applied)
    assert sorted(_reload(paimon_warehouse).to_arrow().column("dt").to_pylist()) == ["b", "c"]
    before = _files(paimon_warehouse)
    bad = dag.test(run_conf={**conf, "partitions": "dt=zz", "mode": "apply"})
    assert bad.state == "failed" and _states(bad)["plan"] == ["failed"]  # the plan catches it
    assert _files(paimon_warehouse) == before


def test_rollback_to_watermark_and_purge(dag: Any, paimon_warehouse: str) -> None:
    _table(paimon_warehouse)
    run = dag.test(run_conf={"table": "db.t", "procedure": "rollback_to_watermark", "watermark": 1500, "mode": "apply"})
    assert run.state == "success", _states(run)
    assert _reload(paimon_warehouse).snapshot_manager.list_snapshot_ids() == [1, 2]
    before = _files(paimon_warehouse)
    plan = dag.test(run_conf={"table": "db.t", "procedure": "purge_files", "mode": "plan"})
    assert plan.state == "success" and _files(paimon_warehouse) == before
    run = dag.test(run_conf={"table": "db.t", "procedure": "purge_files", "mode": "apply"})
    assert run.state == "success" and _reload(paimon_warehouse).to_arrow().num_rows == 0


def test_operator_refusals_and_ledger_action(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.table_admin import PaimonTableAdminOperator
    from paimon_airflow.utils.errors import PaimonTerminalFailure

    _table(paimon_warehouse)
    before = _files(paimon_warehouse)
    for kw, message in (
        ({"procedure": "drop_partition"}, "drop_partition needs partitions"),
        ({"procedure": "rollback_to_watermark", "watermark": ""}, "needs watermark"),
        ({"procedure": "merge_branch"}, "needs source_branch"),
        ({"procedure": "bogus"}, "procedure must be one of"),
    ):
        op = PaimonTableAdminOperator(task_id="x", table="db.t", dry_run=False, **kw)
        with pytest.raises(PaimonTerminalFailure, match=message):
            render_and_execute(op, task_context())
    assert _files(paimon_warehouse) == before
    op = PaimonTableAdminOperator(task_id="x", table="db.t", procedure="merge_branch", source_branch="nope")
    assert op.ledger_action == "merge_branch" and op.is_dry_run is None and op.ledger_dry_run is False
    drop = PaimonTableAdminOperator(task_id="x", table="db.t", procedure="drop_partition")
    assert drop.is_dry_run is None and drop.ledger_dry_run is True  # each procedure's own default


def test_reassign_row_id_plans_then_reassigns(dag: Any, paimon_warehouse: str) -> None:
    """A row-tracking table whose partitions interleave row ids: the plan changes nothing, the
    apply moves partition a's ids to fresh contiguous ones from the next row id."""
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    t = FileSystemCatalog(paimon_warehouse).create_table("db.t", schema, partition_keys=["dt"], options=options)
    for i in range(4):  # alternating partitions: a holds ids 0,1,4,5 (a gap), b holds 2,3,6,7
        t.write_arrow(pa.table({"id": [2 * i, 2 * i + 1], "dt": ["ab"[i % 2]] * 2}, schema=schema))

    def ids() -> dict[int, int]:
        rows = _reload(paimon_warehouse).inspect.system_table("row_tracking").to_pylist()
        return {r["id"]: r["_ROW_ID"] for r in rows}

    assert ids() == {i: i for i in range(8)}
    before = _files(paimon_warehouse)
    conf = {"table": "db.t", "procedure": "reassign_row_id", "partitions": "dt=a"}
    plan = dag.test(run_conf=conf)  # mode defaults to plan
    assert plan.state == "success" and _files(paimon_warehouse) == before
    run = dag.test(run_conf={**conf, "mode": "apply"})
    assert run.state == "success", _states(run)
    after = ids()
    assert {i: after[i] for i in (2, 3, 6, 7)} == {2: 2, 3: 3, 6: 6, 7: 7}  # partition b untouched
    assert sorted(after[i] for i in (0, 1, 4, 5)) == [8, 9, 10, 11]  # a: contiguous, never used before


def test_rewrite_file_index_plans_then_rewrites(dag: Any, paimon_warehouse: str) -> None:
    """After ALTER TABLE sets a bloom filter on id: the plan reads the files and reports the two
    indexes of partition b without writing a byte; the apply commits them (rows unchanged)."""
    from paimon_core.schema.schema_change import SetOption

    t = _table(paimon_warehouse)
    FileSystemCatalog(paimon_warehouse).alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id")])
    rows = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    before = _files(paimon_warehouse)
    latest = _reload(paimon_warehouse).latest_snapshot().id
    conf = {"table": "db.t", "procedure": "rewrite_file_index", "partitions": "dt=b"}
    plan = dag.test(run_conf=conf)  # mode defaults to plan
    assert plan.state == "success" and _files(paimon_warehouse) == before
    (ti,) = [ti for ti in plan.get_task_instances() if ti.task_id == "plan"]
    planned = ti.xcom_pull(task_ids="plan")
    assert planned["dry_run"] and planned["rewritten_files"] == 1 and planned["snapshot_id"] is None, planned
    run = dag.test(run_conf={**conf, "mode": "apply"})
    assert run.state == "success", _states(run)
    t = _reload(paimon_warehouse)
    snap = t.latest_snapshot()
    assert snap.id == latest + 1 and snap.commit_kind.name == "COMPACT"
    indexed = {e.partition: bool(e.file.embedded_index or e.file.extra_files) for e in t.new_file_store_scan().live_entries(snap)}
    assert sorted(indexed.values()) == [False, False, True]  # only dt=b's file
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == rows
