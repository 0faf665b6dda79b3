"""Bootstrap the key -> (partition, bucket) index of a cross-partition table (Java's
``IndexBootstrap``).

Reads the primary-key columns of the live, merged rows of the latest snapshot, one
(partition, bucket) split at a time, in ``cross-partition-upsert.bootstrap-parallelism``
threads. All levels are read, level 0 included (first-row and deletion-vector tables hide
level 0 from batch reads, but their keys exist). With ``cross-partition-upsert.index-ttl``,
a split whose files are all older than the TTL is skipped, as in Java (such keys may then be
written twice: the documented price of the TTL).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.operation.scan import ScanFilter
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.source import DataSplit
from paimon_core.table.table_read import TableRead
from paimon_core.table.table_scan import TableScan

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)

INDEX_TTL = "cross-partition-upsert.index-ttl"
BOOTSTRAP_PARALLELISM = "cross-partition-upsert.bootstrap-parallelism"
BOOTSTRAP_PARALLELISM_DEFAULT = 10


@dataclass(frozen=True)
class BootstrapSplit:
    """The live keys of one (partition, bucket)."""

    partition: bytes
    bucket: int
    keys: pa.Table


class _AllLevelsScan(TableScan):
    """A batch scan that keeps level-0 files (Java's ``withLevelFilter(level -> true)``)."""

    def _skips_level0(self) -> bool:
        return False

    def splits_of(self, snapshot: Snapshot, flt: ScanFilter) -> list[DataSplit]:
        entries = self.table.new_file_store_scan().live_entries(snapshot, flt)
        return self._splits(snapshot.id, entries, incremental=False, dvs=self._deletion_files(snapshot, entries))


def creation_epoch_millis(stored: int) -> int:
    """Java's ``creationTimeEpochMillis``: the stored local wall-clock millis as epoch millis."""
    local = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=stored)
    return int(local.timestamp() * 1000)


def within_ttl(split: DataSplit, ttl_ms: int, now_ms: int) -> bool:
    """Java's ``IndexBootstrap.filterSplit``: some file of the split is younger than the TTL."""
    return any(f.creation_time is None or now_ms <= creation_epoch_millis(f.creation_time) + ttl_ms for f in split.files)


def bootstrap_keys(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    *,
    key_names: Sequence[str],
    skip_partition: Callable[[bytes], bool] | None = None,
    index_ttl_ms: int | None = None,
    now_ms: int | None = None,
    parallelism: int = BOOTSTRAP_PARALLELISM_DEFAULT,
) -> list[BootstrapSplit]:
    """The primary keys of every live row of ``snapshot``, by (partition, bucket)."""
    if snapshot is None:
        return []
    flt = ScanFilter(file_filter=(lambda e: not skip_partition(e.partition)) if skip_partition else None)
    splits = _AllLevelsScan(table).splits_of(snapshot, flt)
    if index_ttl_ms is not None:
        now = table.clock.now_millis() if now_ms is None else now_ms
        kept = [s for s in splits if within_ttl(s, index_ttl_ms, now)]
        logger.debug("Index TTL skips %d of %d splits of %s", len(splits) - len(kept), len(splits), table.name)
        splits = kept
    if not splits:
        return []
    read = TableRead(table, projection=list(key_names), parallelism=1)

    def read_one(split: DataSplit) -> BootstrapSplit:
        return BootstrapSplit(split.partition, split.bucket, read.to_arrow([split]))

    workers = max(1, min(parallelism, len(splits), os.cpu_count() or 1))
    if workers == 1:
        out = [read_one(s) for s in splits]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            out = list(pool.map(read_one, splits))
    logger.info(
        "Bootstrapped %d keys of %s from snapshot %d (%d splits)",
        sum(b.keys.num_rows for b in out),
        table.name,
        snapshot.id,
        len(splits),
    )
    return [b for b in out if b.keys.num_rows]
