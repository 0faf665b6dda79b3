"""The planning and alert tasks of ``paimon_maintenance``: thin glue over :mod:`paimon_core.maintenance`.

:func:`plan_pass` (the ``plan`` task) lists the registry's tables, collects each table's state
(re-using the last pass's state when the table has not changed: one metadata read), plans each
table (:func:`~paimon_core.maintenance.planner.plan_table`, with its last successful actions from
the maintenance ledger), schedules the pass within the registry's budget
(:func:`~paimon_core.maintenance.scheduler.schedule_pass`), saves the states for the next pass
and the console, records one ``assess`` ledger row per table (one commit), and returns the
pass: batches of light actions, groups of Spark compactions, the backlog and a summary.

:func:`check_lag` (the ``lag_alerts`` task) first measures again the tables this run's actions
touched (:func:`acted_tables`, from the ledger) and saves their states, so the console and the alerts
show each table as the pass left it, then turns the saved states and the ledger into lag alerts
(:func:`~paimon_core.maintenance.lag.lag_alerts`) and raises them through Airflow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
    from paimon_core.maintenance.actions import TablePlan
    from paimon_core.maintenance.state_store import PlannerStateStore, SavedStates
    from paimon_core.maintenance.table_state import TableState

__all__ = ["acted_tables", "check_lag", "effective_mode", "last_successes", "plan_pass", "run_now_millis"]

log = logging.getLogger(__name__)

#: How far back the ledger is read for each table's last successful actions.
LEDGER_LOOKBACK_DAYS = 60
DAY_MILLIS = 86_400_000
#: How many deferred (backlog) actions the state document keeps for the console.
MAX_DEFERRED = 5000
#: Statuses that count as "the action ran and left the table as it should be".
DONE_STATUSES = ("success", "no_op")


def effective_mode(params: Mapping[str, Any], run_type: str | None) -> str:
    """The run's ``mode`` Param; empty: ``apply`` for scheduled runs and backfills, ``plan`` for a
    run triggered by hand (so the trigger form's defaults never change a table)."""
    mode = params.get("mode")
    if mode:
        return str(mode)
    return "plan" if str(run_type or "").lower().endswith("manual") else "apply"


def run_now_millis(context: Mapping[str, Any]) -> int:
    """The pass's clock: the end of the run's data interval (else its ``run_after``), so a
    scheduled run plans as of its cron time and a backfill as of its day; never later than now."""
    now = int(time.time() * 1000)
    at = context.get("data_interval_end")
    if at is None:
        dag_run = context.get("dag_run")
        at = getattr(dag_run, "run_after", None) if dag_run is not None else None
    if at is None:
        return now
    return min(now, int(at.timestamp() * 1000))


def last_successes(catalog: FileSystemCatalog, *, now_millis: int) -> dict[str, dict[str, int]]:
    """``{table: {action: end millis}}`` of each table's last successful (or no-op) actions in the
    ledger (the last :data:`LEDGER_LOOKBACK_DAYS` days; empty without a ledger)."""
    from paimon_core.ledger import Ledger
    from paimon_core.maintenance.overview import last_successes as fold

    ledger = Ledger(catalog)
    if not ledger.exists():
        return {}
    return fold(ledger.read(since_millis=now_millis - LEDGER_LOOKBACK_DAYS * DAY_MILLIS, columns=("status", "end_time")))


def _settings(registry: Any, table: str, params: Mapping[str, Any]) -> Any:
    from paimon_core.maintenance.settings import MaintenanceSettings

    raw = registry.settings_for(table).to_dict()
    # a run's Param named like a setting overrides it for every table of the run
    raw.update({k: params[k] for k in raw if params.get(k) is not None})
    mb = params.get("in_process_max_mb")
    raw["in_process_max_bytes"] = int(float(mb if mb is not None else registry.maintenance_pass.in_process_max_mb) * 1024**2)
    return MaintenanceSettings.from_mapping(raw)


def _assess_record(
    table: str, state: TableState, actions: Sequence[Any] = (), *, started: int, ended: int, after_run: bool = False
) -> Any:
    """The ``assess`` ledger row of one measurement of ``table`` (the plan's, or ``after_run``: the
    measurement of a table this run's actions changed); its time is the wall clock, as the
    actions' rows, so the console can tell which actions came after it."""
    import json

    from paimon_core.ledger import LedgerRecord
    from paimon_core.ledger.record import new_record_id
    from paimon_core.ledger.recorder import airflow_ids

    s = state
    details: dict[str, Any] = {
        "actions": [a.action for a in actions],
        "reasons": {a.action: a.reason for a in actions},
        "compaction_debt": s.compaction_debt,
        "snapshot_count": s.snapshot_count,
        "small_files": int(s.health.get("small_file_count") or 0),
        "source": s.source,
    }
    if after_run:
        details["after_run"] = True
    return LedgerRecord(
        record_id=new_record_id(),
        table_name=table,
        action="assess",
        status="success" if actions else "no_op",
        start_millis=started,
        end_millis=max(started, ended),
        snapshot_before=s.snapshot_id,
        snapshot_after=s.snapshot_id,
        table_files=s.data_file_count,
        table_bytes=s.total_bytes,
        health_score=float(s.health_score),
        details=json.dumps(details, sort_keys=True, separators=(",", ":")),
        **airflow_ids(),  # inside task_ledger: the task's dag, run, task ids and entry point
    )


def plan_pass(context: Mapping[str, Any], registry: Any) -> dict[str, Any]:
    """The ``plan`` task (see the module docs); JSON-safe, one XCom per key."""
    from paimon_airflow.hooks.paimon import PaimonHook
    from paimon_airflow.operators.ledger import task_ledger
    from paimon_airflow.utils.selection import select_tables
    from paimon_core.exceptions import UnsupportedTableKindError
    from paimon_core.ledger.recorder import write_records
    from paimon_core.maintenance.planner import plan_table
    from paimon_core.maintenance.scheduler import PassBudget, schedule_pass
    from paimon_core.maintenance.state_store import PlannerStateStore
    from paimon_core.maintenance.table_state import collect_table_state

    params: Mapping[str, Any] = context.get("params") or {}
    dag_run = context.get("dag_run")
    mode = effective_mode(params, getattr(dag_run, "run_type", None))
    now = run_now_millis(context)
    started = time.monotonic()
    cpu0 = time.process_time()

    hook = PaimonHook(paimon_conn_id=registry.paimon_conn_id)
    catalog = hook.get_catalog()
    include = str(params.get("include") or registry.include)
    exclude = str(params.get("exclude") if params.get("exclude") is not None else registry.exclude)
    names = select_tables(hook.list_tables(), include, exclude)

    store = PlannerStateStore(catalog.file_io, hook.warehouse)
    saved = store.load()
    last = last_successes(catalog, now_millis=now)
    plans: list[TablePlan] = []
    errors: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    states = dict(saved.states)
    scanned = 0
    for name in names:
        try:
            settings = _settings(registry, name, params)
            state = collect_table_state(catalog.get_table(name), now_millis=now, previous=saved.states.get(name))
            plan = plan_table(state, settings, now_millis=now, last_success=last.get(name, {}))
        except UnsupportedTableKindError as e:  # a Paimon table kind we do not maintain: skipped, named
            log.info("Skipping %s: %s", name, e)
            skipped.append({"table": name, "feature": e.feature, "reason": str(e)})
            continue
        except Exception as e:  # noqa: BLE001 - one unreadable table must not stop the pass
            log.error("Cannot plan %s: %s: %s", name, type(e).__name__, e)
            errors.append({"table": name, "error": f"{type(e).__name__}: {e}"})
            continue
        scanned += state.source == "scan"
        states[name] = state
        plans.append(plan)
    for gone in set(states) - set(names):
        del states[gone]

    pass_settings = registry.maintenance_pass
    gb = params.get("max_rewrite_gb")
    budget = PassBudget(
        max_rewrite_bytes=int(float(gb if gb is not None else pass_settings.max_rewrite_gb) * 1024**3),
        spark_slots=pass_settings.spark_slots,
        deadline_millis=now + pass_settings.max_minutes * 60_000,
        batch_size=int(params.get("batch_size") or pass_settings.batch_size),
        spark_group_size=pass_settings.spark_group_size,
    )
    last_maintained = {t: max(v.values()) for t, v in last.items() if v}
    schedule = schedule_pass(
        plans, budget, policy=pass_settings.policy, now_millis=now, last_maintained=last_maintained
    )
    sched = schedule.to_dict()
    by_action: dict[str, int] = {}
    for plan in plans:
        for a in plan.actions:
            by_action[a.action] = by_action.get(a.action, 0) + 1
    summary = {
        "mode": mode,
        "now_millis": now,
        "tables": len(names),
        "planned": len(plans),
        "scanned": scanned,
        "unchanged": len(plans) - scanned,
        "errors": errors,
        "skipped": skipped,
        "tables_with_work": sum(1 for p in plans if p.actions),
        "actions": sum(by_action.values()),
        "by_action": by_action,
        "batches": len(sched["batches"]),
        "spark_groups": len(sched["spark_groups"]),
        "backlog": len(sched["backlog"]),
        "plan_seconds": round(time.monotonic() - started, 3),
        "plan_cpu_seconds": round(time.process_time() - cpu0, 3),
    }
    debt_since = _debt_over_since(plans, registry, params, now, saved.extra.get("debt_over_since") or {})
    # what the budget deferred, with why: the console shows it per table until the next pass
    deferred = [{"table": b.table, "action": b.action.action, "why": b.why} for b in schedule.backlog[:MAX_DEFERRED]]
    store.save(
        states, now_millis=now, extra={"last_pass": summary, "debt_over_since": debt_since, "deferred": deferred}
    )
    ended = int(time.time() * 1000)
    with task_ledger(context, hook) as on:
        if on:
            write_records(catalog, [_assess_record(p.table, p.state, p.actions, started=ended, ended=ended) for p in plans])
    log.info("Maintenance pass: %s", summary)
    return {
        "mode": mode,
        "batches": sched["batches"],
        "spark_groups": sched["spark_groups"],
        "backlog": sched["backlog"],
        "tables": [p.to_dict(include_state=False) for p in plans if p.actions],
        "summary": summary,
        "summary_md": schedule.summary_md(),
    }


def _debt_over_since(
    plans: Sequence[TablePlan], registry: Any, params: Mapping[str, Any], now: int, previous: Mapping[str, Any]
) -> dict[str, int]:
    """``{table: millis}``: since when each table's compaction debt has been over its budget."""
    from paimon_core.maintenance.lag import debt_over_since

    out: dict[str, int] = {}
    for plan in plans:
        prev = previous.get(plan.table)
        since = debt_over_since(
            plan.state,
            _settings(registry, plan.table, params),
            now_millis=now,
            previous_since=int(prev) if isinstance(prev, int) else None,
        )
        if since is not None:
            out[plan.table] = since
    return out


def acted_tables(catalog: FileSystemCatalog, *, dag_id: str, run_id: str, since_millis: int) -> set[str]:
    """The tables an action of this run changed or checked (a success or no-op ledger row of
    ``dag_id`` / ``run_id`` other than the planner's ``assess``)."""
    from paimon_core.ledger import Ledger

    ledger = Ledger(catalog)
    if not ledger.exists():
        return set()
    rows = ledger.read(since_millis=since_millis, columns=("status", "dag_id", "run_id")).to_pylist()
    return {
        str(r["table_name"])
        for r in rows
        if r["dag_id"] == dag_id and r["run_id"] == run_id and r["status"] in DONE_STATUSES and r["action"] != "assess"
    }


def _refresh_acted(
    context: Mapping[str, Any],
    catalog: FileSystemCatalog,
    store: PlannerStateStore,
    saved: SavedStates,
    registry: Any,
    params: Mapping[str, Any],
    *,
    now_millis: int,
    hook: Any,
) -> SavedStates:
    """The saved states with the tables this run's actions touched measured again, saved.

    The plan task measured each table before the batches changed it: left as they are, the
    console would show a table just compacted with its old health and debt, and the lag alerts
    below would fire on debt the batches already removed. Only those tables are read again (a
    manifest scan where the batch made a snapshot, one metadata read where it changed nothing),
    so the next pass finds them unchanged. Each measurement is an ``assess`` ledger row (one
    commit), the health charts' point after the run."""
    from paimon_airflow.operators.ledger import task_ledger
    from paimon_core.ledger.recorder import write_records
    from paimon_core.maintenance.lag import debt_over_since
    from paimon_core.maintenance.state_store import SavedStates
    from paimon_core.maintenance.table_state import collect_table_state

    dag_run = context.get("dag_run")
    run_id = getattr(dag_run, "run_id", None) or context.get("run_id")
    dag_id = getattr(dag_run, "dag_id", None)
    if not run_id or not dag_id:
        return saved
    acted = acted_tables(catalog, dag_id=str(dag_id), run_id=str(run_id), since_millis=now_millis - DAY_MILLIS)
    states = dict(saved.states)
    debt_since = dict(saved.extra.get("debt_over_since") or {})
    refreshed = 0
    measured: list[tuple[str, TableState, int, int]] = []
    for name in sorted(acted & set(states)):
        started = int(time.time() * 1000)
        try:
            state = collect_table_state(catalog.get_table(name), now_millis=now_millis, previous=states[name])
        except Exception as e:  # noqa: BLE001 - the next pass measures it; the alerts use the plan's figures
            log.warning("Cannot measure %s again after the pass: %s: %s", name, type(e).__name__, e)
            continue
        states[name] = state
        refreshed += 1
        measured.append((name, state, started, int(time.time() * 1000)))
        prev = debt_since.get(name)
        since = debt_over_since(
            state,
            _settings(registry, name, params),
            now_millis=now_millis,
            previous_since=int(prev) if isinstance(prev, int) else None,
        )
        if since is None:
            debt_since.pop(name, None)
        else:
            debt_since[name] = since
    if not refreshed:
        return saved
    extra = {**saved.extra, "debt_over_since": debt_since, "refreshed_after_pass": refreshed}
    store.save(states, now_millis=now_millis, extra=extra)
    with task_ledger(context, hook) as on:
        if on:
            write_records(
                catalog, [_assess_record(n, st, started=a, ended=b, after_run=True) for n, st, a, b in measured]
            )
    log.info("Measured %d table(s) again after this run's actions", refreshed)
    return SavedStates(now_millis, states, extra)


def check_lag(context: Mapping[str, Any], registry: Any) -> list[dict[str, Any]]:
    """The ``lag_alerts`` task: alerts of every table (see the module docs)."""
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.alerts import notify
    from paimon_airflow.hooks.paimon import PaimonHook
    from paimon_core.maintenance.lag import lag_alerts
    from paimon_core.maintenance.state_store import PlannerStateStore

    # the plan's clock (the run's data interval end): the debt_over_since times the plan recorded are
    # on it, so a backfilled or late run does not report a debt it just found as hours old
    now = run_now_millis(context)
    hook = PaimonHook(paimon_conn_id=registry.paimon_conn_id)
    catalog = hook.get_catalog()
    store = PlannerStateStore(catalog.file_io, hook.warehouse)
    saved = store.load()
    last = last_successes(catalog, now_millis=now)
    params: Mapping[str, Any] = context.get("params") or {}
    saved = _refresh_acted(context, catalog, store, saved, registry, params, now_millis=now, hook=hook)
    alerts: list[dict[str, Any]] = []
    for name, state in sorted(saved.states.items()):
        settings = _settings(registry, name, params)
        since = (saved.extra.get("debt_over_since") or {}).get(name)
        for alert in lag_alerts(
            state,
            settings,
            now_millis=now,
            last_success=last.get(name, {}),
            debt_over_since_millis=int(since) if isinstance(since, int) else None,
        ):
            alerts.append(alert.to_dict())
    if alerts:
        notify(registry.alerts.callback, alerts, context)
        if registry.alerts.fail_task:
            raise AirflowFailException(
                f"{len(alerts)} Paimon maintenance lag alert(s): " + "; ".join(str(a.get("message")) for a in alerts[:10])
            )
    return alerts
