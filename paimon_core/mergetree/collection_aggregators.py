"""``listagg``, ``collect`` and ``merge_map``: strings, arrays and maps, vectorized.

The common cases are whole-array operations: the strings, array elements or map
entries that enter each key's result are gathered with one sort and rebuilt into
list/map arrays by offsets. Order-sensitive cases that Java folds element by element
(``collect`` / ``merge_map`` retractions, ``merge_map`` rows older than a partial-update
sequence group, distinct ``listagg`` with such rows, distinct ``collect`` of binary or
nested elements) are folded with the scalar rules, for the affected keys only.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.mergetree.aggregators import (
    OP_AGG,
    OP_AGG_REVERSED,
    OP_RETRACT,
    FieldAggregator,
    Fold,
    ScalarRules,
    fold_scalar,
    splice,
)
from paimon_core.mergetree.segments import BoolArray, IntArray, take_or_null
from paimon_core.schema.data_types import DataField

__all__ = [
    "JAVA_WHITESPACE",
    "CollectAggregator",
    "ListaggAggregator",
    "MergeMapAggregator",
    "is_java_blank",
]

#: Characters for which Java's ``Character.isWhitespace`` holds (``StringUtils.isBlank``).
JAVA_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)
_BLANK_RE = (
    r"^[\t\n\x0b\x0c\r\x1c-\x1f \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200a}\x{2028}\x{2029}\x{205f}\x{3000}]*$"
)
_BLANK_PY = re.compile(
    "^[\t\n\x0b\x0c\r\x1c-\x1f \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000]*$"
)


def is_java_blank(text: str | None) -> bool:
    """Java's ``StringUtils.isBlank``: null, empty or only ``Character.isWhitespace``."""
    return text is None or _BLANK_PY.match(text) is not None


def _entries(f: Fold, op_rows: BoolArray, *, prepend: BoolArray | None = None) -> tuple[IntArray, IntArray]:
    """Rows entering each segment's collection, ordered: prepended (newest first), restart value, appended.

    Returns the rows and their segment ids, grouped by segment. A reset row appears
    as the restart value and again for its own op.
    """
    seg = f.seg
    restart = f.last_reset[f.init_valid]
    appended = np.flatnonzero(op_rows)
    parts_rows = [restart, appended]
    parts_group = [np.ones(len(restart), np.int64), np.full(len(appended), 2, np.int64)]
    parts_order = [np.zeros(len(restart), np.int64), appended]
    if prepend is not None:
        prepended = np.flatnonzero(prepend)
        parts_rows.append(prepended)
        parts_group.append(np.zeros(len(prepended), np.int64))
        parts_order.append(-prepended)
    rows = np.concatenate(parts_rows)
    group = np.concatenate(parts_group)
    order_in_group = np.concatenate(parts_order)
    ids = seg.ids[rows]
    order = np.lexsort((order_in_group, group, ids))
    return rows[order], ids[order]


def _offsets(ids: IntArray, count: int) -> npt.NDArray[np.int32]:
    counts = np.bincount(ids, minlength=count) if len(ids) else np.zeros(count, dtype=np.int64)
    out = np.zeros(count + 1, dtype=np.int32)
    out[1:] = np.cumsum(counts)
    return out


def _codes(values: pa.Array) -> npt.NDArray[np.int64]:
    """Integer codes with equal codes for equal values (null gets its own code)."""
    encoded = pc.dictionary_encode(values)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    size = len(encoded.dictionary)
    return np.asarray(
        np.where(pc.is_null(encoded.indices).to_numpy(zero_copy_only=False), size, codes), np.int64
    )


def _first_occurrence(ids: IntArray, codes: npt.NDArray[np.int64]) -> BoolArray:
    """Per element: the first element of its segment with this code."""
    keep = np.zeros(len(ids), dtype=np.bool_)
    if len(ids):
        combined = ids * (int(codes.max()) + 1) + codes
        _, first = np.unique(combined, return_index=True)
        keep[first] = True
    return keep


# --------------------------------------------------------------------------------------
# listagg
# --------------------------------------------------------------------------------------


class _ListaggRules:
    def __init__(self, delimiter: str, distinct: bool) -> None:
        self.delimiter = delimiter
        self.distinct = distinct

    def _split(self, text: str) -> list[str]:
        return text.split(self.delimiter or " ") if text else []

    def agg(self, acc: Any, value: Any) -> Any:
        if is_java_blank(value):
            return acc
        if is_java_blank(acc):
            return value
        if not self.distinct:
            return acc + self.delimiter + value
        existing = set(self._split(acc))
        out = [acc]
        for token in self._split(value):
            if is_java_blank(token) or token in existing:
                continue
            existing.add(token)
            out.append(token)
        return self.delimiter.join(out)

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        return self.agg(value, acc)

    def retract(self, acc: Any, value: Any) -> Any:  # pragma: no cover - never retractable
        raise AssertionError("listagg cannot retract")


class ListaggAggregator(FieldAggregator):
    """``listagg``: joins non-blank strings with the delimiter; ``distinct`` drops repeated tokens."""

    name = "listagg"
    has_rules = True

    def __init__(
        self, field: DataField, *, ignore_retract: bool = False, delimiter: str = ",", distinct: bool = False
    ) -> None:
        super().__init__(field, ignore_retract=ignore_retract)
        self.delimiter = delimiter
        self.distinct = distinct

    def _rules(self) -> ScalarRules:
        return _ListaggRules(self.delimiter, self.distinct)

    def _fold(self, f: Fold) -> pa.Array:
        values = f.values
        blank = pc.fill_null(pc.match_substring_regex(values, _BLANK_RE), True)
        item = ~np.asarray(blank.to_numpy(zero_copy_only=False), dtype=np.bool_)
        reversed_rows = f.active & f.op(OP_AGG_REVERSED)
        scalar = np.zeros(0, dtype=np.int64)
        if self.distinct:
            # distinct prepending (older partial-update rows), and strings whose re-split
            # could differ from the token stream, are folded one row at a time
            odd = (reversed_rows | self._resplit_risk(values)) & f.active & item
            scalar = np.flatnonzero(f.last_index(odd) >= 0)
        outside = ~np.isin(f.seg.ids, scalar)
        item &= outside
        init = f.init_valid & item[np.maximum(f.last_reset, 0)]
        rows, ids = _entries(
            _with_init(f, init), f.active & f.op(OP_AGG) & item, prepend=reversed_rows & item
        )
        has_items = (
            np.bincount(ids, minlength=f.seg.count) > 0 if len(ids) else np.zeros(f.seg.count, np.bool_)
        )
        if self.distinct:
            joined = self._distinct_join(values, rows, ids, f.seg.count)
        else:
            lists = pa.ListArray.from_arrays(
                pa.array(_offsets(ids, f.seg.count)), values.take(pa.array(rows))
            )
            joined = pc.binary_join(lists, self.delimiter)
        # no non-blank string: Java keeps the blank/null accumulator (aggReversed replaces it)
        last_rev = f.last_index(reversed_rows)
        placeholder = take_or_null(values, np.where(last_rev >= 0, last_rev, f.last_reset))
        out = pc.if_else(pa.array(has_items), joined, placeholder)
        if len(scalar):
            out = splice(out, scalar, fold_scalar(self._rules, f, scalar))
        return out

    def _resplit_risk(self, values: pa.Array) -> BoolArray:
        """Rows whose tokens might split differently once joined into the accumulator.

        Java re-splits the whole accumulated string on every call. Joining with a
        one-character delimiter and splitting again gives back the same tokens; an empty
        delimiter (joined with "", split on " ") or a token ending with the start of a
        longer delimiter may not.
        """
        d = self.delimiter
        if d == "":
            return np.ones(len(values), dtype=np.bool_)
        risky = np.zeros(len(values), dtype=np.bool_)
        if len(d) == 1:
            return risky
        tokens = pc.split_pattern(values, d)
        lengths = (
            pc.fill_null(pc.list_value_length(tokens), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        )
        flat = pc.list_flatten(tokens)
        bad = np.zeros(len(flat), dtype=np.bool_)
        for k in range(1, len(d)):
            bad |= np.asarray(pc.fill_null(pc.ends_with(flat, d[:k]), False).to_numpy(zero_copy_only=False))
        parent = np.repeat(np.arange(len(values), dtype=np.int64), lengths)
        risky[parent[bad]] = True
        return risky

    def _distinct_join(self, values: pa.Array, rows: IntArray, ids: IntArray, count: int) -> pa.Array:
        """First string verbatim, then the new non-blank tokens of the later strings, in order."""
        first_entry = np.ones(len(ids), dtype=np.bool_)
        first_entry[1:] = ids[1:] != ids[:-1]
        strings = values.take(pa.array(rows))
        tokens = pc.split_pattern(strings, self.delimiter or " ")
        lengths = pc.list_value_length(tokens).to_numpy(zero_copy_only=False).astype(np.int64)
        flat = pc.list_flatten(tokens)
        parent = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
        blank = np.asarray(pc.match_substring_regex(flat, _BLANK_RE).to_numpy(zero_copy_only=False), np.bool_)
        from_first = first_entry[parent]
        considered = from_first | ~blank
        idx = np.flatnonzero(considered)
        keep = _first_occurrence(ids[parent[idx]], _codes(flat.take(pa.array(idx))))
        appended = idx[keep & ~from_first[idx]]
        appended_ids = ids[parent[appended]]
        lists = pa.ListArray.from_arrays(
            pa.array(_offsets(appended_ids, count)), flat.take(pa.array(appended))
        )
        tail = pc.binary_join(lists, self.delimiter)
        first_rows = np.full(count, -1, dtype=np.int64)
        first_rows[ids[first_entry]] = rows[first_entry]
        head = take_or_null(values, first_rows)
        has_tail = (
            np.bincount(appended_ids, minlength=count) > 0 if len(appended) else np.zeros(count, np.bool_)
        )
        both = pc.binary_join_element_wise(head, tail, self.delimiter)
        return pc.if_else(pa.array(has_tail), both, head)


def _with_init(f: Fold, init: BoolArray) -> Fold:
    """A view of ``f`` whose restart values are only those in ``init``."""
    view = Fold(f.values, f.seg, f.ops, f.reset)
    view.__dict__.update(f.__dict__)
    view.__dict__["init_valid"] = init
    return view


# --------------------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------------------


def _freeze(value: Any) -> Any:
    """A hashable stand-in with Java's value equality (rows, arrays, maps regardless of order)."""
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, list) and value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
        return ("map", frozenset((_freeze(k), _freeze(v)) for k, v in value))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


class _CollectRules:
    def __init__(self, distinct: bool, *, equaliser: bool = False, prepend_reversed: bool = False) -> None:
        self.distinct = distinct
        self.equaliser = equaliser  # Java's equaliser path keeps the accumulator as it is
        self.prepend_reversed = prepend_reversed

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None and value is None:
            return None
        if (acc is None or value is None) and not self.distinct:
            return value if acc is None else acc
        if not self.distinct:
            return list(acc) + list(value)
        out: list[Any] = list(acc or []) if self.equaliser else []
        seen = {_freeze(v) for v in out}
        for element in value or [] if self.equaliser else [*(acc or []), *(value or [])]:
            key = _freeze(element)
            if key not in seen:
                seen.add(key)
                out.append(element)
        return out

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        # Java's collect appends here too, but the ignore-retract wrapper does not forward
        # that override and falls back to agg(value, acc), which prepends.
        return self.agg(value, acc) if self.prepend_reversed else self.agg(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        if not value:
            return acc
        pending = [_freeze(v) for v in value]
        out = []
        for element in acc:
            key = _freeze(element)
            if key in pending:
                pending.remove(key)
            else:
                out.append(element)
        return out


def _needs_equaliser(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
    ) or bool(pa.types.is_nested(t))


class CollectAggregator(FieldAggregator):
    """``collect``: concatenates arrays; ``distinct`` keeps each element once; retraction removes."""

    name = "collect"
    retractable = True
    has_rules = True

    def __init__(self, field: DataField, *, ignore_retract: bool = False, distinct: bool = False) -> None:
        super().__init__(field, ignore_retract=ignore_retract)
        self.distinct = distinct

    def _rules(self) -> ScalarRules:
        return _CollectRules(
            self.distinct,
            equaliser=_needs_equaliser(self.arrow_type.value_type),
            prepend_reversed=self.ignore_retract,
        )

    def _fold(self, f: Fold) -> pa.Array:
        values, seg = f.values, f.seg
        agg_rows = f.active & f.op(OP_AGG, OP_AGG_REVERSED)
        scalar_mask = f.last_index(f.active & f.valid & f.op(OP_RETRACT)) >= 0
        if self.ignore_retract:
            scalar_mask |= f.last_index(f.active & f.op(OP_AGG_REVERSED)) >= 0
        element = values.type.value_type
        if self.distinct and pa.types.is_nested(element):
            scalar_mask[:] = True
        elif self.distinct and _needs_equaliser(element):
            # Java keeps the restart value as is and compares elements with an equaliser
            scalar_mask |= f.init_valid
        scalar = np.flatnonzero(scalar_mask)
        outside = ~np.isin(seg.ids, scalar)
        init = f.init_valid & ~scalar_mask
        rows, ids = _entries(_with_init(f, init), agg_rows & f.valid & outside)
        null = np.bincount(ids, minlength=seg.count) == 0 if len(ids) else np.ones(seg.count, np.bool_)
        taken = values.take(pa.array(rows))
        lengths = pc.list_value_length(taken).to_numpy(zero_copy_only=False).astype(np.int64)
        flat = pc.list_flatten(taken)
        elem_ids = np.repeat(ids, lengths)
        if self.distinct and len(flat):
            # Java dedups (HashSet) as soon as one agg call sees a non-null side
            called = f.last_index(agg_rows) >= 0
            dedup = (f.last_index(agg_rows & f.valid) >= 0) | (init & called)
            keep = _first_occurrence(elem_ids, _codes(flat)) | ~dedup[elem_ids]
            flat = flat.filter(pa.array(keep))
            elem_ids = elem_ids[keep]
        out = pa.ListArray.from_arrays(
            pa.array(_offsets(elem_ids, seg.count)), flat, type=values.type, mask=pa.array(null)
        )
        if len(scalar):
            out = splice(out, scalar, fold_scalar(self._rules, f, scalar))
        return out


# --------------------------------------------------------------------------------------
# merge_map
# --------------------------------------------------------------------------------------


class _MergeMapRules:
    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        merged = {_freeze(k): (k, v) for k, v in acc}
        merged.update({_freeze(k): (k, v) for k, v in value})
        return list(merged.values())

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        return self.agg(value, acc)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        if not value:
            return acc
        gone = {_freeze(k) for k, _ in value}
        return [(k, v) for k, v in acc if _freeze(k) not in gone]


class MergeMapAggregator(FieldAggregator):
    """``merge_map``: later maps override earlier keys; a retraction removes its keys."""

    name = "merge_map"
    retractable = True
    has_rules = True

    def _rules(self) -> ScalarRules:
        return _MergeMapRules()

    def _fold(self, f: Fold) -> pa.Array:
        values, seg = f.values, f.seg
        scalar_mask = f.last_index(f.active & f.valid & f.op(OP_RETRACT, OP_AGG_REVERSED)) >= 0
        if pa.types.is_nested(values.type.key_type):
            scalar_mask[:] = True
        scalar = np.flatnonzero(scalar_mask)
        outside = ~np.isin(seg.ids, scalar)
        rows, ids = _entries(
            _with_init(f, f.init_valid & ~scalar_mask), f.active & f.op(OP_AGG) & f.valid & outside
        )
        null = np.bincount(ids, minlength=seg.count) == 0 if len(ids) else np.ones(seg.count, np.bool_)
        taken = values.take(pa.array(rows))
        offsets = taken.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        lengths = np.diff(offsets)
        keys = taken.keys.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        items = taken.items.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        entry_ids = np.repeat(ids, lengths)
        if len(entry_ids):
            # the last entry of each (segment, key) wins; entries are in fold order
            rev = _first_occurrence(entry_ids[::-1], _codes(keys)[::-1])[::-1]
            kept = np.flatnonzero(rev)
        else:
            kept = np.zeros(0, dtype=np.int64)
        out = pa.MapArray.from_arrays(
            pa.array(_offsets(entry_ids[kept], seg.count)),
            keys.take(pa.array(kept)),
            items.take(pa.array(kept)),
            type=values.type,
            mask=pa.array(null),
        )
        if len(scalar):
            out = splice(out, scalar, fold_scalar(_MergeMapRules, f, scalar))
        return out
