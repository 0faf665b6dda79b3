"""Every ``spark_jobs`` job writes its one JSON result line to ``--result-file`` (through the
warehouse's FileIO) as well as to stdout, for success and for error: what the Airflow operator
reads, so the result reaches it whatever runs the driver (spark-submit's cluster deploy mode).

The jobs come from the registry (:data:`spark_jobs.JOBS`) and run in-process through their own
``main(argv)``; the success runs reuse the ledger tests' scenario of each job (the jobs that need
no Spark session; ``ingest`` through real spark-submit: tests/airflow/test_spark_job_operator.py).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog
from spark_jobs import JOBS
from spark_jobs.__main__ import main as dispatch
from spark_jobs.common.output import EXIT_TERMINAL, exit_code_for
from tests.unit.paimon_core.ledger.job_scenarios import SCENARIOS, prepare

LOCAL_JOBS = sorted(j for j in JOBS if not SCENARIOS[j].spark)


def _run(job: str, argv: list[str], result_file: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The job's ``main(argv + --result-file)``: its exit code and its stdout JSON line."""
    capsys.readouterr()
    rc = importlib.import_module(JOBS[job]).main([*argv, "--result-file", str(result_file)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, lines
    return rc, lines[0]


def test_every_job_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(JOBS)


@pytest.mark.parametrize("job", LOCAL_JOBS)
def test_a_successful_job_writes_its_result_file(job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wh = tmp_path / "wh"
    prepared = prepare(job, str(wh))
    result_file = wh / "_airflow" / "results" / f"{job}.json"
    rc, line = _run(job, prepared.argv[1:], result_file, capsys)
    assert rc == 0 and json.loads(line)["status"] == "ok", line
    assert result_file.read_text() == line + "\n"


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_failed_job_writes_its_result_file(job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wh = tmp_path / "wh"
    FileSystemCatalog(str(wh)).create_database("db")
    scenario = SCENARIOS[job]
    results = wh / "_airflow" / "results"
    # a bad argument: refused by the parser
    rc, line = _run(job, ["--warehouse", str(wh), "--no-such-flag"], results / "usage.json", capsys)
    assert rc == 2 and json.loads(line)["error_type"] == "UsageError", line
    assert (results / "usage.json").read_text() == line + "\n"
    if not scenario.table_flag or job == "ingest":  # (ingest creates a missing table)
        return
    # a table that does not exist (migrate_table: its source): refused once the job runs
    argv = ["--warehouse", str(wh), "--table", "db.missing", *scenario.args(str(wh))]
    rc, line = _run(job, argv, results / "missing.json", capsys)
    error = json.loads(line)
    assert rc == EXIT_TERMINAL and error["status"] == "error" and error["error_type"] != "UsageError", line
    assert error["retryable"] is False and rc == exit_code_for(error["retryable"]), line  # the code agrees
    assert (results / "missing.json").read_text() == line + "\n"


def test_an_unknown_job_writes_its_result_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result_file = tmp_path / "wh" / "r.json"
    rc = dispatch(["no_such_job", "--warehouse", str(tmp_path / "wh"), "--result-file", str(result_file)])
    line = capsys.readouterr().out.strip()
    assert rc == 2 and json.loads(result_file.read_text()) == json.loads(line)


def test_one_result_per_run_and_none_without_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The result file is written once (the line of that run), and a later run without
    ``--result-file`` in the same process writes none."""
    wh = tmp_path / "wh"
    prepared = prepare("create_tag", str(wh))
    result_file = wh / "_airflow" / "results" / "once.json"
    rc, line = _run("create_tag", prepared.argv[1:], result_file, capsys)
    assert rc == 0
    result_file.unlink()
    rc = importlib.import_module(JOBS["create_tag"]).main([*prepared.argv[1:-1], "t9"])
    assert rc == 0 and not result_file.exists()
