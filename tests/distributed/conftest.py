"""Fixtures for the distributed tests: ONE Spark standalone cluster (master + 2 workers) per session.

* ``spark_cluster``: :class:`tests.distributed.spark_cluster.SparkCluster` on loopback; executors
  run a Python that has the dependencies but not the project (see ``write_executor_python``).
* ``jobs_archive``: ``paimon-jobs.zip`` built by :mod:`spark_jobs.packaging`, shipped to executors.
* ``cluster_jobs``: runs ``python -m spark_jobs <job> --master spark://...`` as a user would, from a
  working directory outside the repository, and returns the job's JSON result line.

Every test in this directory is marked ``distributed``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spark_jobs.packaging import build_pyfiles_archive, submit_conf
from tests.distributed.spark_cluster import SparkCluster, write_executor_python

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent.parent
JOB_TIMEOUT = 240.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.distributed)


@dataclass
class ClusterJobs:
    """Submits the project's jobs (and driver scripts) to the cluster."""

    cluster: SparkCluster
    archive: Path
    cwd: Path

    @property
    def conf(self) -> dict[str, str]:
        return {**self.cluster.driver_conf(), **submit_conf(self.archive)}

    @property
    def env(self) -> dict[str, str]:
        # Driver-side Python workers (data source planning, commits) run the executors' interpreter
        # (Spark uses one ``spark.pyspark.python``); on the driver's machine the project is
        # installed, which PYTHONPATH stands for here. Executors never see this environment.
        env = self.cluster.driver_env()
        env["PYTHONPATH"] = str(REPO)
        env["PYTHONWARNINGS"] = "ignore::FutureWarning"
        return env

    def command(self, job: str, args: Sequence[str]) -> list[str]:
        conf = [a for k, v in self.conf.items() for a in ("--conf", f"{k}={v}")]
        return [sys.executable, "-m", "spark_jobs", job, "--master", self.cluster.master_url, *conf, *args]

    def popen(self, job: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(job, args),
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(self, job: str, *args: str, timeout: float = JOB_TIMEOUT, check: bool = True) -> dict[str, Any]:
        """Run the job to completion; its JSON result (``returncode`` added)."""
        proc = self.popen(job, *args)
        return finish(proc, timeout=timeout, check=check)

    def run_script(self, script: Path, *args: str, timeout: float = JOB_TIMEOUT) -> dict[str, Any]:
        """Run a driver script (``main(master, conf_json, *args)``) that prints one JSON line."""
        cmd = [sys.executable, str(script), self.cluster.master_url, json.dumps(self.conf), *args]
        proc = subprocess.Popen(
            cmd,
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return finish(proc, timeout=timeout, check=True)


def finish(
    proc: subprocess.Popen[str], *, timeout: float = JOB_TIMEOUT, check: bool = True
) -> dict[str, Any]:
    """Wait for a job process; parse its last stdout line as JSON (``returncode`` and the
    driver's ``stderr`` added)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        raise AssertionError(f"job timed out after {timeout:.0f}s:\n{err[-4000:]}") from None
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if check and (proc.returncode != 0 or not lines):
        raise AssertionError(f"job failed (rc={proc.returncode}):\n{out[-2000:]}\n{err[-6000:]}")
    result: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    result["returncode"] = proc.returncode
    result["stderr"] = err
    return result


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    base = tmp_path_factory.mktemp("spark-cluster")
    python = write_executor_python(base / "executor-python")
    cluster = SparkCluster.start(base / "cluster", workers=2, executor_python=python)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def jobs_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pyfiles_archive(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def cluster_jobs(
    spark_cluster: SparkCluster, jobs_archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> ClusterJobs:
    return ClusterJobs(cluster=spark_cluster, archive=jobs_archive, cwd=tmp_path_factory.mktemp("driver-cwd"))
