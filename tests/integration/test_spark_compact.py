"""The ``compact`` job: planned on the driver, one Spark task per bucket on the executors, one
COMPACT commit on the driver; the same result as the local mode; a retried run commits nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable
from spark_jobs import compact as job
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_USAGE, exit_code_for

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def _table(wh: str, name: str = "db.t", **options: str) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table(name, SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "3", "write-only": "true", **options})
    for k in range(5):
        ids = list(range(k * 30, k * 30 + 90))
        t.write_arrow(pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [k] * len(ids)}, schema=SCHEMA))
    return t


def _rows(t: FileStoreTable) -> list[tuple[int, str, int]]:
    got = t.to_arrow().sort_by("id")
    return list(zip(got["id"].to_pylist(), got["dt"].to_pylist(), got["v"].to_pylist(), strict=True))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = job.main(list(argv))
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    return code, json.loads(lines[0])


def test_distributed_compaction_commits_once(spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh)
    want = _rows(t)
    code, plan = _run(capsys, "--warehouse", wh, "--table", "db.t", "--dry-run")
    assert code == 0 and plan["dry_run"] is True and plan["tasks"] == 6 and plan["snapshot_id"] is None
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.t", "--commit_user", "af-1", "--commit_identifier", "3")
    assert code == 0 and out["status"] == "ok" and out["mode"] == "distributed"
    assert out["tasks"] == 6 and out["files_written"] == 6 and out["snapshot_ids"] == [6]
    t = FileSystemCatalog(wh).get_table("db.t")
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT and _rows(t) == want
    assert {e.file.level for e in t.new_file_store_scan().live_entries(snap)} == {5}
    # the same task retried (Airflow): nothing happens
    code, again = _run(capsys, "--warehouse", wh, "--table", "db.t", "--commit_user", "af-1", "--commit_identifier", "3")
    assert code == 0 and again["already_committed"] is True and t.latest_snapshot() == snap
    assert spark.sparkContext._jsc is not None  # main() left the shared session running


def test_partitions_minor_and_local_mode(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh, **{"num-sorted-run.compaction-trigger": "3"})
    want = _rows(t)
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.t", "--mode", "local", "dt=d0", "minor")
    assert code == 0 and out["mode"] == "local" and {b["partition"] for b in out["buckets"]} == {"dt=d0"}
    assert all(b["sorted_runs_after"] < b["sorted_runs_before"] for b in out["buckets"])
    assert _rows(FileSystemCatalog(wh).get_table("db.t")) == want


def test_bad_arguments_exit_2_and_change_nothing(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh)
    latest = t.latest_snapshot()
    for args, message in [
        (["--compact_strategy", "major"], "compact_strategy"),
        (["--where", "id > 3"], "partition columns"),
        (["--order_strategy", "zorder", "--order_by", "id"], "sort compaction"),
        (["--buckets", "a"], "--buckets"),
        (["--commit_identifier", "3"], "needs --commit_user"),
    ]:
        code, out = _run(capsys, "--warehouse", wh, "--table", "db.t", "--mode", "local", *args)
        assert code in (EXIT_TERMINAL, EXIT_USAGE) and out["status"] == "error" and message in out["error"], (args, out)
        assert out["retryable"] is False
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.missing", "--mode", "local")
    assert code == EXIT_TERMINAL and "does not exist" in out["error"] and out["retryable"] is False
    assert FileSystemCatalog(wh).get_table("db.t").latest_snapshot() == latest


def test_cli_local_mode_runs_without_spark(wh: str) -> None:
    _table(wh)
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, spark_jobs.__main__ as m; r = m.main(sys.argv[1:]); "
         "assert 'pyspark' not in sys.modules; sys.exit(r)",
         "compact", "--warehouse", wh, "--table", "db.t", "--mode", "local"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip())["files_written"] == 6


def test_compact_database_reports_a_failing_table_and_compacts_the_rest(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from spark_jobs import compact_database

    _table(wh, "db.a")
    _table(wh, "db.b_tmp")
    broken = _table(wh, "db.dv")  # a data file is gone: its compaction fails
    lost = broken.new_file_store_scan().live_entries(broken.latest_snapshot())[0]
    broken.file_io.delete(f"{broken.bucket_path(lost.partition, lost.bucket)}/{lost.file.file_name}")
    cat = FileSystemCatalog(wh)
    cat.create_database("other")
    _table(wh, "other.c")
    code = compact_database.main(
        ["--warehouse", wh, "--execution", "local", "--including_databases", "db", "--excluding_tables", r".*_tmp",
         "--commit_user", "af"]
    )
    out = json.loads(capsys.readouterr().out.strip())
    assert code == exit_code_for(out["retryable"]) and out["status"] == "error" and out["failed_tables"] == ["db.dv"]
    assert "does not exist" in next(t["error"] for t in out["tables"] if t["table"] == "db.dv")
    assert [t["table"] for t in out["tables"]] == ["db.a", "db.dv"] and out["compacted_tables"] == 1
    assert cat.get_table("db.a").latest_snapshot().commit_kind == CommitKind.COMPACT  # type: ignore[union-attr]
    for untouched in ("db.b_tmp", "other.c"):
        assert cat.get_table(untouched).latest_snapshot().commit_kind == CommitKind.APPEND  # type: ignore[union-attr]
    # a retry of the same run skips what it already compacted
    code = compact_database.main(["--warehouse", wh, "--execution", "local", "--including_tables", r"db\.a", "--commit_user", "af"])
    again = json.loads(capsys.readouterr().out.strip())
    assert code == 0 and again["tables"][0]["already_committed"] is True
    assert compact_database.main(["--warehouse", wh, "--mode", "sideways"]) == 2
    assert "divided or combined" in json.loads(capsys.readouterr().out.strip())["error"]
