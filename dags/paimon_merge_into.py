"""``paimon_merge_into`` (manual): Paimon's ``merge_into`` on one table, plan first.

The run's form takes the target table and Paimon's merge arguments (``''`` = not given). The
``plan`` task always runs first as a dry run through Spark (how many rows would be updated,
deleted and inserted); ``mode`` decides what follows: ``plan`` stops there, ``apply`` merges,
``approve_in_ui`` waits for a person to approve the plan in the UI, then merges. The merge
commits once (primary-key tables: upserts and deletes by key; append tables: the files holding
changed rows are rewritten), under a commit user of the task instance, so a retry of a landed
merge is a no-op.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt

from airflow.sdk import DAG, Param

from _paimon_common import DEFAULT_ARGS, SPARK_POOL, mode_param, plan_then_apply, table_param
from _paimon_registry import load
from paimon_airflow.operators.merge_into import MERGE_ARGUMENTS, PaimonMergeIntoOperator

REGISTRY = load()


def _optional(description: str) -> Param:
    return Param(None, type=["null", "string"], description=description)


#: Each merge argument as the operator's templated argument ('' when the Param is empty).
ARGS = {name: f"{{{{ params.{name} or '' }}}}" for name in MERGE_ARGUMENTS}

with DAG(
    dag_id="paimon_merge_into",
    description="MERGE INTO a Paimon table (Paimon's merge_into; dry-run plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param("target db.table"),
        "target_alias": Param(None, type=["null", "string"], pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                              description="name of the target in the conditions (default: the table's name)"),
        "source_sqls": _optional("';'-separated Spark SQL run first, e.g. CREATE TEMPORARY VIEW S AS ..."),
        "source_table": Param(type="string", minLength=1,
                              description="source: a Spark view/table (e.g. made by source_sqls) or a db.table"),
        "merge_condition": Param(type="string", minLength=1, description="e.g. T.id = S.order_id"),
        "matched_upsert_condition": _optional("extra condition of the matched upsert"),
        "matched_upsert_setting": _optional("'col=expr,...' or '*' (the source row)"),
        "not_matched_insert_condition": _optional("condition of the insert"),
        "not_matched_insert_values": _optional("'expr, expr, ...' or '*'"),
        "matched_delete_condition": _optional("delete matched rows where (TRUE: all)"),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonMergeIntoOperator(
        task_id="plan",
        table="{{ params.table }}",
        dry_run=True,
        paimon_conn_id=REGISTRY.paimon_conn_id,
        pool=SPARK_POOL,
        **ARGS,  # type: ignore[arg-type]
    )
    apply = PaimonMergeIntoOperator(
        task_id="merge_into",
        table="{{ params.table }}",
        paimon_conn_id=REGISTRY.paimon_conn_id,
        pool=SPARK_POOL,
        **ARGS,  # type: ignore[arg-type]
    )
    plan_then_apply(plan, apply, subject="MERGE INTO {{ params.table }}?")
