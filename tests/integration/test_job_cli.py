"""Every job through its command line as typed: ``python -m spark_jobs <job> ...`` (issue 26).

For every job of :data:`spark_jobs.JOBS` (enumerated, so a job added later is covered), in its own
process as a shell or spark-submit runs it, on its own warehouse:

* a flag it does not have: exit 2 (``EXIT_USAGE``), exactly one line on stdout, a JSON error
  line naming the flag with ``error_type`` UsageError and ``retryable`` false, no traceback;
* a table that does not exist: exit 3 (``EXIT_TERMINAL``), one JSON line with ``retryable``
  false naming the table, no traceback, and no Spark session started for it. Jobs whose target
  may be missing by design name their missing input instead (:data:`MISSING_INPUT`: ``ingest``
  creates the table from its source, the migrations create theirs from a directory);
  ``compact_database`` takes regexes over the warehouse, and a regex that matches nothing
  compacts nothing, as Java (exit 0, no table).

The runs go four at a time (one process each; ``ingest`` starts the only JVM: its missing source
is found by Spark).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from spark_jobs import JOBS
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_USAGE
from tests.unit.paimon_core.ledger.job_scenarios import SCENARIOS

pytestmark = pytest.mark.integration

#: Jobs whose ``--table`` may be missing by design: the input that must exist instead, as the
#: arguments that name it missing (the warehouse -> argv after ``--warehouse W``).
MISSING_INPUT: dict[str, Callable[[str], list[str]]] = {
    "ingest": lambda w: [
        "--table", "db.t", "--source", str(Path(w).parent / "nope" / "events.parquet"),
        "--master", "local[1]", "--conf", "spark.ui.enabled=false",
    ],  # fmt: skip
    "migrate_table": lambda w: ["--table", "db.m", "--source_path", str(Path(w).parent / "nope")],
    "migrate_database": lambda w: ["--source_database", str(Path(w).parent / "nope.db")],
}
#: Jobs without a table to be missing, and what they do with a selection that names none.
NO_TARGET: dict[str, Callable[[str], list[str]]] = {
    "compact_database": lambda w: ["--execution", "local", "--including_databases", "nodb"],
}
MISSING = "db.missing"


def _missing_argv(job: str, wh: str) -> list[str]:
    if job in MISSING_INPUT:
        return MISSING_INPUT[job](wh)
    if job in NO_TARGET:
        return NO_TARGET[job](wh)
    if job == "repair":  # no --table: its database_or_table
        return ["--database_or_table", MISSING]
    return ["--table", MISSING, *SCENARIOS[job].args(wh)]


def _cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, "-m", "spark_jobs", *argv], capture_output=True, text=True, timeout=300, env=env, cwd="/"
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Every job's two runs, each job on a warehouse of its own holding database ``db``."""
    argvs: dict[tuple[str, str], list[str]] = {}
    for job in sorted(JOBS):
        wh = str(tmp_path_factory.mktemp(job) / "wh")
        FileSystemCatalog(wh).create_database("db")
        table = ["--table", "db.t"] if SCENARIOS[job].table_flag else []
        argvs[(job, "usage")] = [job, "--warehouse", wh, *table, *SCENARIOS[job].args(wh), "--no-such-flag"]
        argvs[(job, "missing")] = [job, "--warehouse", wh, *_missing_argv(job, wh)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(argvs, pool.map(_cli, argvs.values()), strict=True))
    return done


def _line(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, (proc.args, proc.stdout, proc.stderr[-2000:])
    line: dict[str, Any] = json.loads(lines[0])
    assert "Traceback" not in proc.stderr, (proc.args, proc.stderr[-3000:])
    return line


def test_the_exemptions_are_jobs() -> None:
    assert set(MISSING_INPUT) | set(NO_TARGET) <= set(JOBS)


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_bad_argument_exits_2_with_one_json_line(job: str, runs: dict[tuple[str, str], Any]) -> None:
    proc = runs[(job, "usage")]
    line = _line(proc)
    assert proc.returncode == EXIT_USAGE, (proc.returncode, line)
    assert line["job"] == job and line["status"] == "error" and line["error_type"] == "UsageError", line
    assert line["retryable"] is False and "--no-such-flag" in line["error"], line


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_missing_table_exits_3_with_one_json_line(job: str, runs: dict[tuple[str, str], Any]) -> None:
    proc = runs[(job, "missing")]
    line = _line(proc)
    if job in NO_TARGET:
        assert proc.returncode == 0 and line["status"] == "ok" and line["tables"] == [], line
        return
    assert proc.returncode == EXIT_TERMINAL, (proc.returncode, line, proc.stderr[-2000:])
    assert line["job"] == job and line["status"] == "error" and line["retryable"] is False, line
    assert line["error_type"] != "UsageError", line
    if job in MISSING_INPUT:
        assert "nope" in line["error"], line
    else:
        assert line["error_type"] == "TableNotFoundError" and MISSING in line["error"], line
        assert "Spark" not in proc.stderr and "SparkContext" not in proc.stderr, proc.stderr[-2000:]
