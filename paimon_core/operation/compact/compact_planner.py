"""Plans a dedicated compaction over one snapshot (the driver half of Paimon's ``CompactProcedure``).

Which files: the live files of the latest snapshot, narrowed by ``partitions`` or ``where`` (over
partition columns only, as Paimon's procedure requires), ``buckets`` (fixed-bucket tables) and
``partition_idle_time`` (partitions whose newest file was created longer ago than that). What to do with them, per (partition, bucket):

* primary-key tables: the bucket's levels restored from its files (Java ``Levels``), then
  ``full``: every run into the max level (``CompactStrategy.pickFullCompaction``), or ``minor``:
  the table's strategy (``UniversalCompaction``, ``ForceUpLevel0Compaction`` where Java uses it);
  the unit becomes upgrade and rewrite steps (Java ``MergeTreeCompactTask``);
* unaware-bucket append tables: Java's ``AppendCompactCoordinator`` bins (``compact_strategy`` is
  ignored, as in Paimon);
* fixed-bucket append tables: ``full`` rewrites the small files of each bucket, ``minor`` Java's
  ``pickCompactBefore`` window (``BucketedAppendCompactManager``);
* data-evolution tables: Java's ``DataEvolutionCompactCoordinator`` (``compact_strategy`` is
  ignored): whole row-id groups merged into one file each (:mod:`paimon_core.append.data_evolution_compact_coordinator`).

Postpone-bucket tables (``bucket = -2``) are not planned here: their compaction assigns the
buckets (:mod:`.postpone_bucket_compact`).

The planner reads metadata only; the plan is what ``dry_run`` shows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from paimon_core.append.data_evolution_compact_coordinator import DataEvolutionCompactCoordinator
from paimon_core.append.row_tracking import data_evolution_enabled
from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
from paimon_core.operation.compact.compact_task import CompactTask
from paimon_core.operation.scan import ScanFilter
from paimon_core.predicate import Predicate
from paimon_core.predicate.parser import parse_predicate
from paimon_core.utils.clock import Clock

if TYPE_CHECKING:
    from paimon_core.schema.data_types import DataField
    from paimon_core.store.file_store import FileStore

__all__ = ["CompactPlan", "CompactPlanner", "CompactRequest", "MergeTreeBucketPlanner", "Strategy", "parse_partitions"]

logger = logging.getLogger(__name__)

Strategy = Literal["full", "minor"]
BucketKey = tuple[bytes, int]


def parse_partitions(text: str) -> tuple[dict[str, str], ...]:
    """Paimon's ``partitions`` argument: ``'dt=a,hh=1;dt=b'`` -> ``({'dt': 'a', 'hh': '1'}, {'dt': 'b'})``."""
    specs: list[dict[str, str]] = []
    for part in text.split(";"):
        if not part.strip():
            continue
        spec: dict[str, str] = {}
        for kv in part.split(","):
            key, sep, value = kv.partition("=")
            if not sep or not key.strip():
                raise InvalidArgumentError(f"Partition spec {part!r} must be 'key=value[,key=value...]'")
            spec[key.strip()] = value.strip()
        specs.append(spec)
    return tuple(specs)


@dataclass(frozen=True)
class CompactRequest:
    """What to compact (the arguments of Paimon's ``compact`` procedure)."""

    strategy: Strategy = "full"
    partitions: tuple[Mapping[str, str], ...] | None = None
    where: str | None = None
    buckets: frozenset[int] | None = None
    partition_idle_time_ms: int | None = None

    def __post_init__(self) -> None:
        if self.strategy not in ("full", "minor"):
            raise InvalidArgumentError(f"compact_strategy must be 'full' or 'minor', got {self.strategy!r}")
        if self.partitions and self.where:
            raise InvalidArgumentError("partitions and where cannot be used together")
        if self.partition_idle_time_ms is not None and self.partition_idle_time_ms < 0:
            raise InvalidArgumentError(f"partition_idle_time must be >= 0, got {self.partition_idle_time_ms} ms")


@dataclass(frozen=True)
class CompactPlan:
    """The tasks of one compaction, planned on ``snapshot_id``."""

    snapshot_id: int | None
    tasks: tuple[CompactTask, ...] = ()
    #: (partition, bucket) -> names of all its live files at planning (to tell concurrent changes)
    bucket_files: Mapping[BucketKey, frozenset[str]] = field(default_factory=dict)
    skipped_idle_partitions: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "tasks": [t.to_dict() for t in self.tasks],
            "skipped_idle_partitions": self.skipped_idle_partitions,
        }


class CompactPlanner:
    """Plans compactions of one table handle (see the module docstring)."""

    def __init__(self, store: FileStore, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        schema = store.schema
        self.has_pk = bool(schema.primary_keys)
        self.options = store.options
        self.postpone = self.options.bucket == -2  # planned by PostponeBucketCompact instead
        #: data-evolution tables: Java's DataEvolutionCompactCoordinator plans (its options checked here)
        self.data_evolution: DataEvolutionCompactCoordinator | None = None
        if not self.has_pk and data_evolution_enabled(self.options.options):
            self.data_evolution = DataEvolutionCompactCoordinator.from_options(self.options.options)
        if self.has_pk and not self.postpone:
            from paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter import (
                check_lookup_compaction_supported,
                uses_lookup_rewriter,
            )

            if uses_lookup_rewriter(self.options.options):
                check_lookup_compaction_supported(store)

    # --- filters -----------------------------------------------------------------------
    def _spec_predicate(self, specs: Sequence[Mapping[str, str]], fields: Sequence[DataField]) -> Predicate | None:
        """``partitions`` specs as a predicate; text values parsed by the column's type (``q=2`` on INT)."""
        from paimon_core.data.partition_spec import partition_spec_value
        from paimon_core.predicate import PredicateBuilder

        types = {f.name: f.type for f in fields}
        builder = PredicateBuilder(fields)
        clauses = []
        for spec in specs:
            unknown = sorted(set(spec) - set(types))
            if unknown:
                raise InvalidArgumentError(
                    f"Partition spec {dict(spec)} names non-partition column(s) {unknown}; "
                    f"partition keys of {self.store.name} are {sorted(types)}"
                )
            leaves = []
            for k, v in spec.items():
                value = partition_spec_value(
                    v, types[k], column=k, default_partition_name=self.options.partition_default_name
                )
                leaves.append(builder.is_null(k) if value is None else builder.equal(k, value))
            if leaves:
                clauses.append(PredicateBuilder.and_(*leaves))
        return PredicateBuilder.or_(*clauses) if clauses else None

    def _partition_predicate(self, request: CompactRequest) -> Predicate | None:
        fields = self.store.schema.partition_fields
        text = request.where
        if request.partitions:
            return self._spec_predicate(request.partitions, fields)
        if not text:
            return None
        if not fields:
            raise InvalidArgumentError(f"Table {self.store.name} is not partitioned: partitions/where cannot be used")
        try:
            return parse_predicate(text, fields)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(
                f"compact can only filter on partition columns {[f.name for f in fields]}: {e}"
            ) from e

    def _scan_filter(self, request: CompactRequest) -> ScanFilter:
        if request.buckets is not None and self.options.bucket <= 0:
            raise InvalidArgumentError(
                f"buckets can only be given for fixed-bucket tables; {self.store.name} has bucket = {self.options.bucket}"
            )
        return ScanFilter(partition_predicate=self._partition_predicate(request), buckets=request.buckets)

    def _idle(self, entries: Sequence[ManifestEntry], idle_ms: int | None) -> tuple[list[ManifestEntry], int]:
        if idle_ms is None:
            return list(entries), 0
        from paimon_core.crosspartition.index_bootstrap import creation_epoch_millis

        newest: dict[bytes, int] = {}
        for e in entries:  # Java's PartitionEntry.lastFileCreationTime: creation time as epoch millis
            created = 0 if e.file.creation_time is None else creation_epoch_millis(e.file.creation_time)
            newest[e.partition] = max(newest.get(e.partition, 0), created)
        cutoff = self.clock.now_millis() - idle_ms
        idle = {p for p, t in newest.items() if t < cutoff}
        return [e for e in entries if e.partition in idle], len(newest) - len(idle)

    # --- planning ------------------------------------------------------------------------
    def plan(self, request: CompactRequest, *, only: frozenset[BucketKey] | None = None) -> CompactPlan:
        """Plan on the latest snapshot; ``only`` limits it to some (partition, bucket)s (re-planning)."""
        if self.postpone:
            raise InvalidArgumentError(
                f"Table {self.store.name} has postpone buckets (bucket = -2): its compaction assigns the buckets "
                "through the table's writer (paimon_core.table.postpone_bucket_compact.PostponeBucketCompact, which "
                "table.maintenance.compact() and spark_jobs compact run)"
            )
        flt = self._scan_filter(request)  # validates the request, even on an empty table
        latest = self.store.latest_snapshot()
        if latest is None:
            return CompactPlan(None)
        entries = self.store.new_file_store_scan().live_entries(latest, flt)
        if only is not None:
            entries = [e for e in entries if (e.partition, e.bucket) in only]
        entries, skipped = self._idle(entries, request.partition_idle_time_ms)
        groups: dict[BucketKey, list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e)
        if self.has_pk:
            tasks = self._merge_tree_tasks(groups, request.strategy)
        elif self.data_evolution is not None:  # compact_strategy is ignored, as in Paimon
            tasks = self._data_evolution_tasks(groups)
        elif self.options.bucket > 0:
            tasks = self._bucketed_append_tasks(groups, request.strategy)
        else:
            tasks = self._unaware_append_tasks(groups)
        bucket_files = {k: frozenset(e.file.file_name for e in es) for k, es in groups.items()}
        return CompactPlan(latest.id, tuple(tasks), bucket_files, skipped)

    def _task(self, key: BucketKey, entries: Sequence[ManifestEntry], **kw: Any) -> CompactTask:
        partition, bucket = key
        return CompactTask(
            partition=partition,
            partition_name=self.store.partition_path(partition),
            bucket=bucket,
            total_buckets=entries[0].total_buckets,
            **kw,
        )

    def _merge_tree_tasks(self, groups: Mapping[BucketKey, list[ManifestEntry]], strategy: Strategy) -> list[CompactTask]:
        planner = MergeTreeBucketPlanner(self.store, clock=self.clock)
        tasks = []
        for (partition, bucket), entries in sorted(groups.items()):
            task = planner.plan(partition, bucket, entries[0].total_buckets, [e.file for e in entries], strategy=strategy)
            if task is not None:
                tasks.append(task)
        return tasks

    def _bucketed_append_tasks(
        self, groups: Mapping[BucketKey, list[ManifestEntry]], strategy: Strategy
    ) -> list[CompactTask]:
        from paimon_core.append.append_compact_coordinator import AppendCompactConfig
        from paimon_core.append.bucketed_append_compact_manager import (
            pick_compact_before,
            pick_full_compaction,
        )

        config = AppendCompactConfig.from_options(self.options.options)
        tasks = []
        for key, entries in sorted(groups.items()):
            files = [e.file for e in entries]
            picked: Sequence[DataFileMeta] | None
            if strategy == "full":
                with_dv = self._deletion_files(key[0], key[1]) if config.deletion_vectors_enabled else {}
                picked = pick_full_compaction(
                    files,
                    compaction_file_size=config.compaction_file_size,
                    deletion_vectors_enabled=config.deletion_vectors_enabled,
                    with_deletion_vector=frozenset(with_dv),
                    force_rewrite_all_files=config.force_rewrite_all_files,
                )
            else:
                picked = pick_compact_before(
                    files, min_file_num=config.min_file_num, target_file_size=config.target_file_size
                ).picked
            if picked:
                tasks.append(self._task(key, entries, kind="append", output_level=0, files=tuple(picked)))
        return tasks

    def _deletion_files(self, partition: bytes, bucket: int) -> Mapping[str, DeletionFile]:
        """{data file name: its deletion vector} of an append bucket (the whole partition when unaware)."""
        from paimon_core.append.append_deletion_index import DeletionIndex

        return DeletionIndex.load(self.store, partition, bucket).deletion_files

    def _data_evolution_tasks(self, groups: Mapping[BucketKey, list[ManifestEntry]]) -> list[CompactTask]:
        """Data-evolution tables (unaware bucket): each task merges whole row-id groups of one
        partition into one file (:mod:`paimon_core.append.data_evolution_compact_coordinator`)."""
        assert self.data_evolution is not None
        by_partition: dict[bytes, list[DataFileMeta]] = {}
        first: dict[bytes, list[ManifestEntry]] = {}
        for (partition, _), entries in sorted(groups.items()):
            by_partition.setdefault(partition, []).extend(e.file for e in entries)
            first.setdefault(partition, entries)
        return [
            self._task((t.partition, 0), first[t.partition], kind="data-evolution", output_level=0, files=t.files)
            for t in self.data_evolution.plan(by_partition)
        ]

    def _unaware_append_tasks(self, groups: Mapping[BucketKey, list[ManifestEntry]]) -> list[CompactTask]:
        from paimon_core.append.append_compact_coordinator import (
            AppendCompactConfig,
            plan_unaware_bucket_compaction,
        )

        config = AppendCompactConfig.from_options(self.options.options)
        by_partition: dict[bytes, list[DataFileMeta]] = {}
        first: dict[bytes, list[ManifestEntry]] = {}
        for (partition, _), entries in sorted(groups.items()):
            by_partition.setdefault(partition, []).extend(e.file for e in entries)
            first.setdefault(partition, entries)
        deletions = (
            {p: self._deletion_files(p, 0) for p in by_partition} if config.deletion_vectors_enabled else None
        )
        planned = plan_unaware_bucket_compaction(
            by_partition,
            deletion_files=deletions,
            target_file_size=config.target_file_size,
            compaction_file_size=config.compaction_file_size,
            open_file_cost=config.open_file_cost,
            min_file_num=config.min_file_num,
            file_num_limit=config.file_num_limit,
        )
        return [
            self._task((t.partition, 0), first[t.partition], kind="append", output_level=0, files=t.files)
            for t in planned
        ]


class MergeTreeBucketPlanner:
    """The compaction of one primary-key bucket (Java ``MergeTreeCompactManager.triggerCompaction``):
    levels restored from its files, the unit the strategy picks (``full``: every run into the max
    level; ``minor``: the table's strategy, trivial units dropped), and the unit's upgrade and
    rewrite steps. Shared by dedicated compaction and by writers that compact."""

    def __init__(self, store: FileStore, *, clock: Clock) -> None:
        from paimon_core.mergetree.compact.compact_options import (
            compaction_file_size,
            force_keep_delete,
            num_levels,
        )
        from paimon_core.mergetree.keys import binary_key_of
        from paimon_core.store.key_value_file_store import KeyValueFileStore

        assert isinstance(store, KeyValueFileStore)  # a merge tree: primary-key tables only
        self.store = store
        self.clock = clock
        self.opts = store.options.options
        self.key_of = binary_key_of([f.type for f in store.key_fields])
        self.num_levels = num_levels(self.opts)
        self.min_file_size = compaction_file_size(self.opts)
        self.force_keep_delete = force_keep_delete(self.opts)
        self.force_rewrite = self.opts.get("compaction.force-rewrite-all-files", "false").lower() == "true"
        self.dv_maintained = store.options.deletion_vectors_enabled

    def plan(
        self,
        partition: bytes,
        bucket: int,
        total_buckets: int,
        files: Sequence[DataFileMeta],
        *,
        strategy: Strategy,
        restored: Sequence[DataFileMeta] | None = None,
    ) -> CompactTask | None:
        """The task compacting ``files`` (the bucket's files), or None when nothing is picked.
        ``restored``: the files already committed (they seed the strategy's last full compaction
        time; default: all of ``files``)."""
        from paimon_core.mergetree.compact.compact_options import compact_strategy_from_options
        from paimon_core.mergetree.compact.compact_strategy import filter_trivial_unit, pick_full_compaction
        from paimon_core.mergetree.compact.compact_task_plan import plan_compact_task
        from paimon_core.mergetree.levels import Levels

        levels = Levels(self.key_of, files, self.num_levels)
        runs = levels.level_sorted_runs()
        if strategy == "full":
            unit = pick_full_compaction(levels.number_of_levels, runs, force_rewrite_all_files=self.force_rewrite)
        else:
            seed = files if restored is None else restored
            picker = compact_strategy_from_options(self.opts, clock=self.clock, restore_files=seed)
            unit = filter_trivial_unit(picker.pick(levels.number_of_levels, runs))
        if unit is None:
            return None
        steps = plan_compact_task(
            unit,
            self.key_of,
            max_level=levels.max_level,
            min_file_size=self.min_file_size,
            non_empty_highest_level=levels.non_empty_highest_level(),
            dv_maintained=self.dv_maintained,
            force_keep_delete=self.force_keep_delete,
            force_rewrite_all_files=self.force_rewrite,
        )
        if not steps:
            return None
        from paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter import uses_lookup_rewriter

        lookup_files = (
            tuple(f for f in files if f.level > unit.output_level) if uses_lookup_rewriter(self.opts) else ()
        )
        return CompactTask(
            kind="merge-tree",
            partition=partition,
            partition_name=self.store.partition_path(partition),
            bucket=bucket,
            total_buckets=total_buckets,
            output_level=unit.output_level,
            steps=tuple(steps),
            sorted_runs=len(runs),
            max_level=levels.max_level,
            lookup_files=lookup_files,
        )
