"""A real PostgreSQL on loopback for the tests: Debian's server, started by ``docker/entrypoint.sh
postgres`` (the command of the compose file's ``postgres`` service) with a fresh data directory.

:meth:`Postgres.start` picks a free port, runs the server in the foreground of its own process
group (as the ``postgres`` user when the tests run as root: PostgreSQL refuses root), waits until
it answers on 127.0.0.1 with the generated password, and returns; :meth:`Postgres.stop` asks for a
fast shutdown (SIGINT), then kills what is left and removes the data directory it made.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENTRYPOINT", "ROLE", "Postgres"]

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"
#: The entrypoint role that runs the server (the compose file's ``postgres`` service runs it too).
ROLE = "postgres"
USER = "airflow"
DATABASE = "airflow"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Postgres:
    """One running server; ``url`` is the SQLAlchemy URL of its ``airflow`` database."""

    root: Path
    port: int
    password: str
    proc: subprocess.Popen[bytes]
    owns_root: bool

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://{USER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def dsn(self) -> str:
        """The libpq connection string (psycopg2.connect)."""
        return f"host=127.0.0.1 port={self.port} user={USER} password={self.password} dbname={DATABASE}"

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    @classmethod
    def start(cls, tmp: Path, *, timeout: float = 60) -> Postgres:
        """Start a server whose files live under ``tmp`` (or, as root, a directory the ``postgres``
        user can reach: pytest's temp root is private to root)."""
        as_root = os.geteuid() == 0
        root = Path(tempfile.mkdtemp(prefix="paimon-pg-")) if as_root else Path(tmp) / "postgres"
        root.mkdir(parents=True, exist_ok=True)
        (root / "data").mkdir(mode=0o700)
        (root / "run").mkdir()
        if as_root:
            import pwd

            pg = pwd.getpwnam("postgres")
            root.chmod(0o755)
            for path in (root, root / "data", root / "run"):
                os.chown(path, pg.pw_uid, pg.pw_gid)
        password = secrets.token_urlsafe(16)
        port = _free_port()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PG", "POSTGRES"))},
            "PGDATA": str(root / "data"),
            "PGPORT": str(port),
            "PG_LISTEN": "127.0.0.1",
            "PG_SOCKET_DIR": str(root / "run"),
            "POSTGRES_USER": USER,
            "POSTGRES_DB": DATABASE,
            "POSTGRES_PASSWORD": password,
        }
        log = open(root / "postgres.log", "wb")  # noqa: SIM115 (the server's output, for failures)
        if as_root:
            os.chown(root / "postgres.log", pg.pw_uid, pg.pw_gid)
        with log:
            proc = subprocess.Popen(
                [str(ENTRYPOINT), ROLE, "-c", "fsync=off", "-c", "synchronous_commit=off"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        server = cls(root=root, port=port, password=password, proc=proc, owns_root=as_root)
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self, timeout: float) -> None:
        import psycopg2  # type: ignore[import-untyped]

        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                psycopg2.connect(self.dsn, connect_timeout=2).close()
                return
            except psycopg2.OperationalError as e:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"postgres not ready after {timeout} s: {e}\n{self.tail()}") from e
            time.sleep(0.2)

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self) -> None:
        """Fast shutdown (SIGINT: roll back, disconnect, stop), SIGKILL after 20 s; remove a data
        directory made outside ``tmp``."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)
