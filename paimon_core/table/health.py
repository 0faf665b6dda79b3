"""Table health from metadata only: snapshots, LSM shape, small files, consumers, tags.

Nothing here reads a data file. One call reads the snapshot directory listing, the latest and
earliest snapshots, the latest snapshot's manifests (base + delta), the consumer files and the tag
files. The numbers follow Paimon's own names where Paimon has them:

* sorted runs of a primary-key bucket: one per level-0 file plus one per non-empty level >= 1
  (Java ``Levels.numberOfSortedRuns``), compared with ``num-sorted-run.stop-trigger`` (the count at
  which Paimon's writers stop and wait for compaction);
* ``maxLevel0FileCount`` / ``avgLevel0FileCount`` (Java ``CompactionMetrics``), over buckets;
* small files: below ``target-file-size`` x ``compaction.small-file-ratio`` (Java
  ``compactionFileSize``; primary-key and append tables have different target defaults).

:func:`table_health` is what Airflow's sensors and triggers (``paimon_airflow``) gate on and what
the UI page shows; it has no Airflow dependency.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.append.append_compact_coordinator import AppendCompactConfig
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.mergetree.compact.compact_options import compaction_file_size, num_sorted_run_stop_trigger
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "BucketHealth",
    "ConsumerLag",
    "HealthPenalties",
    "TableHealth",
    "TagRef",
    "health_of",
    "partition_text",
    "table_health",
]

logger = logging.getLogger(__name__)

#: Score weights (points out of 100). Primary-key tables split the data-layout points between
#: sorted runs and small files; append tables have no sorted runs, so small files take both.
RUNS_WEIGHT = 40.0
SMALL_FILES_WEIGHT = 40.0
RETENTION_WEIGHT = 20.0


@dataclass(frozen=True)
class BucketHealth(_ToDict):
    """One (partition, bucket) of the latest snapshot."""

    partition: str  # ``k1=v1/k2=v2``; ``''`` for an unpartitioned table
    bucket: int
    file_count: int
    total_bytes: int
    small_file_count: int
    level0_file_count: int  # primary-key tables; every file of an append table is on level 0
    sorted_runs: int | None  # primary-key tables only


@dataclass(frozen=True)
class ConsumerLag(_ToDict):
    """A consumer's position against the snapshots the table still has."""

    consumer_id: str
    next_snapshot: int
    lag_snapshots: int  # snapshots committed that it has not consumed yet
    behind_earliest: bool  # its next snapshot is already expired: it lost its position


@dataclass(frozen=True)
class TagRef(_ToDict):
    """A tag and the snapshot it holds."""

    name: str
    snapshot_id: int
    time_millis: int


@dataclass(frozen=True)
class HealthPenalties(_ToDict):
    """Points subtracted from 100, per cause (see :func:`table_health`)."""

    sorted_runs: float
    small_files: float
    retention: float


@dataclass(frozen=True)
class TableHealth(_ToDict):
    """Health of one table at its latest snapshot (metadata only)."""

    table: str
    computed_at_millis: int
    primary_key: bool
    # snapshots
    snapshot_id: int | None
    snapshot_time_millis: int | None
    snapshot_commit_kind: str | None
    snapshot_age_millis: int | None
    earliest_snapshot_id: int | None
    earliest_snapshot_time_millis: int | None
    snapshot_count: int
    # files of the latest snapshot
    partition_count: int
    bucket_count: int  # (partition, bucket) pairs with live files
    data_file_count: int
    total_bytes: int
    total_rows: int  # physical rows in the files (not merged: a key updated twice counts twice)
    small_file_threshold_bytes: int
    small_file_count: int
    small_file_ratio: float  # small files / data files (0.0 for an empty table)
    # LSM shape (primary-key tables; None for append tables)
    sorted_run_stop_trigger: int | None
    max_sorted_runs: int | None
    avg_sorted_runs: float | None
    max_level0_file_count: int | None  # Paimon metric maxLevel0FileCount
    avg_level0_file_count: float | None  # Paimon metric avgLevel0FileCount
    compaction_debt: float | None  # max sorted runs / stop trigger; >= 1.0 stalls writers
    # readers and retention
    consumers: tuple[ConsumerLag, ...]
    tags: tuple[TagRef, ...]
    # score
    health_score: int
    penalties: HealthPenalties
    buckets: tuple[BucketHealth, ...]


def partition_text(table: FileStoreTable, partition: bytes) -> str:
    """``dt=2024-01-01/hr=3`` (``''`` for an unpartitioned table), as the ``$partitions`` table shows it."""
    if not table.partition_keys:
        return ""
    from paimon_core.table.system.partitions_table import partition_string

    return partition_string(table, partition)


def small_file_threshold(table: FileStoreTable) -> int:
    """Files below this many bytes are small: ``target-file-size`` x ``compaction.small-file-ratio``."""
    options: Mapping[str, str] = table.options.options
    if table.primary_keys:
        return compaction_file_size(options)
    return AppendCompactConfig.from_options(options).compaction_file_size


def table_health(table: FileStoreTable, *, now_millis: int | None = None) -> TableHealth:
    """Measure ``table`` at its latest snapshot, from metadata only.

    ``now_millis`` (default: the table's clock) dates the result and ages the snapshots.

    The health score is 100 minus three penalties, in the spirit of Amoro's (small-file 40 +
    equality-delete 40 + position-delete 20 points), rounded and clamped to 0..100:

    * **sorted runs** (primary-key tables, 40 points): ``40 x clamp((R - 1) / (S - 1))`` where
      ``R`` is the most sorted runs in any bucket and ``S`` the stop trigger. One run per bucket
      costs nothing; at the stop trigger (writers stall) the full 40. The worst bucket counts,
      not the average, because one hot bucket is enough to stall a writer and slow every read
      of it.
    * **small files** (40 points; 80 for append tables, which have no sorted runs):
      ``weight x excess / files``, where ``excess`` counts the small files of each bucket beyond
      its first (one small file per bucket cannot be compacted away, so a small table is not
      penalised). The plain ``small_file_ratio`` is reported as measured.
    * **retention** (20 points): 10 when a consumer's next snapshot has already expired (it lost
      its position), and 10 when snapshot expiry lags: more snapshots than
      ``snapshot.num-retained.max``, or more than ``snapshot.num-retained.min`` with the earliest
      older than twice ``snapshot.time-retained``.

    ``compaction_debt`` is ``R / S``: 1.0 means Paimon's writers would stop; after a full
    compaction it is ``1 / S``.
    """
    now = table.clock.now_millis() if now_millis is None else now_millis
    sm = table.snapshot_manager
    snapshot_ids = sm.list_snapshot_ids()
    latest = sm.latest_snapshot()
    earliest: Snapshot | None = sm.earliest_snapshot() if latest is not None else None
    entries: list[ManifestEntry] = (
        table.new_file_store_scan().live_entries(latest) if latest is not None else []
    )
    return health_of(
        table,
        now_millis=now,
        latest=latest,
        earliest=earliest,
        entries=entries,
        snapshot_count=len(snapshot_ids),
        consumers=table.consumer_manager.consumers(),
        tags=table.tag_manager.tags(),
    )


def health_of(
    table: FileStoreTable,
    *,
    now_millis: int,
    latest: Snapshot | None,
    earliest: Snapshot | None,
    entries: Sequence[ManifestEntry],
    snapshot_count: int,
    consumers: Mapping[str, int],
    tags: Mapping[str, Snapshot],
) -> TableHealth:
    """:func:`table_health` over metadata the caller has already read (the latest and earliest
    snapshots, the latest snapshot's live entries, the snapshot count, the consumers' next
    snapshot ids and the tags), so a caller that needs the entries too reads them once."""
    now = now_millis
    is_pk = bool(table.primary_keys)
    threshold = small_file_threshold(table)
    stop = num_sorted_run_stop_trigger(table.options.options) if is_pk else None

    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        by_bucket.setdefault((e.partition, e.bucket), []).append(e)

    buckets: list[BucketHealth] = []
    excess_small = 0
    for (partition, bucket), group in by_bucket.items():
        level0 = sum(1 for e in group if e.file.level == 0)
        higher = {e.file.level for e in group if e.file.level > 0}
        small = sum(1 for e in group if e.file.file_size < threshold)
        excess_small += max(0, small - 1)
        buckets.append(
            BucketHealth(
                partition=partition_text(table, partition),
                bucket=bucket,
                file_count=len(group),
                total_bytes=sum(e.file.file_size for e in group),
                small_file_count=small,
                level0_file_count=level0,
                sorted_runs=level0 + len(higher) if is_pk else None,
            )
        )
    buckets.sort(key=lambda b: (b.partition, b.bucket))

    files = len(entries)
    small_files = sum(b.small_file_count for b in buckets)
    runs = [b.sorted_runs for b in buckets if b.sorted_runs is not None]
    level0s = [b.level0_file_count for b in buckets]
    max_runs = max(runs, default=0) if is_pk else None
    avg_runs = (sum(runs) / len(runs) if runs else 0.0) if is_pk else None
    debt = max_runs / stop if max_runs is not None and stop else None

    latest_id = latest.id if latest is not None else None
    earliest_id = earliest.id if earliest is not None else None
    consumer_lags = tuple(
        ConsumerLag(
            consumer_id=cid,
            next_snapshot=nxt,
            lag_snapshots=max(0, latest_id + 1 - nxt) if latest_id is not None else 0,
            behind_earliest=earliest_id is not None and nxt < earliest_id,
        )
        for cid, nxt in consumers.items()
    )
    tag_refs = tuple(
        TagRef(name=name, snapshot_id=snap.id, time_millis=snap.time_millis)
        for name, snap in sorted(tags.items())
    )

    # --- score ------------------------------------------------------------------------
    runs_penalty = 0.0
    if is_pk and max_runs is not None and stop is not None and max_runs > 1:
        runs_penalty = RUNS_WEIGHT * (min(1.0, (max_runs - 1) / (stop - 1)) if stop > 1 else 1.0)
    small_weight = SMALL_FILES_WEIGHT if is_pk else SMALL_FILES_WEIGHT + RUNS_WEIGHT
    small_penalty = small_weight * excess_small / files if files else 0.0
    retention_penalty = 0.0
    if any(c.behind_earliest for c in consumer_lags):
        retention_penalty += RETENTION_WEIGHT / 2
    opts = table.options
    count = snapshot_count
    expiry_lags = count > opts.snapshot_num_retained_max or (
        earliest is not None
        and count > opts.snapshot_num_retained_min
        and now - earliest.time_millis > 2 * opts.snapshot_time_retained_ms
    )
    if expiry_lags:
        retention_penalty += RETENTION_WEIGHT / 2
    penalties = HealthPenalties(
        sorted_runs=round(runs_penalty, 2), small_files=round(small_penalty, 2), retention=retention_penalty
    )
    score = int(round(max(0.0, min(100.0, 100.0 - runs_penalty - small_penalty - retention_penalty))))

    health = TableHealth(
        table=table.name,
        computed_at_millis=now,
        primary_key=is_pk,
        snapshot_id=latest_id,
        snapshot_time_millis=latest.time_millis if latest is not None else None,
        snapshot_commit_kind=str(latest.commit_kind.value) if latest is not None else None,
        snapshot_age_millis=now - latest.time_millis if latest is not None else None,
        earliest_snapshot_id=earliest_id,
        earliest_snapshot_time_millis=earliest.time_millis if earliest is not None else None,
        snapshot_count=count,
        partition_count=len({p for p, _ in by_bucket}),
        bucket_count=len(by_bucket),
        data_file_count=files,
        total_bytes=sum(e.file.file_size for e in entries),
        total_rows=sum(e.file.row_count for e in entries),
        small_file_threshold_bytes=threshold,
        small_file_count=small_files,
        small_file_ratio=small_files / files if files else 0.0,
        sorted_run_stop_trigger=stop,
        max_sorted_runs=max_runs,
        avg_sorted_runs=avg_runs,
        max_level0_file_count=max(level0s, default=0) if is_pk else None,
        avg_level0_file_count=(sum(level0s) / len(level0s) if level0s else 0.0) if is_pk else None,
        compaction_debt=debt,
        consumers=consumer_lags,
        tags=tag_refs,
        health_score=score,
        penalties=penalties,
        buckets=tuple(buckets),
    )
    logger.debug(
        "Health of %s at snapshot %s: score %d, debt %s, %d/%d small files",
        table.name,
        latest_id,
        score,
        debt,
        small_files,
        files,
    )
    return health
