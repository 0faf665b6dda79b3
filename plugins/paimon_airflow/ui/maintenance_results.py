"""What the ``paimon_*`` DAGs did to a table, from Airflow's metadata DB (XComs, task instances).

* every result naming the table, newest first: an operator's XCom ``return_value`` with
  ``"table": "db.table"``, and the table's own entry of a ``compact_database`` task's XCom
  ``tables`` (one entry per table, also of a task that then failed);
* every failed task instance of the table: mapped tasks are labelled with their table (their
  rendered map index), manual DAGs name it in their run's ``table`` Param.

Each row names the task instance as a person reads it (``table.compact [db.events]``, not
``[0]``) with a link to its log in the Airflow UI. Only DAGs whose XComs the user may read are
looked at. Runs inside the api-server only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

__all__ = ["DAG_PREFIX", "MAX_RESULTS", "SCAN_LIMIT", "recent_results", "task_table", "task_url"]

log = logging.getLogger(__name__)

#: DAGs whose task results are looked at.
DAG_PREFIX = "paimon_"
#: How many of the newest XComs / failed task instances are scanned.
SCAN_LIMIT = 2000
#: How many rows a table's history shows at most.
MAX_RESULTS = 100


def task_url(root: str, dag_id: str, run_id: str, task_id: str, map_index: int) -> str:
    """The Airflow UI page of a task instance (it opens on the task's log)."""
    url = f"{root}dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}/tasks/{quote(task_id, safe='')}"
    return f"{url}/mapped/{map_index}" if map_index >= 0 else url


def _status(result: dict[str, Any]) -> str:
    status = str(result.get("status") or "")
    if status and status != "ok":
        return status  # compact_database's per-table "failed" / "skipped"
    if result.get("dry_run") is True:
        return "dry_run"
    return "success"


def recent_results(
    table: str,
    *,
    may_read_dag: Callable[[str], bool],
    ui_root: str = "/",
    limit: int = MAX_RESULTS,
) -> list[dict[str, Any]]:
    """The table's results and failures (newest first, at most ``limit``)."""
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    allowed: dict[str, bool] = {}

    def allowed_dag(dag_id: str) -> bool:
        if dag_id not in allowed:
            allowed[dag_id] = may_read_dag(dag_id)
        return allowed[dag_id]

    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str, int]] = set()
    with create_session() as session:
        xcoms = session.execute(
            select(XComModel, TaskInstance._rendered_map_index, TaskInstance.state, TaskInstance.try_number)
            .outerjoin(
                TaskInstance,
                (TaskInstance.dag_id == XComModel.dag_id)
                & (TaskInstance.run_id == XComModel.run_id)
                & (TaskInstance.task_id == XComModel.task_id)
                & (TaskInstance.map_index == XComModel.map_index),
            )
            .where(
                XComModel.key.in_(("return_value", "tables")),
                XComModel.dag_id.startswith(DAG_PREFIX, autoescape=True),
            )
            .order_by(XComModel.timestamp.desc())
            .limit(SCAN_LIMIT)
        )
        scanned = []
        returned: dict[tuple[str, str, str, int], Any] = {}
        for xcom, label, state, try_number in xcoms:
            if not allowed_dag(xcom.dag_id):
                continue
            key = (xcom.dag_id, xcom.run_id, xcom.task_id, xcom.map_index)
            value = XComModel.deserialize_value(xcom)
            if xcom.key == "return_value":
                returned[key] = value
            scanned.append((key, xcom, label, state, try_number, value))
        for key, xcom, label, state, try_number, value in scanned:
            result: dict[str, Any] | None = None
            if xcom.key == "tables" and isinstance(value, list):  # compact_database: one entry per table
                result = next((v for v in value if isinstance(v, dict) and v.get("table") == table), None)
                whole = returned.get(key)
                if result is not None and isinstance(whole, dict) and "dry_run" in whole:
                    result = {**result, "dry_run": whole["dry_run"]}  # a plan's entries are dry runs too
            elif isinstance(value, dict) and value.get("table") == table:
                result = value
            if result is None:
                continue
            seen.add(key)
            rows.append(
                _row(
                    ui_root,
                    key,
                    label=label,
                    state=str(state) if state else None,
                    try_number=try_number,
                    when=xcom.timestamp,
                    status=_status(result),
                    result=result,
                )
            )

        failed = session.execute(
            select(TaskInstance, DagRun.conf)
            .join(DagRun, (DagRun.dag_id == TaskInstance.dag_id) & (DagRun.run_id == TaskInstance.run_id))
            .where(TaskInstance.dag_id.startswith(DAG_PREFIX, autoescape=True), TaskInstance.state == "failed")
            .order_by(TaskInstance.end_date.desc())
            .limit(SCAN_LIMIT)
        )
        for ti, conf in failed:
            key = (ti.dag_id, ti.run_id, ti.task_id, ti.map_index)
            if key in seen or not allowed_dag(ti.dag_id):
                continue
            label = ti.rendered_map_index
            names_table = label == table if ti.map_index >= 0 else (conf or {}).get("table") == table
            if not names_table:
                continue
            rows.append(
                _row(
                    ui_root,
                    key,
                    label=label,
                    state="failed",
                    try_number=ti.try_number,
                    when=ti.end_date or ti.start_date,
                    status="failed",
                    result=None,
                )
            )
    rows.sort(key=lambda r: r["timestamp"] or "", reverse=True)
    return rows[:limit]


def _row(
    ui_root: str,
    key: tuple[str, str, str, int],
    *,
    label: str | None,
    state: str | None,
    try_number: int | None,
    when: Any,
    status: str,
    result: dict[str, Any] | None,
) -> dict[str, Any]:
    dag_id, run_id, task_id, map_index = key
    name = f"{task_id} [{label or map_index}]" if map_index >= 0 else task_id
    error = None
    if result is not None and result.get("error"):
        error = f"{result.get('error_type') or 'Error'}: {result['error']}"
    return {
        "dag_id": dag_id,
        "task_id": task_id,
        "run_id": run_id,
        "map_index": map_index,
        "task": name,
        "state": state,
        "try_number": try_number,
        "timestamp": when.isoformat() if when is not None else None,
        "status": status,
        "error": error,
        "result": result,
        "log_url": task_url(ui_root, dag_id, run_id, task_id, map_index),
    }


def task_table(dag_id: str, run_id: str, task_id: str, map_index: int) -> str | None:
    """The ``db.table`` a task instance works on: its result's ``"table"``, else its rendered map
    index (the DAGs of ``dags/`` label mapped tasks with the table), else its run's ``table``
    Param (the manual DAGs), else None."""
    from airflow.models.dagrun import DagRun
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
        if label:
            return str(label)
        conf = session.scalar(select(DagRun.conf).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
    name = (conf or {}).get("table") if isinstance(conf, dict) else None
    return str(name) if isinstance(name, str) else None
