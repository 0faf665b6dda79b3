"""Reads of data-evolution tables (Java ``DataEvolutionSplitGenerator``, ``DataEvolutionSplitRead``,
``DataEvolutionFileReader``).

A table with ``data-evolution.enabled`` (append, ``row-tracking.enabled``) can update some
columns of existing rows by ``_ROW_ID``: the update is a new file holding only those columns
(``write_cols``) for the row-id range of the file it updates (same ``first_row_id``, same row
count), with a higher sequence number. A row is the merge of every file covering its range:

* **Planning** (:func:`data_evolution_splits`, Java ``DataEvolutionSplitGenerator.splitForBatch``):
  a bucket's files are grouped by overlapping row-id range (Java ``RangeHelper
  .mergeOverlappingRanges``: sorted by range, a group keeps the input order); groups are never cut
  across splits and are packed in range order into splits of ``source.split.target-size`` (a
  group weighs the sum of its file sizes, at least ``source.split.open-file-cost``; Java
  ``BinPacking.packForOrdered``). Value statistics do not prune single files of such a table (a
  file's statistics say nothing of the columns it lacks, and those of an updated column are
  stale); :class:`EvolutionStatsFilter` prunes whole row-id groups instead, on each column's
  statistics from the newest file that wrote it (Java ``DataEvolutionFileStoreScan.evolutionStats``).
* **Reading** (:class:`DataEvolutionSplitRead`, Java ``DataEvolutionSplitRead.mergeRangesAndSort``
  / ``createUnionReader``): in a group the files are taken newest first (max sequence number,
  descending; all must span the same range); every read column comes from the first -- newest --
  file that wrote it (``write_cols``, or all the columns of its schema when it has none), and so
  do ``_ROW_ID`` (physical value, else ``first_row_id + position``) and ``_SEQUENCE_NUMBER``
  (physical value, else that file's max sequence number), which every file holds. A column no
  file wrote reads as null. Each file is read only for the columns it wins, the files of a group
  decoded batch by batch in step and sliced to a common length (aligned by position, as Java's
  ``DataEvolutionFileReader``); the merge is a column concatenation in Arrow.
* **Filters** are not pushed into files (Java pushes down only where no merge happens, and only
  filters on columns a file wrote): the read evaluates them on the merged rows.
* **Deletion vectors** (Java ``DataEvolutionUtils.retrieveAnchorFile``): a group's deletion
  vector is that of its anchor, the file with the smallest (max sequence number, file name); its
  positions are taken relative to the anchor's range and drop rows from the merged group.
* Blob and vector-store files (which cover sub-ranges of a group) are refused: paimon_core
  refuses those tables (``UnsupportedTableKindError``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.deletionvectors import DeletionFile
from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
from paimon_core.operation.data_evolution_split_read import (
    DataEvolutionSplitRead as StoreDataEvolutionSplitRead,
)
from paimon_core.operation.data_evolution_split_read import (
    aligned_slices,
    anchor_file,
    merge_ranges_and_sort,
    row_id_groups,
    row_id_range,
)
from paimon_core.predicate import Predicate
from paimon_core.schema.data_types import DataField, DataType
from paimon_core.schema.table_schema import TableSchema
from paimon_core.table.source import DataSplit

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "DataEvolutionSplitRead",
    "EvolutionStatsFilter",
    "aligned_slices",
    "anchor_file",
    "data_evolution_splits",
    "merge_ranges_and_sort",
    "row_id_groups",
]

logger = logging.getLogger(__name__)


def _pack_groups(groups: Sequence[list[ManifestEntry]], target_size: int, open_cost: int) -> list[list[ManifestEntry]]:
    """Consecutive groups packed while the pack stays within ``target_size`` (Java
    ``BinPacking.packForOrdered``: a pack always takes at least one group)."""
    packs: list[list[ManifestEntry]] = []
    pack: list[ManifestEntry] = []
    weight = 0
    for group in groups:
        w = max(sum(e.file.file_size for e in group), open_cost)
        if pack and weight + w > target_size:
            packs.append(pack)
            pack, weight = [], 0
        pack.extend(group)
        weight += w
    if pack:
        packs.append(pack)
    return packs


def data_evolution_splits(
    table: FileStoreTable,
    snapshot_id: int,
    entries: Sequence[ManifestEntry],
    *,
    options: Mapping[str, str],
    incremental: bool,
    dvs: Mapping[tuple[bytes, int], Mapping[str, DeletionFile]] | None = None,
) -> list[DataSplit]:
    """The splits of ``entries`` (live files, or an incremental read's added files): per
    (partition, bucket), row-id groups packed in range order (see the module docstring)."""
    from paimon_core.options import parse_memory_size
    from paimon_core.table.table_scan import SPLIT_OPEN_FILE_COST, SPLIT_TARGET_SIZE

    target_size = parse_memory_size(options.get(SPLIT_TARGET_SIZE, "128 mb"))
    open_cost = parse_memory_size(options.get(SPLIT_OPEN_FILE_COST, "4 mb"))
    buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        buckets.setdefault((e.partition, e.bucket), []).append(e)
    splits: list[DataSplit] = []
    for (partition, bucket), es in buckets.items():
        by_file = {id(e.file): e for e in es}
        groups = [[by_file[id(f)] for f in g] for g in row_id_groups([e.file for e in es])]
        bucket_path = table.bucket_path(partition, bucket)
        by_name = (dvs or {}).get((partition, bucket))
        for pack in _pack_groups(groups, target_size, open_cost):
            files = tuple(e.file for e in pack)
            dfs = tuple(by_name.get(f.file_name) for f in files) if by_name else ()
            if dfs and not any(dfs):
                dfs = ()
            splits.append(DataSplit(snapshot_id, partition, bucket, bucket_path, files, False, incremental, dfs))
    return splits


class DataEvolutionSplitRead(StoreDataEvolutionSplitRead):
    """Reads the splits of a data-evolution table, merging the columns of each row-id group (the
    table's store read, :class:`paimon_core.operation.data_evolution_split_read.DataEvolutionSplitRead`)."""

    def __init__(self, table: FileStoreTable, *, batch_size: int = 65536) -> None:
        super().__init__(table.store, batch_size=batch_size)
        self.table = table

    def read(
        self,
        split: DataSplit,
        fields: Sequence[DataField],
        *,
        partition_values: Mapping[int, pa.Scalar] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of ``fields`` (table fields, and ``_ROW_ID``/``_SEQUENCE_NUMBER`` by their
        system ids) of every row of ``split``, merged by row-id group, deletion vectors applied."""
        dv_of = {f.file_name: split.deletion_file(i) for i, f in enumerate(split.files)} if split.deletion_files else {}
        deletions = {k: v for k, v in dv_of.items() if v is not None}
        yield from self.read_files(
            split.bucket_path,
            split.files,
            fields,
            deletion_files=deletions,
            snapshot_id=split.snapshot_id,
            partition_values=partition_values,
        )


class EvolutionStatsFilter:
    """Drops the row-id groups whose merged statistics prove no row matches ``predicate``
    (Java ``DataEvolutionFileStoreScan.filterByStats``/``evolutionStats``).

    A column's statistics are those of the newest file (max sequence number) that wrote it, used
    only when that file is the only newest one, spans the whole group, has statistics for the
    column in the column's current type, and they are consistent (null count within the row
    count, min and max both set, min <= max); otherwise the column is unknown, which prunes
    nothing. A column no file of the group wrote is null in every row.
    """

    def __init__(self, predicate: Predicate, fields: Sequence[DataField], schema_of: Callable[[int], TableSchema]) -> None:
        self.predicate = predicate
        self.fields = list(fields)
        self.schema_of = schema_of
        self._layouts: dict[tuple[int, tuple[str, ...] | None, tuple[str, ...] | None], _StatsLayout] = {}

    def _layout(self, f: DataFileMeta) -> _StatsLayout:
        wc = tuple(f.write_cols) if f.write_cols is not None else None
        sc = tuple(f.value_stats_cols) if f.value_stats_cols is not None else None
        key = (f.schema_id, wc, sc)
        got = self._layouts.get(key)
        if got is None:
            fields = list(self.schema_of(f.schema_id).fields)
            if wc is not None:
                fields = [x for x in fields if x.name in set(wc)]
            stats = fields if sc is None else [x for x in fields if x.name in set(sc)]
            got = _StatsLayout({x.id for x in fields}, {x.id: (i, x) for i, x in enumerate(stats)}, [x.type for x in stats])
            self._layouts[key] = got
        return got

    def filter(self, entries: Sequence[ManifestEntry]) -> list[ManifestEntry]:
        """``entries`` without the files of the groups that cannot match, in their order."""
        buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for e in entries:
            buckets.setdefault((e.partition, e.bucket), []).append(e)
        dropped: set[int] = set()
        for es in buckets.values():
            by_file = {id(e.file): e for e in es}
            for group in row_id_groups([e.file for e in es]):
                if not self._may_match(group):
                    dropped.update(id(by_file[id(f)]) for f in group)
        if dropped:
            logger.debug("data-evolution stats pruned %d of %d files", len(dropped), len(entries))
        return [e for e in entries if id(e) not in dropped]

    def _may_match(self, group: Sequence[DataFileMeta]) -> bool:
        lo, hi = min(row_id_range(f)[0] for f in group), max(row_id_range(f)[1] for f in group)
        rows = hi - lo + 1
        mins: list[object | None] = []
        maxs: list[object | None] = []
        nulls: list[int | None] = []
        decoded: dict[int, tuple[tuple[object | None, ...], tuple[object | None, ...]] | None] = {}
        for fld in self.fields:
            providers = [f for f in group if fld.id in self._layout(f).fields]
            if not providers:  # no file wrote it: null in every row
                mins.append(None)
                maxs.append(None)
                nulls.append(rows)
                continue
            top = max(f.max_sequence_number for f in providers)
            winners = [f for f in providers if f.max_sequence_number == top]
            value = self._stats(winners[0], fld, rows, decoded) if len(winners) == 1 and row_id_range(winners[0]) == (lo, hi) else None
            lo_v, hi_v, n = value if value is not None else (None, None, None)
            mins.append(lo_v)
            maxs.append(hi_v)
            nulls.append(n)
        try:
            return self.predicate.test_stats(rows, mins, maxs, nulls)
        except Exception:  # noqa: BLE001 - stats we cannot compare never prune
            return True

    def _stats(
        self,
        f: DataFileMeta,
        fld: DataField,
        rows: int,
        decoded: dict[int, tuple[tuple[object | None, ...], tuple[object | None, ...]] | None],
    ) -> tuple[object | None, object | None, int | None] | None:
        layout = self._layout(f)
        slot = layout.stats.get(fld.id)
        if slot is None or slot[1].type.copy(nullable=True) != fld.type.copy(nullable=True):
            return None
        index = slot[0]
        if id(f) not in decoded:
            try:
                mins = deserialize_binary_row(f.value_stats.min_values, layout.types)
                maxs = deserialize_binary_row(f.value_stats.max_values, layout.types)
                ok = len(mins) == len(layout.types) == len(maxs)
                decoded[id(f)] = (mins, maxs) if ok else None
            except Exception:  # noqa: BLE001 - unreadable stats never prune
                decoded[id(f)] = None
        got = decoded[id(f)]
        counts = f.value_stats.null_counts
        if got is None or counts is None or len(counts) != len(layout.types):
            return None
        lo, hi, n = got[0][index], got[1][index], counts[index]
        if n is not None and not 0 <= n <= rows:
            return None
        if (lo is None) != (hi is None):
            return None
        if lo is not None:
            try:
                if n == rows or hi < lo:  # type: ignore[operator]
                    return None
            except TypeError:
                return None
        return lo, hi, n


class _StatsLayout:
    """A file's columns (ids) and where each column's statistics are (id -> (index, field))."""

    __slots__ = ("fields", "stats", "types")

    def __init__(self, fields: set[int], stats: dict[int, tuple[int, DataField]], types: list[DataType]) -> None:
        self.fields = fields
        self.stats = stats
        self.types = types
