"""``paimon_maintenance``: plan the pass from every table's health, then do only what is needed.

One ``plan`` task looks at every table of the registry (:mod:`paimon_core.maintenance`: the
table's metadata, its own options and the registry's settings; a table whose latest snapshot has
not changed since the last pass costs one metadata read) and returns the actions the tables need
now, each with its reason, cost and priority, within the pass's budget (the rest is backlog,
carried to the next pass). Then:

* ``maintain``: the light actions (snapshot, tag and partition expiry, tags, orphan cleanup,
  compactions small enough for the task process), many tables per task instance (mapped over
  batches, named by what they do), each table's actions in order: compaction, tags, partition
  expiry, snapshot expiry, orphan cleanup;
* ``compact_on_spark``: the compactions that need Spark, several tables per Spark application
  (pool ``paimon_spark``), so a JVM starts once per group;
* ``lag_alerts``: tables whose compaction debt stays over budget, or whose expiry / orphan
  cleanup / tags have not succeeded for longer than their period; it fails (so Airflow's
  failure callbacks and notifiers fire) and calls the registry's alert callback.

``mode``: ``plan`` shows the whole pass and changes nothing; ``apply`` runs it;
``approve_in_ui`` waits for a person to approve the plan. Left empty (the default) a scheduled
run applies and a run triggered by hand only plans, so a trigger from the form with its
defaults never changes a table. One compactor per table across DAGs: every compaction holds the
table's compaction lease; ``max_active_runs=1``. Every action records a row in the maintenance
ledger (``paimon_maintenance.ledger``).
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt
from typing import Any

from airflow.sdk import DAG, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowSkipException

from _paimon_common import (
    DEFAULT_ARGS,
    MANUAL_MODES,
    SPARK_POOL,
    compaction_params,
    cron_schedule,
    table_params,
)
from _paimon_registry import load
from paimon_airflow.operators.maintenance_pass import (
    PaimonCompactGroupOperator,
    PaimonMaintenanceBatchOperator,
)

REGISTRY = load()

with DAG(
    dag_id="paimon_maintenance",
    description="Need-driven maintenance of every registered Paimon table: plan from health, then batches",
    schedule=cron_schedule("0 2 * * *"),  # unpausing releases no missed run (the form's Unpause box)
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        **compaction_params(scope="compaction of every table in this run"),
        "mode": Param(
            None,
            type=["null", "string"],
            enum=[None, *MANUAL_MODES],
            description="plan: show the pass, change nothing. apply: run it. approve_in_ui: plan, then wait "
            "for approval. Empty: apply when scheduled, plan when triggered by hand.",
        ),
        "in_process_max_mb": Param(
            None,
            type=["null", "integer"],
            minimum=0,
            description="compactions rewriting more than this (MB) go to Spark, in groups (empty: the registry's)",
        ),
        "batch_size": Param(
            None,
            type=["null", "integer"],
            minimum=1,
            description="tables per light-action task instance (empty: the registry's)",
        ),
        "max_rewrite_gb": Param(
            None,
            type=["null", "number"],
            minimum=0,
            description="bytes the pass's compactions may rewrite, in GB (empty: the registry's budget)",
        ),
    },
    tags=["paimon", "maintenance"],
    doc_md=__doc__,
) as dag:

    @task(task_id="plan", retries=2)
    def plan() -> dict[str, Any]:
        """The pass: per table what it needs and why, in batches and Spark groups, and the backlog."""
        from paimon_airflow.maintenance_plan import plan_pass

        return plan_pass(get_current_context(), REGISTRY)

    @task.branch(task_id="decide")
    def decide(planned: dict[str, Any]) -> list[str]:
        """``plan``: stop here; ``apply``: run the batches; ``approve_in_ui``: ask a person first."""
        return {"plan": [], "apply": ["go"], "approve_in_ui": ["approve"]}[str(planned["mode"])]

    @task(task_id="go")
    def go() -> None:
        """Mode ``apply``: no approval needed."""

    from airflow.providers.standard.operators.hitl import ApprovalOperator

    approve = ApprovalOperator(
        task_id="approve",
        subject="Apply this Paimon maintenance pass?",
        body="{{ ti.xcom_pull(task_ids='plan')['summary_md'] }}",
        ignore_downstream_trigger_rules=True,
    )

    # what the mapped tasks expand over (a mapped task takes a task's own return value)
    def _work(planned: dict[str, Any], key: str) -> list[dict[str, Any]]:
        if planned["mode"] == "plan":  # also upstream of these: the plan task, which succeeded
            raise AirflowSkipException("mode plan: the pass is shown, nothing runs")
        return list(planned[key])

    @task(task_id="batches", trigger_rule="none_failed_min_one_success")
    def batches(planned: dict[str, Any]) -> list[dict[str, Any]]:
        """The plan's batches of light actions (many tables per task instance)."""
        return _work(planned, "batches")

    @task(task_id="spark_groups", trigger_rule="none_failed_min_one_success")
    def spark_groups(planned: dict[str, Any]) -> list[dict[str, Any]]:
        """The plan's groups of compactions that need Spark (several tables per application)."""
        return _work(planned, "spark_groups")

    planned = plan()
    go_on = go()
    decide(planned) >> [approve, go_on]  # type: ignore[arg-type]
    light = batches(planned)  # type: ignore[arg-type]  # an XComArg: the plan task's result
    heavy = spark_groups(planned)  # type: ignore[arg-type]
    [approve, go_on] >> light
    [approve, go_on] >> heavy

    maintain = PaimonMaintenanceBatchOperator.partial(
        task_id="maintain",
        paimon_conn_id=REGISTRY.paimon_conn_id,
        map_index_template="{{ task.batch['label'] }}",
    ).expand(batch=light)
    spark = PaimonCompactGroupOperator.partial(
        task_id="compact_on_spark",
        paimon_conn_id=REGISTRY.paimon_conn_id,
        spark_conn_id=REGISTRY.spark_conn_id,
        pool=SPARK_POOL,
        conf={"spark.sql.shuffle.partitions": "4"},
        map_index_template="{{ task.group['label'] }}",
    ).expand(group=heavy)

    @task(task_id="lag_alerts", trigger_rule="all_done", retries=0)
    def lag_alerts() -> list[dict[str, Any]]:
        """Tables lagging on compaction debt or on an action's period (fails when there are any)."""
        from paimon_airflow.maintenance_plan import check_lag

        return check_lag(get_current_context(), REGISTRY)

    [maintain, spark] >> lag_alerts()
