"""Append tables end to end: write, commit, read, time travel, overwrite, pruning."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from paimon_core import FileSystemCatalog, SchemaMismatchError, SnapshotNotFoundError, TableNotFoundError
from paimon_core.exceptions import InvalidArgumentError
from tests.fixtures.tables import sample_rows


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([("id", "ascending")])


def test_write_read_unpartitioned(catalog: FileSystemCatalog) -> None:
    data = sample_rows(100)
    t = catalog.create_table("db.t", data.schema)
    res = t.write_arrow(data)
    assert res.snapshot_id == 1 and res.added_rows == 100 and res.commit_kind == "APPEND"
    out = catalog.get_table("db.t").to_arrow()
    assert _sorted(out).equals(data)
    snap = t.latest_snapshot()
    assert snap is not None and snap.total_record_count == 100 and snap.commit_kind.value == "APPEND"


def test_partitioned_write_creates_partition_dirs_and_prunes(catalog: FileSystemCatalog) -> None:
    data = sample_rows(40)
    t = catalog.create_table("db.p", data.schema, partition_keys=["dt"])
    t.write_arrow(data)
    t.write_arrow(sample_rows(40, start=40))
    files = t.new_file_store_scan().live_entries(t.latest_snapshot())
    dirs = {t.partition_path(e.partition) for e in files}
    assert dirs == {f"dt=2024-01-0{i}" for i in range(1, 5)}
    pb = t.new_read_builder().new_predicate_builder()
    rb = t.new_read_builder().with_filter(pb.equal("dt", "2024-01-02"))
    plan = rb.new_scan().plan()
    assert {t.partition_path(s.partition) for s in plan.splits} == {"dt=2024-01-02"}
    out = rb.new_read().to_arrow(plan.splits)
    assert out.num_rows == 20 and set(out.column("dt").to_pylist()) == {"2024-01-02"}


def test_stats_prune_files_and_filter_is_exact(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.s", sample_rows(1).schema)
    for k in range(5):
        t.write_arrow(sample_rows(100, start=k * 100))
    pb = t.new_read_builder().new_predicate_builder()
    pred = pb.and_(pb.greater_or_equal("id", 250), pb.less_than("id", 260))
    rb = t.new_read_builder().with_filter(pred)
    plan = rb.new_scan().plan()
    assert sum(len(s.files) for s in plan.splits) == 1  # only the file holding 200..299
    out = rb.new_read().to_arrow(plan.splits)
    assert sorted(out.column("id").to_pylist()) == list(range(250, 260))


def test_projection_and_limit(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.pl", sample_rows(1).schema)
    t.write_arrow(sample_rows(50))
    out = t.to_arrow(columns=["s", "id"], limit=7)
    assert out.schema.names == ["s", "id"] and out.num_rows == 7


def test_time_travel_snapshot_tag_timestamp(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.tt", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    t.maintenance.create_tag("first")
    t.write_arrow(sample_rows(10, start=10))
    s1 = t.snapshot_manager.snapshot(1)
    assert t.copy({"scan.snapshot-id": "1"}).to_arrow().num_rows == 10
    assert t.copy({"scan.tag-name": "first"}).to_arrow().num_rows == 10
    assert t.copy({"scan.timestamp-millis": str(s1.time_millis)}).to_arrow().num_rows == 10
    assert t.to_arrow().num_rows == 20
    inc = t.copy({"incremental-between": "1,2"}).to_arrow()
    assert sorted(inc.column("id").to_pylist()) == list(range(10, 20))
    with pytest.raises(SnapshotNotFoundError, match="Snapshot 9 does not exist"):
        t.copy({"scan.snapshot-id": "9"}).to_arrow()


def test_overwrite_dynamic_static_and_truncate(catalog: FileSystemCatalog) -> None:
    data = sample_rows(40)
    t = catalog.create_table("db.o", data.schema, partition_keys=["dt"])
    t.write_arrow(data)
    # Dynamic: only the partition present in the new data is replaced.
    new = sample_rows(4, start=1000).set_column(1, "dt", pa.array(["2024-01-01"] * 4))
    t.write_arrow(new, overwrite=True)
    out = t.to_arrow()
    assert out.num_rows == 30 + 4
    assert sorted(out.filter(pc.equal(out["dt"], "2024-01-01"))["id"].to_pylist()) == [1000, 1001, 1002, 1003]
    assert t.latest_snapshot().commit_kind.value == "OVERWRITE"
    # Static partition with no rows: the partition is emptied.
    t.write_arrow(data.slice(0, 0), overwrite={"dt": "2024-01-02"})
    assert t.to_arrow().num_rows == 24
    # Rows outside the static partition are refused, table unchanged.
    before = t.latest_snapshot().id
    with pytest.raises(InvalidArgumentError, match="belongs to partition"):
        t.write_arrow(sample_rows(4), overwrite={"dt": "2024-01-03"})
    assert t.latest_snapshot().id == before
    res = t.new_batch_write_builder().new_commit().truncate()
    assert res.deleted_files > 0 and t.to_arrow().num_rows == 0
    # Old snapshots stay readable.
    assert t.copy({"scan.snapshot-id": "1"}).to_arrow().num_rows == 40


def test_fixed_bucket_append_routes_by_bucket_key(catalog: FileSystemCatalog) -> None:
    data = sample_rows(100)
    t = catalog.create_table("db.fb", data.schema, options={"bucket": "4", "bucket-key": "id"})
    t.write_arrow(data)
    t.write_arrow(sample_rows(100, start=100))
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert {e.bucket for e in entries} == {0, 1, 2, 3}
    assert all(e.total_buckets == 4 for e in entries)
    # Second write continues each bucket's sequence numbers.
    by_bucket: dict[int, list[tuple[int, int]]] = {}
    for e in entries:
        by_bucket.setdefault(e.bucket, []).append((e.file.min_sequence_number, e.file.max_sequence_number))
    for runs in by_bucket.values():
        runs.sort()
        assert runs[1][0] == runs[0][1] + 1
    assert _sorted(t.to_arrow()).equals(pa.concat_tables([data, sample_rows(100, start=100)]))


def test_rolling_files_at_target_size(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.r", sample_rows(1).schema, options={"target-file-size": "64 kb"})
    big = sample_rows(200_000)
    t.write_arrow(big.to_batches(max_chunksize=10_000)[0].schema.empty_table())
    write = t.new_batch_write_builder()
    w = write.new_write()
    w.write_arrow(big.to_reader(max_chunksize=10_000))
    msgs = w.prepare_commit()
    assert len(msgs[0].new_files) > 3
    write.new_commit().commit(msgs)
    assert t.to_arrow().num_rows == 200_000


def test_bad_input_changes_nothing(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.b", sample_rows(1).schema)
    t.write_arrow(sample_rows(5))
    with pytest.raises(SchemaMismatchError, match=r"missing column\(s\) \['s'\]"):
        t.write_arrow(sample_rows(5).drop_columns(["s"]))
    with pytest.raises(SchemaMismatchError, match="cannot be cast safely"):
        t.write_arrow(sample_rows(5).set_column(0, "id", pa.array(["x"] * 5)))
    assert t.latest_snapshot().id == 1
    with pytest.raises(TableNotFoundError):
        catalog.get_table("db.missing")


def test_commit_is_idempotent_per_user_and_identifier(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.i", sample_rows(1).schema)
    builder = t.new_stream_write_builder(commit_user="job-1")
    w = builder.new_write()
    w.write_arrow(sample_rows(10))
    msgs = w.prepare_commit()
    first = builder.new_commit().commit(msgs, 7)
    again = builder.new_commit().commit(msgs, 7)
    assert first.snapshot_id == 1 and again.already_committed and again.snapshot_id is None
    assert t.to_arrow().num_rows == 10


def test_manifests_are_merged(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.m", sample_rows(1).schema, options={"manifest.merge-min-count": "3"})
    for k in range(12):
        t.write_arrow(sample_rows(2, start=k * 2))
    snap = t.latest_snapshot()
    scan = t.new_file_store_scan()
    assert len(scan.data_manifests(snap)) <= 4
    assert t.to_arrow().num_rows == 24


def test_incremental_between_tags_and_timestamps(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.inc", sample_rows(1).schema)
    for k in range(4):
        t.write_arrow(sample_rows(5, start=k * 5))
        t.maintenance.create_tag(f"t{k + 1}")
    snaps = list(t.snapshot_manager.snapshots())
    got = t.copy({"incremental-between": "t1,t3"}).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(5, 15))
    ts = f"{snaps[0].time_millis},{snaps[2].time_millis}"
    got = t.copy({"incremental-between-timestamp": ts}).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(5, 15))
    with pytest.raises(InvalidArgumentError, match="mutually exclusive"):
        t.copy({"incremental-between": "1,2", "scan.snapshot-id": "1"}).to_arrow()


def test_dynamic_options_apply_to_writes_and_keys_are_immutable(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.dyn", sample_rows(1).schema)
    small = t.copy({"target-file-size": "64 kb"})
    res = small.write_arrow(sample_rows(100_000))
    assert res.added_files > 3
    from paimon_core import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="cannot be changed dynamically"):
        t.copy({"bucket": "3"})


def test_batch_commit_user_makes_reruns_idempotent(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.idem", sample_rows(1).schema)
    for _ in range(2):  # the same job run twice
        b = t.new_batch_write_builder(commit_user="ingest-run-42")
        w = b.new_write()
        w.write_arrow(sample_rows(10))
        res = b.new_commit().commit(w.prepare_commit())
    assert res.already_committed
    assert t.to_arrow().num_rows == 10


def test_time_travel_reads_with_the_snapshot_schema(catalog: FileSystemCatalog) -> None:
    from paimon_core.schema.data_types import VarCharType
    from paimon_core.schema.schema_change import AddColumn

    t = catalog.create_table("db.tts", sample_rows(1).schema)
    t.write_arrow(sample_rows(3))
    t = catalog.alter_table("db.tts", [AddColumn("extra", VarCharType(VarCharType.MAX_LENGTH))])
    t.write_arrow(sample_rows(2, start=10).append_column("extra", pa.array(["x", "y"])))
    old = t.copy({"scan.snapshot-id": "1"})
    assert old.schema.id == 0 and old.to_arrow().schema.names == ["id", "dt", "v", "s"]
    assert t.to_arrow().schema.names == ["id", "dt", "v", "s", "extra"]
