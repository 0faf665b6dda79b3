"""The changes between a bucket's rows before and after an overwrite (Java's
``IncrementalDiffSplitRead``): -D for keys gone, +I for new keys, -U/+U for keys whose values
changed, nothing for unchanged rows; in key order. Vectorized: the two merged sides are
concatenated, sorted by (key, side), and adjacent rows of one key compared column by column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.format.key_value import VALUE_KIND
from paimon_core.mergetree.segments import BoolArray, key_changes, to_array

__all__ = ["diff_changes"]

_SIDE = "_DIFF_SIDE"
_INSERT, _UPDATE_BEFORE, _UPDATE_AFTER, _DELETE = 0, 1, 2, 3


def diff_changes(
    before: pa.Table | None,
    after: pa.Table | None,
    names: Sequence[str],
    keys: Sequence[str],
    *,
    retractions: bool = True,
) -> pa.Table | None:
    """Columns ``names`` plus ``_VALUE_KIND`` of the changes from ``before`` to ``after`` (each
    merged: one row per key); None when neither side has rows. ``retractions=False`` keeps only
    +I/+U (the new rows), for readers without row kinds."""
    template = before if before is not None else after
    if template is None:
        return None
    empty = template.select(names).schema.empty_table()
    sides = [
        (t.select(names) if t is not None else empty).append_column(
            _SIDE, pa.array(np.full(0 if t is None else t.num_rows, i, np.int8))
        )
        for i, t in enumerate((before, after))
    ]
    both = pa.concat_tables(sides)
    order = pc.sort_indices(both, sort_keys=[(k, "ascending") for k in keys] + [(_SIDE, "ascending")])
    both = both.take(order)
    kinds = _kinds(both, keys, [n for n in names if n not in keys])
    if not retractions:
        kinds[np.isin(kinds, (_UPDATE_BEFORE, _DELETE))] = -1
    rows = np.flatnonzero(kinds >= 0)
    out = both.take(pa.array(rows)).drop_columns([_SIDE])
    return out.append_column(VALUE_KIND, pa.array(kinds[rows], pa.int8()))


def _kinds(both: pa.Table, keys: Sequence[str], values: Sequence[str]) -> npt.NDArray[np.int8]:
    """Per row of ``both`` (sorted by key, then side 0 = before, 1 = after): its row kind, or
    -1 for a row that did not change."""
    side = both.column(_SIDE).to_numpy()
    kinds = np.where(side == 0, _DELETE, _INSERT).astype(np.int8)
    if both.num_rows < 2:
        return kinds
    same_key = ~key_changes(both, keys)[1:]  # row i + 1 has row i's key
    first = np.flatnonzero(same_key & (side[:-1] == 0) & (side[1:] == 1))  # (before, after) of one key
    second = first + 1
    unchanged = np.ones(len(first), dtype=np.bool_)
    take_b, take_a = pa.array(first), pa.array(second)
    for v in values:
        col = to_array(both.column(v))
        unchanged &= equal_rows(col.take(take_b), col.take(take_a))
    kinds[first], kinds[second] = _UPDATE_BEFORE, _UPDATE_AFTER
    kinds[first[unchanged]] = kinds[second[unchanged]] = -1
    return kinds


def equal_rows(x: pa.Array, y: pa.Array) -> BoolArray:
    """Row-wise equality of two arrays of one type, NULL equal to NULL, nested values compared
    element by element (lists by length, then their flattened values; maps as entry lists)."""
    n = len(x)
    x_null = np.asarray(x.is_null().to_numpy(zero_copy_only=False), dtype=np.bool_)
    y_null = np.asarray(y.is_null().to_numpy(zero_copy_only=False), dtype=np.bool_)
    t = x.type
    if pa.types.is_map(t):
        entries = pa.list_(pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False))
        x, y, t = x.cast(entries), y.cast(entries), entries
    if pa.types.is_struct(t):
        eq = np.ones(n, dtype=np.bool_)
        for i in range(t.num_fields):
            eq &= equal_rows(x.field(i), y.field(i))
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        x_len = np.asarray(pc.fill_null(pc.list_value_length(x), 0).to_numpy(zero_copy_only=False))
        y_len = np.asarray(pc.fill_null(pc.list_value_length(y), 0).to_numpy(zero_copy_only=False))
        eq = x_len == y_len
        rows = np.flatnonzero(eq & ~x_null & ~y_null & (x_len > 0))
        if len(rows):
            xs, ys = x.take(pa.array(rows)), y.take(pa.array(rows))
            values_eq = equal_rows(xs.flatten(), ys.flatten())
            parents = np.asarray(pc.list_parent_indices(xs).to_numpy(zero_copy_only=False))
            eq[rows[np.bincount(parents[~values_eq], minlength=len(rows)) > 0]] = False
    else:
        try:
            eq = np.asarray(pc.fill_null(pc.equal(x, y), False).to_numpy(zero_copy_only=False), dtype=np.bool_)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):  # never lose an update: differ
            eq = np.zeros(n, dtype=np.bool_)
    return np.asarray(np.where(x_null | y_null, x_null & y_null, eq), dtype=np.bool_)
