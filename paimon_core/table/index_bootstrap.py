"""Bootstrap the key -> (partition, bucket) index of a cross-partition table (Java's
``IndexBootstrap``), reading through the table's scan and read.

Reads the primary-key columns of the live, merged rows of the latest snapshot, one
(partition, bucket) split at a time, in ``cross-partition-upsert.bootstrap-parallelism``
threads. All levels are read, level 0 included (first-row and deletion-vector tables hide
level 0 from batch reads, but their keys exist). With ``cross-partition-upsert.index-ttl``,
a split whose files are all older than the TTL is skipped, as in Java (such keys may then be
written twice: the documented price of the TTL). The options, the split type and the TTL rule
are store-level (:mod:`paimon_core.crosspartition.index_bootstrap`); the write hands
:func:`bootstrap_keys` to the assigner (:func:`paimon_core.crosspartition.setup.new_global_index_assigner`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from paimon_core.crosspartition.index_bootstrap import (
    BOOTSTRAP_PARALLELISM_DEFAULT,
    BootstrapSplit,
    within_ttl,
)
from paimon_core.operation.scan import ScanFilter
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.source import DataSplit
from paimon_core.table.table_read import TableRead
from paimon_core.table.table_scan import TableScan

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["bootstrap_keys"]

logger = logging.getLogger(__name__)


class _AllLevelsScan(TableScan):
    """A batch scan that keeps level-0 files (Java's ``withLevelFilter(level -> true)``)."""

    def _skips_level0(self) -> bool:
        return False

    def splits_of(self, snapshot: Snapshot, flt: ScanFilter) -> list[DataSplit]:
        entries = self.table.new_file_store_scan().live_entries(snapshot, flt)
        return self._splits(snapshot.id, entries, incremental=False, dvs=self._deletion_files(snapshot, entries))


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
        kept = [s for s in splits if within_ttl(s.files, index_ttl_ms, now)]
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
