"""Acceptance checks of the Spark layer (issue 4) that no other integration test makes.

* a streaming query (``paimon`` source -> ``paimon`` sink) SIGKILLed in the middle of its run and
  restarted from its checkpoint commits every row exactly once (the other test simulates the
  crash by deleting Spark's commit log; this one kills a real query);
* a continuously running queue consumer (``consumer-id``) stopped and resumed by a new query without
  checkpoint reads every row once, and snapshot expiry keeps the snapshots the consumer still needs;
* the issue's own example of a session option through Spark SQL, on a table of the ``default``
  database (Spark's parser needs the key in backquotes: ``SET `paimon.*.default.T.scan...`=v``);
  a name without database (``load("T")``) is ``default.T``;
* jobs: master / driver memory / Spark conf from flags, then environment, local by default; importing
  every job module starts no Spark; a single CSV or JSON *file* (not a directory) is ingested.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.consumer.consumer_manager import Consumer
from spark_jobs import JOBS, ingest
from spark_jobs.common import session as job_session
from spark_jobs.common.args import base_parser, parse_job_args
from spark_jobs.datasource.dynamic_options import table_options_from_session
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, read, rows

# --- streaming: kill -9 a running query, restart it from its checkpoint --------------------------

_PIPELINE = """
import sys
from spark_jobs.common.session import SessionConfig, get_spark

wh, ck = sys.argv[1], sys.argv[2]
spark = get_spark(SessionConfig(master="local[1]", conf={
    "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"}))
spark.sparkContext.setLogLevel("ERROR")
src = (spark.readStream.format("paimon").option("warehouse", wh)
       .option("scan.mode", "from-snapshot").option("scan.snapshot-id", "1")
       .option("read.stream.maxFilesPerTrigger", "1").load("db.src"))
w = src.writeStream.format("paimon").option("warehouse", wh).option("checkpointLocation", ck)
w.trigger(processingTime="200 milliseconds").start("db.dst").awaitTermination()
"""


def _pipeline(wh: str, ck: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    env["PAIMON_LOG_LEVEL"] = "WARNING"
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", _PIPELINE, wh, str(ck)],
            stdout=out,
            stderr=out,
            env=env,
            cwd=str(ck.parent),
            start_new_session=True,  # its own process group: the JVM and Python workers die with it
        )


def _snapshot_count(wh: str, table: str) -> int:
    return len(FileSystemCatalog(wh).get_table(table).snapshot_manager.list_snapshot_ids())


def _batch_ids(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.glob("[0-9]*")} if folder.exists() else set()


def test_streaming_query_killed_mid_run_restarts_exactly_once(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    c = catalog(wh)
    src = c.create_table("db.src", EVENTS_SCHEMA)
    for i in range(8):  # 8 snapshots of one file each: 8 micro-batches of maxFilesPerTrigger=1
        src.write_arrow(events(10, start=10 * i))
    c.create_table("db.dst", EVENTS_SCHEMA)
    ck, log = tmp_path / "ck", tmp_path / "pipeline.log"
    proc = _pipeline(wh, ck, log)
    try:
        deadline = time.monotonic() + 120
        while _snapshot_count(wh, "db.dst") < 3:  # kill right after the 3rd paimon commit
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    killed_at = _snapshot_count(wh, "db.dst")
    assert 3 <= killed_at < 8, "the query was not killed in the middle of its run"
    logged, done = _batch_ids(ck / "offsets"), _batch_ids(ck / "commits")
    print(f"killed after {killed_at} paimon commits; batches logged {sorted(logged)}, done {sorted(done)}")
    assert len(done) < 8 and done <= logged
    # restart from the same checkpoint (here, in the test's session) and run to the end
    df = (
        spark.readStream.format("paimon")
        .option("warehouse", wh)
        .options(**{"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
        .option("read.stream.maxFilesPerTrigger", "1")
        .load("db.src")
    )
    w = df.writeStream.format("paimon").option("warehouse", wh).option("checkpointLocation", str(ck))
    w.trigger(availableNow=True).start("db.dst").awaitTermination(120)
    assert core_rows(wh, "db.dst", "id") == [(i,) for i in range(80)], (killed_at, logged, done)
    snaps = list(FileSystemCatalog(wh).get_table("db.dst").snapshot_manager.snapshots())
    assert len({s.commit_user for s in snaps}) == 1 and snaps[0].commit_user.startswith("spark-stream-")
    assert [s.commit_identifier for s in snaps] == list(range(8))  # batch ids, each committed once


# --- streaming: a queue consumer stopped and resumed; expiry respects it ---------------------------


def _consume(spark: SparkSession, wh: str, checkpoint: Path, seen: list[int], commit: Any) -> None:
    """A running query (default trigger) consuming db.q as consumer 'c'; ``commit()`` adds rows
    while it runs; stopped after everything is processed."""
    df = (
        spark.readStream.format("paimon")
        .option("warehouse", wh)
        .option("consumer-id", "c")
        .option("read.stream.maxFilesPerTrigger", "1")
        .load("db.q")
    )
    q = (
        df.writeStream.foreachBatch(lambda b, _i: seen.extend(r[0] for r in b.select("id").collect()))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        q.processAllAvailable()
        commit()
        q.processAllAvailable()
    finally:
        q.stop()


def test_queue_consumer_resumes_where_it_stopped_and_holds_expiry(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    t = catalog(wh).create_table("db.q", EVENTS_SCHEMA)
    t.write_arrow(events(10))  # snapshot 1
    seen: list[int] = []
    _consume(spark, wh, tmp_path / "a", seen, lambda: t.write_arrow(events(10, start=10)))  # snapshot 2
    assert sorted(seen) == list(range(20))
    assert t.consumer_manager.consumer("c") == Consumer(3)  # progress in the table's consumer file
    for i in range(2, 5):  # snapshots 3..5 while nobody reads
        t.write_arrow(events(10, start=10 * i))
    expired = t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than=4_102_444_800_000)
    assert t.snapshot_manager.list_snapshot_ids() == [3, 4, 5], expired  # the consumer's range is kept
    seen2: list[int] = []
    _consume(spark, wh, tmp_path / "b", seen2, lambda: t.write_arrow(events(10, start=50)))  # snapshot 6
    assert sorted(seen2) == list(range(20, 60))  # nothing lost, nothing read twice
    assert t.consumer_manager.consumer("c") == Consumer(7)


# --- session options: the SET example -------------------------------------------------------


@pytest.fixture
def default_t(wh: str) -> Iterator[tuple[FileSystemCatalog, int]]:
    c = FileSystemCatalog(wh)
    c.create_database("default", ignore_if_exists=True)
    t = c.create_table("default.T", EVENTS_SCHEMA)
    t.write_arrow(events(5))
    time.sleep(0.01)
    middle = t.latest_snapshot().time_millis  # type: ignore[union-attr]
    time.sleep(0.01)
    t.write_arrow(events(5, start=5))
    yield c, middle


def test_sql_set_session_option_time_travels_a_default_database_table(
    spark: SparkSession, wh: str, default_t: tuple[FileSystemCatalog, int]
) -> None:
    _, middle = default_t
    key = "paimon.*.default.T.scan.timestamp-millis"
    spark.sql(f"SET `{key}`={middle}")  # `*` needs backquotes in Spark SQL
    try:
        assert rows(read(spark, wh, "default.T"), "id") == [(i,) for i in range(5)]
        later = str(middle + 10**9)
        assert rows(read(spark, wh, "default.T", **{"scan.timestamp-millis": later}), "id") == [
            (i,) for i in range(10)
        ]  # the reader's option wins (another time-travel key would conflict, as in Paimon)
    finally:
        spark.sql(f"RESET `{key}`")
    assert rows(read(spark, wh, "default.T"), "id") == [(i,) for i in range(10)]
    # `*` stands for any one part, the table included
    conf = {"paimon.paimon.default.*.scan.snapshot-id": "1", "paimon.*.other.*.scan.mode": "latest"}
    assert table_options_from_session(conf, "paimon", "default", "T") == {"scan.snapshot-id": "1"}


# --- jobs ------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self) -> None:
        self.settings: dict[str, str] = {}

    def appName(self, name: str) -> _Builder:  # noqa: N802 - Spark's name
        self.settings["app"] = name
        return self

    def master(self, master: str) -> _Builder:
        self.settings["master"] = master
        return self

    def config(self, key: str, value: str) -> _Builder:
        self.settings[key] = value
        return self

    def getOrCreate(self) -> Any:  # noqa: N802 - Spark's name
        class _Conf:
            def set(self, key: str, value: str) -> None:
                pass

        class _Context:
            master = "fake"

        class _Spark:
            conf = _Conf()
            sparkContext = _Context()
            version = "fake"

        return _Spark()


def _session_settings(monkeypatch: pytest.MonkeyPatch, *flags: str) -> dict[str, str]:
    """What ``get_spark`` asks the SparkSession builder for, for a job run with ``flags``."""
    import pyspark.sql

    import spark_jobs.datasource.dynamic_options as dyn

    builder = _Builder()

    class _Session:
        @classmethod
        def getActiveSession(cls) -> None:  # noqa: N802 - Spark's name
            return None

    _Session.builder = builder  # type: ignore[attr-defined]
    monkeypatch.setattr(pyspark.sql, "SparkSession", _Session)
    monkeypatch.setattr(dyn, "enable_session_options", lambda spark: None)
    config, _ = parse_job_args(
        "x", base_parser("x", "test"), ["--warehouse", "/w", "--table", "db.t", *flags]
    )
    job_session.get_spark(config.session_config())
    return builder.settings


def test_job_session_settings_come_from_flags_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SPARK_MASTER", "SPARK_DRIVER_MEMORY", "PAIMON_SPARK_CONF", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(var, raising=False)
    plain = _session_settings(monkeypatch)
    assert plain["master"] == "local[*]" and "spark.driver.memory" not in plain  # local by default
    monkeypatch.setenv("SPARK_MASTER", "local[3]")
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    monkeypatch.setenv("PAIMON_SPARK_CONF", "spark.a=env spark.b=env")
    env = _session_settings(monkeypatch)
    assert env["master"] == "local[3]" and env["spark.driver.memory"] == "3g"
    assert env["spark.a"] == "env" and env["spark.b"] == "env"
    flags = _session_settings(
        monkeypatch,
        "--master",
        "local[1]",
        "--driver-memory",
        "1g",
        "--conf",
        "spark.a=flag",
        "--app-name",
        "n",
    )
    assert flags["master"] == "local[1]" and flags["spark.driver.memory"] == "1g" and flags["app"] == "n"
    assert flags["spark.a"] == "flag" and flags["spark.b"] == "env"  # flags win over the environment


def test_importing_every_job_module_starts_no_spark() -> None:
    script = (
        "import importlib, sys\n"
        f"for m in {sorted(set(JOBS.values()) | {'spark_jobs.__main__', 'spark_jobs.datasource'})!r}:\n"
        "    importlib.import_module(m)\n"
        "from pyspark import SparkContext\n"
        "assert SparkContext._active_spark_context is None and SparkContext._gateway is None\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd="/"
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_ingest_single_csv_and_json_files(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    import pyarrow.csv as pacsv

    csv_file = tmp_path / "day1.csv"
    pacsv.write_csv(events(4), csv_file)
    json_file = tmp_path / "day2.json"
    json_file.write_text("\n".join(json.dumps(r) for r in events(3, start=4).to_pylist()))

    def run(source: Path, run_id: str) -> dict[str, Any]:
        plan = ingest.parse_args(
            ["--warehouse", wh, "--table", "db.ing", "--source", str(source), "--run-id", run_id]
        )
        return ingest.run(spark, plan)

    assert run(csv_file, "r1")["delta_record_count"] == 4
    assert run(json_file, "r2")["delta_record_count"] == 3
    assert core_rows(wh, "db.ing", "id") == [(i,) for i in range(7)]
    assert rows(read(spark, wh, "db.ing"), "id") == [(i,) for i in range(7)]


def test_table_name_without_database_is_in_default(
    spark: SparkSession, wh: str, default_t: tuple[FileSystemCatalog, int]
) -> None:
    assert rows(read(spark, wh, "T"), "id") == [(i,) for i in range(10)]
