"""The maintenance ledger where Spark runs: the jobs that need a Spark session record one row each
(their Python workers' CPU included), and Spark's ``format("paimon")`` reads the ledger with the
README's SQL examples (run here, as printed there)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.ledger import Ledger, ledger_disabled
from paimon_core.ledger.ledger import forget_cached_existence
from paimon_core.ledger.metrics import metrics_of
from spark_jobs import JOBS
from spark_jobs.__main__ import main
from tests.unit.paimon_core.ledger.helpers import ledger_rows, rows, small_table
from tests.unit.paimon_core.ledger.job_scenarios import SCENARIOS, prepare

REPO = Path(__file__).resolve().parents[2]
SPARK_JOBS = sorted(j for j in JOBS if SCENARIOS[j].spark)


@pytest.fixture(autouse=True)
def _spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PAIMON_LEDGER_SPOOL", str(tmp_path / "spool"))
    monkeypatch.delenv("PAIMON_LEDGER_CONTEXT", raising=False)
    forget_cached_existence()
    yield
    forget_cached_existence()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    rc = main(argv)
    out: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["status"] == "ok", out
    return out


@pytest.fixture
def meters(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every WorkerCpu a job makes (the Python workers' CPU it sums)."""
    import spark_jobs.common.ledger as job_ledger

    made: list[Any] = []
    original = job_ledger.worker_cpu

    def capture(spark: SparkSession) -> Any:
        made.append(original(spark))
        return made[-1]

    monkeypatch.setattr(job_ledger, "worker_cpu", capture)
    return made


@pytest.mark.parametrize("job", SPARK_JOBS)
def test_spark_job_writes_exactly_one_row(
    job: str, spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str], meters: list[Any]
) -> None:
    scenario = SCENARIOS[job]
    prepared = prepare(job, wh)
    if scenario.status is None:  # ingest: not maintenance, nothing recorded even with a ledger
        from spark_jobs import ingest

        Ledger(prepared.catalog).ensure()
        src = Path(wh).parent / "src.parquet"
        pq.write_table(rows(100, 5), src)
        ingest.run(spark, ingest.parse_args(["--warehouse", wh, "--table", "db.t", "--source", str(src)]))
        assert prepared.catalog.get_table("db.t").to_arrow().num_rows == 65
        assert ledger_rows(prepared.catalog) == []
        return
    out = _run(prepared.argv, capsys)
    [row] = ledger_rows(prepared.catalog)
    assert (row["table_name"], row["action"], row["status"], row["entry_point"]) == (
        scenario.table,
        scenario.action or job,
        scenario.status,
        "spark_job",
    ), row["error"]
    reported = metrics_of(job, out)
    assert {k: row[k] for k in reported} == reported
    workers = sum(m.seconds for m in meters)
    assert workers > 0 and float(row["cpu_seconds"]) > workers  # the workers' CPU plus the driver's


@pytest.mark.parametrize(
    ("argv", "action", "table"),
    [
        (["compact", "--table", "db.t"], "compact", "db.t"),
        (
            ["compact", "--table", "db.t", "--order_strategy", "zorder", "--order_by", "id,v"],
            "sort_compact",
            "db.t",
        ),
        (["compact_database", "--including_databases", "db"], "compact_database", "db.t"),
        (["remove_orphan_files", "--table", "db.t", "--dry-run"], "remove_orphan_files", "db.t"),
    ],
)
def test_distributed_jobs_add_their_python_workers_cpu(
    argv: list[str],
    action: str,
    table: str,
    spark: SparkSession,
    wh: str,
    capsys: pytest.CaptureFixture[str],
    meters: list[Any],
) -> None:
    catalog = FileSystemCatalog(wh)
    small_table(catalog, commits=6)
    out = _run([argv[0], "--warehouse", wh, *argv[1:]], capsys)
    [row] = ledger_rows(catalog)
    assert (row["table_name"], row["action"], row["entry_point"]) == (table, action, "spark_job")
    assert row["status"] == ("dry_run" if "--dry-run" in argv else "success"), row["error"]
    if action != "remove_orphan_files":
        result = out["tables"][0] if action == "compact_database" else out
        assert (row["files_read"], row["files_written"], row["bytes_written"]) == (
            result["files_read"],
            result["files_written"],
            result["bytes_written"],
        )
        assert row["files_read"] == 6 and row["table_files"] == result["files_written"]
        assert row["health_score"] is not None
    workers = sum(m.seconds for m in meters)
    assert meters and workers > 0 and float(row["cpu_seconds"]) > workers


def readme_queries() -> list[str]:
    """The SQL examples of README "### The maintenance ledger"."""
    text = (REPO / "README.md").read_text()
    section = text.split("### The maintenance ledger", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.S)


def test_spark_reads_the_ledger_with_the_readme_queries(spark: SparkSession, wh: str) -> None:
    catalog = FileSystemCatalog(wh)
    for name in ("db.a", "db.b"):
        small_table(catalog, name, commits=6)
    Ledger(catalog).ensure()
    a, b = catalog.get_table("db.a"), catalog.get_table("db.b")
    a.maintenance.compact()
    b.maintenance.compact(dry_run=True)
    b.maintenance.compact()
    a.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    with pytest.raises(Exception, match="99"):
        b.maintenance.rollback_to(99, dry_run=False)
    with ledger_disabled():
        a.write_arrow(rows(500, 10))
    ours = Ledger(catalog).read()
    spark.read.format("paimon").option("warehouse", wh).load(
        "paimon_maintenance.ledger"
    ).createOrReplaceTempView("ledger")
    assert spark.sql("SELECT count(*) AS n FROM ledger").first()["n"] == ours.num_rows == 5  # type: ignore[index]
    cost, per_day = readme_queries()
    got = {r["table_name"]: r.asDict() for r in spark.sql(cost).collect()}
    for name in ("db.a", "db.b"):
        mine = ours.filter(pa.compute.equal(ours.column("table_name"), name))
        assert got[name]["actions"] == mine.num_rows
        assert float(got[name]["cpu_seconds"]) == pytest.approx(
            sum(mine.column("cpu_seconds").to_pylist()), abs=1e-3
        )
        assert float(got[name]["wall_seconds"]) == pytest.approx(
            sum(mine.column("duration_ms").to_pylist()) / 1000, abs=1e-3
        )
    assert (got["db.a"]["failed"], got["db.b"]["failed"]) == (0, 1)
    [day] = [r.asDict() for r in spark.sql(per_day).collect()]
    compactions = [r for r in ours.to_pylist() if r["action"] == "compact" and r["status"] == "success"]
    assert day["compactions"] == len(compactions) == 2
    assert day["bytes_read"] == sum(r["bytes_read"] for r in compactions) > 0
    assert day["files_removed"] == 2 * (6 - 1)
    print("\n" + "\n".join(str(r.asDict()) for r in spark.sql(cost).collect()))
    print("\n".join(str(r.asDict()) for r in spark.sql(per_day).collect()))
