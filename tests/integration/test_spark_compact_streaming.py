"""Issue 11: ``compact --streaming`` (rounds while a writer writes, SIGTERM, restart without a duplicate
commit, Spark tasks per unit), ``compact_manifest`` (pypaimon reads the table after) and
``precommit-compact`` on a Spark write (fewer files, same rows)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable
from spark_jobs import compact as job
from spark_jobs import compact_manifest
from spark_jobs.datasource import write_table
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, rows
from tests.interop.peers import Peer

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])
ROOT = Path(__file__).resolve().parents[2]


def _table(wh: str, **options: str) -> FileStoreTable:
    opts = {"bucket": "2", "write-only": "true", "num-sorted-run.compaction-trigger": "3", **options}
    return catalog(wh).create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)


def _write(t: FileStoreTable, k: int, want: dict[tuple[int, str], int]) -> None:
    ids = list(range(k * 10, k * 10 + 30))
    data = pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [k] * len(ids)}, schema=SCHEMA)
    t.write_arrow(data)
    want.update({(i, f"d{i % 2}"): k for i in ids})


def _state(wh: str) -> dict[tuple[int, str], int]:
    return {(i, d): v for i, d, v in core_rows(wh, "db.t", "id", "dt", "v")}


def _commits(t: FileStoreTable, user: str) -> list[int]:
    return [s.commit_identifier for s in t.snapshot_manager.snapshots() if s.commit_user == user]


def _one_line(out: str) -> dict[str, Any]:
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    result: dict[str, Any] = json.loads(lines[0])
    return result


def test_streaming_job_stops_on_sigterm_and_resumes_without_a_duplicate_commit(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    t = _table(wh)
    want: dict[tuple[int, str], int] = {}
    _write(t, 0, want)
    argv = ["--warehouse", wh, "--table", "db.t", "--streaming", "--mode", "local", "--commit_user", "job-1"]
    env = {**os.environ, "PAIMON_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "spark_jobs", "compact", *argv, "--discovery_interval", "100 ms"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        k = 1
        while len(_commits(t, "job-1")) < 3 and time.monotonic() < deadline:
            _write(t, k, want)  # the writer keeps writing while the job compacts
            k += 1
            time.sleep(0.1)
        assert len(_commits(t, "job-1")) >= 3, f"no compaction rounds (job exit code {proc.poll()})"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    result = _one_line(out)
    assert result["status"] == "ok" and result["streaming"] is True and result["stopped_by"] == "stop"
    idents = _commits(t, "job-1")
    assert result["commit_identifiers"] == idents == list(range(1, len(idents) + 1))
    assert all(t.snapshot_manager.snapshot(s).commit_kind == CommitKind.COMPACT for s in result["snapshot_ids"])
    assert _state(wh) == want
    # restarted with the same commit user: identifiers continue, none committed twice
    for k2 in range(k, k + 4):
        _write(t, k2, want)
    code = job.main([*argv, "--max_rounds", "2"])
    again = _one_line(capsys.readouterr().out)
    assert code == 0 and again["stopped_by"] == "max_rounds" and again["commits"] == 1
    assert again["commit_identifiers"] == [len(idents) + 1] and _commits(t, "job-1") == [*idents, len(idents) + 1]
    assert _state(wh) == want


def test_bad_streaming_arguments_exit_2_and_change_nothing(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh)
    _write(t, 0, {})
    base = ["--warehouse", wh, "--table", "db.t", "--mode", "local"]
    for args, message in [
        (["--max_rounds", "2"], "only with --streaming"),
        (["--streaming", "--dry-run"], "--dry-run"),
        (["--streaming", "--commit_user", "u", "--commit_identifier", "4"], "--commit_identifier"),
        (["--streaming", "--max_rounds", "0"], "--max_rounds"),
        (["--streaming", "--discovery_interval", "soon"], "discovery_interval"),
    ]:
        code = job.main([*base, *args])
        out = _one_line(capsys.readouterr().out)
        assert code == 2 and out["status"] == "error" and message in out["error"], (args, out)
    assert [s.id for s in t.snapshot_manager.snapshots()] == [1]


def test_streaming_rounds_run_as_spark_tasks(spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh)
    want: dict[tuple[int, str], int] = {}
    for k in range(4):
        _write(t, k, want)

    def writer() -> None:
        for k in range(4, 10):
            time.sleep(0.3)
            _write(t, k, want)

    w = threading.Thread(target=writer)
    w.start()
    try:
        code = job.main(
            ["--warehouse", wh, "--table", "db.t", "--streaming", "--commit_user", "spark-1",
             "--discovery_interval", "200 ms", "--idle_timeout", "1 s"]
        )
    finally:
        w.join()
    result = _one_line(capsys.readouterr().out)
    assert code == 0 and result["mode"] == "distributed" and result["stopped_by"] == "idle_timeout"
    assert result["commits"] >= 2 and result["strategy"] == "minor"
    assert _commits(t, "spark-1") == list(range(1, result["commits"] + 1))
    assert _state(wh) == want
    assert spark.sparkContext._jsc is not None  # the shared session is still running


def test_compact_manifest_job_then_pypaimon_reads(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Peer) -> None:
    t = _table(wh)
    want: dict[tuple[int, str], int] = {}
    for k in range(6):
        _write(t, k, want)
    t.maintenance.compact()
    _write(t, 6, want)
    before = t.latest_snapshot()
    assert before is not None
    n_before = len(t.new_file_store_scan().data_manifests(before))
    code = compact_manifest.main(["--warehouse", wh, "--table", "db.t"])
    result = _one_line(capsys.readouterr().out)
    snap = FileSystemCatalog(wh).get_table("db.t").latest_snapshot()
    assert snap is not None
    assert code == 0 and result["status"] == "ok" and result["snapshot_id"] == snap.id == before.id + 1
    assert result["manifests_before"] == n_before and result["manifests_after"] < n_before
    assert len(t.new_file_store_scan().data_manifests(snap)) == result["manifests_after"]
    assert _state(wh) == want
    theirs = pypaimon.read(wh, "db.t")
    assert {(i, d): v for i, d, v in rows(theirs, "id", "dt", "v")} == want
    code = compact_manifest.main(["--warehouse", wh, "--table", "db.t", "--bogus"])
    bad = _one_line(capsys.readouterr().out)
    assert code == 2 and bad["status"] == "error" and t.latest_snapshot() == snap


def test_precommit_compact_spark_write_has_fewer_files(spark: SparkSession, wh: str) -> None:
    c = catalog(wh)
    c.create_table("db.plain", EVENTS_SCHEMA, partition_keys=["dt"])
    c.create_table("db.merged", EVENTS_SCHEMA, partition_keys=["dt"], options={"precommit-compact": "true"})
    df = spark.createDataFrame(events(600).to_pandas()).repartition(4)
    counts = {}
    for name in ("db.plain", "db.merged"):
        write_table(df, wh, name)
        tb = c.get_table(name)
        counts[name] = len(tb.new_file_store_scan().live_entries(tb.latest_snapshot()))
    assert counts == {"db.plain": 12, "db.merged": 3}  # 4 tasks x 3 days -> one file per day
    assert core_rows(wh, "db.plain") == core_rows(wh, "db.merged") and len(core_rows(wh, "db.merged")) == 600
    merged_dir = Path(wh) / "db.db" / "merged"
    assert len(list(merged_dir.rglob("data-*"))) == 3  # the merged small files were deleted
