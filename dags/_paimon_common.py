"""Shared pieces of the Paimon DAGs: default args, pools, and the run-time ``list_tables`` task.

Cheap to import: the standard library, ``airflow.sdk`` and the registry; the hook (and with it
``paimon_core``) is imported inside the task.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import Any

from airflow.sdk import Param, get_current_context, task

from _paimon_registry import load

__all__ = ["DEFAULT_ARGS", "RETRY_DELAY_ENV", "SPARK_POOL", "list_tables", "retry_delay", "table_params"]

#: Environment variable (of the DAG processor) with the seconds before a task's first retry.
RETRY_DELAY_ENV = "PAIMON_RETRY_DELAY_SECONDS"
DEFAULT_RETRY_DELAY = dt.timedelta(seconds=30)


def retry_delay(environ: Mapping[str, str] = os.environ) -> dt.timedelta:
    """The first retry's delay (doubling after it): ``$PAIMON_RETRY_DELAY_SECONDS``, else 30 s.

    Read when the DAG file is parsed (the environment only, no I/O): a test's Airflow sets a few
    seconds so that its retries do not wait half a minute. A bad value fails the DAG's import."""
    raw = environ.get(RETRY_DELAY_ENV, "").strip()
    if not raw:
        return DEFAULT_RETRY_DELAY
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also NaN
        raise ValueError(f"{RETRY_DELAY_ENV} must be a number of seconds >= 0, got {raw!r}")
    return dt.timedelta(seconds=seconds)


#: Every Paimon task: transient errors (commit conflicts, I/O) retry; terminal ones fail at once.
DEFAULT_ARGS: dict[str, Any] = {
    "owner": "paimon",
    "retries": 2,
    "retry_delay": retry_delay(),
    "retry_exponential_backoff": True,
}
#: Pool of the tasks that run Spark (compaction, ingest): size it to the cluster (``airflow pools set``).
SPARK_POOL = "paimon_spark"
#: JSON-schema pattern of a Paimon duration Param ('1 d', '12 h', '30 min'; lower-case units).
DURATION_PATTERN = (
    r"^\s*\d+(\.\d+)?\s*(ms|millis|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days)?\s*$"
)


#: A ``db.table`` name as the UI form accepts it (the registry's own check, anchored for JSON Schema).
TABLE_PATTERN = r"^[A-Za-z0-9_]+\.[A-Za-z0-9_$-]+$"


def table_param(description: str = "db.table") -> Param:
    """The required ``table`` Param of the manual, one-table DAGs."""
    return Param(type="string", pattern=TABLE_PATTERN, description=description)


def table_params() -> dict[str, Param]:
    """Params that narrow the registry's table selection for one run (UI form / run conf)."""
    registry = load()
    return {
        "include": Param(
            registry.include, type="string", minLength=1, description="regex over db.table (full match)"
        ),
        "exclude": Param(registry.exclude, type="string", description="regex over db.table; empty: none"),
    }


def compaction_params(*, scope: str) -> dict[str, Param]:
    """Params that override the registry's compaction settings for every table of one run;
    ``scope`` says what they apply to in the form ("compaction of every table in this run")."""
    return {
        "compaction": Param(
            None,
            type=["null", "string"],
            enum=[None, "full", "minor", "none"],
            description=f"{scope} (empty: the registry's, per table)",
        ),
        "compaction_mode": Param(
            None,
            type=["null", "string"],
            enum=[None, "distributed", "local"],
            description="distributed (spark-submit) or local (no JVM) for every table (empty: the registry's)",
        ),
    }


@task(task_id="list_tables", retries=2)
def list_tables(fields: list[str] | None = None) -> list[dict[str, Any]]:
    """The warehouse's tables selected by the registry (and the run's Params), with their settings
    (only ``fields`` of them when given: the arguments of the task group mapped over the tables)."""
    from paimon_airflow.hooks.paimon import PaimonHook
    from paimon_airflow.utils.selection import select_tables

    registry = load()
    params = get_current_context()["params"]
    include = str(params.get("include") or registry.include)
    exclude = str(params.get("exclude") if params.get("exclude") is not None else registry.exclude)
    selected = select_tables(PaimonHook(paimon_conn_id=registry.paimon_conn_id).list_tables(), include, exclude)
    out = []
    for t in selected:
        settings = registry.settings_for(t).to_dict()
        # a run's Param named like a setting overrides it for every table of the run
        settings.update({k: params[k] for k in settings if params.get(k) is not None})
        row = {"table": t, **settings}
        out.append(row if fields is None else {k: row[k] for k in ("table", *fields)})
    return out


#: How a manual DAG proceeds after showing its plan (the dry run): the ``mode`` Param.
MANUAL_MODES = ["plan", "apply", "approve_in_ui"]


def mode_param() -> Param:
    """``plan``: dry run only; ``apply``: dry run, then change; ``approve_in_ui``: dry run, then a
    person approves the plan in the UI (Airflow's human-in-the-loop approval), then change."""
    return Param(
        "plan",
        type="string",
        enum=MANUAL_MODES,
        description="plan: dry run only (default). apply: dry run, then change. "
        "approve_in_ui: dry run, then wait for a person to approve the plan in the UI.",
    )


def plan_then_apply(plan: Any, apply: Any, *, subject: str, mode_param: str = "mode") -> None:
    """Wire ``plan >> (approval | straight on) >> apply`` by the run's ``mode`` Param (or the
    Param named ``mode_param``, where ``mode`` is a procedure argument, as in compact_database)."""
    from airflow.providers.standard.operators.hitl import ApprovalOperator

    @task.branch(task_id="decide")
    def decide() -> list[str]:
        mode = get_current_context()["params"][mode_param]
        return {"plan": [], "apply": ["no_approval_needed"], "approve_in_ui": ["approve"]}[mode]

    @task(task_id="no_approval_needed")
    def no_approval_needed() -> None:
        """Mode ``apply``: go straight on."""

    approve = ApprovalOperator(
        task_id="approve",
        subject=subject,
        body="The dry run planned:\n\n```\n{{ ti.xcom_pull(task_ids='plan') | tojson(indent=2) }}\n```",
        ignore_downstream_trigger_rules=True,
    )
    apply.trigger_rule = "none_failed_min_one_success"
    gate = decide()
    plan >> gate >> [approve, no_approval_needed()] >> apply


#: What the health task returns of :func:`paimon_core.table.health.table_health` (the LSM shape).
HEALTH_FIELDS = (
    "table",
    "snapshot_id",
    "snapshot_commit_kind",
    "data_file_count",
    "small_file_count",
    "max_sorted_runs",
    "compaction_debt",
    "health_score",
)


@task(task_id="health", trigger_rule="none_failed", retries=2, map_index_template="{{ paimon_table }}")
def table_health(table: str) -> dict[str, Any]:
    """The table's health after this run's steps: files, sorted runs, compaction debt, score."""
    from paimon_airflow.hooks.paimon import PaimonHook
    from paimon_core.table.health import table_health as health_of

    get_current_context()["paimon_table"] = table  # type: ignore[typeddict-unknown-key]  # the map label

    health = health_of(PaimonHook(paimon_conn_id=load().paimon_conn_id).get_table(table)).to_dict()
    return {k: health[k] for k in HEALTH_FIELDS}
