"""Partition procedure jobs: expire_partitions and mark_partition_done (``python -m spark_jobs <job>``,
Paimon's argument names and order): documented behaviour, bad inputs (clear error, exit code,
table metadata unchanged), and pypaimon reading the table after expiry."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.table.table import FileStoreTable
from spark_jobs import JOBS
from spark_jobs import expire_partitions as expire_job
from spark_jobs import mark_partition_done as mark_done_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import cli, ids, metadata_state, reload, run_job

# Long past (expire with '1 d' whatever today is) and far future (never expire).
DAYS = ["20000101", "20000102", "20000103", "29990101"]


def _table(wh: str, options: dict[str, str] | None = None) -> FileStoreTable:
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hh", pa.int32())])
    t = catalog.create_table("db.t", schema, partition_keys=["dt", "hh"], options=options)
    n = len(DAYS)
    t.write_arrow(
        pa.table({"id": pa.array(range(n), pa.int64()), "dt": DAYS, "hh": pa.array([1] * n, pa.int32())}, schema=schema)
    )
    return t


@pytest.mark.parametrize("job", ["expire_partitions", "mark_partition_done"])
def test_jobs_are_registered_and_start_no_spark(job: str, wh: str) -> None:
    assert JOBS[job] == f"spark_jobs.{job}"
    module = importlib.import_module(JOBS[job])
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0
    _table(wh)
    args = ["1 d", "yyyyMMdd", "--dry-run"] if job == "expire_partitions" else ["dt=20000101"]
    script = (
        "import sys\n"
        "from spark_jobs.__main__ import main\n"
        f"rc = main({[job, '--warehouse', wh, '--table', 'db.t', *args]!r})\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'))\n"
        "assert not loaded, loaded\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.interop
def test_expire_partitions_dry_run_then_cli_run_read_by_pypaimon(
    wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    _table(wh)
    before = metadata_state(wh)
    rc, out = run_job(
        expire_job, wh, "--expiration-time", "1 d", "--timestamp-formatter", "yyyyMMdd", "--dry-run", capsys=capsys
    )
    assert rc == 0 and out["status"] == "ok" and out["job"] == "expire_partitions" and out["dry_run"] is True
    names = [p["partition"] for p in out["expired_partitions"]]
    assert names == ["dt=20000101, hh=1", "dt=20000102, hh=1", "dt=20000103, hh=1"]
    # Paimon's order, positionally: expiration_time, timestamp_formatter, timestamp_pattern,
    # expire_strategy, max_expires, dry_run
    rc, out = run_job(expire_job, wh, "1 d", "yyyyMMdd", "$dt", "values-time", "2", "true", capsys=capsys)
    assert rc == 0 and [p["partition"] for p in out["expired_partitions"]] == names[:2]
    assert metadata_state(wh) == before

    rc, out = cli(
        "expire_partitions", "--warehouse", wh, "--table", "db.t", "1 d", "yyyyMMdd", "--max-expires", "2"
    )
    assert rc == 0 and out["status"] == "ok" and out["dry_run"] is False
    assert [p["partition"] for p in out["expired_partitions"]] == names[:2]
    assert out["snapshot_id"] == 2 and out["commit_kind"] == "OVERWRITE" and out["deleted_rows"] == 2
    assert ids(reload(wh)) == [2, 3]
    got = pypaimon.read(wh, "db.t")
    assert sorted(got.column("id").to_pylist()) == [2, 3]
    assert pypaimon.read(wh, "db.t", options={"scan.snapshot-id": 1}).num_rows == 4  # time travel


def test_expire_partitions_update_time_from_table_options(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    _table(wh, {"partition.expiration-strategy": "update-time", "partition.expiration-time": "1 d"})
    rc, out = run_job(expire_job, wh, capsys=capsys)  # every argument from the table's options
    assert rc == 0 and out["strategy"] == "update-time" and out["expired_partitions"] == []  # files are new


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["1 d", "yyyyMMdd", "", "weekly"], EXIT_USAGE, "must not be empty"),
        (["--expiration-time", "1 d", "--expire-strategy", "weekly"], EXIT_FAILURE, "Unknown partition expiration strategy"),
        (["--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd bb"], EXIT_FAILURE, "unknown pattern letter"),
        (["--expiration-time", "one day"], EXIT_FAILURE, "Invalid duration"),
        (["--expiration-time", "1 d", "--max-expires", "many"], EXIT_USAGE, "integer"),
        (["--expiration-time", "1 d", "--dry-run", "maybe"], EXIT_USAGE, "true or false"),
        ([], EXIT_FAILURE, "needs expiration_time"),
    ],
)
def test_expire_partitions_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    _table(wh)
    before = metadata_state(wh)
    rc, out = run_job(expire_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"], out
    assert metadata_state(wh) == before


def test_mark_partition_done_writes_success_files(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    _table(wh)
    rc, out = cli("mark_partition_done", "--warehouse", wh, "--table", "db.t", "dt=20000101,hh=1;dt=29990101")
    assert rc == 0 and out["status"] == "ok" and out["partitions"] == ["dt=20000101/hh=1", "dt=29990101"]
    root = os.path.join(wh, "db.db", "t")
    for rel in ("dt=20000101/hh=1/_SUCCESS", "dt=29990101/_SUCCESS"):
        assert os.path.isfile(os.path.join(root, rel))
    rc, out = run_job(mark_done_job, wh, "--partitions", "dt=20000102,hh=1", capsys=capsys)
    assert rc == 0 and out["success_files"][0].endswith("dt=20000102/hh=1/_SUCCESS")


@pytest.mark.parametrize(
    ("options", "args", "code", "needle"),
    [
        ({}, [], EXIT_USAGE, "partitions"),
        ({}, ["region=eu"], EXIT_FAILURE, "non-partition column"),
        ({"partition.mark-done-action": "done-partition"}, ["dt=20000101"], EXIT_FAILURE, "without metastore"),
    ],
)
def test_mark_partition_done_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], options: dict[str, str], args: list[str], code: int, needle: str
) -> None:
    _table(wh, options)
    rc, out = run_job(mark_done_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"], out
    found = [f for _, _, names in os.walk(os.path.join(wh, "db.db", "t")) for f in names if f == "_SUCCESS"]
    assert found == []


def test_spark_stream_sink_expires_once_the_check_interval_passed(wh: str) -> None:
    """The sink keeps one PartitionExpire across micro-batches (Java's sink): the check interval
    runs from the first commit, not from each micro-batch."""
    import dataclasses

    from paimon_core.utils.clock import ManualClock
    from spark_jobs.datasource.options import SourceOptions
    from spark_jobs.datasource.stream_writer import PaimonStreamWriter
    from spark_jobs.datasource.types import spark_schema

    t = _table(wh, {"partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyyMMdd"})
    opts = SourceOptions.parse({"warehouse": wh, "path": "db.t"})
    writer = PaimonStreamWriter(opts, spark_schema(t.schema.fields), overwrite=False)
    clock = ManualClock(t.clock.now_millis())
    writer.table.clock = writer.table.store.clock = clock  # the store runs the expiry

    def batch(batch_id: int) -> tuple[str, ...]:
        data = pa.table({"id": [100 + batch_id], "dt": ["29990101"], "hh": pa.array([2], pa.int32())})
        msg = writer.write(iter(data.cast(t.arrow_schema).to_batches()))
        writer.commit([dataclasses.replace(msg, query_id="q-1")], batch_id)
        return reload(wh).latest_snapshot().commit_kind.value  # type: ignore[union-attr]

    assert batch(0) == "APPEND"  # the interval (1 h) starts at the first commit
    clock.advance(30 * 60_000)
    assert batch(1) == "APPEND"
    clock.advance(31 * 60_000)
    assert batch(2) == "OVERWRITE"  # checked: the year-2000 partitions dropped after batch 2
    assert ids(reload(wh)) == [3, 100, 101, 102]
