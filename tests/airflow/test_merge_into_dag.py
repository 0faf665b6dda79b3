"""``paimon_merge_into`` (manual DAG) and ``PaimonMergeIntoOperator``: the exact job arguments,
Param validation, and ``dag.test()`` runs through spark-submit on local Spark (plan, then apply)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import DAGS_FOLDER
from tests.airflow.context import task_context

pytestmark = pytest.mark.integration

T_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("price", pa.int64())])
S_SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("price", pa.int64())])
SEED = {  # Paimon's example: merge_into('default.T', '', '', 'default.S', 'T.id=S.order_id', '', 'price=T.price+20', '', '*')
    "table": "db.T",
    "source_table": "db.S",
    "merge_condition": "T.id=S.order_id",
    "matched_upsert_setting": "price=T.price+20",
    "not_matched_insert_values": "*",
}


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dag(airflow_db: None) -> Any:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER / "paimon_merge_into.py"), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return bag.dags["paimon_merge_into"]


def _states(run: Any) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in run.get_task_instances()}


def _xcom(run: Any, task_id: str) -> Any:
    ti = next(ti for ti in run.get_task_instances() if ti.task_id == task_id)
    return ti.xcom_pull(task_ids=task_id, key="return_value")


def test_operator_job_argv(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.merge_into import PaimonMergeIntoOperator

    op = PaimonMergeIntoOperator(
        task_id="m", table="{{ params.t }}", source_table="db.S", merge_condition="T.id = S.id",
        source_sqls=["CREATE TEMPORARY VIEW V AS SELECT 1", "SET x=1"], matched_upsert_setting="",
        matched_delete_condition="{{ params.d }}", dry_run="{{ params.dry }}",
    )  # fmt: skip
    ctx: Any = task_context("2026-01-02", dag_id="d", run_id="r1", task_id="m")
    ctx["params"] = {"t": "db.T", "d": "S.gone", "dry": "true"}
    op.render_template_fields(ctx)
    assert op.runs_spark_submit
    assert op.job_argv(ctx) == [
        "--warehouse", paimon_warehouse, "--table", "db.T", "--run-id", "d/r1/m/-1",
        "--source_sqls", "CREATE TEMPORARY VIEW V AS SELECT 1;SET x=1", "--source_table", "db.S",
        "--merge_condition", "T.id = S.id", "--matched_delete_condition", "S.gone", "--dry-run",
    ]  # fmt: skip


def test_dag_rejects_invalid_params(dag: Any) -> None:
    from airflow.sdk.exceptions import ParamValidationError

    with pytest.raises(ParamValidationError):
        dag.test(run_conf={**SEED, "table": "no_dot"})
    with pytest.raises(ParamValidationError):
        dag.test(run_conf={**SEED, "merge_condition": ""})


def _tables(wh: str) -> FileSystemCatalog:
    catalog = FileSystemCatalog(wh)
    t = catalog.create_table("db.T", T_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "price": pa.array([10, 20, 30], pa.int64())}))
    s = catalog.create_table("db.S", S_SCHEMA)
    s.write_arrow(pa.table({"order_id": pa.array([2, 3, 4], pa.int64()), "price": pa.array([0, 0, 400], pa.int64())}))
    return catalog


def test_dag_plan_mode_is_a_dry_run(dag: Any, paimon_warehouse: str) -> None:
    catalog = _tables(paimon_warehouse)
    plan = dag.test(run_conf={**SEED, "mode": "plan"})
    states = _states(plan)
    assert plan.state == "success" and states["plan"] == "success" and states["merge_into"] == "skipped", states
    result = _xcom(plan, "plan")
    assert (result["dry_run"], result["updated_rows"], result["deleted_rows"], result["inserted_rows"]) == (
        True, 2, 0, 1,
    ), result  # fmt: skip
    assert catalog.get_table("db.T").snapshot_manager.latest_snapshot_id() == 1


@pytest.mark.slow
def test_dag_apply_mode_merges(dag: Any, paimon_warehouse: str) -> None:
    catalog = _tables(paimon_warehouse)
    applied = dag.test(run_conf={**SEED, "mode": "apply"})
    states = _states(applied)
    assert applied.state == "success" and states["merge_into"] == "success", states
    assert _xcom(applied, "plan")["dry_run"] is True
    result = _xcom(applied, "merge_into")
    assert (result["snapshot_id"], result["updated_rows"], result["inserted_rows"]) == (2, 2, 1), result
    got = catalog.get_table("db.T").to_arrow().sort_by("id").to_pylist()
    assert got == [{"id": 1, "price": 10}, {"id": 2, "price": 40}, {"id": 3, "price": 50}, {"id": 4, "price": 400}]


def test_operator_retry_of_a_landed_merge_runs_no_job(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.merge_into import PaimonMergeIntoOperator
    from tests.airflow.context import render_and_execute

    catalog = FileSystemCatalog(paimon_warehouse)
    t = catalog.create_table("db.T", T_SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    op = PaimonMergeIntoOperator(
        task_id="m", table="db.T", source_table="db.missing", merge_condition="T.id = S.id", matched_delete_condition="TRUE"
    )
    # the commit of an earlier try of this task instance landed (same run key -> same commit user)
    builder = t.new_batch_write_builder(commit_user="merge_into-db.T-d/r1/m/-1")
    write = builder.new_write()
    write.write_arrow(pa.table({"id": pa.array([1], pa.int64()), "price": pa.array([5], pa.int64())}))
    builder.new_commit().commit(write.prepare_commit())
    ctx: Any = task_context("2026-01-02", dag_id="d", run_id="r1", task_id="m")
    out = render_and_execute(op, ctx)  # no spark-submit: the source table does not even exist
    assert out["already_committed"] is True and out["snapshot_id"] == 1 and out["status"] == "ok", out


def test_operator_argument_list_is_the_jobs() -> None:
    """The operator's parse-time copy of Paimon's argument list equals the job's own."""
    from paimon_airflow.operators.merge_into import MERGE_ARGUMENTS
    from spark_jobs.common.merge_spec import ARG_NAMES

    assert ARG_NAMES[0] == "target_table"
    assert tuple(MERGE_ARGUMENTS) == tuple(ARG_NAMES[1:])
