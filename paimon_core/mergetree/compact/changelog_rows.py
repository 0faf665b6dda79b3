"""What the changelog producers of compactions share: ``changelog-producer.row-deduplicate``
(Java's ``CoreOptions.changelogRowDeduplicate`` / ``changelogRowDeduplicateIgnoreFields`` and the
``RecordEqualiser`` that compares a key's row before and after a compaction).

Both :class:`~.full_changelog_merge_function_wrapper.FullChangelogMergeFunctionWrapper` and
:class:`~.lookup_changelog_merge_function_wrapper.LookupChangelogMergeFunctionWrapper` skip the
``-U``/``+U`` pair of a key whose row is unchanged; :func:`rows_equal` is that comparison, over
whole columns (nested types included: lists, maps and structs compare element by element).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.segments import to_array
from paimon_core.schema.data_types import DataField

__all__ = [
    "ROW_DEDUPLICATE",
    "ROW_DEDUPLICATE_IGNORE_FIELDS",
    "arrays_equal",
    "row_deduplicate_fields",
    "rows_equal",
]

ROW_DEDUPLICATE = "changelog-producer.row-deduplicate"
ROW_DEDUPLICATE_IGNORE_FIELDS = "changelog-producer.row-deduplicate-ignore-fields"

BoolArray = npt.NDArray[np.bool_]


def row_deduplicate_fields(options: Mapping[str, str], fields: Sequence[DataField]) -> list[str] | None:
    """The columns compared for ``row-deduplicate`` (every field but the ignored ones); None
    when the option is off. An ignored field the table does not have is an error."""
    ignored = {x.strip() for x in (options.get(ROW_DEDUPLICATE_IGNORE_FIELDS) or "").split(",") if x.strip()}
    unknown = sorted(ignored - {f.name for f in fields})
    if unknown:
        raise InvalidOptionError(
            f"{ROW_DEDUPLICATE_IGNORE_FIELDS} names unknown field(s) {unknown}; the table's fields are "
            f"{[f.name for f in fields]}",
            key=ROW_DEDUPLICATE_IGNORE_FIELDS,
        )
    if (options.get(ROW_DEDUPLICATE) or "false").strip().lower() != "true":
        return None
    return [f.name for f in fields if f.name not in ignored]


def rows_equal(a: pa.Table, b: pa.Table, names: Sequence[str]) -> BoolArray:
    """Per row: whether ``a`` and ``b`` hold equal values in every column of ``names``."""
    same = np.ones(a.num_rows, dtype=np.bool_)
    for name in names:
        same &= arrays_equal(to_array(a.column(name)), to_array(b.column(name)))
    return same


def _mask(values: pa.Array | pa.ChunkedArray) -> BoolArray:
    return np.asarray(to_array(values).to_numpy(zero_copy_only=False), dtype=np.bool_)


def arrays_equal(x: pa.Array, y: pa.Array) -> BoolArray:
    """Per row: whether ``x[i]`` equals ``y[i]`` (two nulls are equal, a null never equals a
    value); lists, maps and structs compare their elements, whole-array (no per-row loop)."""
    n = len(x)
    x_null, y_null = _mask(x.is_null()), _mask(y.is_null())
    both = ~x_null & ~y_null
    t = x.type
    if n == 0 or not both.any():
        return x_null & y_null
    if pa.types.is_map(t):
        entries = pa.list_(pa.struct([t.key_field, t.item_field]))
        return arrays_equal(x.cast(entries), y.cast(entries))
    if pa.types.is_struct(t):
        same = np.ones(n, dtype=np.bool_)
        for i in range(t.num_fields):
            same &= arrays_equal(pc.struct_field(x, [i]), pc.struct_field(y, [i]))
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        x_len = np.asarray(pc.fill_null(pc.list_value_length(x), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        y_len = np.asarray(pc.fill_null(pc.list_value_length(y), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        same = both & (x_len == y_len)
        rows = np.flatnonzero(same)
        if rows.size:
            take = pa.array(rows)
            xs, ys = x.take(take), y.take(take)  # equal lengths row for row: the elements align
            elements = arrays_equal(pc.list_flatten(xs), pc.list_flatten(ys))
            owner = np.repeat(np.arange(rows.size), x_len[rows])
            differs = np.bincount(owner[~elements], minlength=rows.size) > 0
            same[rows[differs]] = False
    elif pa.types.is_dictionary(t):
        return arrays_equal(x.dictionary_decode(), y.dictionary_decode())
    else:
        try:
            same = _mask(pc.fill_null(pc.equal(x, y), False))
        except pa.ArrowNotImplementedError:  # a type without an equality kernel: compare the values
            same = np.array([u == v for u, v in zip(x.to_pylist(), y.to_pylist(), strict=True)], dtype=np.bool_)
    return (same & both) | (x_null & y_null)
