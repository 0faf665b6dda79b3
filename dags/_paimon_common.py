"""Shared pieces of the Paimon DAGs: default args, pools, schedules, Params and the run-time
``list_tables`` task.

Safe defaults for a person in the UI (a form submitted as it opens deletes nothing and starts no
run but its own):

* the manual DAGs (``schedule=None``) are created unpaused (``is_paused_upon_creation=False``):
  nothing runs by itself, and the trigger form's "Unpause on trigger" box (ticked by default)
  never shows;
* the scheduled ones use :func:`cron_schedule` / :func:`daily_intervals` without catchup
  (:mod:`paimon_airflow.timetables`): unpausing a DAG that missed cron times releases no run, the
  next one comes at the next cron time; and every task of theirs skips itself in a scheduled run
  that started late (:func:`skip_overdue_scheduled_run`, in :data:`DEFAULT_ARGS`), the rest of what
  an unpause or an outage can release;
* destructive steps take :data:`DRY_RUN`: the run's ``dry_run`` Param (:func:`dry_run_param`,
  default true) in the runs a person starts; scheduled runs apply;
* the manual one-table DAGs (:func:`manual_dag`, :func:`plan_and_apply`) always run a dry run
  first (``plan``); their ``mode`` Param (default ``plan``) decides whether the change follows.

A form submitted as it opens therefore changes nothing, whatever the action's own ``dry_run``
default is (:mod:`paimon_core.table.maintenance`: True for the calls that drop something on
request, False for retention); the operators and jobs keep that default, the DAGs pass
``dry_run`` explicitly on every task.

Cheap to import: the standard library, ``airflow.sdk``, the registry and the timetables; the hook
(and with it ``paimon_core``) is imported inside the task.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import Any

from airflow.sdk import DAG, Param, get_current_context, task

from _paimon_registry import load

__all__ = [
    "DEFAULT_ARGS",
    "DRY_RUN",
    "ON_TIME_GRACE",
    "RETRY_DELAY_ENV",
    "SPARK_POOL",
    "cron_schedule",
    "daily_intervals",
    "dry_run_param",
    "list_tables",
    "manual_dag",
    "optional_param",
    "param_arg",
    "plan_and_apply",
    "overdue_by",
    "retry_delay",
    "skip_overdue_scheduled_run",
    "table_params",
]

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


#: A scheduled run that starts more than this after its time did not run on time (Airflow's own
#: "run immediately" window for a cron time just passed is at least 5 minutes, too).
ON_TIME_GRACE = dt.timedelta(minutes=5)


def overdue_by(
    *,
    run_type: str,
    clear_number: int,
    run_after: dt.datetime,
    started: dt.datetime,
    grace: dt.timedelta = ON_TIME_GRACE,
) -> dt.timedelta | None:
    """How late a run started, if it is a scheduled run (not cleared by a person since) that started
    more than ``grace`` after its time; else None.

    Such a run was released by an unpause (the DAG was paused at its time: the trigger form's
    "Unpause on trigger" box does that), waited behind a run that overran, or met a scheduler
    outage. Its work is left to the next run on time; a person who wants it now triggers the DAG,
    clears the run (a cleared run always runs) or backfills."""
    if run_type != "scheduled" or clear_number > 0:
        return None
    late = started - run_after
    return late if late > grace else None


def skip_overdue_scheduled_run(context: Any) -> None:
    """The ``pre_execute`` of every Paimon task (in :data:`DEFAULT_ARGS`): skips the task in a run
    :func:`overdue_by` calls late (by the run's start, so every task of a run decides alike)."""
    from airflow.sdk import timezone
    from airflow.sdk.exceptions import AirflowSkipException

    run = context["dag_run"]
    late = overdue_by(
        run_type=str(getattr(run.run_type, "value", run.run_type)),
        clear_number=int(run.clear_number or 0),
        run_after=run.run_after,
        started=run.start_date or timezone.utcnow(),
    )
    if late is not None:
        raise AirflowSkipException(
            f"scheduled run {run.run_id} started {late} after its time {run.run_after.isoformat()} "
            f"(more than {ON_TIME_GRACE}: released by an unpause, or late behind another run or an "
            "outage): skipped; the next run on time does the work (clear this run to run it anyway)"
        )


#: Every Paimon task: transient errors (commit conflicts, I/O) retry; terminal ones fail at once;
#: a scheduled run that started late skips (:func:`skip_overdue_scheduled_run`).
DEFAULT_ARGS: dict[str, Any] = {
    "owner": "paimon",
    "retries": 2,
    "retry_delay": retry_delay(),
    "retry_exponential_backoff": True,
    "pre_execute": skip_overdue_scheduled_run,
}
def cron_schedule(cron: str) -> Any:
    """A run at each time of ``cron`` (UTC) that never releases a missed one (use with
    ``catchup=False``; see :mod:`paimon_airflow.timetables`)."""
    from paimon_airflow.timetables import OnTimeCronTriggerTimetable

    return OnTimeCronTriggerTimetable(cron, timezone="UTC")


def daily_intervals() -> Any:
    """Daily data intervals [D, D+1) UTC, each run at D+1 00:00, never releasing a missed one (use
    with ``catchup=False``; missed days are made up with a backfill)."""
    from paimon_airflow.timetables import OnTimeCronDataIntervalTimetable

    return OnTimeCronDataIntervalTimetable("0 0 * * *", timezone="UTC")


#: The ``dry_run`` of a destructive step: the run's ``dry_run`` Param (:func:`dry_run_param`) in
#: the runs a person starts (manual, backfill), so a form submitted as it opens deletes nothing;
#: a scheduled run always applies.
DRY_RUN = "{{ params.dry_run and dag_run.run_type != 'scheduled' }}"


def dry_run_param(what: str = "report what would be deleted; delete nothing") -> Param:
    """The ``dry_run`` Param of a scheduled DAG with destructive steps (default true; see :data:`DRY_RUN`)."""
    return Param(
        True,
        type="boolean",
        description=f"{what}. Default on for runs started by a person (untick to apply); "
        "scheduled runs always apply",
    )
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
        # null-able: the UI form takes an empty text field of a plain "string" Param as missing
        "exclude": Param(
            registry.exclude or None,
            type=["null", "string"],
            description="regex over db.table (full match) to leave out; empty: none",
        ),
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
    exclude = str(params.get("exclude") or "")  # the Param defaults to the registry's; empty: none
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


#: The start date of the manual DAGs (they have no schedule; Airflow wants one).
MANUAL_START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def optional_param(description: str, *, type: str = "string", **schema: Any) -> Param:  # noqa: A002 - JSON Schema's name
    """An optional Param of a manual DAG's form: empty (null) by default."""
    return Param(None, type=["null", type], description=description, **schema)


def param_arg(name: str) -> str:
    """The templated operator argument of the Param ``name``: its value, ``''`` when empty."""
    return f"{{{{ params.{name} if params.{name} is not none else '' }}}}"


def manual_dag(
    dag_id: str,
    *,
    description: str,
    doc_md: str | None,
    params: Mapping[str, Param],
    table_description: str = "db.table",
) -> DAG:
    """A manual, plan-first DAG on one table (use as ``with manual_dag(...) as dag:``).

    No schedule and created unpaused (unpausing starts nothing, so the trigger form's Unpause
    box never shows), one run at a time, no retries (a person re-runs it). Its form: ``table``
    (required), ``params`` (the procedure's own), then ``mode`` (:func:`mode_param`)."""
    return DAG(
        dag_id=dag_id,
        description=description,
        schedule=None,
        is_paused_upon_creation=False,
        start_date=MANUAL_START,
        catchup=False,
        max_active_runs=1,
        default_args={**DEFAULT_ARGS, "retries": 0},
        params={"table": table_param(table_description), **params, "mode": mode_param()},
        tags=["paimon", "manual"],
        doc_md=doc_md,
    )


def plan_and_apply(operator: Any, apply_task_id: str, *, subject: str, **arguments: Any) -> None:
    """Inside :func:`manual_dag`: ``plan`` (the operator with ``dry_run=True``), then by the run's
    ``mode`` the change (``apply_task_id``, ``dry_run=False``): :func:`plan_then_apply`. The
    operator gets ``table`` and the registry's ``paimon_conn_id`` besides ``arguments``."""
    arguments = {"table": "{{ params.table }}", "paimon_conn_id": load().paimon_conn_id, **arguments}
    plan = operator(task_id="plan", dry_run=True, **arguments)
    apply = operator(task_id=apply_task_id, dry_run=False, **arguments)
    plan_then_apply(plan, apply, subject=subject)


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
