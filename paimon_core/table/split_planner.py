"""Batch splits of a snapshot's live files, planned on columns (the bulk form of ``TableScan._splits``).

The live files come as an :class:`~paimon_core.manifest.entry_set.EntrySet`;
grouping by (partition, bucket), ordering and packing run over its columns, and a
``DataFileMeta`` (lazy, see :class:`~paimon_core.manifest.manifest_batch.LazyDataFileMeta`)
is made only for the files that end up in a split. The splits are the ones
``TableScan._splits(..., incremental=False)`` makes from the same entries.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.manifest.entry_set import EntrySet
from paimon_core.options import parse_memory_size
from paimon_core.table.source import DataSplit
from paimon_core.utils.gc_pause import gc_paused

if TYPE_CHECKING:
    from paimon_core.table.table_scan import TableScan

_DvMap = dict[tuple[bytes, int], dict[str, DeletionFile]]


def plan_splits(scan: TableScan, snapshot_id: int, live: EntrySet, *, dvs: _DvMap | None = None) -> list[DataSplit]:
    """The splits of a batch (non-incremental) read of ``live``."""
    n = len(live)
    if not n:
        return []
    from paimon_core.table.table_scan import SPLIT_OPEN_FILE_COST, SPLIT_TARGET_SIZE

    table = scan.table
    has_pk = bool(table.schema.primary_keys)
    gid, group_keys = _groups(live)
    keep = np.ones(n, dtype=bool)
    if has_pk and scan._skips_level0():
        keep = np.asarray(live.column("level"), dtype=np.int64) != 0
    if has_pk:
        order = np.flatnonzero(keep)
        order = order[np.argsort(gid[order], kind="stable")]  # entry order within a group
    else:
        order = _append_order(live, gid, keep)
    if not len(order):
        return []
    bounds = np.flatnonzero(np.diff(gid[order])) + 1
    starts = [0, *bounds.tolist()]
    ends = [*bounds.tolist(), len(order)]
    target_size = parse_memory_size(scan.options.get(SPLIT_TARGET_SIZE, "128 mb"))
    open_cost = parse_memory_size(scan.options.get(SPLIT_OPEN_FILE_COST, "4 mb"))
    dv_enabled = scan._deletion_vectors()
    sizes = np.asarray(live.column("file_size"), dtype=np.int64)[order]
    rows = np.asarray(live.column("row_count"), dtype=np.int64)[order]
    # prefix sums: a pack [lo, hi) has sum x[lo:hi] = cum[hi] - cum[lo]
    size_cum = np.concatenate(([0], np.cumsum(sizes))).tolist()
    row_cum = np.concatenate(([0], np.cumsum(rows))).tolist()
    weight_cum = np.concatenate(([0], np.cumsum(np.maximum(sizes, open_cost)))).tolist()
    gid_l = gid[order].tolist()
    source = _PlannedFiles(live, order)
    names = live.column("file_name") if dvs else None
    order_l = order.tolist() if dvs else None
    if has_pk:  # a bucket's files decide how it is read: made now, for the whole plan at once
        which, local = live.locate(order)
        file_at = live.file_at()
    splits: list[DataSplit] = []
    for lo, hi in zip(starts, ends, strict=True):
        partition, bucket = group_keys[gid_l[lo]]
        bucket_path = table.bucket_path(partition, bucket)
        by_name = (dvs or {}).get((partition, bucket))
        if has_pk:
            group = tuple(map(file_at, which[lo:hi], local[lo:hi]))
            raw = (dv_enabled and all(f.level != 0 and not f.delete_row_count for f in group)) or scan._non_overlapping(
                group
            )
            dfs = tuple(by_name.get(f.file_name) for f in group) if by_name else ()
            splits.append(DataSplit(snapshot_id, partition, bucket, bucket_path, group, raw, False, dfs))
            continue
        for a, b in _pack_ranges(weight_cum, lo, hi, target_size):
            dfs = ()
            if by_name:
                assert names is not None and order_l is not None
                dfs = tuple(by_name.get(names[order_l[i]]) for i in range(a, b))
            splits.append(PlannedSplit.make(
                snapshot_id, partition, bucket, bucket_path, True, dfs, source, a, b,
                row_count=row_cum[b] - row_cum[a], file_size=size_cum[b] - size_cum[a],
            ))
    return splits


class _PlannedFiles:
    """The live files of a plan in split order, made into ``DataFileMeta`` objects on demand.

    The first access to a split's files makes those of the splits after it too, up to
    :data:`MAKE_AHEAD_FILES` files, with the cyclic GC paused: readers go through a plan's
    splits in order, and making 100,000 objects a split at a time with the collector on cost
    1.5x as much again (a collection every 700 objects, each walking the decoded manifests).
    A split's objects are handed over once and then held by the split alone; once every
    split holds its own, the plan's columns are released.
    """

    __slots__ = ("_live", "_order", "_ranges", "_made", "_taken", "_located", "_lock")

    def __init__(self, live: EntrySet, order: np.ndarray) -> None:
        self._live: EntrySet | None = live
        self._order = order
        self._ranges: list[tuple[int, int]] = []
        self._made: dict[int, tuple[DataFileMeta, ...]] = {}
        self._taken = bytearray()  # 1: the split holds its files
        self._located: tuple[list[int], list[int], Callable[[int, int], DataFileMeta]] | None = None
        self._lock = threading.Lock()

    def add(self, lo: int, hi: int) -> int:
        """Register a split of the files ``[lo, hi)`` (in split order); its index."""
        self._ranges.append((lo, hi))
        self._taken.append(0)
        return len(self._ranges) - 1

    def take(self, split: PlannedSplit, index: int) -> tuple[DataFileMeta, ...]:
        """Split ``index``'s files, set on ``split`` (once, under the lock: two threads asking
        for the same split get the same objects)."""
        with self._lock:
            got: tuple[DataFileMeta, ...] | None = split.__dict__.get("files")
            if got is None:
                got = self._files(index)
                object.__setattr__(split, "files", got)  # frozen: set once, as __init__ would
                split.__dict__.pop("_source", None)  # the split no longer needs the plan
                if not self._made and all(self._taken):  # every split holds its files
                    self._live, self._located, self._order = None, None, self._order[:0]
            return got

    def _files(self, index: int) -> tuple[DataFileMeta, ...]:
        self._taken[index] = 1
        made = self._made.pop(index, None)
        if made is not None:
            return made
        assert self._live is not None  # released only once every split was taken
        with gc_paused():
            if self._located is None:
                which, local = self._live.locate(self._order)
                self._located = (which, local, self._live.file_at())
            which, local, file_at = self._located
            out: tuple[DataFileMeta, ...] = ()
            budget = MAKE_AHEAD_FILES
            for j in range(index, len(self._ranges)):
                lo, hi = self._ranges[j]
                if j > index and (budget <= 0 or j in self._made or self._taken[j]):
                    break
                files = tuple(map(file_at, which[lo:hi], local[lo:hi]))
                budget -= hi - lo
                if j == index:
                    out = files
                else:
                    self._made[j] = files
            return out


#: How many files the first access to a split's files makes ahead (see :class:`_PlannedFiles`).
MAKE_AHEAD_FILES = 16384


class PlannedSplit(DataSplit):
    """A :class:`DataSplit` of a batch plan whose ``files`` are made on first access.

    A plan of 100,000 files made 100,000 ``DataFileMeta`` objects up front, though a
    read of a few splits (or a count of rows) needs only some of them: here a split
    holds its range of the plan's columns, and ``files`` becomes the tuple on first
    use. Row count and size come from the columns. It equals (and hashes as) the
    :class:`DataSplit` with the same values; pickles and copies are plain ``DataSplit`` s.
    """

    @classmethod
    def make(
        cls, snapshot_id: int, partition: bytes, bucket: int, bucket_path: str, raw: bool,
        deletion_files: tuple[DeletionFile | None, ...], source: _PlannedFiles, lo: int, hi: int,
        *, row_count: int, file_size: int,
    ) -> PlannedSplit:
        if deletion_files and len(deletion_files) != hi - lo:
            raise InvalidArgumentError(f"{len(deletion_files)} deletion files for {hi - lo} data files")
        obj: PlannedSplit = object.__new__(cls)
        obj.__dict__.update(
            snapshot_id=snapshot_id, partition=partition, bucket=bucket, bucket_path=bucket_path,
            raw_convertible=raw, incremental=False, deletion_files=deletion_files, before_files=(), diff=False,
            _source=(source, source.add(lo, hi)), _row_count=row_count, _file_size=file_size,
        )
        return obj

    def __getattr__(self, name: str) -> Any:  # only reached for what the instance lacks: ``files``
        lazy = self.__dict__.get("_source")
        if name != "files" or lazy is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        source, index = lazy
        return source.take(self, index)

    @property
    def row_count(self) -> int:
        got = self.__dict__.get("_row_count")
        return int(got) if got is not None else sum(f.row_count for f in self.files)

    @property
    def file_size(self) -> int:
        got = self.__dict__.get("_file_size")
        return int(got) if got is not None else sum(f.file_size for f in self.files)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(DataSplit))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DataSplit):
            return self._values() == tuple(getattr(other, f.name) for f in fields(DataSplit))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple[Any, ...]:
        return (DataSplit, self._values())


def _groups(live: EntrySet) -> tuple[np.ndarray, list[tuple[bytes, int]]]:
    """Group id of every row, by (partition, bucket) in first-seen order, and the groups' keys."""
    parts = live.partition
    pid_of = {p: i for i, p in enumerate(dict.fromkeys(parts))}
    pid = np.fromiter(map(pid_of.__getitem__, parts), np.int64, len(parts))
    bucket = np.asarray(live.bucket, dtype=np.int64)
    span = int(bucket.max()) - int(bucket.min()) + 1
    key = pid * span + (bucket - int(bucket.min()))
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")  # group ids in first-seen order
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[by_first] = np.arange(len(uniq))
    gid = rank[inverse.reshape(-1)]
    firsts = first[by_first].tolist()
    buckets = live.bucket
    return gid, [(parts[i], buckets[i]) for i in firsts]


def _append_order(live: EntrySet, gid: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Rows by (group, min sequence number, file name): the order ``_pack`` sorts files in."""
    rows = np.flatnonzero(keep)
    seq = np.asarray(live.column("min_sequence_number"), dtype=np.int64)[rows]
    g = gid[rows]
    order = np.lexsort((seq, g))
    s_seq, s_g = seq[order], g[order]
    if len(order) > 1 and np.any((s_seq[1:] == s_seq[:-1]) & (s_g[1:] == s_g[:-1])):
        # ties on the sequence number: the file name decides (numpy orders str by code point, as Python)
        names = live.column("file_name")
        picked = names if len(rows) == len(names) else [names[i] for i in rows.tolist()]
        name_rank = np.empty(len(picked), dtype=np.int64)
        name_rank[sorted(range(len(picked)), key=picked.__getitem__)] = np.arange(len(picked))
        order = np.lexsort((name_rank, seq, g))
    return rows[order]


def _pack_ranges(weight_cum: list[int], lo: int, hi: int, target_size: int) -> list[tuple[int, int]]:
    """Consecutive files ``[lo, hi)`` packed as ``table_scan._pack`` packs them: a pack takes
    files while its weight stays within ``target_size`` (always at least one file).
    ``weight_cum`` are the prefix sums of the weights, so a pack's end is one bisection."""
    packs: list[tuple[int, int]] = []
    while lo < hi:
        # the first end whose pack would weigh more than the target, minus one; at least lo + 1
        end = bisect_right(weight_cum, weight_cum[lo] + target_size, lo + 1, hi + 1) - 1
        end = max(end, lo + 1)
        packs.append((lo, end))
        lo = end
    return packs
