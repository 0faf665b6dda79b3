"""TableScan: plan the splits of a read (snapshot choice, pruning, split packing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from paimon_core.deletionvectors.deletion_file import DeletionFile, deletion_files_by_bucket
from paimon_core.exceptions import InvalidOptionError, MetadataFileNotFoundError, is_explained
from paimon_core.fileindex.file_index_evaluator import FileIndexEvaluator, file_index_read_enabled
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DataFileMeta, FileKind, IndexManifestEntry, ManifestEntry
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.operation.key_filters import buckets_for, key_stats_filter
from paimon_core.operation.scan import EntryFilter, ScanFilter
from paimon_core.operation.stats_filter import ValueStatsFilter
from paimon_core.options import parse_memory_size
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.predicate import Predicate, pick_by_fields
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.table.snapshot_resolver import ScanTarget, resolve
from paimon_core.table.source import DataSplit, Plan
from paimon_core.table.split_planner import plan_splits
from paimon_core.utils.gc_pause import gc_paused

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

SPLIT_TARGET_SIZE = "source.split.target-size"
SPLIT_OPEN_FILE_COST = "source.split.open-file-cost"
POSTPONE_MERGE_ON_READ = "postpone.merge-on-read"

_DvMap = dict[tuple[bytes, int], dict[str, DeletionFile]]


def _true(options: Mapping[str, str], key: str) -> bool:
    return options.get(key, "false").strip().lower() == "true"


class TableScan:
    """Plans one read of a table."""

    def __init__(self, table: FileStoreTable, *, predicate: Predicate | None = None, options: Mapping[str, str] | None = None):
        self.table = table
        self.predicate = predicate
        self.options = dict(table.options.options)  # schema + the handle's dynamic options
        self.options.update(options or {})

    def _only_real_buckets(self) -> bool:
        """Java's ``AbstractBatchTableScan``: a batch read of a postpone-bucket table (``bucket =
        -2``) reads only real buckets; rows in ``bucket-postpone`` become visible when a
        compaction assigns their buckets (``postpone.merge-on-read`` is an engine-side merge of
        Flink's and Spark's sources, not of the table read)."""
        return self.table.options.bucket == POSTPONE_BUCKET

    def _filter(self) -> ScanFilter:
        schema = self.table.schema
        only_real = self._only_real_buckets()
        if self.predicate is None:
            return ScanFilter(only_real_buckets=only_real)
        part_names = list(schema.partition_keys)
        part_pred = pick_by_fields(self.predicate, part_names) if part_names else None
        if part_pred is not None:
            part_pred = part_pred.remap({f.name: i for i, f in enumerate(schema.partition_fields)})
        file_filter: EntryFilter | None = None
        buckets = None
        if self._data_evolution():
            pass  # a file's stats miss the columns it lacks, an updated column's are stale: no file pruning
        elif not schema.primary_keys:
            # Append tables: every row is final, so value stats may prune files. (Primary-key
            # tables merge rows across files; pruning by value stats there could resurrect rows.)
            file_filter = ValueStatsFilter(self.predicate, list(schema.fields), self.table.schema_manager_cached)
            if file_index_read_enabled(self.options):  # embedded file indexes (Java's AppendOnlyFileStoreScan)
                evaluator = FileIndexEvaluator(self.predicate, schema.fields, self.table.schema_manager_cached)
                file_filter = evaluator.entry_filter(file_filter)
        else:
            file_filter = key_stats_filter(self.predicate, schema.fields_of(schema.trimmed_primary_keys))
        num_buckets = schema.core_options.bucket
        if num_buckets > 0:
            buckets = buckets_for(
                self.predicate,
                schema.fields_of(schema.bucket_keys),
                num_buckets,
                function=schema.core_options.bucket_function_type,
            )
        return ScanFilter(
            partition_predicate=part_pred,
            buckets=buckets,
            file_filter=file_filter,
            bucket_count=num_buckets if buckets is not None else None,
            only_real_buckets=only_real,
        )

    def target(self) -> ScanTarget:
        return resolve(self.options, self.table.snapshot_manager, self.table.tag_manager)

    def plan(self) -> Plan:
        target = self.target()
        if target.snapshot is None:
            return Plan(None, [])
        try:
            return self._plan(target)
        except FileNotFoundError as e:
            if is_explained(e):
                raise
            raise MetadataFileNotFoundError(
                f"Cannot read snapshot {target.snapshot.id} of {self.table.name}: {e.filename or e} is missing "
                "(expired while being read, or the table is damaged)",
                path=e.filename,
                snapshot_id=target.snapshot.id,
            ) from e

    def _plan(self, target: ScanTarget) -> Plan:
        assert target.snapshot is not None
        scan = self.table.new_file_store_scan()
        flt = self._filter()
        if not target.incremental and self._data_evolution():
            entries = scan.live_entries(target.snapshot, flt)
            if self.predicate is not None:  # whole row-id groups, on each column's newest stats
                from paimon_core.table.data_evolution_read import EvolutionStatsFilter

                schema = self.table.schema
                entries = EvolutionStatsFilter(self.predicate, schema.fields, self.table.schema_manager_cached).filter(
                    entries
                )
            dvs = self._deletion_files(target.snapshot, entries)
            return Plan(target.snapshot.id, self._splits(target.snapshot.id, entries, incremental=False, dvs=dvs))
        if not target.incremental:
            live = scan.live_entry_set(target.snapshot, flt)
            dvs = (
                self._bucket_deletion_files(target.snapshot, set(zip(live.partition, live.bucket, strict=True)))
                if self._deletion_vectors()
                else {}
            )
            with gc_paused():  # an object per split (and per file of a primary-key table), none cyclic
                splits = plan_splits(self, target.snapshot.id, live, dvs=dvs)
            if self._postpone_merge_on_read():
                splits = self._with_postpone_rows(target.snapshot, flt, splits)
            return Plan(target.snapshot.id, splits)
        if self._postpone_merge_on_read():
            raise InvalidOptionError(
                f"Table {self.table.name}: Postpone merge-on-read requires a full snapshot scan, "
                "but found an incremental read ('incremental-between...')",
                key=POSTPONE_MERGE_ON_READ,
            )
        assert target.end is not None
        if target.tags:
            assert target.start is not None
            before = {e.identifier() for e in scan.live_entries(target.start, flt)}
            entries = [e for e in scan.live_entries(target.end, flt) if e.identifier() not in before]
        else:
            entries = []
            for sid in range(target.start_id + 1, target.end.id + 1):
                snap = self.table.snapshot_manager.snapshot(sid)
                # Java's IncrementalDeltaStartingScanner (DELTA mode): only APPEND snapshots
                # count; COMPACT and OVERWRITE deltas are skipped.
                if snap.commit_kind != CommitKind.APPEND:
                    continue
                entries += [e for e in scan.delta_entries(snap, flt) if e.kind == FileKind.ADD]
        return Plan(target.end.id, self._splits(target.end.id, entries, incremental=True))

    def _postpone_merge_on_read(self) -> bool:
        """``postpone.merge-on-read`` on a primary-key postpone-bucket table (Java's
        ``PostponeMergeOnRead.configured``; ``compacted-full`` reads stay on compacted data)."""
        return (
            self._only_real_buckets()
            and bool(self.table.schema.primary_keys)
            and _true(self.options, POSTPONE_MERGE_ON_READ)
            and self.options.get("scan.mode", "default").strip().lower() != "compacted-full"
        )

    def _with_postpone_rows(self, snapshot: Snapshot, flt: ScanFilter, splits: list[DataSplit]) -> list[DataSplit]:
        """Java's ``PostponeMergeReadBuilder.plan``: the postpone files of the read partitions,
        routed to the bucket count a compaction would give them (``PostponeBucketNumResolver``),
        ride along with every bucket of their partition (a bucket with no real file gets a split
        of its own), to be merged after the real files."""
        from paimon_core.postpone.postpone_utils import resolve_bucket_nums

        pflt = ScanFilter(partition_predicate=flt.partition_predicate, buckets=frozenset([POSTPONE_BUCKET]))
        postpone = self.table.new_file_store_scan().live_entries(snapshot, pflt)
        if not postpone:
            return splits
        files: dict[bytes, list[ManifestEntry]] = {}
        for e in postpone:
            files.setdefault(e.partition, []).append(e)
        partition_filter = ScanFilter(partitions=frozenset(files), only_real_buckets=True)
        known = self.table.new_file_store_scan().live_entries(snapshot, partition_filter)
        nums = resolve_bucket_nums(self.options, [*known, *postpone], describe=self.table.partition_path)
        out: list[DataSplit] = []
        covered: set[tuple[bytes, int]] = set()
        for split in splits:
            es = files.get(split.partition)
            if es is None:
                out.append(split)
                continue
            covered.add((split.partition, split.bucket))
            out.append(self._attach(split, es, nums[split.partition]))
        for partition, es in files.items():
            for bucket in range(nums[partition]):
                if (partition, bucket) not in covered:
                    empty = DataSplit(snapshot.id, partition, bucket, self.table.bucket_path(partition, bucket), ())
                    out.append(self._attach(empty, es, nums[partition]))
        return out

    def _attach(self, split: DataSplit, entries: Sequence[ManifestEntry], num_buckets: int) -> DataSplit:
        ordered = sorted(entries, key=lambda e: e.file.creation_time or 0)  # stable: scan order on ties
        return replace(
            split,
            raw_convertible=False,
            postpone_files=tuple(e.file for e in ordered),
            postpone_bucket_path=self.table.bucket_path(split.partition, POSTPONE_BUCKET),
            postpone_num_buckets=num_buckets,
        )

    def _data_evolution(self) -> bool:
        """``data-evolution.enabled`` on an append table: row-id groups of files are planned and
        read together (:mod:`paimon_core.table.data_evolution_read`)."""
        return not self.table.schema.primary_keys and _true(self.options, "data-evolution.enabled")

    def _deletion_vectors(self) -> bool:
        return _true(self.options, "deletion-vectors.enabled")

    def _skips_level0(self) -> bool:
        """Java's ``batchScanSkipLevel0``: deletion-vector tables (unless merge-on-read) and
        first-row tables read only compacted files."""
        if self._deletion_vectors():
            return not _true(self.options, "deletion-vectors.merge-on-read")
        return self.options.get("merge-engine", "deduplicate") == "first-row"

    def _deletion_files(self, snapshot: Snapshot, entries: Sequence[ManifestEntry]) -> _DvMap:
        """Deletion vectors of the buckets of ``entries`` (see :meth:`_bucket_deletion_files`)."""
        return self._bucket_deletion_files(snapshot, {(e.partition, e.bucket) for e in entries})

    def _bucket_deletion_files(self, snapshot: Snapshot, buckets: set[tuple[bytes, int]]) -> _DvMap:
        """Deletion vectors of the ``(partition, bucket)`` s read, from ``snapshot``'s index manifest.

        As in Java (``SnapshotReaderImpl.scanDvIndex``) and pypaimon they apply only to batch
        reads of tables with ``deletion-vectors.enabled``; other tables ignore DV index files.
        """
        if not self._deletion_vectors() or snapshot.index_manifest is None or not buckets:
            return {}
        table = self.table
        index_entries = read_index_manifest(table.file_io, table.paths.manifest_path(snapshot.index_manifest))

        def index_path(e: IndexManifestEntry) -> str:
            return index_file_path(table.store, e.partition, e.bucket, e.index_file)

        wanted = [e for e in index_entries if (e.partition, e.bucket) in buckets]
        return deletion_files_by_bucket(wanted, index_path)

    def _non_overlapping(self, files: Sequence[DataFileMeta]) -> bool:
        if len(files) == 1:
            return True
        from paimon_core.mergetree.keys import binary_key_of  # Java's key order (nulls, floats, bytes)

        key_of = binary_key_of([f.type for f in self.table.schema.fields_of(self.table.schema.trimmed_primary_keys)])
        try:
            ranges = sorted((key_of(f.min_key), key_of(f.max_key)) for f in files)
        except Exception:  # noqa: BLE001 - undecodable keys: merge to be safe
            return False
        return all(prev[1] < cur[0] for prev, cur in zip(ranges, ranges[1:], strict=False))

    def _splits(
        self, snapshot_id: int, entries: Sequence[ManifestEntry], *, incremental: bool, dvs: _DvMap | None = None
    ) -> list[DataSplit]:
        if self._data_evolution():
            from paimon_core.table.data_evolution_read import data_evolution_splits

            return data_evolution_splits(
                self.table, snapshot_id, entries, options=self.options, incremental=incremental, dvs=dvs
            )
        groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e)
        target_size = parse_memory_size(self.options.get(SPLIT_TARGET_SIZE, "128 mb"))
        open_cost = parse_memory_size(self.options.get(SPLIT_OPEN_FILE_COST, "4 mb"))
        has_pk = bool(self.table.schema.primary_keys)
        skip_level0 = has_pk and not incremental and self._skips_level0()
        dv_enabled = self._deletion_vectors()
        splits: list[DataSplit] = []
        for (partition, bucket), es in groups.items():
            files = [e.file for e in es if not (skip_level0 and e.file.level == 0)]
            if not files:
                continue
            if has_pk:
                # Keys may repeat across files of a bucket: read them together and merge,
                # unless their key ranges are disjoint (the raw fast path). With deletion
                # vectors, compacted files hold each live key once: Java reads them raw
                # (MergeTreeSplitGenerator: no level-0 file and no file with delete rows).
                raw = (
                    incremental
                    or bucket == POSTPONE_BUCKET  # Java's createNoMergeReader: sequence numbers restart per writer
                    or (dv_enabled and all(f.level != 0 and not f.delete_row_count for f in files))
                    or self._non_overlapping(files)
                )
                packs = [(files, raw)]
            else:
                packs = [(pack, True) for pack in _pack(files, target_size, open_cost)]
            bucket_path = self.table.bucket_path(partition, bucket)
            by_name = (dvs or {}).get((partition, bucket))
            for pack, raw in packs:
                dfs = tuple(by_name.get(f.file_name) for f in pack) if by_name else ()
                splits.append(DataSplit(snapshot_id, partition, bucket, bucket_path, tuple(pack), raw, incremental, dfs))
        return splits


def _pack(files: Sequence[DataFileMeta], target_size: int, open_cost: int) -> list[list[DataFileMeta]]:
    """Append files in sequence order, packed into groups of about ``target_size`` bytes."""
    packs: list[list[DataFileMeta]] = []
    pack: list[DataFileMeta] = []
    weight = 0
    for f in sorted(files, key=lambda f: (f.min_sequence_number, f.file_name)):
        w = max(f.file_size, open_cost)
        if pack and weight + w > target_size:
            packs.append(pack)
            pack, weight = [], 0
        pack.append(f)
        weight += w
    if pack:
        packs.append(pack)
    return packs
