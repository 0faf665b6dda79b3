"""The executors of a planned maintenance pass: batches of light actions and groups of Spark compactions.

``paimon_maintenance`` plans once (one task: the planner of :mod:`paimon_core.maintenance`
looks at every table) and then maps these over what the plan found:

* :class:`PaimonMaintenanceBatchOperator`: the light actions of many tables (expiry, tags,
  partition expiry, orphan cleanup of small tables, compactions small enough for the task
  process) in ONE task instance, through :func:`paimon_core.maintenance.executor.execute_batch`.
  A table's compaction takes its compaction lease first (a table another task is compacting is
  skipped for compaction, its other actions still run). Every action's outcome is in the XCom
  ``return_value``; when some failed, the task fails after the whole batch ran (retried if any
  failure can be retried: the batch is idempotent, landed actions are no-ops on the retry).
* :class:`PaimonCompactGroupOperator`: the compactions that need Spark, several tables per
  Spark application (the ``compact_database`` job over exactly those tables), so a JVM starts
  once per group, not per table; the leases and per-table commit users are
  :class:`~paimon_airflow.operators.compact_database.PaimonCompactDatabaseOperator`'s.

Mapped task instances are named by what they do (the batch's or group's ``label``).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.operators.compact_database import PaimonCompactDatabaseOperator
from paimon_airflow.utils.errors import PaimonTerminalFailure, is_retryable, paimon_errors
from paimon_airflow.utils.identity import commit_user, run_key

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["PaimonCompactGroupOperator", "PaimonMaintenanceBatchOperator", "exact_tables_regex"]


def exact_tables_regex(tables: Sequence[str]) -> str:
    """A full-match regex of exactly these ``db.table`` names (``compact_database``'s ``including_tables``)."""
    if not tables:
        raise PaimonTerminalFailure("a compaction group needs at least one table")
    return "|".join(re.escape(t) for t in sorted(set(tables)))


class PaimonMaintenanceBatchOperator(BaseOperator):
    """Run one batch of a maintenance pass's light actions (see the module docs).

    :param batch: ``{"label": str, "items": [{"table", "action", "args", "reason"}, ...]}``
        (templated; usually mapped over the plan task's batches).
    :param dry_run: report what each action would do, change nothing (templated).
    :param paimon_conn_id: the ``paimon`` connection of the warehouse.
    :param lease_ttl: how long a compaction lease holds without a release (default: the task's
        ``execution_timeout``, else 6 h).
    """

    template_fields: Sequence[str] = ("batch", "is_dry_run", "paimon_conn_id")
    ui_color = "#c9e4f6"
    #: Runs a maintenance pass's plan (many actions): ``dry_run`` is the pass's, default apply.
    actions: ClassVar[tuple[str, ...]] = ("maintenance_pass",)

    def __init__(
        self,
        *,
        batch: Any,
        dry_run: bool | str = False,
        paimon_conn_id: str = PaimonHook.default_conn_name,
        lease_ttl: dt.timedelta | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.batch = batch
        self.is_dry_run = dry_run
        self.paimon_conn_id = paimon_conn_id
        self.lease_ttl = lease_ttl

    def _is_dry_run(self) -> bool:
        from paimon_airflow.operators.spark_job import _flag

        return _flag(self.is_dry_run, "dry_run")

    def execute(self, context: Context) -> dict[str, Any]:
        from paimon_core.maintenance.executor import ActionItem, ActionOutcome, execute_batch

        batch = self.batch
        if not isinstance(batch, Mapping) or not isinstance(batch.get("items"), list):
            raise PaimonTerminalFailure(f"batch must be {{'label': ..., 'items': [...]}}, got {type(batch).__name__}")
        label = str(batch.get("label") or "")
        with paimon_errors(f"maintenance batch {label}"):
            items = [ActionItem.from_dict(i) for i in batch["items"]]
            hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
            catalog = hook.get_catalog()
        dry_run = self._is_dry_run()
        busy: list[ActionOutcome] = []
        from paimon_airflow.operators.ledger import record_skipped, task_ledger
        from paimon_airflow.utils.lease import take_leases
        from paimon_core.ledger import deferred_ledger

        # every action records its ledger row with this task's ids; the batch's rows in ONE commit
        with task_ledger(context, hook), deferred_ledger(), ExitStack() as held:
            if not dry_run:
                busy_tables = take_leases(
                    catalog.file_io,
                    hook.warehouse,
                    {i.table for i in items if i.action == "compact"},
                    holder=run_key(context),
                    ttl=self.lease_ttl or self.execution_timeout,
                    held=held,
                )
                busy = [
                    ActionOutcome(t, "compact", "skipped", 0.0, error=f"being compacted by {holder}")
                    for t, holder in sorted(busy_tables.items())
                ]
                items = [i for i in items if not (i.action == "compact" and i.table in busy_tables)]
                for o in busy:
                    record_skipped(hook, o.table, "compact", str(o.error))
            result = execute_batch(
                catalog.get_table,
                items,
                commit_user_of=lambda table: commit_user(context, table),
                now_millis=int(time.time() * 1000),
                dry_run=dry_run,
                is_terminal=lambda e: not is_retryable(e),
            )
        outcomes = [*busy, *result.outcomes]
        counts: dict[str, int] = {}
        for o in outcomes:
            counts[o.status] = counts.get(o.status, 0) + 1
            log = self.log.error if o.status == "failed" else self.log.info
            log("%s %s: %s%s", o.table, o.action, o.status, f" ({o.error})" if o.error else "")
        out = {
            "label": label,
            "dry_run": dry_run,
            "tables": sorted({o.table for o in outcomes}),
            "counts": counts,
            "outcomes": [o.to_dict() for o in outcomes],
        }
        failed = [o for o in outcomes if o.status == "failed"]
        if failed:
            context["ti"].xcom_push(key="outcomes", value=out)
            names = ", ".join(f"{o.table} {o.action}" for o in failed[:10])
            message = f"{len(failed)} of {len(outcomes)} maintenance actions failed: {names}"
            if all(o.terminal for o in failed):
                raise PaimonTerminalFailure(message)
            raise AirflowException(message)
        return out

class PaimonCompactGroupOperator(PaimonCompactDatabaseOperator):
    """Compact a group of tables in one Spark application (see the module docs).

    :param group: ``{"label": str, "tables": ["db.t", ...], "compact_strategy": ...,
        "partition_idle_time": ...}`` (templated; usually mapped over the plan's groups).
    """

    template_fields: Sequence[str] = (*PaimonCompactDatabaseOperator.template_fields, "group")

    def __init__(self, *, group: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group

    def execute(self, context: Context) -> dict[str, Any]:
        group = self.group
        if not isinstance(group, Mapping) or not isinstance(group.get("tables"), list):
            raise PaimonTerminalFailure(f"group must be {{'label': ..., 'tables': [...]}}, got {type(group).__name__}")
        self.including_tables = exact_tables_regex([str(t) for t in group["tables"]])
        self.compact_strategy = group.get("compact_strategy") or self.compact_strategy
        self.partition_idle_time = group.get("partition_idle_time") or self.partition_idle_time
        result = super().execute(context)
        result["label"] = str(group.get("label") or "")
        return result
