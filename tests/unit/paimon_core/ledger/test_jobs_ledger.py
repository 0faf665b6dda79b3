"""Every ``spark_jobs`` job records exactly one ledger row per table it maintains (jobs that need
no Spark session here; the others in tests/integration/test_ledger_spark.py). The jobs come from
the registry ``python -m spark_jobs --help`` prints (:data:`spark_jobs.JOBS`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.ledger import Ledger
from paimon_core.ledger.metrics import metrics_of
from spark_jobs import JOBS
from spark_jobs.__main__ import main
from spark_jobs.common.ledger import UNRECORDED_JOBS
from spark_jobs.common.output import EXIT_TERMINAL
from tests.unit.paimon_core.ledger.helpers import ledger_rows, small_table
from tests.unit.paimon_core.ledger.job_scenarios import SCENARIOS, prepare

LOCAL_JOBS = sorted(j for j in JOBS if not SCENARIOS.get(j, SCENARIOS["ingest"]).spark)


def run_job(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    rc = main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    return rc, json.loads(lines[-1])


def test_every_registered_job_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(JOBS), (
        "add a JobScenario (tests/unit/paimon_core/ledger/job_scenarios.py)"
    )
    assert {j for j, s in SCENARIOS.items() if s.status is None} == set(UNRECORDED_JOBS)
    help_jobs = set(JOBS)
    assert "merge_into" in help_jobs and "ingest" in help_jobs


@pytest.mark.parametrize("job", LOCAL_JOBS)
def test_job_writes_exactly_one_row(job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = SCENARIOS[job]
    prepared = prepare(job, str(tmp_path / "wh"))
    rc, out = run_job(prepared.argv, capsys)
    assert rc == 0 and out["status"] == "ok", out
    [row] = ledger_rows(prepared.catalog)
    action = scenario.action or job
    assert (row["table_name"], row["action"], row["status"], row["entry_point"]) == (
        scenario.table,
        action,
        scenario.status,
        "spark_job",
    ), row["error"]
    result = out["tables"][0] if job == "compact_database" else out  # type: ignore[index]
    reported = metrics_of(action, result)
    assert {k: row[k] for k in reported} == reported
    assert float(row["cpu_seconds"]) > 0 and row["error"] is None


def test_a_failed_job_records_its_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wh = str(tmp_path / "wh")
    small_table(FileSystemCatalog(wh))
    rc, out = run_job(["rollback_to", "--warehouse", wh, "--table", "db.t", "--snapshot", "99", "--dry-run", "false"], capsys)
    assert rc == EXIT_TERMINAL and out["error_type"] == "SnapshotNotFoundError"
    rc, _ = run_job(["create_tag", "--warehouse", wh, "--table", "db.missing", "--tag", "x"], capsys)
    assert rc == EXIT_TERMINAL
    rows = ledger_rows(FileSystemCatalog(wh))
    assert [(r["table_name"], r["action"], r["status"]) for r in rows] == [
        ("db.t", "rollback_to", "failed"),
        ("db.missing", "create_tag", "failed"),
    ]
    assert str(rows[0]["error"]) == f"SnapshotNotFoundError: {out['error']}"
    assert str(rows[1]["error"]).startswith("TableNotFoundError: ")


def test_no_ledger_flag_records_nothing_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    small_table(catalog)
    rc, _ = run_job(["create_tag", "--warehouse", wh, "--table", "db.t", "--tag", "x", "--no-ledger"], capsys)
    assert rc == 0 and not Ledger(catalog).exists(refresh=True)
    assert catalog.list_databases() == ["db"]
    rc, _ = run_job(["expire_snapshots", "--warehouse", wh, "--table", "db.t", "--dry-run"], capsys)
    assert rc == 0 and [r["status"] for r in ledger_rows(catalog)] == ["dry_run"]
