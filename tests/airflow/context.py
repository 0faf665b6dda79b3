"""A task context for calling ``execute`` directly (what Airflow passes, for the keys operators read)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any


@dataclass
class FakeTI:
    """The task-instance fields the operators read (identity only; no DB)."""

    dag_id: str = "test_dag"
    run_id: str = "manual__2026-01-01T00:00:00+00:00"
    task_id: str = "task"
    map_index: int = -1
    try_number: int = 1

    def xcom_push(self, key: str, value: Any) -> None:  # pragma: no cover - not used by execute
        pass


def task_context(day: str = "2026-01-01", **ti: Any) -> dict[str, Any]:
    """Context of a daily data-interval run for ``day``: interval [day, day + 1)."""
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    end = start + dt.timedelta(days=1)
    return {
        "ti": FakeTI(**ti),
        "ds": day,
        "ds_nodash": day.replace("-", ""),
        "logical_date": start,
        "data_interval_start": start,
        "data_interval_end": end,
        "params": {},
    }


def render_and_execute(op: Any, context: dict[str, Any]) -> Any:
    """Render the operator's templates against ``context``, then run ``execute``."""
    op.render_template_fields(context)
    return op.execute(context)
