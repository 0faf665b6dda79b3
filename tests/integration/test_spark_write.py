"""Batch writes through the ``paimon`` Spark data source: modes, routing, idempotency, failures."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_core import FileSystemCatalog
from spark_jobs.datasource import write_table
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, read, rows


def _df(spark: SparkSession, data: pa.Table, partitions: int = 2) -> DataFrame:
    return spark.createDataFrame(data.to_pandas()).repartition(partitions)


def _save(df: DataFrame, wh: str, table: str, mode: str = "append", **options: str) -> None:
    w = df.write.format("paimon").mode(mode).option("warehouse", wh)
    for k, v in options.items():
        w = w.option(k, v)
    w.save(table)


def _data_files(wh: str, table: str) -> set[str]:
    root = Path(wh) / "db.db" / table.split(".")[1]
    return {str(p.relative_to(root)) for p in root.rglob("data-*")}


def _live_files(wh: str, table: str) -> set[str]:
    t = FileSystemCatalog(wh).get_table(table)
    out = set()
    for s in t.new_read_builder().plan().splits:
        rel = s.bucket_path[len(t.path) + 1 :]
        out |= {f"{rel}/{f.file_name}" for f in s.files}
    return out


def test_append_then_overwrite_dynamic_static_and_whole(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.t", EVENTS_SCHEMA, partition_keys=["dt"])
    _save(_df(spark, events(30)), wh, "db.t")
    _save(_df(spark, events(30, start=30)), wh, "db.t")
    assert core_rows(wh, "db.t", "id") == [(i,) for i in range(60)]
    # dynamic (the table default): only 2024-01-02 is replaced
    _save(
        _df(spark, events(1, start=1000).set_column(1, "dt", pa.array(["2024-01-02"]))),
        wh,
        "db.t",
        "overwrite",
    )
    by_dt = Counter(r[0] for r in core_rows(wh, "db.t", "dt"))
    assert by_dt == {"2024-01-01": 20, "2024-01-02": 1, "2024-01-03": 20}
    # static partition
    one = events(3, start=2000).set_column(1, "dt", pa.array(["2024-01-03"] * 3))
    _save(_df(spark, one), wh, "db.t", "overwrite", **{"overwrite-partition": "dt=2024-01-03"})
    assert Counter(r[0] for r in core_rows(wh, "db.t", "dt")) == {
        "2024-01-01": 20,
        "2024-01-02": 1,
        "2024-01-03": 3,
    }
    # a row outside the static partition is refused (as in the core)
    with pytest.raises(Exception, match="belongs to partition"):
        _save(_df(spark, events(1)), wh, "db.t", "overwrite", **{"overwrite-partition": "dt=2024-01-03"})
    # whole table
    _save(
        _df(spark, events(2, start=5000)), wh, "db.t", "overwrite", **{"dynamic-partition-overwrite": "false"}
    )
    assert core_rows(wh, "db.t", "id") == [(5000,), (5001,)]
    assert read(spark, wh, "db.t").count() == 2


def test_schema_checks(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.s", EVENTS_SCHEMA)
    df = _df(spark, events(3))
    with pytest.raises(Exception, match=r"unknown column\(s\) \['extra'\]"):
        _save(df.withColumn("extra", df.id), wh, "db.s")
    with pytest.raises(Exception, match=r"missing column\(s\) \['name'\]"):
        _save(df.drop("name"), wh, "db.s")
    with pytest.raises(Exception, match="cannot be cast safely"):
        _save(df.withColumn("id", df.name), wh, "db.s")
    with pytest.raises(Exception, match="'id' is NOT NULL"):
        _save(df.selectExpr("cast(null as bigint) as id", "dt", "v", "name"), wh, "db.s")
    _save(df.select("name", "v", "id", "dt"), wh, "db.s")  # column order does not matter
    assert core_rows(wh, "db.s", "id", "name") == [(0, "n0"), (1, "n1"), (2, "n2")]


def test_commit_user_and_identifier_make_a_write_idempotent(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.i", EVENTS_SCHEMA)
    opts = {"commit-user": "job-a", "commit-identifier": "7"}
    _save(_df(spark, events(10)), wh, "db.i", **opts)
    files = _data_files(wh, "db.i")
    _save(_df(spark, events(10)), wh, "db.i", **opts)  # a retried job: tasks write nothing
    t = FileSystemCatalog(wh).get_table("db.i")
    assert t.latest_snapshot().id == 1  # type: ignore[union-attr]
    assert _data_files(wh, "db.i") == files
    assert len(core_rows(wh, "db.i")) == 10


def test_primary_key_write_routed_by_bucket(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table(
        "db.pk", EVENTS_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "3"}
    )
    write_table(_df(spark, events(300), 4), wh, "db.pk")
    write_table(_df(spark, events(100, start=250, v=10_000.0), 4), wh, "db.pk")  # 50 upserts, 50 inserts
    got = rows(read(spark, wh, "db.pk"), "id", "v")
    want = sorted([(i, i * 0.5) for i in range(250)] + [(i, 10_000.0 + i * 0.5) for i in range(250, 350)])
    assert got == want == core_rows(wh, "db.pk", "id", "v")
    # every (partition, bucket) was written by one task: one file per bucket per commit
    t = FileSystemCatalog(wh).get_table("db.pk")
    for s in t.new_read_builder().plan().splits:
        assert len(s.files) <= 2
        seqs = sorted((f.min_sequence_number, f.max_sequence_number) for f in s.files)
        assert all(a[1] < b[0] for a, b in zip(seqs, seqs[1:], strict=False))  # ordered, not overlapping


def test_unrouted_primary_key_write_is_refused_and_cleaned_up(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    with pytest.raises(Exception, match="sequence numbers would collide"):
        _save(_df(spark, events(200), 4), wh, "db.pk")
    assert FileSystemCatalog(wh).get_table("db.pk").latest_snapshot() is None
    assert _data_files(wh, "db.pk") == set()  # abort deleted the files of every task


def _failing_once(df: DataFrame, marker: str, table_dir: str) -> DataFrame:
    """``df`` whose task for Spark partition 1 fails once, after handing rows to the writer.

    Before failing it records (in ``marker``) the data files on disk at that moment.
    """

    def fail_first_attempt(batches):  # type: ignore[no-untyped-def]
        import time

        from pyspark import TaskContext

        ctx = TaskContext.get()
        doomed = ctx.partitionId() == 1 and ctx.attemptNumber() == 0
        for i, batch in enumerate(batches):
            yield batch
            if doomed and i == 100:  # ~5000 rows: past the workers' stream buffers
                import pathlib

                def on_disk() -> list[str]:
                    return [str(p.relative_to(table_dir)) for p in pathlib.Path(table_dir).rglob("data-*")]

                deadline = time.monotonic() + 15
                # wait until the writer of this attempt has files too (one uuid per writer)
                while len({f.rsplit("/", 1)[-1][:41] for f in on_disk()}) < 2 and time.monotonic() < deadline:
                    time.sleep(0.1)
                pathlib.Path(marker).write_text("\n".join(on_disk()))
                raise RuntimeError("injected task failure")

    def batched(batches):  # type: ignore[no-untyped-def]
        for b in batches:
            for offset in range(0, b.num_rows, 50):
                yield b.slice(offset, 50)

    return df.mapInArrow(batched, df.schema).mapInArrow(fail_first_attempt, df.schema)


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "primary-key"])
def test_task_failure_leaves_no_duplicates(
    spark: SparkSession, wh: str, tmp_path: Path, primary_key: bool
) -> None:
    # write-only: one APPEND snapshot (a compacting writer would add a COMPACT one)
    options = {"write-buffer-size": "64 kb", "bucket": "2", "write-only": "true"} if primary_key else {}
    catalog(wh).create_table(
        "db.f", EVENTS_SCHEMA, primary_keys=["id"] if primary_key else [], options=options
    )
    marker = str(tmp_path / "failed-once")
    table_dir = str(Path(wh) / "db.db" / "f")
    df = _failing_once(_df(spark, events(20000), 2), marker, table_dir)
    if primary_key:
        # route first, then fail inside the write stage
        from spark_jobs.datasource.routing import distribute_for_table

        routed = distribute_for_table(
            _df(spark, events(20000), 2), FileSystemCatalog(wh).get_table("db.f"), num_partitions=2
        )
        df = _failing_once(routed, marker, table_dir)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"  # small batches reach the writer before the failure
    spark.conf.set(key, "50")
    try:
        _save(df, wh, "db.f", **{"write.batch-rows": "50"})
    finally:
        spark.conf.unset(key)
    assert os.path.exists(marker), "the injected failure did not happen"
    ids = [r[0] for r in core_rows(wh, "db.f", "id")]
    assert ids == list(range(20000))  # every row exactly once
    assert read(spark, wh, "db.f").count() == 20000
    snap = FileSystemCatalog(wh).get_table("db.f").latest_snapshot()
    assert snap is not None and snap.id == 1 and snap.total_record_count == 20000
    # the failed attempt had written files; none of them is committed (deleted, or orphans for cleanup)
    written_before_failure = set(Path(marker).read_text().split())
    assert written_before_failure, "the failed attempt wrote no file: the test proves nothing"
    live = _live_files(wh, "db.f")
    assert live <= _data_files(wh, "db.f")
    assert written_before_failure - live
