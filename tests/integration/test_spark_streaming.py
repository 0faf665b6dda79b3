"""Streaming reads and writes through the ``paimon`` Spark data source."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.table.table import FileStoreTable
from spark_jobs.datasource.options import SourceOptions
from spark_jobs.datasource.stream_reader import StreamOffset
from spark_jobs.datasource.stream_writer import PaimonStreamWriter, foreach_batch_writer
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events

Batches = list[list[tuple[Any, ...]]]


def _stream(spark: SparkSession, wh: str, table: str, **options: str) -> DataFrame:
    reader = spark.readStream.format("paimon").option("warehouse", wh)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(table)


def _run(df: DataFrame, checkpoint: Path, *columns: str) -> Batches:
    """Run ``df`` with Trigger.AvailableNow into foreachBatch; the rows of each non-empty batch."""
    batches: Batches = []

    def collect(batch: DataFrame, _batch_id: int) -> None:
        got = sorted(tuple(r) for r in batch.select(*(columns or batch.columns)).collect())
        if got:
            batches.append(got)

    q = (
        df.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    q.start().awaitTermination(120)
    return batches


def _ids(batches: Batches) -> list[int]:
    return sorted(r[0] for b in batches for r in b)


def _append_table(wh: str, name: str = "db.s", **kwargs: Any) -> FileStoreTable:
    return catalog(wh).create_table(name, EVENTS_SCHEMA, **kwargs)


# --- read: queue, triggers, checkpoints ---------------------------------------------------------


def test_append_table_is_a_queue_available_now_and_process_all_available(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    t = _append_table(wh)
    for i in range(3):
        t.write_arrow(events(10, start=10 * i))
    ck = tmp_path / "ck"
    # latest-full (default): the latest snapshot in full
    assert _ids(_run(_stream(spark, wh, "db.s"), ck, "id")) == list(range(30))
    t.write_arrow(events(10, start=30))
    # restart from the checkpoint: exactly the new commit
    assert _ids(_run(_stream(spark, wh, "db.s"), ck, "id")) == list(range(30, 40))
    assert _run(_stream(spark, wh, "db.s"), ck, "id") == []  # nothing new: no batch

    # a running query (default trigger) picks up commits as they come; processAllAvailable waits
    seen: list[int] = []
    q = (
        _stream(spark, wh, "db.s")
        .writeStream.foreachBatch(lambda b, _i: seen.extend(r[0] for r in b.select("id").collect()))
        .option("checkpointLocation", str(ck))
        .start()
    )
    try:
        t.write_arrow(events(5, start=40))
        q.processAllAvailable()
        t.write_arrow(events(5, start=45))
        q.processAllAvailable()
    finally:
        q.stop()
    assert sorted(seen) == list(range(40, 50))


def test_scan_modes(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    t = _append_table(wh)
    t.write_arrow(events(10))  # snapshot 1: 0..9
    t.write_arrow(events(10, start=10))  # snapshot 2: 10..19
    t.write_arrow(events(5, start=100), overwrite=True)  # snapshot 3: OVERWRITE -> 100..104
    s1, s2 = (t.snapshot_manager.snapshot(i) for i in (1, 2))
    assert s1.time_millis < s2.time_millis

    runs = iter(range(100))

    def ids(mode: str, **options: str) -> list[int]:
        checkpoint = tmp_path / f"ck{next(runs)}"  # a fresh query each time
        return _ids(_run(_stream(spark, wh, "db.s", **{"scan.mode": mode}, **options), checkpoint, "id"))

    assert ids("latest-full") == list(range(100, 105))
    assert ids("latest") == []
    # overwrite snapshots are skipped unless streaming-read-overwrite
    assert ids("from-snapshot", **{"scan.snapshot-id": "2"}) == list(range(10, 20))
    assert ids("from-snapshot-full", **{"scan.snapshot-id": "2"}) == list(range(20))
    assert _ids(
        _run(
            _stream(spark, wh, "db.s", **{"scan.snapshot-id": "2", "streaming-read-overwrite": "true"}),
            tmp_path / "default-snapshot",
            "id",
        )
    ) == list(range(10, 20)) + list(range(100, 105))
    assert ids("from-timestamp", **{"scan.timestamp-millis": str(s2.time_millis)}) == list(range(10, 20))
    with pytest.raises(Exception, match="needs option 'scan.snapshot-id'"):
        ids("from-snapshot")

    # from-file-creation-time: the latest snapshot's files created since then, then changes
    c = _append_table(wh, "db.c")
    c.write_arrow(events(10))
    since = c.snapshot_manager.snapshot(1).time_millis + 1
    c.write_arrow(events(10, start=10))
    q = _stream(
        spark,
        wh,
        "db.c",
        **{"scan.mode": "from-file-creation-time"},
        **{"scan.file-creation-time-millis": str(since)},
    )
    assert _ids(_run(q, tmp_path / "fct", "id")) == list(range(10, 20))
    c.write_arrow(events(3, start=50))
    assert _ids(_run(q, tmp_path / "fct", "id")) == [50, 51, 52]

    # latest: only what is committed after the start
    seen: list[int] = []
    q2 = (
        _stream(spark, wh, "db.c", **{"scan.mode": "latest"})
        .writeStream.foreachBatch(lambda b, _i: seen.extend(r[0] for r in b.select("id").collect()))
        .option("checkpointLocation", str(tmp_path / "latest2"))
        .start()
    )
    try:
        q2.processAllAvailable()
        c.write_arrow(events(2, start=60))
        q2.processAllAvailable()
    finally:
        q2.stop()
    assert sorted(seen) == [60, 61]


def test_read_limits_and_offsets_inside_a_snapshot(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    t = _append_table(wh, partition_keys=["dt"])
    t.write_arrow(events(15))  # 3 files (3 partitions) of 5 rows
    t.write_arrow(events(15, start=15))  # 3 more files
    t.write_arrow(events(12, start=30, days=1))  # one file of 12 rows
    from_1 = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}  # every commit, in order
    by_files = _run(
        _stream(spark, wh, "db.s", **from_1, **{"read.stream.maxFilesPerTrigger": "2"}), tmp_path / "f", "id"
    )
    assert [len(b) for b in by_files] == [10, 10, 10, 12]  # 2 files a batch: batch 2 ends inside snapshot 2
    assert _ids(by_files) == list(range(42))
    by_rows = _run(
        _stream(spark, wh, "db.s", **from_1, **{"read.stream.maxRowsPerTrigger": "7"}), tmp_path / "r", "id"
    )
    assert [len(b) for b in by_rows] == [5, 5, 5, 5, 5, 5, 12]  # never above 7, except the 12-row file
    assert _ids(by_rows) == list(range(42))
    # latest-full: the full phase (files of the latest snapshot) is limited as well
    by_bytes = _run(
        _stream(spark, wh, "db.s", **{"read.stream.maxBytesPerTrigger": "1"}), tmp_path / "b", "id"
    )
    assert len(by_bytes) == 7 and _ids(by_bytes) == list(range(42))  # one file per batch


# --- consumers ------------------------------------------------------------------------------


def test_consumer_is_written_and_resumed_without_checkpoint(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    t = _append_table(wh)
    t.write_arrow(events(10))
    t.write_arrow(events(10, start=10))
    opts = {"consumer-id": "c1", "read.stream.maxFilesPerTrigger": "1"}
    first = _run(
        _stream(spark, wh, "db.s", **{"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}, **opts),
        tmp_path / "a",
        "id",
    )
    assert _ids(first) == list(range(20))
    assert t.consumer_manager.consumer("c1") == Consumer(3)  # next snapshot after the last one read
    t.write_arrow(events(10, start=20))
    t.write_arrow(events(10, start=30))
    # a new query (no checkpoint) with the same consumer continues where the first stopped
    second = _run(_stream(spark, wh, "db.s", **opts), tmp_path / "b", "id")
    assert _ids(second) == list(range(20, 40))
    assert t.consumer_manager.consumer("c1") == Consumer(5)
    # ignore-progress: start by scan.mode again
    again = _run(
        _stream(spark, wh, "db.s", **opts, **{"consumer.ignore-progress": "true"}), tmp_path / "c", "id"
    )
    assert _ids(again) == list(range(40))


def test_expired_consumer_snapshot_is_a_clear_error(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    t = _append_table(wh)
    for i in range(3):
        t.write_arrow(events(5, start=5 * i))
    t.consumer_manager.reset_consumer("slow", Consumer(1))
    for sid in (1, 2):  # snapshot expiry (without the consumer fence) took them
        t.file_io.delete(t.snapshot_manager.snapshot_path(sid))
    with pytest.raises(
        Exception, match=r"Consumer 'slow' .* snapshot 1, but it has expired \(earliest snapshot is 3\)"
    ):
        _run(_stream(spark, wh, "db.s", **{"consumer-id": "slow"}), tmp_path / "x", "id")


# --- primary-key tables ------------------------------------------------------------------------


def _pk_commit(t: FileStoreTable, data: pa.Table, kinds: list[int] | None = None) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.write_arrow(data, row_kinds=None if kinds is None else pa.array(kinds, pa.int8()))
    b.new_commit().commit(w.prepare_commit())
    w.close()


def test_primary_key_table_streams_changes(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog(wh).create_table("db.pk", schema, primary_keys=["k"], options={"bucket": "2"})
    _pk_commit(t, pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    _pk_commit(t, pa.table({"k": [2], "v": ["b2"]}, schema=schema))
    _pk_commit(t, pa.table({"k": [3], "v": ["c"]}, schema=schema), kinds=[3])
    changes = _run(
        _stream(
            spark,
            wh,
            "db.pk",
            **{"scan.mode": "from-snapshot", "scan.snapshot-id": "1", "read.changelog": "true"},
        ),
        tmp_path / "cl",
    )
    assert sorted(r for b in changes for r in b) == sorted(
        [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c"), ("+I", 2, "b2"), ("-D", 3, "c")]
    )
    # as Paimon Spark: without read.changelog the same rows come without their kind
    plain = _run(_stream(spark, wh, "db.pk", **{"scan.snapshot-id": "1"}), tmp_path / "plain")
    assert sorted(r for b in plain for r in b) == [(1, "a"), (2, "b"), (2, "b2"), (3, "c"), (3, "c")]
    # latest-full: the merged table, then changes
    full = _run(_stream(spark, wh, "db.pk"), tmp_path / "full")
    assert sorted(r for b in full for r in b) == [(1, "a"), (2, "b2")]


def test_primary_key_overwrite_streams_its_changes(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    """With streaming-read-overwrite an overwrite streams as the diff of before and after
    (Java's readChanges); without it, it is skipped (Paimon's default)."""
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog(wh).create_table("db.pko", schema, primary_keys=["k"], options={"bucket": "2"})
    t.write_arrow(pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    t.write_arrow(pa.table({"k": [2, 3, 4], "v": ["b", "c2", "d"]}, schema=schema), overwrite=True)
    opts = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1", "read.changelog": "true"}
    changes = _run(_stream(spark, wh, "db.pko", **opts, **{"streaming-read-overwrite": "true"}), tmp_path / "ow")
    assert sorted(r for b in changes for r in b) == sorted(
        [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c"), ("-D", 1, "a"), ("-U", 3, "c"), ("+U", 3, "c2"), ("+I", 4, "d")]
    )
    skipped = _run(_stream(spark, wh, "db.pko", **opts), tmp_path / "skip")
    assert sorted(r for b in skipped for r in b) == [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")]


# --- streaming write ----------------------------------------------------------------------------


def _json_source(spark: SparkSession, folder: Path) -> DataFrame:
    return (
        spark.readStream.schema("id BIGINT, dt STRING, v DOUBLE, name STRING")
        .option("maxFilesPerTrigger", 1)
        .json(str(folder))
    )


def _drop_json(folder: Path, n: int, start: int, name: str) -> None:
    folder.mkdir(exist_ok=True)
    lines = (
        json.dumps({"id": i, "dt": "2024-01-01", "v": i * 0.5, "name": f"n{i}"})
        for i in range(start, start + n)
    )
    (folder / name).write_text("\n".join(lines) + "\n")


def _sink(df: DataFrame, wh: str, checkpoint: Path, table: str = "db.w") -> None:
    q = df.writeStream.format("paimon").option("warehouse", wh).option("checkpointLocation", str(checkpoint))
    q.trigger(availableNow=True).start(table).awaitTermination(120)


def test_stream_write_exactly_once_across_a_crash_and_restart(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    t = _append_table(wh, "db.w")
    src, ck = tmp_path / "in", tmp_path / "ck"
    _drop_json(src, 10, 0, "a.json")
    _drop_json(src, 10, 10, "b.json")
    _sink(_json_source(spark, src), wh, ck)
    assert core_rows(wh, "db.w", "id") == [(i,) for i in range(20)]
    snaps = list(t.snapshot_manager.snapshots())
    assert [(s.commit_identifier, s.commit_user) for s in snaps] == [
        (0, snaps[0].commit_user),
        (1, snaps[0].commit_user),
    ]
    assert snaps[0].commit_user.startswith("spark-stream-")
    # crash after our commit of batch 1 but before Spark logged it: Spark replays batch 1 on restart
    for name in ("1", ".1.crc"):
        (ck / "commits" / name).unlink(missing_ok=True)
    _drop_json(src, 5, 20, "c.json")
    _sink(_json_source(spark, src), wh, ck)
    assert core_rows(wh, "db.w", "id") == [(i,) for i in range(25)]  # every row exactly once
    assert [s.commit_identifier for s in t.snapshot_manager.snapshots()] == [0, 1, 2]
    live = {f.file_name for s in t.new_read_builder().plan().splits for f in s.files}
    on_disk = {p.name for p in (Path(wh) / "db.db" / "w").rglob("data-*")}
    assert on_disk == live  # the replay's files were deleted


def test_stream_writer_commit_replayed_for_the_same_batch_id(wh: str) -> None:
    t = _append_table(wh, "db.w")
    opts = SourceOptions.parse({"warehouse": wh, "path": "db.w"})
    from spark_jobs.datasource.types import spark_schema

    schema = spark_schema(t.schema.fields)

    def attempt(start: int) -> Any:
        w = PaimonStreamWriter(opts, schema, overwrite=False)
        msg = w.write(iter(events(5, start=start).cast(EVENTS_SCHEMA).to_batches()))
        return w, dataclasses.replace(msg, query_id="q-1")

    w, msg = attempt(0)
    w.commit([msg], 7)
    w2, msg2 = attempt(100)  # the replay of batch 7 (another attempt wrote other files)
    w2.commit([msg2], 7)
    w2.commit([msg2], 7)
    assert core_rows(wh, "db.w", "id") == [(i,) for i in range(5)]
    assert [(s.commit_user, s.commit_identifier) for s in t.snapshot_manager.snapshots()] == [
        ("spark-stream-q-1", 7)
    ]
    assert not any(
        Path(t.bucket_path(m.partition, m.bucket), f.file_name).exists()
        for m in msg2.messages
        for f in m.new_files
    )


def test_primary_key_stream_write_needs_routing(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("dt", pa.string()),
            ("v", pa.float64()),
            ("name", pa.string()),
        ]
    )
    catalog(wh).create_table("db.pkw", schema, primary_keys=["id"], options={"bucket": "1"})
    src = tmp_path / "in"
    _drop_json(src, 10, 0, "a.json")
    two_tasks = _json_source(spark, src).repartition(2)
    with pytest.raises(Exception, match="both wrote bucket 0"):
        _sink(two_tasks, wh, tmp_path / "ck1", "db.pkw")
    assert core_rows(wh, "db.pkw", "id") == []
    assert not list((Path(wh) / "db.db" / "pkw").rglob("data-*"))  # abort deleted the files
    q = two_tasks.writeStream.foreachBatch(foreach_batch_writer(wh, "db.pkw"))
    q.option("checkpointLocation", str(tmp_path / "ck2")).trigger(availableNow=True).start().awaitTermination(
        120
    )
    assert core_rows(wh, "db.pkw", "id") == [(i,) for i in range(10)]
    (snap,) = catalog(wh).get_table("db.pkw").snapshot_manager.snapshots()
    assert snap.commit_user.startswith("spark-stream-") and snap.commit_identifier == 0


def test_offsets_round_trip() -> None:
    off = StreamOffset(3, 1, True, 2)
    assert StreamOffset.from_json(json.loads(json.dumps(off.to_json()))) == off
    assert off.completed and off.next_position() == (4, 0, False) and off.consumer_next_snapshot() == 4
    assert StreamOffset(3, 0, True, 2).consumer_next_snapshot() is None  # incomplete full scan
    assert StreamOffset(3, 0, False, 2).consumer_next_snapshot() == 3  # partly read delta: replay it
    with pytest.raises(Exception, match="Not a paimon streaming offset"):
        StreamOffset.from_json({"snapshot": 1})


def test_changelog_producer_tables_stream_their_changelog_files(wh: str) -> None:
    """With a changelog producer, snapshots stream their changelog files (Java's
    ChangelogFollowUpScanner); snapshots without a changelog (compactions) stream nothing.
    paimon_core writes the changelog of the 'input' producer itself."""
    from paimon_core.table.stream_scan import StreamTableScan
    from paimon_core.table.table_read import TableRead

    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog(wh).create_table(
        "db.cl", schema, primary_keys=["k"], options={"bucket": "1", "changelog-producer": "input"}
    )
    _pk_commit(t, pa.table({"k": [1, 2], "v": ["a", "b"]}, schema=schema))
    _pk_commit(t, pa.table({"k": [2], "v": ["b"]}, schema=schema), kinds=[3])
    t.maintenance.compact()
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})

    def changes(snapshot_id: int) -> list[tuple[str, int]] | None:
        units = scan.plan_delta(t.snapshot_manager.snapshot(snapshot_id))
        if units is None:
            return None
        got = TableRead(t, row_kind=True).to_arrow(units)
        return list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), strict=True))

    assert changes(1) == [("+I", 1), ("+I", 2)]
    assert changes(2) == [("-D", 2)]
    assert changes(3) is None  # the COMPACT snapshot has no changelog of its own (input producer)


def test_reader_planning_limits_min_rows_and_replay_checks(wh: str) -> None:
    """The planner alone (as Spark's runner process drives it): offsets, limits, replays."""
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles

    from spark_jobs.datasource.options import StreamLimits
    from spark_jobs.datasource.stream_reader import PaimonStreamReader
    from spark_jobs.datasource.types import spark_schema

    t = _append_table(wh, partition_keys=["dt"])
    t.write_arrow(events(6))  # snapshot 1: 3 files of 2 rows
    schema = spark_schema(t.schema.fields)
    opts = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
    reader = PaimonStreamReader(t, schema, opts, limits=StreamLimits(max_files=2))
    start = reader.initialOffset()
    assert start == {"snapshotId": 1, "index": -1, "scanSnapshot": False, "totalUnits": None}
    end = reader.latestOffset(start, ReadMaxFiles(2))
    assert end == {"snapshotId": 1, "index": 1, "scanSnapshot": False, "totalUnits": 3}  # inside snapshot 1
    parts = reader.partitions(start, end)
    assert sum(len(p.splits) for p in parts) == 2
    assert reader.latestOffset(end, ReadAllAvailable())["index"] == 2  # no limit: the rest
    with pytest.raises(Exception, match="planned with 5"):
        reader.partitions(start, {**end, "totalUnits": 5})  # the logged plan no longer matches

    # minRowsPerTrigger + maxTriggerDelayMs: wait for rows, unless the delay passed
    slow = PaimonStreamReader(t, schema, opts, limits=StreamLimits(min_rows=100, max_trigger_delay_ms=10**9))
    first = slow.latestOffset(slow.initialOffset(), ReadAllAvailable())  # all-available ignores min rows
    t.write_arrow(events(2, start=100, days=1))
    assert slow.latestOffset(first, ReadMaxFiles(10)) == first  # 2 rows < 100 within the delay: wait
    slow.prepareForTriggerAvailableNow()
    assert slow.latestOffset(first, ReadMaxFiles(10))["snapshotId"] == 2  # AvailableNow never waits
