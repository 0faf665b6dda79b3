"""Lag alerts: tables whose maintenance falls behind, as typed alerts with a message.

Two kinds of lag (Amoro shows "optimizing lag" per table; here it is an alert with a reason):

* ``compaction_debt``: the table's compaction debt (primary keys: the most sorted runs of a bucket
  over ``num-sorted-run.stop-trigger``; append: the most small files of a bucket over
  ``compaction.min.file-num`` + 3) has stayed above ``max_compaction_debt`` for longer than
  ``lag_grace``. The caller keeps when it went over (:func:`debt_over_since`), e.g. in the state
  it carries from pass to pass.
* an action's period: expiry (``expire_snapshots``, ``expire_changelogs``, ``expire_tags``,
  ``expire_partitions``), tags (``create_tag``, ``trigger_tag_automatic_creation``) and orphan
  cleanup are needed now (the planner's rules) and have not succeeded for longer than their
  period (``expire_interval``, a day for tags, ``orphan_clean_interval``) plus ``lag_grace``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from paimon_core.maintenance.actions import fmt_duration, fmt_time
from paimon_core.maintenance.planner import table_needs
from paimon_core.maintenance.retention_need import DAY_MILLIS
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState
from paimon_core.results import _ToDict

__all__ = ["LAG_KINDS", "LagAlert", "debt_over_since", "lag_alerts"]

logger = logging.getLogger(__name__)

LAG_KINDS = (
    "compaction_debt",
    "expire_snapshots",
    "expire_changelogs",
    "expire_tags",
    "expire_partitions",
    "create_tag",
    "trigger_tag_automatic_creation",
    "remove_orphan_files",
)


@dataclass(frozen=True)
class LagAlert(_ToDict):
    """One table lagging on one kind of maintenance since ``since_millis``."""

    table: str
    kind: str
    since_millis: int
    message: str


def debt_over_since(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, previous_since: int | None
) -> int | None:
    """When the table's compaction debt went over ``max_compaction_debt``: ``previous_since``
    while it stays over (``now_millis`` when it just went over), None when it is not over."""
    if state.compaction_debt <= settings.max_compaction_debt:
        return None
    return previous_since if previous_since is not None else now_millis


def _period_ms(action: str, state: TableState, settings: MaintenanceSettings) -> int:
    from paimon_core.options import CoreOptions

    expire = settings.millis("expire_interval") or 0
    if action == "remove_orphan_files":
        return settings.millis("orphan_clean_interval") or 0
    if action in ("create_tag", "trigger_tag_automatic_creation"):
        if action == "trigger_tag_automatic_creation":
            from paimon_core.tag.tag_period import TagPeriodHandler

            return TagPeriodHandler.create(CoreOptions(state.options)).period_ms
        return DAY_MILLIS
    if action == "expire_partitions":
        return max(expire, CoreOptions(state.options).partition_expiration_check_interval_ms)
    return expire


def lag_alerts(
    state: TableState,
    settings: MaintenanceSettings,
    *,
    now_millis: int,
    last_success: Mapping[str, int],
    debt_over_since_millis: int | None,
) -> list[LagAlert]:
    """The lag alerts of ``state``'s table now (see the module docstring)."""
    alerts: list[LagAlert] = []
    grace = settings.millis("lag_grace") or 0
    debt = state.compaction_debt
    if (
        debt > settings.max_compaction_debt
        and debt_over_since_millis is not None
        and now_millis - debt_over_since_millis > grace
    ):
        what = (
            "most sorted runs of a bucket / num-sorted-run.stop-trigger"
            if state.primary_key
            else "most small files of a bucket / (compaction.min.file-num + 3)"
        )
        alerts.append(
            LagAlert(
                state.table,
                "compaction_debt",
                debt_over_since_millis,
                f"{state.table}: compaction debt {debt:.2f} ({what}) has been over max_compaction_debt "
                f"{settings.max_compaction_debt} for {fmt_duration(now_millis - debt_over_since_millis)} "
                f"(lag_grace {settings.lag_grace})",
            )
        )
    # the compaction rules are left out: compaction lags by its debt, above
    for need in table_needs(state, settings, now_millis=now_millis, last_success=last_success, rules=LAG_KINDS):
        if need.planned is None or need.action not in LAG_KINDS:
            continue
        last = last_success.get(need.action)
        period = _period_ms(need.action, state, settings)
        candidates = [
            t
            for t in (None if last is None else int(last) + period, need.needed_since_millis)
            if t is not None
        ]
        if not candidates:
            continue
        since = max(candidates)  # overdue from the later of: the period after the last success, the need
        if now_millis - since <= grace:
            continue
        done = "never succeeded" if last is None else f"last succeeded {fmt_time(int(last))}"
        alerts.append(
            LagAlert(
                state.table,
                need.action,
                since,
                f"{state.table}: {need.action} overdue for {fmt_duration(now_millis - since)} ({done}; "
                f"period {fmt_duration(period)}, lag_grace {settings.lag_grace}): {need.planned.reason}",
            )
        )
    return alerts
