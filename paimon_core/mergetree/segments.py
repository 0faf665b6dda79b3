"""Runs of equal keys ("segments") in a key-sorted table, and vectorized segment reductions.

The merge engines see one bucket's rows sorted by key, then by sequence order. A
*segment* is the run of rows sharing one key. Everything here works on whole
arrays at once (numpy / Arrow compute): no Python loop per row. The only loops are
over length buckets in :func:`segmented_accumulate` (at most ``log2(n) + 1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "BoolArray",
    "IntArray",
    "Segments",
    "find_segments",
    "first_index",
    "in_key_order",
    "key_changes",
    "last_index",
    "last_index_before",
    "rows_of",
    "segmented_accumulate",
    "segmented_running_max",
    "take_or_null",
    "to_array",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Segments:
    """Segment layout of ``n`` rows: segment ``i`` holds rows ``starts[i]`` to ``ends[i] - 1``."""

    n: int
    starts: IntArray
    ends: IntArray
    ids: IntArray  # per row: the index of its segment

    @property
    def count(self) -> int:
        """Number of segments."""
        return len(self.starts)

    @property
    def lengths(self) -> IntArray:
        """Rows per segment."""
        return self.ends - self.starts

    @property
    def row_index(self) -> IntArray:
        """``0 .. n-1``."""
        return np.arange(self.n, dtype=np.int64)

    @property
    def is_start(self) -> BoolArray:
        """Per row: whether it is the first row of its segment."""
        out = np.zeros(self.n, dtype=np.bool_)
        out[self.starts] = True
        return out

    @property
    def is_last(self) -> BoolArray:
        """Per row: whether it is the last row of its segment."""
        out = np.zeros(self.n, dtype=np.bool_)
        out[self.ends - 1] = True
        return out

    @staticmethod
    def from_starts(starts: IntArray, n: int) -> Segments:
        """Segments from the (increasing) first row of each segment."""
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.empty_like(starts)
        ends[:-1] = starts[1:]
        if len(ends):
            ends[-1] = n
        ids = np.zeros(n, dtype=np.int64)
        if n:
            marks = np.zeros(n, dtype=np.int64)
            marks[starts[1:]] = 1
            ids = np.cumsum(marks)
        return Segments(n=n, starts=starts, ends=ends, ids=ids)

    def subset(self, which: BoolArray) -> tuple[Segments, IntArray]:
        """The segments selected by ``which``, renumbered, and the rows they cover (in order)."""
        starts = self.starts[which]
        lengths = self.lengths[which]
        rows = rows_of(starts, lengths)
        new_starts = np.zeros(len(starts), dtype=np.int64)
        if len(starts):
            new_starts[1:] = np.cumsum(lengths)[:-1]
        return Segments.from_starts(new_starts, int(lengths.sum())), rows


def rows_of(starts: IntArray, lengths: IntArray) -> IntArray:
    """Concatenation of ``range(start, start + length)`` for each segment (vectorized)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.zeros(len(lengths), dtype=np.int64)
    offsets[1:] = np.cumsum(lengths)[:-1]
    seg_of_row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    return starts[seg_of_row] + (np.arange(total, dtype=np.int64) - offsets[seg_of_row])


def to_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One contiguous Arrow array for a (possibly chunked) column."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return column.chunk(0)
        return column.combine_chunks()
    return column


def _not_equal_adjacent(column: pa.Array) -> BoolArray:
    """Per adjacent pair ``(i-1, i)``: whether the values differ (null equals only null)."""
    n = len(column)
    if n < 2:
        return np.zeros(0, dtype=np.bool_)
    if pa.types.is_integer(column.type) and column.null_count == 0:
        values = column.to_numpy(zero_copy_only=False)
        return np.asarray(values[1:] != values[:-1])
    left, right = column.slice(1), column.slice(0, n - 1)
    differ = pc.fill_null(pc.not_equal(left, right), False)
    if column.null_count:
        differ = pc.or_(differ, pc.not_equal(pc.is_null(left), pc.is_null(right)))
    return np.asarray(differ.to_numpy(zero_copy_only=False), dtype=np.bool_)


def key_changes(table: pa.Table, key_names: Sequence[str]) -> BoolArray:
    """Per row: whether it starts a new run of equal keys (row 0 always does)."""
    n = table.num_rows
    change = np.zeros(n, dtype=np.bool_)
    if n:
        change[0] = True
    for name in key_names:
        change[1:] |= _not_equal_adjacent(to_array(table.column(name)))
    return change


def find_segments(table: pa.Table, key_names: Sequence[str]) -> Segments:
    """Segments of ``table`` (sorted by ``key_names``): a new segment starts where any key changes."""
    change = key_changes(table, key_names)
    return Segments.from_starts(np.flatnonzero(change).astype(np.int64), table.num_rows)


def _orderable(t: pa.DataType) -> bool:
    """Types whose ``pc.less``/``pc.greater`` order is exactly the order ``pc.sort_indices`` sorts
    non-null values in. Floating point is left out (NaN compares false both ways, -0.0 == 0.0)."""
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_boolean(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_decimal(t)
    )


def _adjacent_order(column: pa.Array) -> tuple[BoolArray, BoolArray]:
    """Per adjacent pair ``(i-1, i)``: (value i < value i-1, value i > value i-1); no nulls."""
    n = len(column)
    if pa.types.is_integer(column.type):
        values = column.to_numpy(zero_copy_only=False)
        return np.asarray(values[1:] < values[:-1]), np.asarray(values[1:] > values[:-1])
    left, right = column.slice(0, n - 1), column.slice(1)
    less = pc.less(right, left).to_numpy(zero_copy_only=False)
    greater = pc.greater(right, left).to_numpy(zero_copy_only=False)
    return np.asarray(less, dtype=np.bool_), np.asarray(greater, dtype=np.bool_)


def in_key_order(table: pa.Table, key_names: Sequence[str], *, strict: bool = False) -> bool:
    """Whether the rows are already in ascending order of ``key_names`` (lexicographic), so that
    a stable sort by them would not move any row; ``strict``: and no two rows share a key.

    A cheap, vectorized check (one comparison of adjacent values per key column). False (sort
    to be sure) for key columns with nulls or of a type without an exact order check (floats).
    """
    n = table.num_rows
    if n < 2:
        return True
    columns = [to_array(table.column(name)) for name in key_names]
    if any(c.null_count or not _orderable(c.type) for c in columns):
        return False
    tied = np.ones(n - 1, dtype=np.bool_)  # pairs whose keys are equal so far
    for column in columns:
        try:
            less, greater = _adjacent_order(column)
        except pa.ArrowNotImplementedError:  # no comparison kernel: let the sort decide
            return False
        if (tied & less).any():
            return False
        tied &= ~greater
        if not tied.any():
            return True
    return not (strict and tied.any())


def last_index(mask: BoolArray, seg: Segments) -> IntArray:
    """Per segment: the last row where ``mask`` holds, or -1."""
    if seg.count == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.where(mask, seg.row_index, -1)
    return np.asarray(np.maximum.reduceat(idx, seg.starts), dtype=np.int64)


def first_index(mask: BoolArray, seg: Segments) -> IntArray:
    """Per segment: the first row where ``mask`` holds, or -1."""
    if seg.count == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.where(mask, seg.row_index, seg.n)
    out = np.asarray(np.minimum.reduceat(idx, seg.starts), dtype=np.int64)
    out[out >= seg.ends] = -1
    return out


def last_index_before(mask: BoolArray, seg: Segments, *, inclusive: bool = False) -> IntArray:
    """Per row: the last row ``j < k`` (``<=`` if inclusive) of the same segment with ``mask``, or -1."""
    if seg.n == 0:
        return np.zeros(0, dtype=np.int64)
    filled = np.maximum.accumulate(np.where(mask, seg.row_index, -1))
    if not inclusive:
        filled = np.concatenate([np.array([-1], dtype=np.int64), filled[:-1]])
    own_start = seg.starts[seg.ids]
    return np.where(filled >= own_start, filled, -1).astype(np.int64)


def segmented_running_max(values: IntArray, starts_mask: BoolArray) -> IntArray:
    """Running maximum of non-negative-offset ``values`` restarting where ``starts_mask`` holds.

    ``values`` must be ``>= -1``. Restarts are encoded by lifting every sub-run above
    all earlier ones, so one ``np.maximum.accumulate`` does the work.
    """
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    run_id = np.cumsum(starts_mask.astype(np.int64))
    span = int(values.max()) + 2
    lifted = run_id * span + (values + 1)
    return np.asarray(np.maximum.accumulate(lifted) - run_id * span - 1, dtype=np.int64)


def segmented_accumulate(
    values: npt.NDArray[Any], seg: Segments, ufunc: np.ufunc, identity: Any
) -> npt.NDArray[Any]:
    """Per row: ``ufunc`` folded left-to-right over its segment up to and including the row.

    Unlike ``reduceat`` (pairwise for floats), this is a strict left fold, the order
    Java's aggregators use, so float results match bit for bit. Segments are grouped
    by length (powers of two), padded with ``identity`` and accumulated along rows, so
    the memory stays within twice the input and the loop runs at most ``log2(n) + 1``
    times.
    """
    out = np.empty_like(values)
    if seg.n == 0:
        return out
    lengths = seg.lengths
    widths = np.ones_like(lengths)
    big = lengths > 1
    widths[big] = 1 << np.ceil(np.log2(lengths[big])).astype(np.int64)
    for width in np.unique(widths):
        which = np.flatnonzero(widths == width)
        cols = np.arange(int(width), dtype=np.int64)
        idx = seg.starts[which][:, None] + cols[None, :]
        inside = cols[None, :] < lengths[which][:, None]
        grid = np.full(idx.shape, identity, dtype=values.dtype)
        grid[inside] = values[idx[inside]]
        with np.errstate(all="ignore"):
            acc = ufunc.accumulate(grid, axis=1)
        out[idx[inside]] = acc[inside]
    return out


def take_or_null(array: pa.Array, indices: IntArray) -> pa.Array:
    """``array.take(indices)`` where -1 yields null."""
    missing = indices < 0
    if missing.any():
        return array.take(pa.array(np.where(missing, 0, indices), mask=missing))
    return array.take(pa.array(indices))
