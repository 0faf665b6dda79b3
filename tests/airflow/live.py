"""A real Airflow on loopback for the tests: its components as background processes, REST v2 access.

:func:`launch` starts any of ``api-server`` (``--host 127.0.0.1``), ``scheduler`` and ``triggerer``
(``--skip-serve-logs``: their log servers would bind 0.0.0.0) and ``dag-processor``, each in its own
session (process group), with an environment that carries nothing of the test process's Airflow
settings but what :func:`airflow_env` puts in it. :meth:`LiveAirflow.wait_ready` waits for
``/api/v2/monitor/health`` and reads the simple auth manager's generated ``admin`` password;
:meth:`LiveAirflow.stop` ends the process groups it started (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paimon_airflow.utils.sqlite_connect import (
    REQUEST_TIMEOUT_SECONDS,
    TASK_API_TIMEOUT_SECONDS,
    is_locked_answer,
)
from tests.airflow.conftest import DAGS_FOLDER, PLUGINS_FOLDER, REPO

__all__ = ["AIRFLOW_BIN", "LiveAirflow", "airflow_env", "free_port", "http", "launch", "port_open"]

AIRFLOW_BIN = str(Path(sys.executable).with_name("airflow"))
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def http(
    method: str,
    url: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> tuple[int, bytes]:
    """``(status, body)`` of one request (HTTP errors are returned, not raised)."""
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json", **(headers or {})} if data else dict(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return int(resp.status), bytes(resp.read())
    except urllib.error.HTTPError as e:
        payload = e.read()
        e.close()
        return int(e.code), bytes(payload)


def airflow_env(
    home: Path,
    port: int,
    *,
    sql_alchemy_conn: str | None = None,
    plugins_folder: Path = PLUGINS_FOLDER,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of every component: this process's, minus its AIRFLOW*/PYTEST* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYTEST"))}
    base = f"http://127.0.0.1:{port}"
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": sql_alchemy_conn or f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins_folder),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH_MANAGER,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__API__BASE_URL": base,
            "AIRFLOW__API__WORKERS": "1",
            # one secret for all components: the scheduler's task tokens are checked by the api-server
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(64),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",  # spark-submit of this venv
            "PYTHONPATH": os.pathsep.join([str(REPO), str(PLUGINS_FOLDER)]),
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
    )
    if env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("sqlite"):
        # four components write one SQLite file: a writer waits for the lock instead of a 500
        # (the api-server less long: LiveAirflow.start)
        args = "paimon_airflow.utils.sqlite_connect.CONNECT_ARGS"
        env.update(
            {
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": args,
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": args + "_ASYNC",
                "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": str(TASK_API_TIMEOUT_SECONDS),
            }
        )
    env.update(extra or {})
    return env


@dataclass
class LiveAirflow:
    """Background Airflow components sharing one AIRFLOW_HOME and environment."""

    home: Path
    port: int
    env: dict[str, str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    password: str = ""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self, name: str) -> Path:
        return self.home / f"{name}.log"

    def start(self, name: str, *args: str) -> None:
        """Start component ``name`` (``airflow <name> <args>``) in its own process group."""
        env = self.env
        if name == "api-server" and env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("sqlite"):
            # its audit log waits for the lock on the event loop: see paimon_airflow.utils.sqlite_connect
            args_name = "paimon_airflow.utils.sqlite_connect.API_SERVER_CONNECT_ARGS"
            env = {
                **env,
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": args_name,
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC": args_name + "_ASYNC",
            }
        with open(self.log(name), "wb") as out:
            self.procs[name] = subprocess.Popen(
                [AIRFLOW_BIN, name, *args],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def cli(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """``airflow <args>`` with this Airflow's environment (raises on failure)."""
        r = subprocess.run(
            [AIRFLOW_BIN, *args], env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if r.returncode != 0:
            raise RuntimeError(f"airflow {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-4000:]}")
        return r

    def tail(self, name: str, chars: int = 4000) -> str:
        path = self.log(name)
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def wait_ready(self, timeout: float = 120) -> LiveAirflow:
        """Wait for the api-server's health endpoint; read the generated admin password."""
        proc = self.procs["api-server"]
        deadline = time.monotonic() + timeout
        while not (port_open(self.port) and http("GET", f"{self.base}/api/v2/monitor/health")[0] == 200):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"api-server did not start:\n{self.tail('api-server')}")
            time.sleep(0.3)
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        self.password = str(json.loads(passwords.read_text())["admin"])
        return self

    @staticmethod
    def _again_while_locked(
        method: str, url: str, body: Any, headers: Mapping[str, str] | None = None
    ) -> tuple[int, bytes]:
        """One request, tried again for up to 5 min while SQLite is locked: a locked answer (its
        transaction rolled back, so a POST too), and no answer in time for a read or an idempotent
        write (a POST may have landed: the caller decides). A backfill's POST commits twice and
        is not sent through here (see test_live_airflow's ``_backfill``)."""
        again_on_timeout = method != "POST" or url.endswith("/auth/token")
        end = time.monotonic() + 300
        while True:
            try:
                status, payload = http(method, url, body, headers)
            except (TimeoutError, urllib.error.URLError) as e:
                if isinstance(e, urllib.error.URLError) and not isinstance(e.reason, TimeoutError):
                    raise
                if not (again_on_timeout and time.monotonic() < end):
                    raise
                continue
            if is_locked_answer(status, payload) and time.monotonic() < end:
                time.sleep(0.5)
                continue
            return status, payload

    def token(self) -> str:
        status, body = self._again_while_locked(
            "POST", f"{self.base}/auth/token", {"username": "admin", "password": self.password}
        )
        assert status in (200, 201), body
        return str(json.loads(body)["access_token"])

    def api(self, method: str, path: str, body: Any = None, *, token: str | None = None) -> Any:
        """A REST v2 call (``path`` from ``/api/v2``); the JSON answer; fails on an HTTP error."""
        headers = {"Authorization": f"Bearer {token or self.token()}"}
        status, payload = self._again_while_locked(method, f"{self.base}/api/v2{path}", body, headers)
        if status >= 400:
            raise AssertionError(f"{method} {path}: HTTP {status}: {payload[:2000]!r}")
        return json.loads(payload) if payload else None

    def _descendant_groups(self) -> set[int]:
        """Process groups of the components' descendants (task processes lead their own groups)."""
        parents: dict[int, int] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                parents[int(stat.parent.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
        mine = {p.pid for p in self.procs.values()}
        grew = True
        while grew:
            found = {pid for pid, ppid in parents.items() if ppid in mine} - mine
            grew = bool(found)
            mine |= found
        groups = set()
        for pid in mine:
            try:
                groups.add(os.getpgid(pid))
            except ProcessLookupError:
                pass
        return groups

    def stop(self) -> None:
        """SIGTERM each process group started here, then SIGKILL what is left (and task processes)."""
        leftovers = self._descendant_groups() - {p.pid for p in self.procs.values()}
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # also the group's leftovers (task supervisors)
            except ProcessLookupError:
                pass
            if proc.poll() is None:
                proc.wait(timeout=10)
        for pgid in leftovers - {os.getpgid(0)}:  # a task still running when the test ended
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def launch(
    home: Path,
    components: Sequence[str] = ("api-server",),
    *,
    port: int | None = None,
    sql_alchemy_conn: str | None = None,
    plugins_folder: Path = PLUGINS_FOLDER,
    extra_env: Mapping[str, str] | None = None,
    migrate: bool = False,
    reserialize: bool = False,
) -> LiveAirflow:
    """Start ``components`` on 127.0.0.1 (after ``airflow db migrate`` / ``dags reserialize`` if asked).

    Returns at once; call :meth:`LiveAirflow.wait_ready` before using the REST API.
    """
    home.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    env = airflow_env(
        home, port, sql_alchemy_conn=sql_alchemy_conn, plugins_folder=plugins_folder, extra=extra_env
    )
    live = LiveAirflow(home=home, port=port, env=env)
    if migrate:
        live.cli("db", "migrate")
    args = {
        "api-server": ("--host", "127.0.0.1", "--port", str(port)),
        "scheduler": ("--skip-serve-logs",),
        "triggerer": ("--skip-serve-logs",),
        "dag-processor": (),
    }
    try:
        if "api-server" in components:
            live.start("api-server", *args["api-server"])
        if reserialize:  # before the dag-processor starts: both would insert the same DAG rows
            live.cli("dags", "reserialize")
        for name in components:
            if name != "api-server":
                live.start(name, *args[name])
    except BaseException:
        live.stop()
        raise
    return live
