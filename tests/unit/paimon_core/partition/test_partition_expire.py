"""Partition expiry on real tables: one OVERWRITE commit of DELETEs, dry runs, bad input that
changes nothing, time travel to the dropped rows, writers' post-commit expiry, ``$partitions``."""

from __future__ import annotations

import datetime as dt
import glob
import os
from collections.abc import Iterator

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError, PaimonError
from paimon_core.manifest.entries import FileKind
from paimon_core.operation.partition_expire import PartitionExpire
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

HOUR = 3_600_000
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hh", pa.int32())])


def local_millis(*args: int) -> int:
    """Epoch millis of a local wall-clock time (what Java's LocalDateTime.now() would show)."""
    return int(dt.datetime(*args).timestamp() * 1000)  # type: ignore[misc]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(local_millis(2024, 1, 10))


@pytest.fixture
def cat(local_warehouse: str, clock: ManualClock) -> FileSystemCatalog:
    c = FileSystemCatalog(local_warehouse, clock=clock)
    c.create_database("db")
    return c


def rows(days: list[str], hours: list[int], *, start: int = 0) -> pa.Table:
    n = len(days) * len(hours)
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "dt": pa.array([d for d in days for _ in hours], pa.string()),
            "hh": pa.array([h for _ in days for h in hours], pa.int32()),
        },
        schema=SCHEMA,
    )


DAYS = ["20240101", "20240102", "20240105", "20240109"]


def hourly(cat: FileSystemCatalog, options: dict[str, str] | None = None) -> FileStoreTable:
    """db.t partitioned by (dt, hh), times via '$dt $hh:00' and 'yyyyMMdd H:mm', 4 days x 2 hours."""
    base = {"partition.timestamp-pattern": "$dt $hh:00", "partition.timestamp-formatter": "yyyyMMdd H:mm"}
    t = cat.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"], options={**base, **(options or {})})
    t.write_arrow(rows(DAYS, [0, 12]))
    return t


def ids(t: FileStoreTable) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def test_dry_run_lists_and_changes_nothing(cat: FileSystemCatalog) -> None:
    t = hourly(cat)
    before = t.latest_snapshot()
    r = t.maintenance.expire_partitions("7 d", dry_run=True)  # cutoff 2024-01-03 00:00 local
    assert r.dry_run and r.snapshot_id is None and r.strategy == "values-time"
    assert r.partitions == ["dt=20240101, hh=0", "dt=20240101, hh=12", "dt=20240102, hh=0", "dt=20240102, hh=12"]
    assert r.to_dict()["expired_partitions"][0]["spec"] == {"dt": "20240101", "hh": "0"}
    assert r.expired_partitions[0].record_count == 1
    assert t.latest_snapshot() == before and len(ids(t)) == 8


def test_expire_is_one_overwrite_commit_and_old_snapshots_keep_the_rows(cat: FileSystemCatalog) -> None:
    t = hourly(cat)
    all_ids = ids(t)
    r = t.maintenance.expire_partitions("7 d")
    assert r.snapshot_id == 2 and r.commit_kind == "OVERWRITE"
    assert r.deleted_files == 4 and r.deleted_rows == 4
    snap = t.snapshot_manager.snapshot(2)
    assert snap.commit_kind.value == "OVERWRITE"
    delta = t.new_file_store_scan().delta_entries(snap)
    assert len(delta) == 4 and {e.kind for e in delta} == {FileKind.DELETE}
    kept = t.to_arrow()
    assert sorted(set(kept.column("dt").to_pylist())) == ["20240105", "20240109"]
    # time travel: snapshot 1 still reads the dropped rows (nothing was deleted from storage)
    assert ids(t.copy({"scan.snapshot-id": "1"})) == all_ids
    # nothing left to expire: a second run commits nothing
    again = t.maintenance.expire_partitions("7 d")
    assert again.partitions == [] and again.snapshot_id is None and t.latest_snapshot().id == 2  # type: ignore[union-attr]


def test_max_expires_takes_the_oldest_first(cat: FileSystemCatalog) -> None:
    t = hourly(cat, {"partition.expiration-max-num": "3"})
    assert t.maintenance.expire_partitions("1 d").partitions == ["dt=20240101, hh=0", "dt=20240101, hh=12", "dt=20240102, hh=0"]
    assert t.maintenance.expire_partitions("1 d", max_expires=1).partitions == ["dt=20240102, hh=12"]


def test_procedure_arguments_override_the_options(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"])
    t.write_arrow(rows(DAYS, [0]))
    # no formatter: the default y-M-d does not parse 20240101, nothing expires
    assert t.maintenance.expire_partitions("1 d").partitions == []
    got = t.maintenance.expire_partitions("1 d", timestamp_formatter="yyyyMMdd", dry_run=True)
    assert got.partitions == ["dt=20240101, hh=0", "dt=20240102, hh=0", "dt=20240105, hh=0"]
    got = t.maintenance.expire_partitions("1 d", timestamp_pattern="$dt", timestamp_formatter="yyyyMMdd", dry_run=True)
    assert len(got.partitions) == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"expire_strategy": "values"}, InvalidArgumentError, "Unknown partition expiration strategy 'values'"),
        ({"timestamp_formatter": "yyyy-MM-dd bb"}, InvalidArgumentError, "unknown pattern letter"),
        ({"timestamp_formatter": "yyyyMM"}, InvalidArgumentError, "needs a year"),
        ({"max_expires": -1}, InvalidArgumentError, "max_expires"),
        ({"expiration_time": "1 fortnight"}, InvalidOptionError, "Invalid duration"),
        ({"expiration_time": None}, InvalidArgumentError, "needs expiration_time"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    cat: FileSystemCatalog, kwargs: dict[str, object], error: type[PaimonError], message: str
) -> None:
    t = hourly(cat)
    args = {"expiration_time": "1 d", **kwargs}
    with pytest.raises(error, match=message):
        t.maintenance.expire_partitions(**args)  # type: ignore[arg-type]
    assert t.latest_snapshot().id == 1 and len(ids(t)) == 8  # type: ignore[union-attr]


def test_unpartitioned_table_is_refused(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.u", SCHEMA)
    t.write_arrow(rows(DAYS, [0]))
    with pytest.raises(InvalidArgumentError, match="no partition keys"):
        t.maintenance.expire_partitions("1 d")


@pytest.fixture
def creation_times(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Data files get the stored creation time (local wall-clock millis) pushed last."""
    import paimon_core.manifest.entries as entries

    stack: list[int] = []
    monkeypatch.setattr(entries, "local_creation_millis", lambda: stack[-1])
    yield stack


def stored(*args: int) -> int:
    return int((dt.datetime(*args) - dt.datetime(1970, 1, 1)).total_seconds() * 1000)  # type: ignore[misc]


def test_update_time_uses_the_latest_file_of_the_partition(cat: FileSystemCatalog, creation_times: list[int]) -> None:
    opts = {"partition.expiration-strategy": "update-time", "partition.expiration-time": "3 d"}
    t = cat.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"], options=opts)
    creation_times.append(stored(2024, 1, 1))
    t.write_arrow(rows(["a", "b"], [0]))
    creation_times.append(stored(2024, 1, 8))
    t.write_arrow(rows(["b"], [0], start=10))  # b is updated later: its newest file counts
    r = t.maintenance.expire_partitions("3 d", dry_run=True)  # now 2024-01-10: cutoff 2024-01-07
    assert r.strategy == "update-time" and r.partitions == ["dt=a, hh=0"]
    parts = {p["partition"]: p for p in t.inspect.system_table("partitions").to_pylist()}
    assert parts["dt=b/hh=0"]["last_update_time"] == dt.datetime(2024, 1, 8)
    assert parts["dt=a/hh=0"]["expire_time"] == dt.datetime(2024, 1, 4)
    assert parts["dt=b/hh=0"]["expire_time"] == dt.datetime(2024, 1, 11)
    # the $partitions columns Java has still sum the live files
    assert parts["dt=b/hh=0"]["record_count"] == 2 and parts["dt=b/hh=0"]["file_count"] == 2


def test_partitions_table_shows_when_each_partition_expires(cat: FileSystemCatalog) -> None:
    t = hourly(cat, {"partition.expiration-time": "7 d"})
    got = {r["partition"]: r["expire_time"] for r in t.inspect.system_table("partitions").to_pylist()}
    assert got["dt=20240101/hh=0"] == dt.datetime(2024, 1, 8)
    assert got["dt=20240109/hh=12"] == dt.datetime(2024, 1, 16, 12)
    off = cat.create_table("db.off", SCHEMA, partition_keys=["dt", "hh"])
    off.write_arrow(rows(DAYS, [0]))
    assert set(off.inspect.system_table("partitions").column("expire_time").to_pylist()) == {None}


# --- writers ------------------------------------------------------------------------------


def test_writer_expires_after_commit_with_zero_check_interval(cat: FileSystemCatalog, clock: ManualClock) -> None:
    t = hourly(cat, {"partition.expiration-time": "7 d", "partition.expiration-check-interval": "0"})
    # hourly() already committed once: the first write's commit dropped what was old then
    assert sorted(set(t.to_arrow().column("dt").to_pylist())) == ["20240105", "20240109"]
    clock.set(local_millis(2024, 1, 13))  # cutoff 2024-01-06
    r = t.write_arrow(rows(["20240112"], [0], start=100))
    assert r.maintenance_error is None
    assert r.expired_partitions == ("dt=20240105, hh=0", "dt=20240105, hh=12")
    assert sorted(set(t.to_arrow().column("dt").to_pylist())) == ["20240109", "20240112"]
    last = t.latest_snapshot()
    assert last is not None and last.commit_kind.value == "OVERWRITE" and last.commit_user == r.commit_user


def test_batch_writer_respects_the_check_interval_as_java(cat: FileSystemCatalog, clock: ManualClock) -> None:
    t = hourly(cat, {"partition.expiration-time": "7 d"})  # check interval: 1 h from the commit's creation
    r = t.write_arrow(rows(["20240109"], [1], start=100))
    assert r.expired_partitions == () and len(ids(t)) == 9
    end_input = t.copy({"end-input.check-partition-expire": "true"})
    r = end_input.write_arrow(rows(["20240109"], [2], start=200))
    assert len(r.expired_partitions) == 4
    assert "20240101" not in t.to_arrow().column("dt").to_pylist()


def test_stream_writer_checks_when_the_interval_passed(cat: FileSystemCatalog, clock: ManualClock) -> None:
    t = hourly(cat, {"partition.expiration-time": "7 d", "partition.expiration-check-interval": "1 h"})
    builder = t.new_stream_write_builder("stream-1")
    commit = builder.new_commit()

    def write(i: int) -> tuple[str, ...]:
        w = builder.new_write()
        w.write_arrow(rows(["20240109"], [i], start=100 + i))
        return commit.commit(w.prepare_commit(), i).expired_partitions

    assert write(1) == ()  # 0 h since the commit was made
    clock.advance(HOUR // 2)
    assert write(2) == ()
    clock.advance(HOUR)
    assert len(write(3)) == 4  # 1.5 h > 1 h: checked and dropped
    clock.advance(HOUR // 2)
    assert write(4) == ()  # the interval restarts at the last check
    assert commit.is_committed(4)


def test_write_only_writers_do_not_expire(cat: FileSystemCatalog) -> None:
    t = hourly(cat, {"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0", "write-only": "true"})
    assert len(ids(t)) == 8


def test_bad_expiry_options_fail_the_write_before_it_lands(cat: FileSystemCatalog) -> None:
    t = cat.create_table(
        "db.t",
        SCHEMA,
        partition_keys=["dt", "hh"],
        options={"partition.expiration-time": "1 d", "partition.expiration-strategy": "nope"},
    )
    builder = t.new_batch_write_builder()
    with pytest.raises(InvalidArgumentError, match="Unknown partition expiration strategy"):
        builder.new_commit()
    assert t.latest_snapshot() is None


@pytest.mark.interop
def test_pypaimon_reads_the_table_after_expiry(cat: FileSystemCatalog, local_warehouse: str, pypaimon: object) -> None:
    t = hourly(cat)
    t.maintenance.expire_partitions("7 d")
    got = pypaimon.read(local_warehouse, "db.t")  # type: ignore[attr-defined]
    assert sorted(got.column("id").to_pylist()) == ids(t)
    assert sorted(set(got.column("dt").to_pylist())) == ["20240105", "20240109"]
    old = pypaimon.read(local_warehouse, "db.t", options={"scan.snapshot-id": 1})  # type: ignore[attr-defined]
    assert old.num_rows == 8


def test_tags_keep_dropped_files_until_snapshot_expiry_and_tag_deletion(cat: FileSystemCatalog) -> None:
    t = hourly(cat)
    t.maintenance.create_tag("before", 1)
    t.maintenance.expire_partitions("7 d")
    t.write_arrow(rows(["20240109"], [1], start=100))  # snapshot 3
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than="2999-01-01T00:00:00")
    assert t.snapshot_manager.earliest_snapshot_id() == 3
    # the tag still reads every dropped row: snapshot expiry kept the files it needs
    assert len(ids(t.copy({"scan.tag-name": "before"}))) == 8
    dropped = [f for f in t.inspect.system_table("files").to_pylist() if f["partition"].startswith("{20240101")]
    assert dropped == []
    old_files = glob.glob(os.path.join(t.path, "dt=20240101", "*", "bucket-*", "*.parquet"))
    assert old_files  # still on storage: the tag needs them
    t.maintenance.delete_tag("before", dry_run=False)
    assert not any(os.path.exists(f) for f in old_files)  # gone with the last thing holding them
    assert len(ids(t)) == 5


def test_a_partition_dropped_meanwhile_is_not_an_error(cat: FileSystemCatalog) -> None:
    t = hourly(cat)
    op = PartitionExpire(t.store, expiration_time="7 d")
    planned = op.plan()
    t.maintenance.expire_partitions("7 d")  # another run drops them first
    commit = t.new_file_store_commit("late").drop_partitions([p.partition for p in planned], 1)
    assert commit.deleted_files == 0
    assert len(ids(t)) == 4


def test_null_partition_expires_by_update_time_only(cat: FileSystemCatalog, creation_times: list[int]) -> None:
    t = cat.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"])
    creation_times.append(stored(2024, 1, 1))
    data = pa.table({"id": [1, 2], "dt": [None, "2024-01-01"], "hh": pa.array([0, 0], pa.int32())}, schema=SCHEMA)
    t.write_arrow(data)
    # values-time: the null partition has no time and stays (Java logs and skips it)
    assert t.maintenance.expire_partitions("1 d", dry_run=True).partitions == ["dt=2024-01-01, hh=0"]
    r = t.maintenance.expire_partitions("1 d", expire_strategy="update-time")
    assert r.partitions == ["dt=2024-01-01, hh=0", "dt=__DEFAULT_PARTITION__, hh=0"]
    assert r.expired_partitions[1].to_dict()["spec"] == {"dt": "__DEFAULT_PARTITION__", "hh": "0"}
    assert ids(t) == []
