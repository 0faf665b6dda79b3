"""The maintenance planner: from a table's state, the actions it needs now, each with its reason.

:func:`plan_table` is a pure function of a :class:`~paimon_core.maintenance.table_state.TableState`,
the table's :class:`~paimon_core.maintenance.settings.MaintenanceSettings`, the time and the
table's last successful action times (from the maintenance ledger). It asks each rule in the pass
order (compaction, manifests, tags, tag expiry, partition expiry, snapshot expiry, changelog
expiry, orphan cleanup; see :mod:`~paimon_core.maintenance.compaction_need` and
:mod:`~paimon_core.maintenance.retention_need`) and returns a :class:`TablePlan`: the actions
needed, each with its reason (the numbers and the Paimon option behind them), estimated cost,
gain and priority, and for every other action why it is not needed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping

from paimon_core.maintenance.actions import Need, PlannedAction, TablePlan
from paimon_core.maintenance.compaction_need import compaction_need, manifest_need
from paimon_core.maintenance.retention_need import (
    expire_changelogs_need,
    expire_partitions_need,
    expire_snapshots_need,
    expire_tags_need,
    orphan_need,
    tag_need,
)
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState

__all__ = ["PlannedAction", "TablePlan", "plan_table", "table_needs"]

logger = logging.getLogger(__name__)

Rule = Callable[[TableState, MaintenanceSettings, int, Mapping[str, int]], Need]

#: The rules in the pass order (the executor runs a table's actions in this order too), each
#: named by the action it plans.
RULES: tuple[tuple[str, Rule], ...] = (
    ("compact", lambda s, c, now, last: compaction_need(s, c, now_millis=now)),
    ("compact_manifest", lambda s, c, now, last: manifest_need(s, c)),
    ("create_tag", lambda s, c, now, last: tag_need(s, c, now_millis=now, last_success=last)),
    ("expire_tags", lambda s, c, now, last: expire_tags_need(s, now_millis=now, last_success=last)),
    (
        "expire_partitions",
        lambda s, c, now, last: expire_partitions_need(s, c, now_millis=now, last_success=last),
    ),
    (
        "expire_snapshots",
        lambda s, c, now, last: expire_snapshots_need(s, c, now_millis=now, last_success=last),
    ),
    (
        "expire_changelogs",
        lambda s, c, now, last: expire_changelogs_need(s, c, now_millis=now, last_success=last),
    ),
    ("remove_orphan_files", lambda s, c, now, last: orphan_need(s, c, now_millis=now, last_success=last)),
)


def table_needs(
    state: TableState,
    settings: MaintenanceSettings,
    *,
    now_millis: int,
    last_success: Mapping[str, int],
    rules: Collection[str] | None = None,
) -> list[Need]:
    """Every rule's verdict on the table (what :func:`plan_table` and the lag alerts build on);
    ``rules`` limits it to the rules of those names (the lag alerts skip compaction's).

    A rule that cannot judge the table (an option it cannot parse) says so as its skip reason
    instead of failing the whole table."""
    from paimon_core.exceptions import PaimonError

    needs = []
    for name, rule in RULES:
        if rules is not None and name not in rules:
            continue
        try:
            needs.append(rule(state, settings, now_millis, last_success))
        except (PaimonError, ValueError) as e:
            logger.warning("Planning %s of %s failed: %s: %s", name, state.table, type(e).__name__, e)
            needs.append(Need(name, skipped=f"cannot plan: {type(e).__name__}: {e}"))
    return needs


def plan_table(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> TablePlan:
    """The actions ``state``'s table needs at ``now_millis`` (see the module docstring).

    ``last_success``: action name -> epoch millis of the table's last successful run of it
    (missing: never), e.g. from the maintenance ledger.
    """
    actions: list[PlannedAction] = []
    skipped: dict[str, str] = {}
    for need in table_needs(state, settings, now_millis=now_millis, last_success=last_success):
        if need.planned is not None:
            actions.append(need.planned)
        else:
            skipped[need.action] = need.skipped or "not needed"
    plan = TablePlan(
        table=state.table,
        state=state,
        actions=tuple(actions),
        skipped_reasons=skipped,
        planned_at_millis=now_millis,
    )
    logger.debug("Plan of %s: %s", state.table, [a.action for a in actions] or "nothing")
    return plan
