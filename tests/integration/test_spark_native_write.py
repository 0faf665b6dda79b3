"""Append tables written by Spark's own Parquet writer (spark_jobs/datasource/native_write.py).

The files must be what paimon_core's Python writer would write for the same rows (same
stats, same partition directories, field ids), read identically by pypaimon, and a failed
write must leave the table unchanged with no file behind.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812

from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.table.table import FileStoreTable
from spark_jobs.datasource import write_table
from spark_jobs.datasource.native_write import native_write_problem
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, rows
from tests.interop.peers import Peer

ALL_TYPES = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(10, 2)),
        ("dec38", pa.decimal128(38, 10)),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
    ]
)


def _all_types(n: int, *, nan: bool = False) -> pa.Table:
    ids = list(range(n))
    return pa.table(
        {
            "id": ids,
            "b": [None if i % 7 == 0 else i % 2 == 0 for i in ids],
            "i8": [i % 100 - 50 for i in ids],
            "i16": [None if i % 5 == 0 else i * 3 - 400 for i in ids],
            "i32": [i * 1000 for i in ids],
            "f": [math.nan if nan and i == 3 else i / 4 for i in ids],
            "d": [None if i % 3 == 0 else -i * 1.5 for i in ids],
            "dec": [decimal.Decimal(i * 7) / 100 for i in ids],
            "dec38": [decimal.Decimal(10**20 + i) / decimal.Decimal(10**10) for i in ids],
            "s": [None if i % 4 == 0 else f"värde-{i:05d}-" + "x" * (i % 30) for i in ids],
            "bin": [bytes([i % 256]) * (i % 20) for i in ids],
            "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
            "ts": [dt.datetime(2024, 1, 1, 12) + dt.timedelta(microseconds=i * 1_000_001) for i in ids],
            "ltz": [dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i) for i in ids],
        },
        schema=ALL_TYPES,
    )


def _entries(table: FileStoreTable) -> list[ManifestEntry]:
    latest = table.snapshot_manager.latest_snapshot()
    return sorted(
        table.new_file_store_scan().live_entries(latest), key=lambda e: (e.partition, e.bucket, e.file.file_name)
    )


def _staging_left(table: FileStoreTable) -> bool:
    return os.path.exists(table.paths.staging_dir.removeprefix("file://"))


def test_files_match_the_python_writers_and_pypaimon_reads_them(
    spark: SparkSession, wh: str, pypaimon: Peer
) -> None:
    c = catalog(wh)
    data = _all_types(200)
    native = c.create_table("db.native", ALL_TYPES)
    python = c.create_table("db.python", ALL_TYPES)
    assert native_write_problem(native) is None
    write_table(spark.createDataFrame(data.to_pandas()).coalesce(1), wh, "db.native", writer="native")
    python.write_arrow(data)

    got, want = _entries(native), _entries(python)
    assert len(got) == len(want) == 1
    g, w = got[0].file, want[0].file
    assert (g.row_count, g.min_sequence_number, g.max_sequence_number, g.level, g.file_source) == (
        w.row_count,
        w.min_sequence_number,
        w.max_sequence_number,
        w.level,
        w.file_source,
    )
    assert g.value_stats == w.value_stats  # min/max/null counts, truncate(16) strings, as the Python writer
    assert g.value_stats_cols == w.value_stats_cols and g.file_name.startswith("data-")
    # Parquet field ids are the Paimon field ids (as Java writes them).
    path = Path(native.bucket_path(b"", 0).removeprefix("file://")) / g.file_name
    arrow_schema = pq.read_schema(path)
    assert [int(f.metadata[b"PARQUET:field_id"]) for f in arrow_schema] == [
        f.id for f in native.schema.fields
    ]

    expected = rows(data)
    assert rows(native.to_arrow()) == expected
    assert rows(pypaimon.read(wh, "db.native")) == rows(pypaimon.read(wh, "db.python")) == expected
    assert not _staging_left(native)


def test_partitioned_writes_prune_and_overwrite(spark: SparkSession, wh: str, pypaimon: Peer) -> None:
    c = catalog(wh)
    schema = EVENTS_SCHEMA.append(pa.field("region", pa.string()))
    table = c.create_table("db.p", schema, partition_keys=["dt", "region"])
    data = events(300).append_column(
        "region", pa.array([None if i % 5 == 0 else f"eu/{i % 2}" for i in range(300)])
    )
    df = spark.createDataFrame(data.to_pandas()).repartition(3)
    write_table(df, wh, "db.p", writer="native")
    # Partition directories exactly as the Python writer names them (escaping, default partition).
    dirs = {e.partition for e in _entries(table)}
    python = c.create_table("db.p_py", schema, partition_keys=["dt", "region"])
    python.write_arrow(data)
    assert dirs == {e.partition for e in _entries(python)}
    assert sorted(table.partition_path(p) for p in dirs) == sorted(python.partition_path(p) for p in dirs)
    assert rows(pypaimon.read(wh, "db.p")) == rows(data)
    plan = (
        table.new_read_builder()
        .with_filter(table.new_read_builder().new_predicate_builder().equal("dt", "2024-01-02"))
        .new_scan()
        .plan()
    )
    assert {s.partition for s in plan.splits} <= {
        p for p in dirs if table.partition_codec.decode(p)[0] == "2024-01-02"
    }

    # Dynamic partition overwrite replaces only the partitions written.
    new = events(10, start=1000, days=1).append_column("region", pa.array(["eu/1"] * 10))
    write_table(spark.createDataFrame(new.to_pandas()), wh, "db.p", mode="overwrite", writer="native")
    kept = [r for r in rows(data) if not (r[1] == "2024-01-01" and r[4] == "eu/1")]
    assert rows(table.to_arrow()) == sorted(kept + rows(new))
    # Static partition overwrite; rows outside the partition are refused, changing nothing.
    before = table.snapshot_manager.latest_snapshot_id()
    with pytest.raises(InvalidArgumentError, match="Overwriting partition"):
        write_table(
            spark.createDataFrame(new.to_pandas()),
            wh,
            "db.p",
            mode="overwrite",
            overwrite_partition={"dt": "2024-01-02"},
            writer="native",
        )
    assert table.snapshot_manager.latest_snapshot_id() == before and not _staging_left(table)
    new2 = new.set_column(1, "dt", pa.array(["2024-01-02"] * 10))
    write_table(
        spark.createDataFrame(new2.to_pandas()),
        wh,
        "db.p",
        mode="overwrite",
        overwrite_partition={"dt": "2024-01-02"},
        writer="native",
    )
    left = [r for r in kept + rows(new) if r[1] != "2024-01-02"]
    assert rows(table.to_arrow()) == sorted(left + rows(new2))
    assert rows(pypaimon.read(wh, "db.p")) == sorted(left + rows(new2))
    # Every data file on disk belongs to a snapshot: the refused write left nothing behind.
    on_disk = {p.name for p in Path(table.path.removeprefix("file://")).rglob("*.parquet")}
    sm, scan = table.snapshot_manager, table.new_file_store_scan()
    referenced = {
        e.file.file_name
        for i in range(1, sm.latest_snapshot_id() + 1)
        for e in scan.live_entries(sm.snapshot(i))
    }
    assert on_disk == referenced


def test_same_commit_user_and_identifier_commits_once(spark: SparkSession, wh: str) -> None:
    table = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    df = spark.createDataFrame(events(50).to_pandas())
    for _ in range(2):
        write_table(df, wh, "db.t", commit_user="ingest-run-1", commit_identifier=7, writer="native")
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert len(core_rows(wh, "db.t", "id")) == 50
    bucket = Path(table.bucket_path(b"", 0).removeprefix("file://"))
    assert len(list(bucket.glob("*.parquet"))) == len(_entries(table))  # the re-run wrote nothing


def test_null_in_not_null_column_changes_nothing(spark: SparkSession, wh: str) -> None:
    table = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    write_table(spark.createDataFrame(events(20).to_pandas()), wh, "db.t", writer="native")
    bucket = Path(table.bucket_path(b"", 0).removeprefix("file://"))
    files = sorted(bucket.glob("*.parquet"))
    nullable = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA])
    bad = (
        events(20, start=100)
        .cast(nullable)
        .set_column(0, pa.field("id", pa.int64()), pa.array([None] * 20, pa.int64()))
    )
    with pytest.raises(SchemaMismatchError, match="'id' is NOT NULL"):
        write_table(
            spark.createDataFrame(bad.to_pandas(), schema="id bigint, dt string, v double, name string"),
            wh,
            "db.t",
            writer="native",
        )
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert sorted(bucket.glob("*.parquet")) == files and not _staging_left(table)


def test_nan_drops_float_stats_like_java(spark: SparkSession, wh: str) -> None:
    c = catalog(wh)
    data = _all_types(10, nan=True)
    native = c.create_table("db.native", ALL_TYPES)
    python = c.create_table("db.python", ALL_TYPES)
    # (pandas NaN would reach Spark as null: make the NaN in Spark.)
    df = spark.createDataFrame(data.to_pandas()).withColumn(
        "f", F.when(F.col("id") == 3, F.lit(math.nan).cast("float")).otherwise(F.col("f"))
    )
    write_table(df.coalesce(1), wh, "db.native", writer="native")
    python.write_arrow(data)
    got = _entries(native)[0].file.value_stats
    assert got == _entries(python)[0].file.value_stats
    assert got.null_counts[5] == 0  # the NaN is a value, and it dropped f's min/max (as Java)
    assert math.isnan(native.to_arrow().column("f")[3].as_py())


def test_ineligible_tables_use_the_data_source_or_refuse(spark: SparkSession, wh: str) -> None:
    c = catalog(wh)
    pk = c.create_table(
        "db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2", "merge-engine": "partial-update"}
    )
    dynamic = c.create_table("db.dyn", EVENTS_SCHEMA, primary_keys=["id"])
    nested = c.create_table("db.nested", pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string()))]))
    millis = c.create_table("db.ms", pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ms"))]))
    assert "merge-engine = partial-update" in (native_write_problem(pk) or "")
    assert "bucket = -1" in (native_write_problem(dynamic) or "")
    assert "nested" in (native_write_problem(nested) or "")
    assert "precision 3" in (native_write_problem(millis) or "")
    df = spark.createDataFrame(events(30).to_pandas())
    with pytest.raises(
        InvalidArgumentError, match="cannot be written by Spark's Parquet writer: merge-engine"
    ):
        write_table(df, wh, "db.pk", writer="native")
    assert pk.snapshot_manager.latest_snapshot_id() is None
    write_table(df, wh, "db.pk")  # auto: the data source
    assert len(core_rows(wh, "db.pk", "id")) == 30


def test_failed_task_attempts_leave_no_duplicates(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    """Spark's commit protocol keeps only each task's successful attempt (local[2,4] retries)."""
    from pyspark.sql.types import LongType

    def fail_first_attempt(v):  # type: ignore[no-untyped-def]  # (Spark infers UDF kinds from real hints)
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() == 1 and v % 50 == 49:
            Path(marker).touch()
            raise RuntimeError("injected task failure")
        return v

    marker = str(tmp_path / "failed-once")
    table = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    df = spark.createDataFrame(events(400).to_pandas()).repartition(3)
    df = df.withColumn("id", F.udf(fail_first_attempt, LongType())(F.col("id")))
    write_table(df, wh, "db.t", writer="native")
    assert Path(marker).exists()  # an attempt did fail
    ids = [r[0] for r in core_rows(wh, "db.t", "id")]
    assert sorted(ids) == list(range(400))
    bucket = Path(table.bucket_path(b"", 0).removeprefix("file://"))
    assert {p.name for p in bucket.glob("*.parquet")} == {e.file.file_name for e in _entries(table)}
    assert not _staging_left(table)


def _bucket_files(table: FileStoreTable) -> set[str]:
    root = Path(table.path.removeprefix("file://"))
    return {p.name for p in root.rglob("bucket-*/*.parquet")}


def test_primary_key_files_match_the_python_writers_and_merge_on_read(
    spark: SparkSession, wh: str, pypaimon: Peer
) -> None:
    c = catalog(wh)
    opts = {"bucket": "4"}
    native = c.create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options=opts)
    python = c.create_table("db.pk_py", EVENTS_SCHEMA, primary_keys=["id"], options=opts)
    assert native_write_problem(native) is None
    data = events(500)
    write_table(spark.createDataFrame(data.to_pandas()).repartition(3), wh, "db.pk", writer="native")
    python.write_arrow(data)
    got, want = _entries(native), _entries(python)
    assert [e.bucket for e in got] == [e.bucket for e in want] == [0, 1, 2, 3]  # one file per bucket
    for g, w in zip(got, want, strict=True):
        assert (g.file.row_count, g.file.min_key, g.file.max_key) == (
            w.file.row_count,
            w.file.min_key,
            w.file.max_key,
        )
        assert (g.file.key_stats, g.file.value_stats, g.file.level) == (
            w.file.key_stats,
            w.file.value_stats,
            0,
        )
        assert g.file.max_sequence_number - g.file.min_sequence_number >= g.file.row_count - 1
    schema = pq.read_schema(Path(native.bucket_path(b"", 0).removeprefix("file://")) / got[0].file.file_name)
    assert schema.names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "dt", "v", "name"]

    # An upsert (unique keys) through Spark again: newer sequence numbers win on read.
    upd = events(100, start=450, v=1e6)
    write_table(
        spark.createDataFrame(upd.to_pandas()).repartition(2), wh, "db.pk", writer="native", num_partitions=2
    )  # 2 tasks for 4 buckets: each task writes whole buckets
    added = [e for e in _entries(native) if e.file.file_name not in {x.file.file_name for x in got}]
    assert sorted(e.bucket for e in added) == sorted({e.bucket for e in added})  # one new file per bucket
    first_max = max(e.file.max_sequence_number for e in got)
    assert (
        min(
            e.file.min_sequence_number
            for e in _entries(native)
            if e.file.file_name not in {x.file.file_name for x in got}
        )
        > first_max
    )
    python.write_arrow(upd)
    expected = rows(python.to_arrow())
    assert len(expected) == 550 and rows(native.to_arrow()) == expected
    assert rows(pypaimon.read(wh, "db.pk")) == expected


def test_partitioned_primary_key_table_and_overwrite(spark: SparkSession, wh: str, pypaimon: Peer) -> None:
    c = catalog(wh)
    table = c.create_table(
        "db.pk", EVENTS_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"}
    )
    data = events(300)
    write_table(spark.createDataFrame(data.to_pandas()).repartition(4), wh, "db.pk", writer="native")
    entries = _entries(table)
    assert (
        len({(e.partition, e.bucket) for e in entries}) == len(entries) == 6
    )  # 3 days x 2 buckets, one file each
    assert rows(pypaimon.read(wh, "db.pk")) == rows(data)
    new = events(5, start=1000, days=1)
    write_table(spark.createDataFrame(new.to_pandas()), wh, "db.pk", mode="overwrite", writer="native")
    expected = sorted([r for r in rows(data) if r[1] != "2024-01-01"] + rows(new))
    assert rows(table.to_arrow()) == rows(pypaimon.read(wh, "db.pk")) == expected


def test_repeated_keys_fall_back_to_the_data_source(spark: SparkSession, wh: str) -> None:
    table = catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    first, second = events(50), events(50, v=7.0)  # the same keys twice in one DataFrame (one task: ordered)
    df = spark.createDataFrame(pa.concat_tables([first, second]).to_pandas()).coalesce(1)
    write_table(df, wh, "db.pk", writer="native")
    assert table.snapshot_manager.latest_snapshot_id() == 1  # one commit, by the data source
    assert rows(table.to_arrow()) == rows(second)  # the later row of each key wins
    assert _bucket_files(table) == {e.file.file_name for e in _entries(table)} and not _staging_left(table)


def test_schema_checks_change_nothing(spark: SparkSession, wh: str) -> None:
    table = catalog(wh).create_table("db.s", EVENTS_SCHEMA)
    df = spark.createDataFrame(events(3).to_pandas())
    with pytest.raises(SchemaMismatchError, match=r"unknown column\(s\) \['extra'\]"):
        write_table(df.withColumn("extra", df.id), wh, "db.s", writer="native")
    with pytest.raises(SchemaMismatchError, match=r"missing column\(s\) \['name'\]"):
        write_table(df.drop("name"), wh, "db.s", writer="native")
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):  # Spark's ANSI cast refuses 'n0' as BIGINT
        write_table(df.withColumn("id", df.name), wh, "db.s", writer="native")
    assert table.snapshot_manager.latest_snapshot_id() is None and not _staging_left(table)
    assert not _bucket_files(table)
    write_table(df.select("name", "v", "id", "dt"), wh, "db.s", writer="native")  # column order does not matter
    assert core_rows(wh, "db.s", "id", "name") == [(0, "n0"), (1, "n1"), (2, "n2")]


@pytest.mark.parametrize("writer", ["native", "datasource"])
def test_empty_writes_behave_like_the_data_source(spark: SparkSession, wh: str, writer: str) -> None:
    table = catalog(wh).create_table("db.e", EVENTS_SCHEMA, partition_keys=["dt"])
    write_table(spark.createDataFrame(events(30).to_pandas()), wh, "db.e", writer=writer)
    empty = spark.createDataFrame(events(30).to_pandas()).limit(0)
    write_table(empty, wh, "db.e", writer=writer)  # appending nothing commits nothing
    assert table.snapshot_manager.latest_snapshot_id() == 1
    write_table(empty, wh, "db.e", mode="overwrite", overwrite_partition={"dt": "2024-01-02"}, writer=writer)
    assert sorted({r[0] for r in core_rows(wh, "db.e", "dt")}) == ["2024-01-01", "2024-01-03"]
    assert not _staging_left(table)


@pytest.mark.parametrize("published", [False, True])
def test_an_error_in_the_commit_keeps_exactly_the_files_of_a_published_snapshot(
    spark: SparkSession, wh: str, published: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_core.table.builders import BatchTableCommit

    table = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    real = BatchTableCommit.commit

    def failing(self: BatchTableCommit, messages: object, ident: int) -> object:
        if published:
            real(self, messages, ident)  # type: ignore[arg-type]
        raise OSError("connection lost after the publish" if published else "store unavailable")

    monkeypatch.setattr(BatchTableCommit, "commit", failing)
    with pytest.raises(OSError):
        write_table(spark.createDataFrame(events(40).to_pandas()), wh, "db.t", writer="native")
    if published:  # the snapshot landed: its files must all still be there
        assert table.snapshot_manager.latest_snapshot_id() == 1
        assert _bucket_files(table) == {e.file.file_name for e in _entries(table)} != set()
        assert len(core_rows(wh, "db.t", "id")) == 40
    else:  # nothing was published: nothing is left
        assert table.snapshot_manager.latest_snapshot_id() is None and not _bucket_files(table)
    assert not _staging_left(table)


def test_a_run_that_loses_the_race_to_its_own_retry_leaves_no_files(
    spark: SparkSession, wh: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pre-check said 'not committed yet', but by commit time the same (user, identifier)
    had landed (a concurrent retry): nothing is committed twice and our files are removed."""
    from paimon_core.table.builders import StreamTableCommit

    table = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    df = spark.createDataFrame(events(30).to_pandas())
    write_table(df, wh, "db.t", commit_user="run-1", commit_identifier=7, writer="native")
    files = _bucket_files(table)
    monkeypatch.setattr(StreamTableCommit, "is_committed", lambda self, ident: False)
    write_table(df, wh, "db.t", commit_user="run-1", commit_identifier=7, writer="native")
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert _bucket_files(table) == files and len(core_rows(wh, "db.t", "id")) == 30


def test_composite_key_tasks_of_one_bucket_match_the_python_writer(spark: SparkSession, wh: str) -> None:
    """Unpartitioned, one task per bucket: files written without bucket directories, sorted by
    (name, id) alone; the bucket each is filed under is the Python writer's for the same keys."""
    c = catalog(wh)
    opts = {"bucket": "3", "bucket-key": "id"}
    native = c.create_table("db.pk", EVENTS_SCHEMA, primary_keys=["name", "id"], options=opts)
    python = c.create_table("db.pk_py", EVENTS_SCHEMA, primary_keys=["name", "id"], options=opts)
    data = events(400)
    write_table(spark.createDataFrame(data.to_pandas()).repartition(4), wh, "db.pk", writer="native")
    python.write_arrow(data)
    got, want = _entries(native), _entries(python)
    assert [e.bucket for e in got] == [e.bucket for e in want] == [0, 1, 2]
    for g, w in zip(got, want, strict=True):
        assert (g.file.row_count, g.file.min_key, g.file.max_key, g.file.key_stats) == (
            w.file.row_count,
            w.file.min_key,
            w.file.max_key,
            w.file.key_stats,
        )
    assert rows(native.to_arrow()) == rows(python.to_arrow())


def _staged_pk_file(tmp_path: Path, keys: list[int]) -> str:
    path = str(tmp_path / "part-00000.parquet")
    n = len(keys)
    pq.write_table(
        pa.table(
            {
                "_KEY_id": pa.array(keys, pa.int64()),
                "_SEQUENCE_NUMBER": pa.array(range(n), pa.int64()),
                "_VALUE_KIND": pa.array([0] * n, pa.int8()),
                "id": pa.array(keys, pa.int64()),
                "dt": ["2024-01-01"] * n,
                "v": [1.0] * n,
                "name": ["x"] * n,
            }
        ),
        path,
    )
    return path


def test_staged_files_out_of_key_order_or_of_two_buckets_are_refused(wh: str, tmp_path: Path) -> None:
    from paimon_core.bucket import compute_buckets
    from paimon_core.exceptions import PaimonError
    from spark_jobs.datasource.native_files import DuplicateKeysError, inspect_staged

    table = catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    key_type = [table.schema.fields_of(["id"])[0].type]
    ids = pa.array(range(200), pa.int64())
    buckets = compute_buckets([ids], key_type, 2)
    one = [int(i) for i, b in zip(ids.to_pylist(), buckets, strict=True) if b == 1]
    assert inspect_staged(_staged_pk_file(tmp_path, one), table, bucket_from_keys=True).bucket == 1
    with pytest.raises(PaimonError, match="not sorted by its primary key"):
        inspect_staged(_staged_pk_file(tmp_path, [one[1], one[0], *one[2:]]), table)
    with pytest.raises(DuplicateKeysError):
        inspect_staged(_staged_pk_file(tmp_path, [one[0], one[0], *one[1:]]), table)
    with pytest.raises(PaimonError, match="rows of buckets \\[0, 1\\]"):
        inspect_staged(_staged_pk_file(tmp_path, list(range(100))), table, bucket_from_keys=True)


@pytest.mark.parametrize("partitioned", [False, True])
def test_fixed_bucket_append_tables_match_the_python_writer(
    spark: SparkSession, wh: str, pypaimon: Peer, partitioned: bool
) -> None:
    """Routed by bucket key (one bucket per task unpartitioned, bucket directories otherwise);
    sequence numbers continue per bucket across writes, as the Python writer's."""
    c = catalog(wh)
    kwargs = {"partition_keys": ["dt"]} if partitioned else {}
    opts = {"bucket": "3", "bucket-key": "id"}
    native = c.create_table("db.fb", EVENTS_SCHEMA, options=opts, **kwargs)  # type: ignore[arg-type]
    python = c.create_table("db.fb_py", EVENTS_SCHEMA, options=opts, **kwargs)  # type: ignore[arg-type]
    assert native_write_problem(native) is None
    for start in (0, 1000):
        data = events(300, start=start)
        write_table(spark.createDataFrame(data.to_pandas()).repartition(4), wh, "db.fb", writer="native")
        python.write_arrow(data)

    def describe(t: FileStoreTable) -> list[tuple[object, ...]]:
        return sorted(
            (e.partition, e.bucket, e.file.row_count, e.file.min_sequence_number, e.file.max_sequence_number,
             e.file.value_stats, e.total_buckets)
            for e in _entries(t)
        )

    got, want = describe(native), describe(python)
    assert got == want and {g[1] for g in got} == {0, 1, 2}
    assert {(g[3], g[4]) for g in got if g[3] > 0}  # second writes continued their buckets' numbers
    expected = rows(python.to_arrow())
    assert len(expected) == 600 and rows(native.to_arrow()) == expected
    assert rows(pypaimon.read(wh, "db.fb")) == expected
