"""SQLAlchemy connect arguments for an Airflow metadata database on SQLite (the local demo), and how
a REST client of such an Airflow tells a locked database from a real error.

SQLite lets one writer in at a time; Python's driver gives up after 5 s ("database is locked").
The scheduler, dag-processor and triggerer wait up to 30 s for the lock instead::

    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS_ASYNC

The api-server must not: its audit log (``airflow.api_fastapi.logging.decorators.action_logging``)
commits with a synchronous session inside an ``async`` dependency, on the event loop's thread. If
that commit waits for the lock while another request of the same server holds it (a task's
``PATCH /execution/task-instances/{id}/run`` between its update and its commit), the holder cannot
go on until the waiter gives up: the whole server stands still for the busy timeout. With 30 s
that froze the demo's ``PATCH /api/v2/dags/paimon_ingest`` for 30.1 s in a CI run and in a local
run (its log: both requests finished after 30.12 s, the audit insert failed). The api-server keeps
the driver's 5 s (``API_SERVER_CONNECT_ARGS``): the stall is 5 s at most, the request that gave up
answers 500 "Database error", and the clients try it again (the task SDK does on any 5xx).

A client must wait longer than a server can wait for the lock (``REQUEST_TIMEOUT_SECONDS``) and
try a locked answer again (:func:`is_locked_answer`). That holds for the task processes too: the
task SDK waits 5 s for the execution API by default (``[workers] execution_api_timeout``), the
api-server's own wait, so a task's request that waited for the lock timed out and was sent again
while the first was still being handled (a duplicate ``ti/run``, answered 400). The demo and the
live tests set it to ``TASK_API_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import json
from typing import Any

BUSY_TIMEOUT_SECONDS = 30.0

CONNECT_ARGS: dict[str, Any] = {"timeout": BUSY_TIMEOUT_SECONDS}
CONNECT_ARGS_ASYNC: dict[str, Any] = {"timeout": BUSY_TIMEOUT_SECONDS}

#: The api-server's (see above): the driver's default, named.
API_SERVER_BUSY_TIMEOUT_SECONDS = 5.0
API_SERVER_CONNECT_ARGS: dict[str, Any] = {"timeout": API_SERVER_BUSY_TIMEOUT_SECONDS}
API_SERVER_CONNECT_ARGS_ASYNC: dict[str, Any] = {"timeout": API_SERVER_BUSY_TIMEOUT_SECONDS}

#: How long a task process waits for the execution API (``AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT``).
TASK_API_TIMEOUT_SECONDS = 30.0

#: How long a REST client waits for one answer: past the busy timeout, with room for a busy server.
REQUEST_TIMEOUT_SECONDS = 3 * BUSY_TIMEOUT_SECONDS


def is_locked_answer(status: int, text: str | bytes) -> bool:
    """True for what Airflow's API answers when SQLite stayed locked: 503, or a 500 whose detail is
    Airflow's ``{"reason": "Database error"}`` (the statement rolled back; trying again is safe)."""
    if status == 503:
        return True
    if status != 500:
        return False
    try:
        body = json.loads(text)
    except ValueError:
        return False
    detail = body.get("detail") if isinstance(body, dict) else None
    return isinstance(detail, dict) and detail.get("reason") == "Database error"
