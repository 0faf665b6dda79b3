"""System tables (``t$snapshots`` ...): Java's columns, and values equal to what the table holds."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError
from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.manifest.entries import DeletionVectorMeta, IndexFileMeta
from paimon_core.schema.data_types import IntType
from paimon_core.schema.schema_change import AddColumn, SetOption
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.system import SYSTEM_TABLES, files_table, read_system_table
from paimon_core.table.system.rendering import java_duration_string, local_wall_millis
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock
from tests.fixtures.tables import sample_rows

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z

# Java's TABLE_TYPE of each table: (name, Arrow type, nullable), in order.
JAVA_COLUMNS: dict[str, list[tuple[str, pa.DataType, bool]]] = {
    "snapshots": [
        ("snapshot_id", pa.int64(), False),
        ("schema_id", pa.int64(), False),
        ("commit_user", pa.string(), False),
        ("commit_identifier", pa.int64(), False),
        ("commit_kind", pa.string(), False),
        ("commit_time", pa.timestamp("ms"), False),
        ("base_manifest_list", pa.string(), False),
        ("delta_manifest_list", pa.string(), False),
        ("changelog_manifest_list", pa.string(), True),
        ("total_record_count", pa.int64(), True),
        ("delta_record_count", pa.int64(), True),
        ("changelog_record_count", pa.int64(), True),
        ("watermark", pa.int64(), True),
        ("next_row_id", pa.int64(), True),
        ("operation", pa.string(), True),
        ("writer_version", pa.string(), True),
    ],
    "schemas": [
        ("schema_id", pa.int64(), False),
        ("fields", pa.string(), False),
        ("partition_keys", pa.string(), False),
        ("primary_keys", pa.string(), False),
        ("options", pa.string(), False),
        ("comment", pa.string(), True),
        ("update_time", pa.timestamp("ms"), False),
    ],
    "options": [("key", pa.string(), False), ("value", pa.string(), False)],
    "files": [
        ("partition", pa.string(), True),
        ("bucket", pa.int32(), False),
        ("file_path", pa.string(), False),
        ("file_format", pa.string(), False),
        ("schema_id", pa.int64(), False),
        ("level", pa.int32(), False),
        ("record_count", pa.int64(), False),
        ("file_size_in_bytes", pa.int64(), False),
        ("min_key", pa.string(), True),
        ("max_key", pa.string(), True),
        ("null_value_counts", pa.string(), False),
        ("min_value_stats", pa.string(), False),
        ("max_value_stats", pa.string(), False),
        ("min_sequence_number", pa.int64(), True),
        ("max_sequence_number", pa.int64(), True),
        ("creation_time", pa.timestamp("ms"), True),
        ("deleteRowCount", pa.int64(), True),
        ("file_source", pa.string(), True),
        ("first_row_id", pa.int64(), True),
        ("write_cols", pa.list_(pa.string()), True),
    ],
    "manifests": [
        ("file_name", pa.string(), False),
        ("file_size", pa.int64(), False),
        ("num_added_files", pa.int64(), False),
        ("num_deleted_files", pa.int64(), False),
        ("schema_id", pa.int64(), False),
        ("min_partition_stats", pa.string(), True),
        ("max_partition_stats", pa.string(), True),
        ("min_row_id", pa.int64(), True),
        ("max_row_id", pa.int64(), True),
    ],
    "tags": [
        ("tag_name", pa.string(), False),
        ("snapshot_id", pa.int64(), False),
        ("schema_id", pa.int64(), False),
        ("commit_time", pa.timestamp("ms"), False),
        ("record_count", pa.int64(), True),
        ("create_time", pa.timestamp("ms"), True),
        ("time_retained", pa.string(), True),
    ],
    "consumers": [("consumer_id", pa.string(), False), ("next_snapshot_id", pa.int64(), False)],
    "partitions": [
        ("partition", pa.string(), True),
        ("record_count", pa.int64(), False),
        ("file_size_in_bytes", pa.int64(), False),
        ("file_count", pa.int64(), False),
        ("last_update_time", pa.timestamp("ms"), True),
        ("created_at", pa.timestamp("ms"), True),
        ("created_by", pa.string(), True),
        ("updated_by", pa.string(), True),
        ("options", pa.string(), True),
        ("total_buckets", pa.int32(), False),
        ("done", pa.bool_(), False),
        ("deleted_record_count", pa.int64(), True),
        ("expire_time", pa.timestamp("ms"), True),
    ],
    "branches": [("branch_name", pa.string(), False), ("create_time", pa.timestamp("ms"), False)],
}


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def clocked(warehouse: str, clock: ManualClock) -> FileSystemCatalog:
    c = FileSystemCatalog(warehouse, clock=clock)
    c.create_database("db")
    return c


def _pk_table(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    return catalog.create_table(
        "db.t",
        sample_rows(1).schema,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", **options},
    )


def _at(millis: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)


def _ms(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)


def _map(text: str) -> dict[str, str]:
    """Parse Java's ``{a=1, b=x}`` (values here contain no ', ' or '=')."""
    assert text.startswith("{") and text.endswith("}"), text
    body = text[1:-1]
    return dict(item.split("=", 1) for item in body.split(", ")) if body else {}


# --------------------------------------------------------------------------------------------
# names and columns
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SYSTEM_TABLES)
def test_columns_are_javas_in_order_with_types_and_nullability(catalog: FileSystemCatalog, name: str) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(8))
    for result in (t.inspect.system_table(name), t.inspect.system_table("$" + name), read_system_table(t, name.upper())):
        got = [(f.name, f.type, f.nullable) for f in result.schema]
        assert got == JAVA_COLUMNS[name]


@pytest.mark.parametrize("name", SYSTEM_TABLES)
def test_empty_table_gives_empty_system_tables_with_the_schema(catalog: FileSystemCatalog, name: str) -> None:
    t = _pk_table(catalog)
    result = t.inspect.system_table(name)
    assert [f.name for f in result.schema] == [c[0] for c in JAVA_COLUMNS[name]]
    expected_rows = {"schemas": 1, "options": 1}.get(name, 0)  # the schema (with option bucket) exists
    assert result.num_rows == expected_rows


@pytest.mark.parametrize("bad", ["nope", "$audit_log", "ro", "", "snapshots2"])
def test_unknown_name_lists_the_valid_ones(catalog: FileSystemCatalog, bad: str) -> None:
    t = _pk_table(catalog)
    with pytest.raises(InvalidArgumentError) as err:
        t.inspect.system_table(bad)
    assert all(n in str(err.value) for n in SYSTEM_TABLES)


def test_identifier_style_name_is_accepted(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(4))
    assert read_system_table(t, "db.t$snapshots").column("snapshot_id").to_pylist() == [1]


# --------------------------------------------------------------------------------------------
# snapshots, schemas, options
# --------------------------------------------------------------------------------------------


def test_snapshots_rows_are_the_snapshot_files(
    clocked: FileSystemCatalog, clock: ManualClock, utc: None
) -> None:
    t = _pk_table(clocked)
    t.write_arrow(sample_rows(10))
    clock.advance(60_000)
    t.write_arrow(sample_rows(5, start=100))
    clock.advance(60_000)
    t.write_arrow(sample_rows(3, start=200), overwrite=True)
    out = t.inspect.system_table("snapshots")
    snaps = list(t.snapshot_manager.snapshots())
    assert out.column("snapshot_id").to_pylist() == [1, 2, 3] == [s.id for s in snaps]
    assert out.column("commit_kind").to_pylist() == ["APPEND", "APPEND", "OVERWRITE"]
    assert out.column("commit_time").to_pylist() == [_at(T0), _at(T0 + 60_000), _at(T0 + 120_000)]
    assert out.column("total_record_count").to_pylist() == [s.total_record_count for s in snaps]
    assert out.column("delta_record_count").to_pylist() == [s.delta_record_count for s in snaps]
    assert out.column("base_manifest_list").to_pylist() == [s.base_manifest_list for s in snaps]
    assert out.column("commit_user").to_pylist() == [s.commit_user for s in snaps]
    assert out.column("commit_identifier").to_pylist() == [s.commit_identifier for s in snaps]
    assert (
        out.column("total_record_count").to_pylist()[-1] == t.to_arrow().num_rows
    )  # unique keys: rows = records


def test_commit_time_is_the_local_wall_clock_as_in_java(
    clocked: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _pk_table(clocked)
    t.write_arrow(sample_rows(2))
    monkeypatch.setenv("TZ", "Asia/Shanghai")  # UTC+8, no DST
    time.tzset()
    try:
        got = t.inspect.system_table("snapshots").column("commit_time").to_pylist()
        assert got == [_at(T0 + 8 * 3_600_000)]
        assert local_wall_millis(T0) == T0 + 8 * 3_600_000
    finally:
        monkeypatch.undo()
        time.tzset()


def test_schemas_list_every_version_as_flat_json(
    clocked: FileSystemCatalog, clock: ManualClock, utc: None
) -> None:
    t = _pk_table(clocked, **{"snapshot.num-retained.max": "10"})  # not below the min (10), as Java checks
    clock.advance(1000)
    clocked.alter_table("db.t", [AddColumn("extra", IntType())])
    out = t.inspect.system_table("schemas").to_pylist()
    assert [r["schema_id"] for r in out] == [0, 1]
    assert [f["name"] for f in json.loads(out[1]["fields"])] == ["id", "dt", "v", "s", "extra"]
    assert json.loads(out[0]["fields"])[0] == {"id": 0, "name": "id", "type": "BIGINT NOT NULL"}
    assert out[0]["partition_keys"] == '["dt"]'
    assert out[0]["primary_keys"] == '["dt","id"]'
    assert json.loads(out[1]["options"]) == {"bucket": "2", "snapshot.num-retained.max": "10"}
    assert out[0]["update_time"] == _at(T0) and out[1]["update_time"] == _at(T0 + 1000)


def test_options_are_the_latest_schemas(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog, **{"file.format": "parquet"})
    catalog.alter_table("db.t", [SetOption("snapshot.num-retained.min", "3")])
    out = dict(zip(*[t.inspect.system_table("options").column(c).to_pylist() for c in ("key", "value")], strict=True))
    assert out == {"bucket": "2", "file.format": "parquet", "snapshot.num-retained.min": "3"}


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------


def test_files_rows_are_the_live_files(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    catalog.create_database("db")
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(40))
    t.write_arrow(sample_rows(10, start=35))
    out = t.inspect.system_table("files")
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert out.num_rows == len(live) > 4
    assert sorted(Path(p).name for p in out.column("file_path").to_pylist()) == sorted(
        e.file.file_name for e in live
    )
    assert all(Path(p).is_file() for p in out.column("file_path").to_pylist())
    assert pc.sum(out.column("record_count")).as_py() == sum(e.file.row_count for e in live)
    assert pc.sum(out.column("file_size_in_bytes")).as_py() == sum(
        Path(p).stat().st_size for p in out.column("file_path").to_pylist()
    )
    assert set(out.column("file_format").to_pylist()) == {"parquet"}
    assert set(out.column("file_source").to_pylist()) == {"APPEND"}
    for row in out.to_pylist():
        assert row["partition"] == "{" + row["file_path"].split("/dt=")[1].split("/")[0] + "}"
        assert f"/bucket-{row['bucket']}/" in row["file_path"]
        # The key is the trimmed primary key [id]; its bounds equal the stats of id.
        lo, hi = int(row["min_key"][1:-1]), int(row["max_key"][1:-1])
        assert _map(row["min_value_stats"])["id"] == str(lo) and _map(row["max_value_stats"])["id"] == str(hi)
        assert list(_map(row["null_value_counts"])) == ["dt", "id", "s", "v"]  # Java TreeMap order


def test_files_value_stats_equal_the_data_in_each_file(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("dt", pa.date32()), ("h", pa.int32()), ("s", pa.string())])
    t = catalog.create_table("db.a", schema, partition_keys=["dt", "h"])
    data = pa.table(
        {
            "id": pa.array(range(30), pa.int64()),
            "dt": pa.array([dt.date(2024, 1, 1 + i % 2) for i in range(30)], pa.date32()),
            "h": pa.array([3 if i % 3 else None for i in range(30)], pa.int32()),
            "s": pa.array([None if i % 4 == 0 else f"s{i:02d}" for i in range(30)]),
        }
    )
    t.write_arrow(data)
    out = t.inspect.system_table("files").to_pylist()
    assert {r["partition"] for r in out} == {
        "{2024-01-01, 3}",
        "{2024-01-02, 3}",
        "{2024-01-01, null}",
        "{2024-01-02, null}",
    }
    for row in out:
        assert row["min_key"] is None and row["max_key"] is None  # append files have no key
        rows = pq.read_table(row["file_path"])
        nulls, mins, maxs = (
            _map(row[c]) for c in ("null_value_counts", "min_value_stats", "max_value_stats")
        )
        assert nulls["s"] == str(rows.column("s").null_count)
        assert mins["id"] == str(pc.min(rows.column("id")).as_py())
        assert maxs["id"] == str(pc.max(rows.column("id")).as_py())
        assert mins["s"] == pc.min(rows.column("s")).as_py() and maxs["s"] == pc.max(rows.column("s")).as_py()
        # DATE stats print Java's internal value: the day number.
        assert mins["dt"] == str((rows.column("dt")[0].as_py() - dt.date(1970, 1, 1)).days)
    parts = t.inspect.system_table("partitions").column("partition").to_pylist()
    assert parts == [
        "dt=2024-01-01/h=3",
        "dt=2024-01-01/h=__DEFAULT_PARTITION__",
        "dt=2024-01-02/h=3",
        "dt=2024-01-02/h=__DEFAULT_PARTITION__",
    ]


def test_files_after_schema_evolution_show_new_columns_as_all_null(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.a", pa.schema([("id", pa.int64()), ("s", pa.string())]))
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}))
    t = catalog.alter_table("db.a", [AddColumn("n", IntType())])
    t.write_arrow(pa.table({"id": pa.array([7], pa.int64()), "s": ["z"], "n": pa.array([5], pa.int32())}))
    rows = {r["schema_id"]: r for r in t.inspect.system_table("files").to_pylist()}
    old, new = rows[0], rows[1]
    assert _map(old["null_value_counts"]) == {"id": "0", "n": "3", "s": "0"}  # absent column: all null
    assert _map(old["min_value_stats"]) == {"id": "1", "n": "null", "s": "a"}
    assert _map(new["max_value_stats"]) == {"id": "7", "n": "5", "s": "z"}


def test_files_follow_the_handles_time_travel(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(8))
    first = {e.file.file_name for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    t.write_arrow(sample_rows(8, start=100))
    t.maintenance.create_tag("v1", 1)
    latest = t.inspect.system_table("files").num_rows
    for options in ({"scan.snapshot-id": "1"}, {"scan.tag-name": "v1"}):
        names = {Path(p).name for p in t.copy(options).inspect.system_table("files").column("file_path").to_pylist()}
        assert names == first
    assert latest > len(first)


def test_files_of_10k_files(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(64))
    live = files_table.live_entries(t)
    big = [
        dataclasses.replace(e, file=e.file.copy(file_name=f"data-x-{i}.parquet"))
        for i, e in enumerate(live[i % len(live)] for i in range(10_000))
    ]
    out = files_table.build(t, big)
    assert out.num_rows == 10_000 and pc.sum(out.column("record_count")).as_py() == sum(
        e.file.row_count for e in big
    )
    assert out.column("file_path").to_pylist()[-1].endswith("data-x-9999.parquet")


# --------------------------------------------------------------------------------------------
# manifests, partitions
# --------------------------------------------------------------------------------------------


def test_manifests_are_the_snapshots_manifest_lists(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(12))
    t.write_arrow(sample_rows(6, start=50))
    snap = t.latest_snapshot()
    assert snap is not None
    scan = t.new_file_store_scan()
    metas = scan.data_manifests(snap)
    out = t.inspect.system_table("manifests")
    assert out.column("file_name").to_pylist() == [m.file_name for m in metas]
    assert out.column("file_size").to_pylist() == [m.file_size for m in metas]
    added = pc.sum(out.column("num_added_files")).as_py() - pc.sum(out.column("num_deleted_files")).as_py()
    assert added == len(scan.live_entries(snap))
    assert set(out.column("min_partition_stats").to_pylist()) == {"{2024-01-01}"}
    assert set(out.column("max_partition_stats").to_pylist()) == {"{2024-01-04}"}
    one = t.copy({"scan.snapshot-id": "1"}).inspect.system_table("manifests").column("file_name").to_pylist()
    first = t.snapshot_manager.snapshot(1)
    assert one == [m.file_name for m in scan.data_manifests(first)]


def test_partitions_aggregate_the_live_files(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.a", sample_rows(1).schema, partition_keys=["dt"])
    t.write_arrow(sample_rows(10))
    t.write_arrow(sample_rows(7, start=10))
    out = t.inspect.system_table("partitions").to_pylist()
    files = t.inspect.system_table("files")
    data = t.to_arrow()
    assert [r["partition"] for r in out] == [f"dt=2024-01-0{i}" for i in range(1, 5)]
    for r in out:
        value = r["partition"].split("=")[1]
        mine = files.filter(pc.equal(files.column("partition"), "{" + value + "}"))
        assert r["record_count"] == pc.sum(mine.column("record_count")).as_py()
        assert r["record_count"] == data.column("dt").to_pylist().count(value)
        assert r["file_count"] == mine.num_rows
        assert r["file_size_in_bytes"] == pc.sum(mine.column("file_size_in_bytes")).as_py()
        assert r["last_update_time"] == pc.max(mine.column("creation_time")).as_py()
        assert r["total_buckets"] == -1 and r["done"] is False and r["deleted_record_count"] == 0
        assert r["created_at"] is None and r["created_by"] is None and r["options"] is None


def test_partitions_of_an_unpartitioned_table(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.a", sample_rows(1).schema)
    t.write_arrow(sample_rows(9))
    (row,) = t.inspect.system_table("partitions").to_pylist()
    assert row["partition"] == "" and row["record_count"] == 9 and row["file_count"] == 1
    assert t.inspect.system_table("files").column("partition").to_pylist() == ["{}"]
    assert t.inspect.system_table("manifests").column("min_partition_stats").to_pylist() == ["{}"]


def test_partitions_count_deletion_vector_rows(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.a", sample_rows(1).schema, partition_keys=["dt"], options={"deletion-vectors.enabled": "true"}
    )
    t.write_arrow(sample_rows(8))
    entry = next(e for e in files_table.live_entries(t) if b"2024-01-02" in e.partition)
    meta = IndexFileMeta(
        "DELETION_VECTORS", "index-sys-1", 10, 1, (DeletionVectorMeta(entry.file.file_name, 1, 8, 2),)
    )
    message = CommitMessage(entry.partition, entry.bucket, entry.total_buckets, new_index_files=(meta,))
    t.file_io.write_bytes(t.paths.index_file_path("index-sys-1"), bytes(10))  # a commit checks its files exist
    t.new_file_store_commit("dv").commit([message], 1)
    counts = dict(
        zip(
            *[
                t.inspect.system_table("partitions").column(c).to_pylist()
                for c in ("partition", "deleted_record_count")
            ],
            strict=True,
        )
    )
    assert counts == {"dt=2024-01-01": 0, "dt=2024-01-02": 2, "dt=2024-01-03": 0, "dt=2024-01-04": 0}


# --------------------------------------------------------------------------------------------
# tags, consumers
# --------------------------------------------------------------------------------------------


def test_tags_rows(clocked: FileSystemCatalog, clock: ManualClock, utc: None) -> None:
    t = _pk_table(clocked)
    t.write_arrow(sample_rows(6))
    clock.advance(5000)
    t.write_arrow(sample_rows(4, start=50))
    t.maintenance.create_tag("b-tag", 2)
    t.maintenance.create_tag("a-tag", 1)
    # A tag file as Java writes one with a retention.
    tag = t.snapshot_manager.snapshot(1).copy(
        tag_create_time=[2024, 3, 4, 5, 6, 7, 8_000_000], tag_time_retained="86400.5"
    )
    t.file_io.write_bytes(t.paths.tag_path("java"), tag.to_json().encode())
    rows = t.inspect.system_table("tags").to_pylist()
    assert [r["tag_name"] for r in rows] == ["a-tag", "b-tag", "java"]
    assert [r["snapshot_id"] for r in rows] == [1, 2, 1]
    assert [r["record_count"] for r in rows] == [6, 10, 6]
    assert [r["commit_time"] for r in rows] == [_at(T0), _at(T0 + 5000), _at(T0)]
    assert rows[2]["create_time"] == dt.datetime(2024, 3, 4, 5, 6, 7, 8000)
    assert rows[2]["time_retained"] == "PT24H0.5S"
    t.file_io.delete(t.paths.tag_path("b-tag"))
    assert t.inspect.system_table("tags").column("tag_name").to_pylist() == ["a-tag", "java"]


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        ("0", "PT0S"),
        ("0.0", "PT0S"),
        ("90", "PT1M30S"),
        ("3600", "PT1H"),
        ("86400.000000000", "PT24H"),
        ("1.5", "PT1.5S"),
        ("-0.5", "PT-0.5S"),
        ("-90", "PT-1M-30S"),
        ("3661.001", "PT1H1M1.001S"),
        (None, None),
    ],
)
def test_java_duration_string(seconds: str | None, expected: str | None) -> None:
    assert java_duration_string(seconds) == expected


def test_consumers_rows(catalog: FileSystemCatalog) -> None:
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(3))
    t.consumer_manager.reset_consumer("zeta", Consumer(1))
    t.consumer_manager.reset_consumer("alpha", Consumer(4))
    out = t.inspect.system_table("consumers")
    assert out.to_pylist() == [
        {"consumer_id": "alpha", "next_snapshot_id": 4},
        {"consumer_id": "zeta", "next_snapshot_id": 1},
    ]
    t.consumer_manager.delete_consumer("zeta")
    assert t.inspect.system_table("consumers").column("consumer_id").to_pylist() == ["alpha"]


# --------------------------------------------------------------------------------------------
# interop: pypaimon 2.1.0 reads the same system tables
# --------------------------------------------------------------------------------------------

_PEER_SCRIPT = r"""
import sys, pyarrow.parquet as pq
from pypaimon import CatalogFactory
wh, ident, out = sys.argv[1:4]
cat = CatalogFactory.create({"warehouse": wh})
for name in sys.argv[4:]:
    t = cat.get_table(ident + "$" + name)
    rb = t.new_read_builder()
    pq.write_table(rb.new_read().to_arrow(rb.new_scan().plan().splits()), out + "/" + name + ".parquet")
"""

#: pypaimon 2.1.0 departs from Java in these $files columns (partition as k=v, stats as JSON,
#: file_path as the bare name, creation_time truncated to seconds, file_source as a number), and
#: has no $snapshots.operation column: they are compared separately or not at all.
_PEER_DIFFERS = {
    "files": {
        "partition",
        "file_path",
        "null_value_counts",
        "min_value_stats",
        "max_value_stats",
        "creation_time",
        "file_source",
    }
}


@pytest.mark.interop
def test_same_as_pypaimon(tmp_path: Path, require_peers: None, utc: None) -> None:
    from tests.peer_python import run_peer_script

    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    t = _pk_table(catalog)
    t.write_arrow(sample_rows(20))
    t.write_arrow(sample_rows(10, start=5))
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    t.consumer_manager.reset_consumer("c1", Consumer(2))
    out_dir = tmp_path / "peer"
    out_dir.mkdir()
    run_peer_script(_PEER_SCRIPT, wh, "db.t", str(out_dir), *SYSTEM_TABLES)
    for name in SYSTEM_TABLES:
        theirs = pq.read_table(out_dir / f"{name}.parquet")
        ours = t.inspect.system_table(name)
        assert theirs.num_rows == ours.num_rows > 0, name
        assert set(theirs.column_names) <= set(ours.column_names), name
        key = ours.column_names[0] if name != "files" else "file_path"
        order_t = pc.sort_indices(theirs, [("file_path" if name == "files" else key, "ascending")])
        theirs = theirs.take(order_t)
        if name == "files":
            ours = ours.append_column(
                "_name", pa.array([Path(p).name for p in ours.column("file_path").to_pylist()])
            )
            ours = ours.take(pc.sort_indices(ours, [("_name", "ascending")]))
            assert ours.column("_name").to_pylist() == theirs.column("file_path").to_pylist()
            for mine, peer in zip(ours.to_pylist(), theirs.to_pylist(), strict=True):
                for col in ("null_value_counts", "min_value_stats", "max_value_stats"):
                    assert _map(mine[col]) == {k: _java_str(v) for k, v in json.loads(peer[col]).items()}
        else:
            ours = ours.take(pc.sort_indices(ours, [(key, "ascending")]))
        for col in theirs.column_names:
            if col in _PEER_DIFFERS.get(name, set()):
                continue
            assert ours.column(col).to_pylist() == theirs.column(col).to_pylist(), f"{name}.{col}"


def _java_str(v: object) -> str:
    if v is None:
        return "null"
    return str(v)
