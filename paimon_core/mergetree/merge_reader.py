"""Streaming k-way merge of sorted runs: Java's ``MergeSorter`` / ``SortMergeReaderWithMinHeap``.

Java merges the sorted runs of a section with a min-heap over one record per run and hands
each key's records (from all runs) to the merge function at once. Here the same happens a
chunk of keys at a time, vectorized over Arrow:

1. every run buffers about ``batch_rows`` rows (pulling batches from its iterator);
2. the *boundary* is the smallest of the last buffered keys of the runs that are not
   exhausted -- every row with a smaller key is buffered already, in every run;
3. each run gives up its rows with key below the boundary (a prefix: runs are sorted; found
   by binary search, column by column for multi-column keys);
4. those rows are sorted by the bucket's sort order (key, ``sequence.field``, sequence
   number), merged with the merge function and yielded. Rows of the boundary key stay
   buffered, so rows of one key split across batches or files are merged together.

When nothing is below the boundary, the runs ending at it hold only boundary-key rows and
pull more. Memory stays O(runs x batch_rows) (plus the rows of one key); the concatenation
of the output equals concatenating all runs, sorting and merging them in one go.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.deletionvectors import DeletionFile
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.format.key_value import SEQUENCE_NUMBER
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.merge_function import MergeFunction
from paimon_core.mergetree.segments import in_key_order
from paimon_core.schema.data_types import DataField

__all__ = ["SortKeys", "merge_sorted_runs", "read_sorted_run"]

logger = logging.getLogger(__name__)

#: ``pc.sort_indices`` sort keys: ``(name, order)`` or ``(name, order, null_placement)``.
SortKeys = Sequence[tuple[str, str] | tuple[str, str, str]]


def read_sorted_run(
    reader: DataFileReader,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    fields: Sequence[DataField],
    *,
    deletion_files: Sequence[DeletionFile | None] | None = None,
    snapshot_id: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """The batches of a sorted run: its files (in key order) one after another, each with its
    deletion vector applied, as ``fields`` then ``_VALUE_KIND`` and ``_SEQUENCE_NUMBER``.

    Files are read ``streaming`` (decoded as the merge asks, a few MiB per open file): a merge
    holds one open file per run, so decoding ahead would hold the bucket in memory."""
    for i, f in enumerate(files):
        deletion = deletion_files[i] if deletion_files else None
        yield from reader.read(
            bucket_path,
            f,
            fields,
            with_kind=True,
            with_seq=True,
            deletion=deletion,
            snapshot_id=snapshot_id,
            streaming=True,
        )


class _Cursor:
    """The unconsumed buffered rows of one run (one contiguous batch) and its iterator."""

    def __init__(self, batches: Iterable[pa.RecordBatch]) -> None:
        self._it = iter(batches)
        self.buf: pa.RecordBatch | None = None
        self.exhausted = False

    @property
    def rows(self) -> int:
        return 0 if self.buf is None else self.buf.num_rows

    def fill(self, min_rows: int, *, at_least_one: bool = False) -> None:
        """Pull batches until ``min_rows`` rows are buffered (one more batch at least with
        ``at_least_one``) or the run ends."""
        pulled: list[pa.RecordBatch] = []
        rows = self.rows
        while not self.exhausted and (rows < min_rows or (at_least_one and not pulled)):
            try:
                batch = next(self._it)
            except StopIteration:
                self.exhausted = True
                break
            if batch.num_rows:
                pulled.append(batch)
                rows += batch.num_rows
        if not pulled:
            return
        parts = ([self.buf] if self.rows else []) + pulled
        self.buf = parts[0] if len(parts) == 1 else _one_batch(parts)

    def take_head(self, n: int) -> pa.RecordBatch:
        assert self.buf is not None
        head = self.buf.slice(0, n)
        self.buf = self.buf.slice(n) if n < self.buf.num_rows else None
        return head


def _one_batch(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    combined = pa.Table.from_batches(batches).combine_chunks()
    return pa.RecordBatch.from_arrays([c.chunk(0) for c in combined.columns], schema=combined.schema)


def merge_sorted_runs(
    runs: Sequence[Iterable[pa.RecordBatch]],
    *,
    key_names: Sequence[str],
    sort_keys: SortKeys,
    merge_function: MergeFunction,
    drop_retracts: bool,
    batch_rows: int = 65536,
) -> Iterator[pa.Table]:
    """Merge key-sorted runs into merged tables in key order (see the module docstring).

    Each run yields batches sorted by ``key_names`` with the same schema (key columns, value
    columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``). Every key's rows, from all runs, go through
    ``merge_function.merge(..., drop_retracts=drop_retracts)`` in the same call.
    """
    cursors = [_Cursor(run) for run in runs]
    logger.debug("Merging %d sorted runs by %s", len(cursors), list(key_names))
    keys = list(key_names)
    while True:
        for c in cursors:
            c.fill(batch_rows)
        live = [c for c in cursors if c.rows]
        if not live:
            return
        limiting = [c for c in live if not c.exhausted]
        if not limiting:
            counts = [c.rows for c in live]
        else:
            bound = _smallest_last_key([c.buf for c in limiting if c.buf is not None], keys)
            counts = [_count_below(c.buf, keys, bound) if c.buf is not None else 0 for c in live]
            if not any(counts):
                # every buffered row is >= the boundary: the runs ending at it hold only that key
                stuck = [
                    c for c in limiting if c.buf is not None and _range_of(c.buf, keys, bound)[1] == c.rows
                ]
                if not stuck:
                    raise InvalidArgumentError(f"Merge input runs are not sorted by their keys {keys}")
                for c in stuck:
                    c.fill(0, at_least_one=True)
                continue
        heads = [c.take_head(n) for c, n in zip(live, counts, strict=True) if n]
        chunk = pa.Table.from_batches(heads)
        if len(heads) > 1 or not in_key_order(chunk, keys, strict=True):
            chunk = chunk.take(_sort_indices(chunk, sort_keys, [h.num_rows for h in heads]))
        merged: pa.Table = merge_function.merge(chunk, drop_retracts=drop_retracts)
        if merged.num_rows:
            yield merged


# --- sorting a chunk -----------------------------------------------------------------------


def _sort_indices(chunk: pa.Table, sort_keys: SortKeys, head_rows: Sequence[int]) -> pa.Array:
    """``pc.sort_indices(chunk, sort_keys)``, faster for the common order: one integer key (no
    nulls) then the sequence number, both ascending.

    The chunk is the runs' key-sorted heads (of ``head_rows`` rows) one after another. Taken in
    ascending order of their smallest sequence number, a stable sort by the key alone merges them
    in O(n log runs); that is the answer when every two rows of one key come out in strictly
    ascending sequence order (checked, else the general sort), as runs of one bucket do.
    """
    names = [k[0] for k in sort_keys]
    if len(sort_keys) == 2 and names[1] == SEQUENCE_NUMBER and all(k[1] == "ascending" for k in sort_keys):
        key = chunk.column(names[0])
        if pa.types.is_integer(key.type) and key.null_count == 0 and all(n > 0 for n in head_rows):
            values = np.asarray(key.to_numpy())
            seq = np.asarray(chunk.column(SEQUENCE_NUMBER).to_numpy())
            starts = np.concatenate(([0], np.cumsum(head_rows[:-1]))).astype(np.int64)
            heads = np.argsort(np.minimum.reduceat(seq, starts), kind="stable")
            perm = np.concatenate([np.arange(starts[h], starts[h] + head_rows[h]) for h in heads])
            order = perm[np.argsort(values[perm], kind="stable")]
            tied = values[order[1:]] == values[order[:-1]]
            if not (tied & (seq[order[1:]] <= seq[order[:-1]])).any():
                return pa.array(order)
    return pc.sort_indices(chunk, sort_keys=list(sort_keys))


# --- key comparison ----------------------------------------------------------------------


def _smallest_last_key(bufs: list[pa.RecordBatch], keys: list[str]) -> list[pa.Array]:
    """The smallest of the buffers' last keys (one 1-row array per key column), in Arrow's
    sort order (the order the runs are sorted in)."""
    lasts = [b.slice(b.num_rows - 1, 1) for b in bufs]
    if len(lasts) == 1:
        return [lasts[0].column(k) for k in keys]
    table = pa.Table.from_batches(lasts).select(keys)
    first = pc.sort_indices(table, sort_keys=[(k, "ascending", "at_start") for k in keys])[0]
    row = table.slice(first.as_py(), 1).combine_chunks()
    return [row.column(k).chunk(0) for k in keys]


def _count_below(buf: pa.RecordBatch, keys: list[str], bound: list[pa.Array]) -> int:
    """Rows of the key-sorted ``buf`` whose key is below ``bound`` (a prefix)."""
    return _range_of(buf, keys, bound)[0]


def _range_of(buf: pa.RecordBatch, keys: list[str], bound: list[pa.Array]) -> tuple[int, int]:
    """``[lo, hi)``: the rows of the key-sorted ``buf`` whose key equals ``bound`` (lexicographic
    over the key columns: narrowed column by column to the rows equal so far)."""
    lo, hi = 0, buf.num_rows
    for name, b in zip(keys, bound, strict=True):
        left, right = _column_range(buf.column(name).slice(lo, hi - lo), b)
        lo, hi = lo + left, lo + right
        if lo == hi:
            break
    return lo, hi


def _column_range(column: pa.Array, bound: pa.Array) -> tuple[int, int]:
    """In an ascending (nulls first) column: (rows below ``bound[0]``, rows up to and including it)."""
    n = len(column)
    if n == 0:
        return 0, 0
    numeric = _numeric(column) if column.null_count == 0 and bound.null_count == 0 else None
    if numeric is not None:
        value = _numeric(bound)
        assert value is not None
        return (
            int(np.searchsorted(numeric, value[0], side="left")),
            int(np.searchsorted(numeric, value[0], side="right")),
        )
    nulls = column.null_count
    if bound.null_count:
        return 0, nulls
    scalar = bound[0]
    below = nulls + int(pc.sum(pc.less(column, scalar)).as_py() or 0)
    equal = int(pc.sum(pc.equal(column, scalar)).as_py() or 0)
    return below, below + equal


def _numeric(column: pa.Array) -> npt.NDArray[Any] | None:
    """``column`` as a numpy array ordered like Arrow sorts it, or None (compare with kernels)."""
    t = column.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return np.asarray(column.to_numpy(zero_copy_only=False))
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return np.asarray(column.view(pa.int32()).to_numpy())
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return np.asarray(column.view(pa.int64()).to_numpy())
    return None
