"""Sensors on Paimon tables: a new snapshot or commit, and a compaction-debt budget.

* :class:`PaimonSnapshotSensor` waits until a table has a snapshot newer than a given id, or a
  commit of a given commit user (and identifier) is visible; optionally only snapshots of given
  commit kinds. ``deferrable=True`` checks once, then hands the wait to
  :class:`~paimon_airflow.triggers.paimon.PaimonTableSnapshotTrigger` in the triggerer (no worker
  slot held); otherwise it pokes (``mode='poke'`` or ``'reschedule'``).
* :class:`PaimonCompactionDebtSensor` gates an ingest on the table's compaction debt (max sorted
  runs per bucket / ``num-sorted-run.stop-trigger``), small-file ratio or health score: it waits
  while the table is over budget, or with ``on_over_budget='fail'`` (``mode='fail'`` for short)
  fails at once with :class:`~airflow.sdk.exceptions.AirflowFailException` saying what is over.
  Paimon stops only the writer that owns a bucket at the stop trigger; a write-only ingest
  (dedicated compaction, apache/paimon#2360) would keep adding sorted runs, so the gate goes in
  front of it.

Both return (and push to XCom) a JSON-safe dict: the snapshot sensor the matching snapshot (the
trigger's event payload), the debt sensor the table's health numbers. A missing table or a bad
argument fails at once without retries (:func:`paimon_airflow.utils.errors.paimon_errors`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from airflow.sdk import BaseSensorOperator, PokeReturnValue, conf

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger
from paimon_airflow.triggers.watch import (
    WatchCriteria,
    WatchState,
    as_tuple,
    budget_violations,
    evaluate,
    health_summary,
)
from paimon_airflow.utils.errors import PaimonTerminalFailure, paimon_errors

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["PaimonCompactionDebtSensor", "PaimonSnapshotSensor"]


def _opt_int(value: int | str | None, name: str) -> int | None:
    """A templated int: ``None``/``''`` is unset."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise PaimonTerminalFailure(f"{name} must be an integer, got {value!r}") from None


def _opt_str(value: str | None) -> str | None:
    return value if value is not None and value.strip() else None


class PaimonSnapshotSensor(BaseSensorOperator):
    """Wait for a snapshot newer than ``after_snapshot_id``, or for a commit of ``commit_user``.

    :param table: ``db.table`` (templated).
    :param paimon_conn_id: the ``paimon`` connection (templated).
    :param after_snapshot_id: succeed on a snapshot with a larger id (templated, e.g. from an
        upstream task's XCom). Unset: any snapshot (with commit filters: any matching one).
    :param commit_user: succeed once a snapshot of this commit user is visible (templated).
    :param commit_identifier: with ``commit_user``: its commit with this identifier or a later one
        (Paimon orders a user's identifiers; a later one implies this one landed) (templated).
    :param commit_kinds: only snapshots of these kinds count (``APPEND``, ``COMPACT``, ...).
    :param deferrable: wait in the triggerer instead of a worker (checked once first).
    """

    template_fields: Sequence[str] = (
        "table",
        "paimon_conn_id",
        "after_snapshot_id",
        "commit_user",
        "commit_identifier",
    )
    ui_color = "#d8eefa"

    def __init__(
        self,
        *,
        table: str,
        paimon_conn_id: str = PaimonHook.default_conn_name,
        after_snapshot_id: int | str | None = None,
        commit_user: str | None = None,
        commit_identifier: int | str | None = None,
        commit_kinds: Sequence[str] | str | None = None,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.after_snapshot_id = after_snapshot_id
        self.commit_user = commit_user
        self.commit_identifier = commit_identifier
        self.commit_kinds = as_tuple(commit_kinds)
        self.deferrable = deferrable
        self._criteria()  # validate the filters at DAG parse time

    def _criteria(self) -> WatchCriteria:
        return WatchCriteria(
            fire_on="snapshot",
            commit_kinds=self.commit_kinds,
            commit_user=_opt_str(self.commit_user),
            commit_identifier=_opt_int(self.commit_identifier, "commit_identifier"),
            with_partitions=False,
        )

    def _after(self) -> int | None:
        return _opt_int(self.after_snapshot_id, "after_snapshot_id")

    def check(self) -> tuple[dict[str, Any] | None, int | None]:
        """``(payload, head)``: the matching snapshot (``None``: not yet) and the latest snapshot id."""
        with paimon_errors(f"waiting for a snapshot of {self.table}"):
            criteria = self._criteria()
            after = self._after()
            table = PaimonHook(paimon_conn_id=self.paimon_conn_id).get_table(self.table)
            head = table.snapshot_manager.latest_snapshot_id()
            if head is None or (after is not None and head <= after):
                return None, head
            filtered = criteria.commit_kinds is not None or criteria.commit_user is not None
            # With filters look back over retained snapshots; without, the head alone decides.
            since = after if after is not None else (0 if filtered else None)
            payload, _ = evaluate(table, self.table, WatchState(last_seen_snapshot_id=since), head, criteria)
            return payload, head

    def poke(self, context: Context) -> PokeReturnValue:
        """One check against the table's metadata."""
        payload, head = self.check()
        if payload is None:
            self.log.info("%s: no matching snapshot yet (latest %s)", self.table, head)
            return PokeReturnValue(is_done=False)
        self.log.info("%s: snapshot %s (%s)", self.table, payload["snapshot_id"], payload["commit_kind"])
        return PokeReturnValue(is_done=True, xcom_value=payload)

    def execute(self, context: Context) -> Any:
        """Poke, or with ``deferrable`` check once and defer to the snapshot trigger."""
        if not self.deferrable:
            return super().execute(context)
        payload, head = self.check()
        if payload is not None:
            self.log.info("%s: snapshot %s already there", self.table, payload["snapshot_id"])
            return payload
        self._defer(head)

    def _defer(self, last_seen: int | None) -> NoReturn:
        criteria = self._criteria()
        trigger = PaimonTableSnapshotTrigger(
            table=self.table,
            paimon_conn_id=self.paimon_conn_id,
            poll_interval=self.poke_interval,
            last_seen_snapshot_id=last_seen,
            commit_kinds=criteria.commit_kinds,
            commit_user=criteria.commit_user,
            commit_identifier=criteria.commit_identifier,
            with_partitions=False,
        )
        self.log.info("%s: deferring after snapshot %s", self.table, last_seen)
        self.defer(
            trigger=trigger, method_name="execute_complete", timeout=dt.timedelta(seconds=self.timeout)
        )

    def execute_complete(self, context: Context, event: dict[str, Any] | None = None) -> dict[str, Any]:
        """Resume from the trigger: done if its snapshot is past ``after_snapshot_id``, else defer again.

        The trigger fires on any move of the latest snapshot (also a rollback, or a snapshot
        still at or below ``after_snapshot_id``); those re-defer from the new latest id.
        """
        if not event or "snapshot_id" not in event:
            raise PaimonTerminalFailure(f"{self.table}: the trigger returned no snapshot event: {event!r}")
        after = self._after()
        if after is None or int(event["snapshot_id"]) > after:
            self.log.info("%s: snapshot %s (%s)", self.table, event["snapshot_id"], event.get("commit_kind"))
            return event
        self._defer(int(event["latest_snapshot_id"]))


class PaimonCompactionDebtSensor(BaseSensorOperator):
    """Wait while a table is over a compaction-debt budget (or fail at once with ``on_over_budget='fail'``).

    :param table: ``db.table`` (templated).
    :param paimon_conn_id: the ``paimon`` connection (templated).
    :param max_compaction_debt: most sorted runs in a bucket / stop trigger allowed (default 0.75:
        6 of the default 8 runs; 1.0 is where Paimon's writers stall). ``None``: not checked.
        Append tables have no sorted runs and never exceed it.
    :param max_small_file_ratio: share of small files allowed (``None``: not checked).
    :param min_health_score: lowest health score allowed (``None``: not checked).
    :param on_over_budget: ``wait`` (poke or reschedule until within budget) or ``fail``
        (``AirflowFailException`` at once, no retries). ``mode='fail'`` is accepted as a shorthand
        for ``on_over_budget='fail'`` (the sensor then pokes once).
    """

    template_fields: Sequence[str] = (
        "table",
        "paimon_conn_id",
        "max_compaction_debt",
        "max_small_file_ratio",
        "min_health_score",
    )
    ui_color = "#f6e3c9"

    def __init__(
        self,
        *,
        table: str,
        paimon_conn_id: str = PaimonHook.default_conn_name,
        max_compaction_debt: float | str | None = 0.75,
        max_small_file_ratio: float | str | None = None,
        min_health_score: int | str | None = None,
        on_over_budget: Literal["wait", "fail"] = "wait",
        mode: str = "poke",
        **kwargs: Any,
    ) -> None:
        if mode == "fail":
            on_over_budget, mode = "fail", "poke"
        super().__init__(mode=mode, **kwargs)
        if on_over_budget not in ("wait", "fail"):
            raise ValueError(f"on_over_budget must be 'wait' or 'fail', got {on_over_budget!r}")
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.max_compaction_debt = max_compaction_debt
        self.max_small_file_ratio = max_small_file_ratio
        self.min_health_score = min_health_score
        self.on_over_budget = on_over_budget

    def _budget(self) -> tuple[float | None, float | None, int | None]:
        def number(value: float | str | None, name: str) -> float | None:
            if value is None or (isinstance(value, str) and not value.strip()):
                return None
            try:
                return float(value)
            except (TypeError, ValueError):
                raise PaimonTerminalFailure(f"{name} must be a number, got {value!r}") from None

        debt = number(self.max_compaction_debt, "max_compaction_debt")
        ratio = number(self.max_small_file_ratio, "max_small_file_ratio")
        score = _opt_int(self.min_health_score, "min_health_score")
        if debt is None and ratio is None and score is None:
            raise PaimonTerminalFailure(
                "PaimonCompactionDebtSensor needs max_compaction_debt, max_small_file_ratio or min_health_score"
            )
        return debt, ratio, score

    def poke(self, context: Context) -> PokeReturnValue:
        """Measure the table (metadata only) against the budget."""
        from paimon_core.table.health import table_health

        debt, ratio, score = self._budget()
        with paimon_errors(f"measuring the compaction debt of {self.table}"):
            table = PaimonHook(paimon_conn_id=self.paimon_conn_id).get_table(self.table)
            health = table_health(table)
        summary = {"table": self.table, **health_summary(health)}
        violations = budget_violations(
            health, max_compaction_debt=debt, max_small_file_ratio=ratio, min_health_score=score
        )
        if not violations:
            self.log.info("%s is within budget: %s", self.table, summary)
            return PokeReturnValue(is_done=True, xcom_value=summary)
        message = f"{self.table} is over its compaction budget: " + "; ".join(violations)
        if self.on_over_budget == "fail":
            raise PaimonTerminalFailure(message + ". Run compaction (paimon_maintenance, or python -m spark_jobs compact) before ingesting.")
        self.log.info("%s; waiting for compaction", message)
        return PokeReturnValue(is_done=False)
