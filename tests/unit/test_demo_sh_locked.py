"""``scripts/demo.sh`` (README command 1) tries a REST call again while Airflow's SQLite is locked.

Two CI runs failed on this:

- stop 31: the check for Airflow's HTTP 500 "Database error" stripped the spaces out of the text
  it matched, so it never matched and the demo gave up on the first locked write;
- stop 32: the api-server waited for the lock (busy timeout 30 s) while the demo waited 30 s for the
  answer, so ``PATCH /api/v2/dags/paimon_ingest`` timed out on the client just before the server
  would have answered, and the demo gave up.

The check is :func:`paimon_airflow.utils.sqlite_connect.is_locked_answer`, shared with the live test
harness; the script's own ``call`` is taken out of it as it is and run against a server on loopback
that answers as a locked Airflow does.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from paimon_airflow.utils import sqlite_connect
from paimon_airflow.utils.sqlite_connect import is_locked_answer

DEMO = Path(__file__).resolve().parents[2] / "scripts" / "demo.sh"

#: What the api-server answered to ``PATCH /api/v2/dags/paimon_ingest`` in stop 31's CI run.
LOCKED_500 = (
    '{"detail":{"reason":"Database error","statement":"hidden","orig_error":"hidden","message":"Serious error '
    "when handling your request. Check logs for more details - you will find it in api server when you look "
    'for ID 6GWaMb6w"}}'
)


def test_a_locked_sqlite_is_recognised() -> None:
    assert is_locked_answer(500, LOCKED_500)
    assert is_locked_answer(500, LOCKED_500.encode())
    assert is_locked_answer(500, json.dumps(json.loads(LOCKED_500), indent=2))  # however it is spaced
    assert is_locked_answer(503, "Service Unavailable")


def test_other_errors_are_not() -> None:
    assert not is_locked_answer(500, '{"detail": "Internal Server Error"}')
    assert not is_locked_answer(500, "<html>proxy error</html>")
    assert not is_locked_answer(500, '["Database error"]')
    assert not is_locked_answer(404, LOCKED_500)
    assert not is_locked_answer(409, '{"detail": {"reason": "Database error"}}')


def test_clients_wait_longer_than_the_server_waits_for_the_lock() -> None:
    assert sqlite_connect.REQUEST_TIMEOUT_SECONDS > sqlite_connect.BUSY_TIMEOUT_SECONDS
    text = DEMO.read_text(encoding="utf-8")
    timeouts = re.findall(r"urlopen\([^)]*timeout=([^)]+)\)", text)
    # the health probe polls in a loop of its own; every other request waits past the busy timeout
    assert sorted(timeouts) == ["5", "REQUEST_TIMEOUT_SECONDS"], timeouts
    # and so do the task processes
    (task_timeout,) = re.findall(
        r"^export AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT=(\S+)$", text, flags=re.MULTILINE
    )
    assert float(task_timeout) == sqlite_connect.TASK_API_TIMEOUT_SECONDS
    assert sqlite_connect.TASK_API_TIMEOUT_SECONDS > sqlite_connect.API_SERVER_BUSY_TIMEOUT_SECONDS


class _Airflow(BaseHTTPRequestHandler):
    """Answers each path from a script: ``locked`` (500 Database error), ``slow`` (past the
    client's timeout) or ``ok``; the last entry repeats."""

    script: dict[str, list[str]] = {}
    seen: dict[str, int] = {}

    def _answer(self) -> None:
        n = self.seen.get(self.path, 0)
        self.seen[self.path] = n + 1
        plan = self.script[self.path]
        what = plan[min(n, len(plan) - 1)]
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if what == "slow":
            time.sleep(1.0)
        status, body = (500, LOCKED_500) if what == "locked" else (200, json.dumps({"try": n + 1}))
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())
        except OSError:  # the client gave up waiting
            pass

    do_GET = do_PATCH = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def demo_call() -> Iterator[tuple[Any, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Airflow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    text = DEMO.read_text(encoding="utf-8")
    match = re.search(r"^def call\(method, path.*\n(?:(?:    .*)?\n)+", text, flags=re.MULTILINE)
    assert match, "scripts/demo.sh has no call(method, path, ...)"
    said: list[str] = []
    scope: dict[str, Any] = {
        "json": json,
        "time": time,
        "urllib": urllib,
        "base": f"http://127.0.0.1:{server.server_address[1]}",
        "say": said.append,
        "is_locked_answer": is_locked_answer,
        "REQUEST_TIMEOUT_SECONDS": 0.3,  # instead of 90 s
    }
    assert urllib.error and urllib.request
    exec(match.group(0), scope)  # noqa: S102 - the script's own function, from this repository
    _Airflow.seen = {}
    try:
        yield scope["call"], said
    finally:
        server.shutdown()
        server.server_close()


def test_a_slow_answer_to_an_idempotent_write_is_asked_again(demo_call: tuple[Any, list[str]]) -> None:
    call, said = demo_call
    _Airflow.script = {"/api/v2/dags/paimon_ingest": ["slow", "locked", "ok"]}
    assert call("PATCH", "/api/v2/dags/paimon_ingest", {"is_paused": False}, "t") == {"try": 3}
    assert said == ["[demo] PATCH /api/v2/dags/paimon_ingest: no answer in 0 s; trying again"]


def test_reads_and_the_token_are_asked_again(demo_call: tuple[Any, list[str]]) -> None:
    call, _ = demo_call
    _Airflow.script = {"/api/v2/dags": ["locked", "locked", "ok"], "/auth/token": ["slow", "ok"]}
    assert call("GET", "/api/v2/dags") == {"try": 3}
    assert call("POST", "/auth/token", {"username": "admin"}) == {"try": 2}


def test_a_post_is_sent_once(demo_call: tuple[Any, list[str]]) -> None:
    call, _ = demo_call
    _Airflow.script = {"/api/v2/backfills": ["slow"], "/api/v2/dags/d/dagRuns": ["locked"]}
    # with retry_503 the caller is told, and checks what landed before it tries again
    with pytest.raises(TimeoutError, match="no answer"):
        call("POST", "/api/v2/backfills", {}, "t", retry_503=True)
    with pytest.raises(TimeoutError, match="Database error"):
        call("POST", "/api/v2/dags/d/dagRuns", {}, "t", retry_503=True)
    with pytest.raises(SystemExit, match="HTTP 500"):
        call("POST", "/api/v2/dags/d/dagRuns", {}, "t")
    assert _Airflow.seen == {"/api/v2/backfills": 1, "/api/v2/dags/d/dagRuns": 2}
