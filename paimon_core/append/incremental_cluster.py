"""Incremental clustering of unaware-bucket append tables (Java ``IncrementalClusterManager``,
``IncrementalClusterStrategy``, ``HistoryPartitionCluster``).

A table with ``clustering.incremental = true`` keeps its files in levels like an LSM: new files at
level 0, clustered files higher. Per partition, the level-0 files are runs of one file each and
every higher level one run; the universal strategy (``compaction.max-size-amplification-percent``,
``compaction.size-ratio``, ``num-sorted-run.compaction-trigger``; no early full compaction, no
off-peak) picks the runs to cluster (``minor``, the default), or all of them (``full``, skipped
when the partition is one run on the max level already clustered by the same columns). Only the
picked files are read, sorted by ``clustering.columns`` with ``clustering.strategy`` (``auto``:
``order`` for one column, ``zorder`` for up to four, ``hilbert`` beyond) and written at the
unit's output level, committed as a COMPACT of exactly those files (see
:mod:`paimon_core.operation.compact.sort_compact`).

History partitions (``clustering.history-partition.idle-to-full-sort``, only when the run names
partitions, as Java): partitions outside the named ones whose newest file is older than the
idle time and that still have files below the max level, oldest first, at most
``clustering.history-partition.limit`` (5), are fully clustered too.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.sorted_run import LevelSortedRun, SortedRun
from paimon_core.sort.table_sorter import SortSpec

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["IncrementalClusterPlanner", "clustering_columns", "clustering_strategy", "partition_levels"]

logger = logging.getLogger(__name__)

CLUSTERING_COLUMNS = "clustering.columns"
CLUSTERING_STRATEGY = "clustering.strategy"
CLUSTERING_INCREMENTAL = "clustering.incremental"
CLUSTERING_HISTORY_PARTITION_LIMIT = "clustering.history-partition.limit"
CLUSTERING_HISTORY_PARTITION_LIMIT_DEFAULT = 5
CLUSTERING_HISTORY_PARTITION_IDLE_TIME = "clustering.history-partition.idle-to-full-sort"


def clustering_columns(options: Mapping[str, str]) -> list[str]:
    raw = options.get(CLUSTERING_COLUMNS) or options.get("sink.clustering.by-columns") or ""
    return [c.strip() for c in raw.split(",") if c.strip()]


def clustering_strategy(options: Mapping[str, str], columns: int) -> str:
    """Java ``CoreOptions.clusteringStrategy``: ``auto`` → order (1 column), zorder (< 5), hilbert."""
    name = (options.get(CLUSTERING_STRATEGY) or options.get("sink.clustering.strategy") or "auto").strip().lower()
    if name == "auto":
        return "order" if columns == 1 else ("zorder" if columns < 5 else "hilbert")
    if name not in ("order", "zorder", "hilbert"):
        raise InvalidOptionError(f"{CLUSTERING_STRATEGY} must be auto, order, zorder or hilbert, got {name!r}")
    return name


def partition_levels(files: Sequence[DataFileMeta]) -> list[LevelSortedRun]:
    """Java ``constructPartitionLevels``: each level-0 file a run, each higher level one run, by level."""
    runs = [LevelSortedRun(0, SortedRun.from_single(f)) for f in files if f.level == 0]
    for level in sorted({f.level for f in files if f.level > 0}):
        runs.append(LevelSortedRun(level, SortedRun.from_sorted([f for f in files if f.level == level])))
    return runs


class IncrementalClusterPlanner:
    """Picks, per partition, the files to cluster and their output level (see the module docstring)."""

    def __init__(self, store: FileStore) -> None:
        from paimon_core.mergetree.compact import compact_options as co
        from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction

        opts = store.options.options
        if store.schema.primary_keys or store.options.bucket != -1:
            raise InvalidArgumentError("only append unaware-bucket table support incremental clustering.")
        if (opts.get(CLUSTERING_INCREMENTAL) or "false").lower() != "true":
            raise InvalidArgumentError(f"Only support incremental clustering when '{CLUSTERING_INCREMENTAL}' is true.")
        self.store = store
        self.columns = clustering_columns(opts)
        if not self.columns:
            raise InvalidOptionError(f"Incremental clustering of {store.name} needs '{CLUSTERING_COLUMNS}'")
        self.spec = SortSpec.of(clustering_strategy(opts, len(self.columns)), self.columns, opts)
        self.num_levels = co.num_levels(opts)
        self.universal = UniversalCompaction(
            _int(opts, co.COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT, co.COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT_DEFAULT),
            _int(opts, co.COMPACTION_SIZE_RATIO, co.COMPACTION_SIZE_RATIO_DEFAULT),
            _int(opts, co.NUM_SORTED_RUN_COMPACTION_TRIGGER, co.NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT),
        )
        self.history_limit = _int(opts, CLUSTERING_HISTORY_PARTITION_LIMIT, CLUSTERING_HISTORY_PARTITION_LIMIT_DEFAULT)
        idle = opts.get(CLUSTERING_HISTORY_PARTITION_IDLE_TIME)
        if idle:
            from paimon_core.utils.time_util import to_duration_millis

            self.history_idle_ms: int | None = to_duration_millis(idle, name=CLUSTERING_HISTORY_PARTITION_IDLE_TIME)
        else:
            self.history_idle_ms = None

    def pick(self, runs: Sequence[LevelSortedRun], *, full: bool) -> CompactUnit | None:
        """Java ``IncrementalClusterStrategy.pick``."""
        if not full:
            return self.universal.pick(self.num_levels, runs)
        max_level = self.num_levels - 1
        if not runs:
            return None
        if len(runs) == 1 and runs[0].level == max_level:
            schema = self.store.schema_manager_cached(runs[0].run.files[0].schema_id)
            if clustering_columns(schema.options) == self.columns:
                return None  # one run on the max level, clustered by the same columns
        return CompactUnit.from_level_runs(max_level, runs)

    def units(
        self,
        selected: Mapping[bytes, Sequence[DataFileMeta]],
        all_files: Mapping[bytes, Sequence[DataFileMeta]],
        *,
        full: bool,
        named_partitions: bool,
        now_ms: int,
    ) -> dict[bytes, CompactUnit]:
        """Units of the ``selected`` partitions, plus history partitions (among ``all_files``)."""
        out: dict[bytes, CompactUnit] = {}
        for p, files in selected.items():
            unit = self.pick(partition_levels(files), full=full)
            if unit is not None:
                out[p] = unit
        if self.history_idle_ms is None or not named_partitions or not self.store.schema.partition_keys:
            return out
        from paimon_core.crosspartition.index_bootstrap import creation_epoch_millis

        max_level = self.num_levels - 1
        cutoff = now_ms - self.history_idle_ms
        history: list[tuple[int, bytes]] = []
        for p, files in all_files.items():
            below = [f for f in files if f.level < max_level]  # Java's level filter on partition entries
            if p in selected or not below:
                continue
            newest = max(0 if f.creation_time is None else creation_epoch_millis(f.creation_time) for f in below)
            if newest < cutoff:
                history.append((newest, p))
        for _, p in sorted(history)[: self.history_limit]:
            unit = self.pick(partition_levels(all_files[p]), full=True)
            if unit is not None:
                out[p] = unit
        return out


def _int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    try:
        return default if raw is None else int(raw)
    except ValueError:
        raise InvalidOptionError(f"{key} must be an integer, got {raw!r}") from None
