"""Shared machinery of the merge engines: split a bucket into key runs, merge, reassemble.

Java merges every key through ``ReducerMergeFunctionWrapper``: a key with a single row
is passed through untouched (its merge function never sees it), a key with several
rows goes through the merge function, and ``DropDeleteReader`` then drops ``-U``/``-D``
results when writing the last level or reading. :class:`KeyedMergeFunction.merge`
does the same with whole-array operations; an engine only implements
:meth:`KeyedMergeFunction._merge_runs` for keys with two or more rows. Input whose keys
are all distinct (the common case of a first load) is passed through without copying
where that is provably the engine's result (:attr:`KeyedMergeFunction.lone_rows_pass_through`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.exceptions import SchemaMismatchError
from paimon_core.format.key_value import SEQUENCE_NUMBER, VALUE_KIND
from paimon_core.mergetree.segments import BoolArray, IntArray, Segments, key_changes, to_array
from paimon_core.schema.data_types import DataField

__all__ = [
    "DELETE",
    "INSERT",
    "KeyedMergeFunction",
    "RunResult",
    "UPDATE_AFTER",
    "UPDATE_BEFORE",
    "is_retract",
]

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3

Int8Array = npt.NDArray[np.int8]


def is_retract(kinds: Int8Array) -> BoolArray:
    """Per row: ``-U`` or ``-D``."""
    return np.asarray((kinds == UPDATE_BEFORE) | (kinds == DELETE), dtype=np.bool_)


@dataclass
class RunResult:
    """An engine's result for keys with several rows (one entry per key run).

    ``columns`` holds the merged values of the columns the engine computes; every other
    column is copied from row ``source`` of the run (default: its last row). ``kinds``
    is the result's row kind (``INSERT``, or a retraction kind for a deleted key) and
    ``keep`` is False where Java's merge function returns no row at all.
    """

    kinds: Int8Array
    keep: BoolArray
    source: IntArray | None = None
    columns: dict[str, pa.Array] = field(default_factory=dict)


class KeyedMergeFunction(ABC):
    """A merge engine over Arrow: one output row per surviving key, in key order.

    Input: one bucket's rows with the key columns (named like the primary-key fields),
    the value columns, ``_SEQUENCE_NUMBER`` (int64) and ``_VALUE_KIND`` (int8, 0 +I,
    1 -U, 2 +U, 3 -D), sorted by key and then by sequence order: ``sequence.field``
    values (ascending, or descending for ``sequence.field.sort-order=descending``;
    the caller sorts), then ``_SEQUENCE_NUMBER``. Rows later in a key's run are newer.

    Output: the same columns; live rows have ``_VALUE_KIND`` 0 (+I); with
    ``drop_retracts=False`` a deleted key is kept as its retraction row (-U/-D) so
    that higher levels still see the delete. ``_SEQUENCE_NUMBER`` is the maximum of
    the key's run.
    """

    #: A key whose only row is an insert merges to that row (true unless aggregators change it).
    single_insert_is_identity: bool = True
    #: Proven for the engine: the merge result of a key with a single row is the row passed
    #: through (Java's ``ReducerMergeFunctionWrapper``), i.e. what :meth:`_passthrough` gives.
    #: Engines set it where their ``_merge_runs`` of a lone insert provably equals that.
    exact_lone_insert: bool = False

    @property
    def lone_rows_pass_through(self) -> bool:
        """Whether input whose keys are all distinct merges to the rows passed through.

        Lone retractions always pass through; lone inserts do where the engine is not used for
        them (``single_insert_is_identity`` false) or its result is proven equal
        (``exact_lone_insert``). Then :meth:`merge` skips the engine for such input.
        """
        return self.exact_lone_insert or not self.single_insert_is_identity

    def __init__(self, key_fields: Sequence[DataField], value_fields: Sequence[DataField]) -> None:
        self.key_fields = list(key_fields)
        self.value_fields = list(value_fields)
        self.key_names = [f.name for f in self.key_fields]

    def merge(self, data: pa.Table, *, drop_retracts: bool = True) -> pa.Table:
        """Merge the rows of each key (see the class docstring for the contract)."""
        self._check_columns(data)
        if data.num_rows == 0:
            return data
        change = key_changes(data, self.key_names)
        kinds = np.asarray(to_array(data.column(VALUE_KIND)).to_numpy(zero_copy_only=False), dtype=np.int8)
        if self.lone_rows_pass_through and change.all():
            return _pass_lone_rows(data, kinds, drop_retracts)
        seg = Segments.from_starts(np.flatnonzero(change).astype(np.int64), data.num_rows)
        first_kind = kinds[seg.starts]
        single = seg.lengths == 1
        by_engine = ~single | (self.single_insert_is_identity & ~is_retract(first_kind))
        parts: list[tuple[pa.Table, IntArray]] = []
        if by_engine.all():
            parts.append(
                self._merge_engine(data, seg, kinds, np.arange(seg.count, dtype=np.int64), drop_retracts)
            )
        else:
            if by_engine.any():
                sub_seg, rows = seg.subset(by_engine)
                sub = data.take(pa.array(rows))
                parts.append(
                    self._merge_engine(sub, sub_seg, kinds[rows], np.flatnonzero(by_engine), drop_retracts)
                )
            parts.append(self._passthrough(data, seg, kinds, np.flatnonzero(~by_engine), drop_retracts))
        return _assemble(parts, data.schema)

    def _check_columns(self, data: pa.Table) -> None:
        names = set(data.column_names)
        missing = [n for n in (*self.key_names, SEQUENCE_NUMBER, VALUE_KIND) if n not in names]
        if missing:
            raise SchemaMismatchError(f"Merge input lacks columns {missing} (has {data.column_names})")

    def _passthrough(
        self, data: pa.Table, seg: Segments, kinds: Int8Array, which: IntArray, drop_retracts: bool
    ) -> tuple[pa.Table, IntArray]:
        """Keys with one row: Java passes the row through untouched (no merge function)."""
        rows = seg.starts[which]
        row_kinds = kinds[rows]
        retract = is_retract(row_kinds)
        if drop_retracts:
            rows, which, row_kinds, retract = (
                rows[~retract],
                which[~retract],
                row_kinds[~retract],
                retract[~retract],
            )
        table = data.take(pa.array(rows))
        out_kinds = np.where(retract, row_kinds, INSERT).astype(np.int8)
        return _set_column(table, VALUE_KIND, out_kinds), which

    def _merge_engine(
        self, data: pa.Table, seg: Segments, kinds: Int8Array, which: IntArray, drop_retracts: bool
    ) -> tuple[pa.Table, IntArray]:
        result = self._merge_runs(data, seg, kinds)
        source = seg.ends - 1 if result.source is None else result.source
        keep = result.keep.copy()
        if drop_retracts:
            keep &= ~is_retract(result.kinds)
        seq = to_array(data.column(SEQUENCE_NUMBER)).to_numpy(zero_copy_only=False)
        max_seq = np.maximum.reduceat(seq, seg.starts) if seg.count else seq[:0]
        columns: list[pa.Array] = []
        kept_source = pa.array(np.where(keep, source, 0)[keep])
        for name in data.column_names:
            if name in result.columns:
                columns.append(result.columns[name].filter(pa.array(keep)))
            elif name == SEQUENCE_NUMBER:
                columns.append(pa.array(max_seq[keep], type=data.schema.field(name).type))
            elif name == VALUE_KIND:
                columns.append(pa.array(result.kinds[keep], type=data.schema.field(name).type))
            else:
                columns.append(to_array(data.column(name)).take(kept_source))
        columns = [
            c if c.type == f.type else c.cast(f.type) for c, f in zip(columns, data.schema, strict=True)
        ]
        return pa.Table.from_arrays(columns, schema=data.schema), which[keep]

    @abstractmethod
    def _merge_runs(self, data: pa.Table, seg: Segments, kinds: Int8Array) -> RunResult:
        """Merge the key runs ``seg`` of ``data``: runs of two or more rows, plus single-insert
        runs when :attr:`single_insert_is_identity` holds (single retractions never get here)."""


def _pass_lone_rows(data: pa.Table, kinds: Int8Array, drop_retracts: bool) -> pa.Table:
    """The merge result of rows with distinct keys: every row passed through, like
    :meth:`KeyedMergeFunction._passthrough` for all of them, without copying the table: ``+U``
    becomes ``+I``, retractions stay (or go, with ``drop_retracts``)."""
    retract = is_retract(kinds)
    if drop_retracts and retract.any():
        keep = ~retract
        data, kinds, retract = data.filter(pa.array(keep)), kinds[keep], retract[keep]
    if (kinds == UPDATE_AFTER).any():
        data = _set_column(data, VALUE_KIND, np.where(retract, kinds, INSERT).astype(np.int8))
    return data


def _set_column(table: pa.Table, name: str, values: Int8Array) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, table.schema.field(i), pa.array(values, type=table.schema.field(i).type))


def _assemble(parts: list[tuple[pa.Table, IntArray]], schema: pa.Schema) -> pa.Table:
    """Concatenate per-part results and restore key order (parts carry their segment indices)."""
    parts = [(t, w) for t, w in parts if t.num_rows]
    if not parts:
        return schema.empty_table()
    if len(parts) == 1:
        return parts[0][0]
    table = pa.concat_tables([t for t, _ in parts])
    order = np.argsort(np.concatenate([w for _, w in parts]), kind="stable")
    return table.take(pa.array(order))
