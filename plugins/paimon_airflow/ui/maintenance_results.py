"""The last result of each maintenance task of a table, from the XComs in Airflow's metadata DB.

Every ``paimon_airflow`` operator returns a JSON dict with ``"table": "db.table"`` (its XCom
``return_value``); the newest one per (DAG, task) for the table is its "last result". Only DAGs
whose XComs the user may read (the auth manager's DAG ``XCOM`` permission) are looked at.
Runs inside the api-server only (it needs the metadata DB).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["DAG_PREFIX", "SCAN_LIMIT", "last_results", "task_table"]

log = logging.getLogger(__name__)

#: DAGs whose task results are looked at.
DAG_PREFIX = "paimon_"
#: How many of the newest XComs are scanned.
SCAN_LIMIT = 2000


def last_results(table: str, *, may_read_dag: Callable[[str], bool]) -> list[dict[str, Any]]:
    """The newest ``return_value`` of each (dag, task) of a ``paimon_*`` DAG whose result names ``table``."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    stmt = (
        select(XComModel)
        .where(XComModel.key == "return_value", XComModel.dag_id.startswith(DAG_PREFIX, autoescape=True))
        .order_by(XComModel.timestamp.desc())
        .limit(SCAN_LIMIT)
    )
    seen: set[tuple[str, str]] = set()
    allowed: dict[str, bool] = {}
    out: list[dict[str, Any]] = []
    with create_session() as session:
        for row in session.scalars(stmt):
            key = (row.dag_id, row.task_id)
            if key in seen:
                continue
            if row.dag_id not in allowed:
                allowed[row.dag_id] = may_read_dag(row.dag_id)
            if not allowed[row.dag_id]:
                continue
            value = XComModel.deserialize_value(row)
            if not isinstance(value, dict) or value.get("table") != table:
                continue
            seen.add(key)
            out.append(
                {
                    "dag_id": row.dag_id,
                    "task_id": row.task_id,
                    "run_id": row.run_id,
                    "map_index": row.map_index,
                    "timestamp": row.timestamp.isoformat(),
                    "result": value,
                }
            )
    out.sort(key=lambda r: (r["dag_id"], r["task_id"]))
    return out


def task_table(dag_id: str, run_id: str, task_id: str, map_index: int) -> str | None:
    """The ``db.table`` a task instance works on: its result's ``"table"``, else its rendered map
    index (the DAGs of ``dags/`` label mapped tasks with the table), else None."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        xcom = session.scalars(
            select(XComModel).where(
                XComModel.dag_id == dag_id,
                XComModel.run_id == run_id,
                XComModel.task_id == task_id,
                XComModel.map_index == map_index,
                XComModel.key == "return_value",
            )
        ).first()
        value = XComModel.deserialize_value(xcom) if xcom is not None else None
        if isinstance(value, dict) and isinstance(value.get("table"), str):
            return str(value["table"])
        label = session.scalar(
            select(TaskInstance._rendered_map_index).where(  # the stored column (a hybrid property wraps it)
                TaskInstance.dag_id == dag_id,
                TaskInstance.run_id == run_id,
                TaskInstance.task_id == task_id,
                TaskInstance.map_index == map_index,
            )
        )
    return str(label) if label else None
