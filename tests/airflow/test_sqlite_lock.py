"""A real api-server on SQLite while another component holds the write lock.

Airflow's audit log commits on the api-server's event loop; a commit that waits for SQLite's lock
stops every request of that server for as long as it waits. The api-server therefore keeps a short
busy timeout (``API_SERVER_CONNECT_ARGS``), and what it answers the request that gave up is what
the demo and the live test harness try again (:func:`is_locked_answer`). With the components' 30 s
it stood still for 30 s, and the demo's client gave up (a CI failure).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from paimon_airflow.utils.sqlite_connect import API_SERVER_BUSY_TIMEOUT_SECONDS, is_locked_answer
from tests.airflow.live import http, launch


def test_a_locked_database_stalls_the_api_server_for_its_short_busy_timeout_only(tmp_path: Path) -> None:
    live = launch(tmp_path / "airflow", ("api-server",), migrate=True)
    try:
        live.wait_ready()
        token = live.token()
        auth = {"Authorization": f"Bearer {token}"}
        pool = "/api/v2/pools/default_pool?update_mask=slots"
        slots = live.api("GET", "/pools/default_pool", token=token)["slots"]
        db = sqlite3.connect(tmp_path / "airflow" / "airflow.db", isolation_level=None)
        db.execute("BEGIN IMMEDIATE")  # the write lock, as a component in the middle of a transaction
        answers: dict[str, Any] = {}

        def write() -> None:
            started = time.monotonic()
            answers["patch"] = (
                *http("PATCH", live.base + pool, {"slots": slots + 1}, auth),
                time.monotonic() - started,
            )

        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(1.0)  # the PATCH is waiting for the lock now
        started = time.monotonic()
        status, _ = http("GET", live.base + "/api/v2/version", headers=auth)  # no database at all
        stalled = time.monotonic() - started
        writer.join(timeout=120)
        db.execute("ROLLBACK")
        db.close()
        code, body, took = answers["patch"]
        print(
            f"\nPATCH under a held lock: HTTP {code} after {took:.1f} s; a GET meanwhile waited {stalled:.1f} s"
        )
        assert status == 200
        # the server gave up on the lock after its own busy timeout and said so as Airflow does
        assert is_locked_answer(code, body), (code, body[:500])
        assert API_SERVER_BUSY_TIMEOUT_SECONDS - 1 <= took < API_SERVER_BUSY_TIMEOUT_SECONDS + 10
        # an unrelated request waited at most that long (30 s with the components' setting)
        assert stalled < API_SERVER_BUSY_TIMEOUT_SECONDS + 10
        # the lock gone, the same write goes through and nothing of the failed one was kept
        assert live.api("GET", "/pools/default_pool", token=token)["slots"] == slots
        assert (
            live.api("PATCH", "/pools/default_pool?update_mask=slots", {"slots": slots + 1}, token=token)["slots"] == slots + 1
        )
    finally:
        live.stop()
