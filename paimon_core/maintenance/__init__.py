"""Self-optimizing maintenance: table state, the planner, pass scheduling, lag alerts and the batch executor.

* :mod:`~paimon_core.maintenance.table_state`: :class:`TableState` and :func:`collect_table_state`
  (one metadata read for a table unchanged since the previous state);
* :mod:`~paimon_core.maintenance.settings`: :class:`MaintenanceSettings` (the registry's knobs);
* :mod:`~paimon_core.maintenance.planner`: :func:`plan_table` -> :class:`TablePlan` of
  :class:`PlannedAction` (reason, cost, gain, priority) by Paimon's own trigger rules;
* :mod:`~paimon_core.maintenance.scheduler`: :func:`schedule_pass` within a :class:`PassBudget`
  (``balanced`` / ``quota``), with backlog, light batches and Spark groups;
* :mod:`~paimon_core.maintenance.lag`: :func:`lag_alerts`;
* :mod:`~paimon_core.maintenance.executor`: runs a batch of planned actions.
"""

from paimon_core.maintenance.actions import PlannedAction, TablePlan
from paimon_core.maintenance.lag import LagAlert, debt_over_since, lag_alerts
from paimon_core.maintenance.planner import plan_table
from paimon_core.maintenance.scheduler import (
    BacklogItem,
    LightBatch,
    PassBudget,
    PassSchedule,
    ScheduledAction,
    SparkGroup,
    schedule_pass,
)
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState, collect_table_state

__all__ = [
    "BacklogItem",
    "LagAlert",
    "LightBatch",
    "MaintenanceSettings",
    "PassBudget",
    "PassSchedule",
    "PlannedAction",
    "ScheduledAction",
    "SparkGroup",
    "TablePlan",
    "TableState",
    "collect_table_state",
    "debt_over_since",
    "lag_alerts",
    "plan_table",
    "schedule_pass",
]
