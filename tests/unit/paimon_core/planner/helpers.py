"""Crafted table states and real tables for the planner tests."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.maintenance.table_state import BucketState, PartitionState, TableState
from paimon_core.table.table import FileStoreTable

MIB = 1024 * 1024
HOUR = 3_600_000
DAY = 24 * HOUR
#: 2026-11-02 03:00 UTC: the daily tag due is 2026-11-01.
NOW = int(dt.datetime(2026, 11, 2, 3, 0, tzinfo=dt.UTC).timestamp() * 1000)
PARTITION = "dt=2026-11-01"

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("v", pa.int64()),
    ]
)


def partition(
    text: str = PARTITION, *, created: int | None = NOW - DAY, time: int | None = None, size: int = MIB
) -> PartitionState:
    key, _, value = text.partition("=")
    return PartitionState(
        partition=text,
        spec=((key, value),),
        file_count=3,
        total_bytes=size,
        row_count=100,
        small_file_count=3,
        last_file_creation_millis=created,
        partition_time_millis=time,
    )


def pk_bucket(
    runs: Sequence[tuple[int, int, int]],
    *,
    part: str = PARTITION,
    bucket: int = 0,
    created: int | None = None,
) -> BucketState:
    """A primary-key bucket with ``runs`` as (level, bytes, files), newest first."""
    return BucketState(
        partition=part,
        bucket=bucket,
        file_count=sum(r[2] for r in runs),
        total_bytes=sum(r[1] for r in runs),
        small_file_count=0,
        small_bytes=0,
        level0_file_count=sum(r[2] for r in runs if r[0] == 0),
        runs=tuple(runs),
        max_level_created_millis=created,
    )


def append_bucket(
    *, part: str = PARTITION, bucket: int = 0, files: int = 8, minor: int = 0, full: int = 0, size: int = MIB
) -> BucketState:
    return BucketState(
        partition=part,
        bucket=bucket,
        file_count=files,
        total_bytes=files * size,
        small_file_count=files,
        small_bytes=files * size,
        level0_file_count=files,
        minor_files=minor,
        minor_bytes=minor * size,
        full_files=full,
        full_bytes=full * size,
    )


def state(
    *,
    options: Mapping[str, str] | None = None,
    primary_keys: Sequence[str] = ("id", "dt"),
    buckets: Sequence[BucketState] = (),
    partitions: Sequence[PartitionState] | None = None,
    **kw: Any,
) -> TableState:
    """A table state with 10 snapshots (11..20) inside their retention, unless ``kw`` says otherwise."""
    base: dict[str, Any] = {
        "table": "db.t",
        "path": "/wh/db.db/t",
        "collected_at_millis": NOW,
        "checked_at_millis": NOW,
        "source": "scan",
        "schema_id": 0,
        "primary_keys": tuple(primary_keys),
        "partition_keys": ("dt",),
        "options": dict(options or {"bucket": "2"}),
        "snapshot_id": 20,
        "snapshot_time_millis": NOW - HOUR // 2,
        "snapshot_commit_kind": "APPEND",
        "earliest_snapshot_id": 11,
        "earliest_snapshot_time_millis": NOW - 3 * DAY,
        "successor_time_millis": NOW - 10 * 60_000,
        "snapshot_count": 10,
        "time_retention_end": 11,
        "retention_cutoff_millis": NOW - HOUR,
        "data_file_count": sum(b.file_count for b in buckets),
        "total_bytes": sum(b.total_bytes for b in buckets),
        "target_file_size": 128 * MIB if primary_keys else 256 * MIB,
        "small_file_threshold": int((128 if primary_keys else 256) * MIB * 0.7),
        "bucket_count": len(buckets),
        "buckets": tuple(buckets),
        "partitions": tuple(partitions if partitions is not None else [partition()]),
    }
    base.update(kw)
    return TableState(**base)


def rows(ids: Sequence[int], v: int, day: str = "2026-11-01") -> pa.Table:
    return pa.table({"id": list(ids), "dt": [day] * len(ids), "v": [v] * len(ids)}, schema=SCHEMA)


def write_commits(
    table: FileStoreTable, commits: int, *, days: Sequence[str] = ("2026-11-01",), size: int = 50
) -> None:
    """``commits`` commits, each writing ``size`` overlapping keys into every day of ``days``."""
    for i in range(commits):
        batch = pa.concat_tables([rows(range(i * 10, i * 10 + size), i, d) for d in days])
        table.write_arrow(batch)


def new_table(catalog: FileSystemCatalog, name: str, *, pk: bool, **options: str) -> FileStoreTable:
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        primary_keys=["id", "dt"] if pk else (),
        partition_keys=["dt"],
        options={"write-only": "true", **options},
    )


#: The table kinds of the real-table tests (every one partitioned by dt, write-only): options by name.
TABLE_KINDS = {
    "append_unaware": {"bucket": "-1"},
    "append_fixed": {"bucket": "2", "bucket-key": "id"},
    "pk_fixed": {"bucket": "2"},
    "pk_dynamic": {"bucket": "-1"},
    "data_evolution": {"bucket": "-1", "row-tracking.enabled": "true", "data-evolution.enabled": "true"},
}


def kind_table(catalog: FileSystemCatalog, kind: str, **options: str) -> FileStoreTable:
    """A table of one of :data:`TABLE_KINDS`, named after it."""
    return new_table(catalog, kind, pk=kind.startswith("pk"), **TABLE_KINDS[kind], **options)


def wall_now() -> int:
    return int(time.time() * 1000)
