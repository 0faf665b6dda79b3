"""SQLAlchemy connect arguments for an Airflow metadata database on SQLite (the local demo).

SQLite lets one writer in at a time; Python's driver gives up after 5 s and Airflow's API then
answers HTTP 500 "Database error". With four components writing (api-server, scheduler,
dag-processor, triggerer), a writer waits up to 30 s instead::

    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS_ASYNC
"""

from __future__ import annotations

from typing import Any

BUSY_TIMEOUT_SECONDS = 30.0

CONNECT_ARGS: dict[str, Any] = {"timeout": BUSY_TIMEOUT_SECONDS}
CONNECT_ARGS_ASYNC: dict[str, Any] = {"timeout": BUSY_TIMEOUT_SECONDS}
