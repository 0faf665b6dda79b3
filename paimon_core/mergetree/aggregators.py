"""Field aggregators (Java's ``FieldAggregator`` family), folded over key segments at once.

A Java aggregator is a left fold per key: ``acc = agg(acc, value)`` for an insert,
``acc = retract(acc, value)`` for a retraction, and (in partial-update sequence groups,
for rows older than the group's sequence) ``acc = aggReversed(acc, value)``. The merge
engines describe that fold for a whole batch with one op code per row (:data:`OP_AGG`,
:data:`OP_AGG_REVERSED`, :data:`OP_RETRACT`, :data:`OP_SKIP`) and a ``reset`` flag
(``acc = value`` before the op, Java's ``initRow``). :meth:`FieldAggregator.fold`
returns the final accumulator of every segment, computed with whole-array numpy /
Arrow operations.

A few rare, order-sensitive cases (integer division in ``product`` retractions,
decimals wider than 18 digits, ``collect``/``merge_map`` retractions...) are folded
with the aggregator's scalar rules (:class:`ScalarRules`), but only for the segments
that need it.

This module holds the base class and the value-picking aggregators (``last_value``,
``last_non_null_value``, ``first_value``, ``first_non_null_value``, ``min``, ``max``,
``bool_and``, ``bool_or``); arithmetic ones live in :mod:`.numeric_aggregators`,
string and collection ones in :mod:`.collection_aggregators`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar, Final, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.segments import (
    BoolArray,
    IntArray,
    Segments,
    first_index,
    last_index,
    last_index_before,
    rows_of,
    take_or_null,
)
from paimon_core.schema.data_types import DataField

__all__ = [
    "OP_AGG",
    "OP_AGG_REVERSED",
    "OP_RETRACT",
    "OP_SKIP",
    "BoolAndAggregator",
    "BoolOrAggregator",
    "FieldAggregator",
    "FirstNonNullValueAggregator",
    "FirstValueAggregator",
    "Fold",
    "LastNonNullValueAggregator",
    "LastValueAggregator",
    "MaxAggregator",
    "MinAggregator",
    "ScalarRules",
    "fold_scalar",
    "splice",
]

OP_SKIP: Final = 0
OP_AGG: Final = 1
OP_AGG_REVERSED: Final = 2
OP_RETRACT: Final = 3

Int8Array = npt.NDArray[np.int8]


class Fold:
    """One field's input to a segmented fold: values, op codes and reset flags per row."""

    def __init__(self, values: pa.Array, seg: Segments, ops: Int8Array, reset: BoolArray) -> None:
        self.values = values
        self.seg = seg
        self.ops = ops
        self.reset = reset

    @cached_property
    def valid(self) -> BoolArray:
        """Per row: the value is not null."""
        if self.values.null_count == 0:
            return np.ones(len(self.values), dtype=np.bool_)
        return np.asarray(pc.is_valid(self.values).to_numpy(zero_copy_only=False), dtype=np.bool_)

    @cached_property
    def last_reset(self) -> IntArray:
        """Per segment: the last row that resets the accumulator, or -1."""
        return last_index(self.reset, self.seg)

    @cached_property
    def active(self) -> BoolArray:
        """Per row: at or after the last reset of its segment (earlier rows no longer matter)."""
        return np.asarray(self.seg.row_index >= self.last_reset[self.seg.ids], dtype=np.bool_)

    @cached_property
    def init_valid(self) -> BoolArray:
        """Per segment: the fold restarts from a non-null reset value."""
        safe = np.maximum(self.last_reset, 0)
        return np.asarray((self.last_reset >= 0) & self.valid[safe], dtype=np.bool_)

    def op(self, *codes: int) -> BoolArray:
        """Per row: the op code is one of ``codes``."""
        return np.isin(self.ops, np.array(codes, dtype=np.int8))

    def first_index(self, mask: BoolArray) -> IntArray:
        return first_index(mask, self.seg)

    def last_index(self, mask: BoolArray) -> IntArray:
        return last_index(mask, self.seg)

    def per_row(self, per_segment: IntArray) -> IntArray:
        """Broadcast a per-segment array to the rows."""
        return per_segment[self.seg.ids]


class ScalarRules(Protocol):
    """Java's scalar ``agg`` / ``aggReversed`` / ``retract`` for one key (fresh state per key)."""

    def agg(self, acc: Any, value: Any) -> Any: ...

    def agg_reversed(self, acc: Any, value: Any) -> Any: ...

    def retract(self, acc: Any, value: Any) -> Any: ...


def fold_scalar(
    rules: Callable[[], ScalarRules], f: Fold, which: IntArray, reset_after: BoolArray | None = None
) -> list[Any]:
    """Fold the segments ``which`` one row at a time with Java's scalar rules.

    Only used for the rare segments whose fold the vectorized path cannot reproduce
    exactly; the loop runs over those segments' rows only. ``reset_after`` rows replace
    the accumulator with their value after their op.
    """
    seg = f.seg
    rows = rows_of(seg.starts[which], seg.lengths[which])
    values = f.values.take(pa.array(rows)).to_pylist()
    ops = f.ops[rows].tolist()
    reset = f.reset[rows].tolist()
    after = reset_after[rows].tolist() if reset_after is not None else [False] * len(rows)
    out: list[Any] = []
    pos = 0
    for length in seg.lengths[which].tolist():
        state = rules()
        acc: Any = None
        for j in range(pos, pos + length):
            if reset[j]:
                acc = values[j]
            op = ops[j]
            if op == OP_AGG:
                acc = state.agg(acc, values[j])
            elif op == OP_AGG_REVERSED:
                acc = state.agg_reversed(acc, values[j])
            elif op == OP_RETRACT:
                acc = state.retract(acc, values[j])
            if after[j]:
                acc = values[j]
        out.append(acc)
        pos += length
    return out


def splice(vectorized: pa.Array, which: IntArray, values: list[Any]) -> pa.Array:
    """``vectorized`` with the entries at positions ``which`` replaced by ``values``."""
    if len(which) == 0:
        return vectorized
    patch = pa.array(values, type=vectorized.type)
    order = np.arange(len(vectorized), dtype=np.int64)
    order[which] = len(vectorized) + np.arange(len(which), dtype=np.int64)
    return pa.concat_arrays([vectorized, patch]).take(pa.array(order))


def last_write(f: Fold, writes: BoolArray, null_writes: BoolArray | None = None) -> pa.Array:
    """Per segment: the value written by the last row in ``writes`` (null if that row writes null)."""
    idx = f.last_index(writes)
    if null_writes is not None:
        safe = np.maximum(idx, 0)
        idx = np.where((idx >= 0) & null_writes[safe], -1, idx)
    return take_or_null(f.values, idx)


class FieldAggregator(ABC):
    """Base of all field aggregators: the Java identifier, retraction support and the fold."""

    #: Java's aggregate function identifier.
    name: ClassVar[str]
    #: Whether Java's aggregator implements ``retract`` (others throw unless ignore-retract).
    retractable: ClassVar[bool] = False
    #: Whether :meth:`_rules` gives scalar rules whose ``retract`` can throw (arithmetic).
    has_rules: ClassVar[bool] = False

    def __init__(self, field: DataField, *, ignore_retract: bool = False) -> None:
        self.field = field
        self.ignore_retract = ignore_retract
        self.arrow_type: pa.DataType = to_arrow_type(field.type)

    def __repr__(self) -> str:
        suffix = ", ignore-retract" if self.ignore_retract else ""
        return f"{type(self).__name__}({self.field.name}{suffix})"

    def fold(
        self,
        values: pa.Array,
        seg: Segments,
        ops: Int8Array,
        reset: BoolArray,
        reset_after: BoolArray | None = None,
    ) -> pa.Array:
        """Final accumulator per segment of ``values`` under ``ops`` and ``reset``.

        ``reset`` rows set the accumulator to their value before their op,
        ``reset_after`` rows after it (the op then only matters for the errors it throws).
        Raises :class:`MergeError` when a retraction reaches an aggregator that cannot
        retract and ``fields.<f>.ignore-retract`` is off (as Java does in ``retract``).
        """
        ops = np.asarray(ops, dtype=np.int8)
        reset = np.asarray(reset, dtype=np.bool_)
        retract = ops == OP_RETRACT
        if retract.any():
            if self.ignore_retract:
                ops = np.where(retract, np.int8(OP_SKIP), ops).astype(np.int8)
            elif not self.retractable:
                raise self.retract_error()
        checked = np.zeros(0, dtype=np.int64)
        full = Fold(values, seg, ops, reset)
        if reset_after is not None and reset_after.any():
            if self.has_rules:
                # an op right before a reset can still throw (division by zero, overflow)
                checked = np.unique(seg.ids[reset_after & (ops != OP_SKIP)])
            ops = np.where(reset_after, np.int8(OP_SKIP), ops).astype(np.int8)
            reset = reset | reset_after
        out = self._fold(Fold(values, seg, ops, reset))
        if len(checked):
            out = splice(out, checked, fold_scalar(self._rules, full, checked, reset_after))
        return out if out.type == self.arrow_type else out.cast(self.arrow_type)

    def _rules(self) -> ScalarRules:
        """Java's scalar rules for one key (only where :attr:`has_rules`)."""
        raise NotImplementedError(f"{self.name} has no scalar rules")

    @property
    def accepts_retract(self) -> bool:
        """Whether a retraction is allowed (Java's ``retract`` exists or is ignored)."""
        return self.retractable or self.ignore_retract

    def retract_error(self) -> MergeError:
        """The error Java's ``FieldAggregator.retract`` throws."""
        return MergeError(
            f"Aggregate function '{self.name}' does not support retraction (field '{self.field.name}'). "
            "If you allow this function to ignore retraction messages, configure "
            f"'fields.{self.field.name}.ignore-retract'='true'.",
            field=self.field.name,
        )

    @abstractmethod
    def _fold(self, f: Fold) -> pa.Array:
        """The vectorized fold (retractions already checked / dropped)."""


# --------------------------------------------------------------------------------------
# value-picking aggregators
# --------------------------------------------------------------------------------------


class LastValueAggregator(FieldAggregator):
    """``last_value``: the latest value, null included; a retraction sets null."""

    name = "last_value"
    retractable = True

    def _fold(self, f: Fold) -> pa.Array:
        # agg -> value; aggReversed (older row) -> unchanged; retract -> null
        retract = f.op(OP_RETRACT)
        return last_write(f, f.reset | f.op(OP_AGG) | retract, retract)


class LastNonNullValueAggregator(FieldAggregator):
    """``last_non_null_value``: the latest non-null value; retracting a non-null value sets null."""

    name = "last_non_null_value"
    retractable = True

    def _fold(self, f: Fold) -> pa.Array:
        valid = f.valid
        retract = f.op(OP_RETRACT) & valid
        hard = f.reset | (f.op(OP_AGG) & valid) | retract
        last_hard = f.last_index(hard)
        safe = np.maximum(last_hard, 0)
        # the last hard write leaves a non-null accumulator
        kept = (last_hard >= 0) & ~retract[safe] & valid[safe]
        reversed_rows = f.op(OP_AGG_REVERSED) & valid
        if not reversed_rows.any():
            return take_or_null(f.values, np.where(kept, last_hard, -1))
        # aggReversed (older row) only fills a null accumulator: the first one after the
        # last hard write wins when that write left null.
        fill = f.first_index(reversed_rows & (f.seg.row_index > f.per_row(last_hard)))
        return take_or_null(f.values, np.where(kept, last_hard, fill))


class FirstValueAggregator(FieldAggregator):
    """``first_value``: the value of the first ``agg`` call (null included), kept afterwards.

    Java keeps an ``initialized`` flag per key that a reset (``initRow``) does not clear,
    and ``aggReversed`` after initialization takes the older row's value.
    """

    name = "first_value"

    def _fold(self, f: Fold) -> pa.Array:
        agg, rev = f.op(OP_AGG), f.op(OP_AGG_REVERSED)
        first = f.per_row(f.first_index(agg | rev))
        k = f.seg.row_index
        writes = f.reset | (agg & (k == first)) | (rev & (first >= 0) & (k > first))
        return last_write(f, writes)


class FirstNonNullValueAggregator(FieldAggregator):
    """``first_non_null_value``: the first non-null value, kept afterwards (Java's quirks included)."""

    name = "first_non_null_value"

    def _fold(self, f: Fold) -> pa.Array:
        valid = f.valid
        agg, rev = f.op(OP_AGG), f.op(OP_AGG_REVERSED)
        k = f.seg.row_index
        # Before initialization the accumulator is whatever the last reset or aggReversed wrote.
        prev_write = last_index_before(f.reset | rev, f.seg)
        acc_set = np.where(f.reset, valid, (prev_write >= 0) & valid[np.maximum(prev_write, 0)])
        initializes = (agg & valid) | (rev & acc_set)
        first = f.per_row(f.first_index(initializes))
        writes = f.reset | (rev & (k != first)) | (agg & (k == first))
        return last_write(f, writes)


class _ExtremeAggregator(FieldAggregator):
    """Keeps the largest (smallest) non-null value; no retraction."""

    maximum: ClassVar[bool]

    def _fold(self, f: Fold) -> pa.Array:
        return extreme(f, _candidates(f), maximum=self.maximum)


class MaxAggregator(_ExtremeAggregator):
    """``max``, ordered like Java's ``InternalRowUtils.compare`` (NaN largest, -0.0 < 0.0)."""

    name = "max"
    maximum = True


class MinAggregator(_ExtremeAggregator):
    """``min``, ordered like Java's ``InternalRowUtils.compare``."""

    name = "min"
    maximum = False


class BoolAndAggregator(_ExtremeAggregator):
    """``bool_and`` over non-null values (the minimum of false < true)."""

    name = "bool_and"
    maximum = False


class BoolOrAggregator(_ExtremeAggregator):
    """``bool_or`` over non-null values (the maximum of false < true)."""

    name = "bool_or"
    maximum = True


def _candidates(f: Fold) -> BoolArray:
    """Rows whose non-null value enters a commutative fold: the restart value and later inputs."""
    cand = f.active & f.valid & f.op(OP_AGG, OP_AGG_REVERSED)
    restart = f.last_reset[f.init_valid]
    cand[restart] = True
    return cand


_INT_VIEW = {
    pa.types.is_date32: pa.int32(),
    pa.types.is_time32: pa.int32(),
    pa.types.is_date64: pa.int64(),
    pa.types.is_time64: pa.int64(),
    pa.types.is_timestamp: pa.int64(),
    pa.types.is_duration: pa.int64(),
}


def _int_storage(t: pa.DataType) -> pa.DataType | None:
    """The integer type sharing ``t``'s layout, if ``t`` is integer-like."""
    if pa.types.is_integer(t):
        return t
    for check, storage in _INT_VIEW.items():
        if check(t):
            return storage
    return None


def extreme(f: Fold, cand: BoolArray, *, maximum: bool) -> pa.Array:
    """Per segment: the largest (smallest) value among ``cand`` rows, null if none."""
    values, seg = f.values, f.seg
    t = values.type
    has = f.last_index(cand) >= 0
    if seg.count == 0:
        return pa.array([], type=t)
    reduce = np.maximum.reduceat if maximum else np.minimum.reduceat
    storage = _int_storage(t)
    if storage is not None or pa.types.is_boolean(t):
        ints = pc.cast(values, pa.int8()) if pa.types.is_boolean(t) else values.view(storage)
        x = pc.fill_null(ints, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        sentinel = np.iinfo(np.int64).min if maximum else np.iinfo(np.int64).max
        best = reduce(np.where(cand, x, sentinel), seg.starts)
        best[~has] = 0
        if pa.types.is_boolean(t):
            return pa.array(best.astype(np.bool_), mask=~has)
        return pa.array(best, type=pa.int64(), mask=~has).cast(storage).view(t)
    if pa.types.is_floating(t):
        x = pc.fill_null(values, 0).to_numpy(zero_copy_only=False).astype(np.float64)
        keys = _total_order_keys(x)
        sentinel = np.iinfo(np.int64).min if maximum else np.iinfo(np.int64).max
        best = _from_total_order_keys(reduce(np.where(cand, keys, sentinel), seg.starts))
        best[~has] = 0.0
        return pc.cast(pa.array(best, mask=~has), t, safe=False)
    # strings, binary, decimals: Arrow's hash aggregation over the candidate rows
    table = pa.table({"s": pa.array(seg.ids[cand]), "v": values.filter(pa.array(cand))})
    fn = "max" if maximum else "min"
    grouped = table.group_by("s", use_threads=False).aggregate([("v", fn)])
    where = np.full(seg.count, -1, dtype=np.int64)
    where[grouped.column("s").to_numpy()] = np.arange(grouped.num_rows, dtype=np.int64)
    return take_or_null(grouped.column(f"v_{fn}").combine_chunks(), where)


def _total_order_keys(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Int keys ordering doubles like Java's ``Double.compare`` (-0.0 < 0.0, NaN largest)."""
    x = np.where(np.isnan(x), np.nan, x)  # one canonical NaN
    bits = x.view(np.int64)
    return np.asarray(bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF)), dtype=np.int64)


def _from_total_order_keys(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    bits = keys ^ ((keys >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))
    return np.asarray(bits.view(np.float64), dtype=np.float64)
