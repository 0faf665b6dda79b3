"""Batch splits of a snapshot's live files, planned on columns (the bulk form of ``TableScan._splits``).

The live files come as an :class:`~paimon_core.manifest.entry_set.EntrySet`;
grouping by (partition, bucket), ordering and packing run over its columns, and a
``DataFileMeta`` (lazy, see :class:`~paimon_core.manifest.manifest_batch.LazyDataFileMeta`)
is made only for the files that end up in a split. The splits are the ones
``TableScan._splits(..., incremental=False)`` makes from the same entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.manifest.entry_set import EntrySet
from paimon_core.options import parse_memory_size
from paimon_core.table.source import DataSplit

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
    files = live.files(order.tolist())
    bounds = np.flatnonzero(np.diff(gid[order])) + 1
    starts = [0, *bounds.tolist()]
    ends = [*bounds.tolist(), len(order)]
    target_size = parse_memory_size(scan.options.get(SPLIT_TARGET_SIZE, "128 mb"))
    open_cost = parse_memory_size(scan.options.get(SPLIT_OPEN_FILE_COST, "4 mb"))
    dv_enabled = scan._deletion_vectors()
    weights = np.maximum(np.asarray(live.column("file_size"), dtype=np.int64)[order], open_cost).tolist()
    gid_l = gid[order].tolist()
    splits: list[DataSplit] = []
    for lo, hi in zip(starts, ends, strict=True):
        if lo == hi:
            continue
        partition, bucket = group_keys[gid_l[lo]]
        group = files[lo:hi]
        if has_pk:
            raw = (dv_enabled and all(f.level != 0 and not f.delete_row_count for f in group)) or scan._non_overlapping(
                group
            )
            packs = [(group, raw)]
        else:
            packs = [(p, True) for p in _pack(group, weights[lo:hi], target_size)]
        bucket_path = table.bucket_path(partition, bucket)
        by_name = (dvs or {}).get((partition, bucket))
        for pack, raw in packs:
            dfs = tuple(by_name.get(f.file_name) for f in pack) if by_name else ()
            splits.append(DataSplit(snapshot_id, partition, bucket, bucket_path, tuple(pack), raw, False, dfs))
    return splits


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


def _pack(files: Sequence[DataFileMeta], weights: list[int], target_size: int) -> list[list[DataFileMeta]]:
    """Consecutive files packed into groups of about ``target_size`` (as ``table_scan._pack``)."""
    packs: list[list[DataFileMeta]] = []
    lo = 0
    weight = 0
    for i, w in enumerate(weights):
        if i > lo and weight + w > target_size:
            packs.append(list(files[lo:i]))
            lo, weight = i, 0
        weight += w
    if lo < len(weights):
        packs.append(list(files[lo:]))
    return packs
