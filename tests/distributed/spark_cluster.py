"""A real Spark standalone cluster on loopback: one master and N workers, each its own JVM.

Started from the installed pyspark's own launch classes (``org.apache.spark.deploy.master.Master``
and ``org.apache.spark.deploy.worker.Worker`` with ``pyspark/jars/*`` on the classpath), the same
classes ``sbin/start-master.sh`` / ``start-worker.sh`` of a Spark distribution run. Every RPC
endpoint and web UI binds to 127.0.0.1 (``--host``, ``SPARK_LOCAL_IP``); ports are chosen by the
OS (``--port 0``, ``--webui-port 0``) and read back from the daemons' logs, so concurrent clusters
never collide. Workers get 1 core and 768m each, a clean environment (no ``PYTHONPATH``, cwd in
their own work dir) and, as executors' Python, :data:`EXECUTOR_PYTHON` unless told otherwise.

API (used by other test modules, e.g. the S3 and Airflow topology tests)::

    cluster = SparkCluster.start(tmp_dir, workers=2)
    cluster.master_url              # spark://127.0.0.1:PORT
    cluster.driver_conf()           # --conf pairs a driver on this machine needs
    cluster.kill_worker(0)          # SIGKILL the worker and its executors (a lost machine)
    cluster.restart_worker(0)       # a fresh worker in its place, registered
    cluster.stop()                  # everything down, process groups killed

Every daemon runs in its own process group (``start_new_session``); :meth:`SparkCluster.stop`
kills each group and any stray descendant (an executor's Python daemon makes its own group).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

__all__ = [
    "EXECUTOR_MEMORY",
    "SparkCluster",
    "SparkClusterError",
    "WorkerProcess",
    "pyspark_home",
    "write_executor_python",
]

LOOPBACK = "127.0.0.1"
WORKER_CORES = 1
WORKER_MEMORY = "768m"
#: Fits a 768m worker (Spark refuses executors whose heap is under ~450 MiB usable).
EXECUTOR_MEMORY = "640m"
DAEMON_HEAP = "192m"
START_TIMEOUT = 60.0

_LOG4J = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n
logger.deploy.name = org.apache.spark.deploy
logger.deploy.level = info
logger.ui.name = org.apache.spark.ui
logger.ui.level = info
logger.backend.name = org.apache.spark.executor.CoarseGrainedExecutorBackend
logger.backend.level = info
"""

_MASTER_URL = re.compile(r"Starting Spark master at (spark://[\d.]+:\d+)")
_WEBUI_PORT = re.compile(r"Bound MasterWebUI to [\d.]+, and started at http://[^\s:/]+:(\d+)")
_WORKER_ID = re.compile(r"Starting Spark worker [\d.]+:(\d+) with")


class SparkClusterError(RuntimeError):
    """The cluster did not come up (or a daemon died); the message holds its log tail."""


def pyspark_home() -> Path:
    """The installed pyspark package: ``jars/`` (the cluster's classpath) and ``SPARK_HOME``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _scala_version() -> str:
    """``2.13`` from the bundled ``spark-core_2.13-*.jar``."""
    for jar in (pyspark_home() / "jars").glob("spark-core_*.jar"):
        m = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if m:
            return m.group(1)
    raise SparkClusterError(f"no spark-core jar in {pyspark_home() / 'jars'}")


def write_executor_python(path: str | os.PathLike[str], *, python: str | None = None) -> str:
    """Write an interpreter wrapper for executors that sees the venv's third-party packages
    (pyarrow, pandas, ...) but NOT the project: a Spark image with the dependencies installed.

    It runs ``python -S`` (no ``site``: the editable install's ``.pth`` pointing at the source
    tree is never read) with the venv's site-packages appended to ``PYTHONPATH`` (``.pth`` files
    on ``PYTHONPATH`` are not processed). Executors then import ``paimon_core`` only from what
    the driver ships (``spark.submit.pyFiles``). Returns the wrapper's path.
    """
    import sysconfig

    exe = python or sys.executable
    site = sysconfig.get_paths()["purelib"]
    out = Path(path)
    out.write_text(
        "#!/bin/sh\n"
        "# executors' Python: dependencies from site-packages, the project only from shipped archives\n"
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {exe} -S "$@"\n'
    )
    out.chmod(0o755)
    return str(out)


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise SparkClusterError("no java on PATH (and JAVA_HOME unset)")
    return found


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The daemons' environment: nothing of the test process but PATH/HOME/JAVA_HOME/locale.

    No ``PYTHONPATH``, no ``VIRTUAL_ENV``: executors and their Python workers see only what the
    driver ships (``spark.submit.pyFiles``) and what ``PYSPARK_PYTHON``'s interpreter has installed.
    """
    keep = ("PATH", "HOME", "JAVA_HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        SPARK_HOME=str(pyspark_home()),
        # the launcher's executor command builder asks for it outside a Spark distribution
        SPARK_SCALA_VERSION=_scala_version(),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_NO_DAEMONIZE="1",
        PYTHONHASHSEED="0",
    )
    env.update(extra or {})
    return env


@dataclass
class _Daemon:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-n:])

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = pattern.search(self.log_text())
            if m:
                return m
            if self.proc.poll() is not None:
                raise SparkClusterError(f"{self.name} exited ({self.proc.returncode}):\n{self.tail()}")
            time.sleep(0.1)
        raise SparkClusterError(f"{self.name}: no {pattern.pattern!r} within {timeout:.0f}s:\n{self.tail()}")

    def kill(self) -> None:
        """SIGKILL the daemon's process group and every descendant (executors, Python daemons)."""
        _kill_tree(self.proc)


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    groups = {proc.pid}  # start_new_session: the daemon leads its own group
    for child in descendants:
        try:
            groups.add(os.getpgid(child.pid))
        except ProcessLookupError:
            pass
    for pgid in groups:
        if pgid == os.getpgid(0):
            continue  # never our own group
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for child in descendants:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    psutil.wait_procs(descendants, timeout=10)


@dataclass
class WorkerProcess:
    """One worker JVM: its slot index, the port it registered with, its work dir."""

    index: int
    daemon: _Daemon
    port: int
    work_dir: Path

    @property
    def alive(self) -> bool:
        return self.daemon.proc.poll() is None


@dataclass
class SparkCluster:
    """A running standalone cluster; build one with :meth:`start`."""

    base: Path
    master_url: str
    webui_url: str
    executor_python: str
    master: _Daemon
    workers: list[WorkerProcess] = field(default_factory=list)
    worker_env: dict[str, str] = field(default_factory=dict)
    _generation: int = 0

    # --- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        tmp_dir: str | os.PathLike[str],
        workers: int = 2,
        *,
        executor_python: str | None = None,
        worker_env: Mapping[str, str] | None = None,
        timeout: float = START_TIMEOUT,
    ) -> SparkCluster:
        """Start a master and ``workers`` workers under ``tmp_dir``; return once all registered.

        ``executor_python``: the interpreter the workers export as ``PYSPARK_PYTHON`` (the
        driver's ``spark.pyspark.python``/``PYSPARK_PYTHON`` still wins, as in Spark).
        ``worker_env``: extra environment of every worker, which its executors inherit (the
        S3 endpoint and credentials a ``spark-worker`` container of ``docker/compose.yaml`` has).
        """
        base = Path(tmp_dir).resolve()
        base.mkdir(parents=True, exist_ok=True)
        (base / "log4j2.properties").write_text(_LOG4J)
        python = executor_python or sys.executable
        master = _launch(
            base,
            "master",
            "org.apache.spark.deploy.master.Master",
            ["--host", LOOPBACK, "--port", "0", "--webui-port", "0"],
            clean_env(),
        )
        cluster: SparkCluster | None = None
        try:
            url = master.wait_for(_MASTER_URL, timeout).group(1)
            cluster = cls(
                base=base,
                master_url=url,
                webui_url="",
                executor_python=python,
                master=master,
                worker_env=dict(worker_env or {}),
            )
            # workers launch together (each JVM takes seconds to boot on a busy 2-core box)
            launched = [cluster._launch_worker(i) for i in range(workers)]
            cluster.webui_url = f"http://{LOOPBACK}:{master.wait_for(_WEBUI_PORT, timeout).group(1)}"
            for i, (daemon, work_dir) in enumerate(launched):
                port = int(daemon.wait_for(_WORKER_ID, timeout).group(1))
                cluster.workers.append(WorkerProcess(index=i, daemon=daemon, port=port, work_dir=work_dir))
            cluster.wait_for_workers(workers, timeout=timeout)
            return cluster
        except BaseException:
            if cluster is not None:
                cluster.stop()
            else:
                master.kill()
            raise

    def _start_worker(self, index: int, timeout: float) -> WorkerProcess:
        daemon, work_dir = self._launch_worker(index)
        port = int(daemon.wait_for(_WORKER_ID, timeout).group(1))
        return WorkerProcess(index=index, daemon=daemon, port=port, work_dir=work_dir)

    def _launch_worker(self, index: int) -> tuple[_Daemon, Path]:
        self._generation += 1
        name = f"worker{index}-{self._generation}"
        work_dir = self.base / name / "work"
        work_dir.mkdir(parents=True)
        daemon = _launch(
            self.base,
            name,
            "org.apache.spark.deploy.worker.Worker",
            [
                "--host",
                LOOPBACK,
                "--port",
                "0",
                "--webui-port",
                "0",
                "--cores",
                str(WORKER_CORES),
                "--memory",
                WORKER_MEMORY,
                "--work-dir",
                str(work_dir),
                self.master_url,
            ],
            clean_env({**self.worker_env, "PYSPARK_PYTHON": self.executor_python}),
            cwd=work_dir,
        )
        return daemon, work_dir

    def stop(self) -> None:
        """Kill every worker (with its executors) and the master; idempotent."""
        for w in self.workers:
            w.daemon.kill()
        self.master.kill()

    # --- state --------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The master's JSON status (workers, applications)."""
        with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=5) as resp:
            data: dict[str, Any] = json.load(resp)
        return data

    def alive_worker_ports(self) -> set[int]:
        return {int(w["port"]) for w in self.state().get("workers", []) if w.get("state") == "ALIVE"}

    def wait_for_workers(self, n: int, *, timeout: float = START_TIMEOUT) -> None:
        """Until the master lists exactly the ``n`` live workers this object started as ALIVE."""
        deadline = time.monotonic() + timeout
        ports: set[int] = set()
        while time.monotonic() < deadline:
            expected = {w.port for w in self.workers if w.alive}
            try:
                ports = self.alive_worker_ports()
            except OSError:
                ports = set()
            if len(expected) == n and expected <= ports:
                return
            for w in self.workers:
                if not w.alive:
                    raise SparkClusterError(f"worker {w.index} exited:\n{w.daemon.tail()}")
            time.sleep(0.2)
        raise SparkClusterError(f"{n} workers not registered within {timeout:.0f}s (alive: {sorted(ports)})")

    # --- failures -----------------------------------------------------------------------------

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index`` and its executors (as a machine dying would)."""
        self.workers[index].daemon.kill()

    def restart_worker(self, index: int, *, timeout: float = START_TIMEOUT) -> None:
        """Replace worker ``index`` (killed or not) with a fresh one; wait until all are registered."""
        old = self.workers[index]
        if old.alive:
            old.daemon.kill()
        self.workers[index] = self._start_worker(index, timeout)
        self.wait_for_workers(sum(w.alive for w in self.workers), timeout=timeout)

    def executor_pids(self, index: int) -> list[int]:
        """Executor JVMs (``CoarseGrainedExecutorBackend``) running under worker ``index``."""
        try:
            children = psutil.Process(self.workers[index].daemon.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        out = []
        for c in children:
            try:
                if any("CoarseGrainedExecutorBackend" in a for a in c.cmdline()):
                    out.append(c.pid)
            except psutil.NoSuchProcess:
                continue
        return out

    # --- drivers ------------------------------------------------------------------------------

    def driver_conf(self) -> dict[str, str]:
        """Spark conf a driver on this machine should use with this cluster (loopback only,
        no driver UI, executors sized for the workers)."""
        # C1 and the serial GC: JVMs that live for one small job boot faster on a busy box
        java_opts = (
            f"-Dlog4j2.configurationFile=file:{self.base / 'log4j2.properties'}"
            " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
        )
        return {
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.ui.enabled": "false",
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.executor.cores": str(WORKER_CORES),
            "spark.sql.shuffle.partitions": "4",
            "spark.driver.extraJavaOptions": java_opts,
            "spark.executor.extraJavaOptions": java_opts,
            "spark.pyspark.python": self.executor_python,
        }

    def driver_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for a driver process (``python -m spark_jobs ... --master``)."""
        env = dict(os.environ if base is None else base)
        env.update(SPARK_LOCAL_IP=LOOPBACK, PYSPARK_PYTHON=self.executor_python)
        return env


def _launch(
    base: Path,
    name: str,
    main_class: str,
    args: list[str],
    env: dict[str, str],
    *,
    cwd: Path | None = None,
) -> _Daemon:
    home = pyspark_home()
    log = base / f"{name}.log"
    cmd = [
        _java(),
        f"-Xmx{DAEMON_HEAP}",
        # daemons only route messages: C1 and the serial GC boot faster and use fewer threads
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        f"-Dlog4j2.configurationFile=file:{base / 'log4j2.properties'}",
        "-Dspark.master.rest.enabled=false",
        "-Dspark.worker.cleanup.enabled=false",
        "-cp",
        f"{home / 'conf'}:{home / 'jars'}/*",
        main_class,
        *args,
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(cwd or base),
            start_new_session=True,
        )
    return _Daemon(name=name, proc=proc, log=log)
