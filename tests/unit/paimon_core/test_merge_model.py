"""A plain-Python model of Paimon's merge functions, written straight from the Java sources.

One object per key, rows added one at a time, exactly like
``org.apache.paimon.mergetree.compact.*MergeFunction`` (``reset`` / ``add`` /
``getResult``), wrapped like ``ReducerMergeFunctionWrapper`` (a key with one row is
passed through untouched) and ``DropDeleteReader`` (retractions dropped on request).
The vectorized engines in ``paimon_core.mergetree`` are checked against it.

Values are Python objects as ``pyarrow``'s ``to_pylist`` gives them (maps are lists of
``(key, value)`` pairs). ``ModelError`` stands for the exceptions Java throws.
"""

from __future__ import annotations

import decimal
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pytest

from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
    VarCharType,
)

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3


def is_retract(kind: int) -> bool:
    return kind in (UPDATE_BEFORE, DELETE)


class ModelError(Exception):
    """Java would throw here (IllegalArgumentException, ArithmeticException, ...)."""


@dataclass
class KV:
    key: tuple[Any, ...]
    seq: int
    kind: int
    value: list[Any]  # all table fields, key fields included


# ======================================================================================
# FieldAggregator family
# ======================================================================================

_JAVA_WHITESPACE = set(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)


def java_is_blank(s: str | None) -> bool:
    """StringUtils.isBlank: every char satisfies Character.isWhitespace."""
    return s is None or all(c in _JAVA_WHITESPACE for c in s)


def split_preserve_all_tokens(s: str, delimiter: str) -> list[str]:
    """BinaryStringUtils.splitByWholeSeparatorPreserveAllTokens."""
    if s == "":
        return []
    if delimiter == "":
        delimiter = " "
    out = []
    beg = 0
    while True:
        end = s.find(delimiter, beg)
        if end == -1:
            out.append(s[beg:])
            return out
        out.append(s[beg:end])
        beg = end + len(delimiter)


class Numeric:
    """Java arithmetic for one numeric type: exact ints with *Exact overflow checks, float32/64, Decimal."""

    def __init__(self, t: DataType) -> None:
        self.t = t
        bits = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}.get(type(t))
        if bits:
            self.kind = "int"
            self.low, self.high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        elif isinstance(t, (FloatType, DoubleType)):
            self.kind = "float"
            self.np = np.float32 if isinstance(t, FloatType) else np.float64
        else:
            assert isinstance(t, DecimalType)
            self.kind = "decimal"
            self.p, self.s = t.precision, t.scale

    def _int(self, v: int) -> int:
        if not self.low <= v <= self.high:
            raise ModelError("overflow")
        return v

    def _float(self, f: Callable[[Any, Any], Any], a: Any, b: Any) -> float:
        with np.errstate(all="ignore"):
            return float(f(self.np(a), self.np(b)))

    def from_big_decimal(self, d: Decimal) -> Decimal | None:
        with decimal.localcontext() as ctx:
            ctx.prec = 500
            q = d.quantize(Decimal(1).scaleb(-self.s), rounding=ROUND_HALF_UP)
            digits = len(str(abs(int(q.scaleb(self.s)))))
        return None if digits > self.p else q

    def _decimal_add(self, a: Decimal, b: Decimal) -> Decimal | None:
        with decimal.localcontext() as ctx:
            ctx.prec = 500
            r = a + b
            if self.p <= 18:  # compact: Math.addExact on unscaled longs, no precision check
                unscaled = int(r.scaleb(self.s))
                if -(2**63) <= unscaled < 2**63:
                    return r
            return self.from_big_decimal(r)

    def add(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._int(a + b)
        if self.kind == "float":
            return self._float(lambda x, y: x + y, a, b)
        return self._decimal_add(a, b)

    def sub(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._int(a - b)
        if self.kind == "float":
            return self._float(lambda x, y: x - y, a, b)
        return self._decimal_add(a, -b)

    def neg(self, a: Any) -> Any:
        if a is None:
            return None
        if self.kind == "int":
            return self._int(-a)
        if self.kind == "float":
            return float(-self.np(a))
        return -a

    def mul(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._int(a * b)
        if self.kind == "float":
            return self._float(lambda x, y: x * y, a, b)
        with decimal.localcontext() as ctx:
            ctx.prec = 500
            return self.from_big_decimal(a * b)

    def div(self, a: Any, b: Any) -> Any:
        if self.kind == "float":
            return self._float(lambda x, y: x / y, a, b)
        if b == 0:
            raise ModelError("/ by zero")
        if self.kind == "int":
            q = abs(a) // abs(b)
            return self._int(q if (a >= 0) == (b >= 0) else -q)
        with decimal.localcontext() as ctx:
            ctx.prec = 500
            ctx.traps[decimal.Inexact] = True
            try:
                q = a / b
            except decimal.Inexact:
                raise ModelError("Non-terminating decimal expansion") from None
        return self.from_big_decimal(q)


def _double_to_long_bits(d: float) -> int:
    """Double.doubleToLongBits: the IEEE bits as a signed long, NaN canonical."""
    if d != d:
        return 0x7FF8000000000000
    return int(struct.unpack(">q", struct.pack(">d", d))[0])


def java_compare(a: Any, b: Any) -> int:
    """InternalRowUtils.compare for the types the tests use (Double.compare for floats)."""
    if isinstance(a, float):
        if a < b:
            return -1
        if a > b:
            return 1
        x, y = _double_to_long_bits(a), _double_to_long_bits(b)
        return 0 if x == y else (-1 if x < y else 1)
    if isinstance(a, str):
        a, b = a.encode(), b.encode()
    return (a > b) - (a < b)


class FieldAgg:
    """FieldAggregator: retract throws unless overridden; aggReversed(acc, in) = agg(in, acc)."""

    name = ""

    def __init__(self, t: DataType, options: Mapping[str, str], field: str) -> None:
        self.t = t

    def reset(self) -> None:
        pass

    def agg(self, acc: Any, v: Any) -> Any:
        raise NotImplementedError

    def agg_reversed(self, acc: Any, v: Any) -> Any:
        return self.agg(v, acc)

    def retract(self, acc: Any, v: Any) -> Any:
        raise ModelError(f"Aggregate function '{self.name}' does not support retraction")


class SumAgg(FieldAgg):
    name = "sum"

    def __init__(self, t: DataType, options: Mapping[str, str], field: str) -> None:
        super().__init__(t, options, field)
        self.n = Numeric(t)

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return self.n.add(acc, v)

    def retract(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return self.n.neg(v) if acc is None else acc
        return self.n.sub(acc, v)


class ProductAgg(SumAgg):
    name = "product"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return self.n.mul(acc, v)

    def retract(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return acc
        return self.n.div(acc, v)


class MaxAgg(FieldAgg):
    name = "max"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return v if java_compare(acc, v) < 0 else acc


class MinAgg(FieldAgg):
    name = "min"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return acc if java_compare(acc, v) < 0 else v


class LastValueAgg(FieldAgg):
    name = "last_value"

    def agg(self, acc: Any, v: Any) -> Any:
        return v

    def retract(self, acc: Any, v: Any) -> Any:
        return None


class LastNonNullValueAgg(FieldAgg):
    name = "last_non_null_value"

    def agg(self, acc: Any, v: Any) -> Any:
        return acc if v is None else v

    def retract(self, acc: Any, v: Any) -> Any:
        return None if v is not None else acc


class FirstValueAgg(FieldAgg):
    name = "first_value"

    def reset(self) -> None:
        self.initialized = False

    def agg(self, acc: Any, v: Any) -> Any:
        if not self.initialized:
            self.initialized = True
            return v
        return acc


class FirstNonNullValueAgg(FieldAgg):
    name = "first_non_null_value"

    def reset(self) -> None:
        self.initialized = False

    def agg(self, acc: Any, v: Any) -> Any:
        if not self.initialized and v is not None:
            self.initialized = True
            return v
        return acc


class BoolAndAgg(FieldAgg):
    name = "bool_and"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return acc and v


class BoolOrAgg(FieldAgg):
    name = "bool_or"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return acc or v


class ListaggAgg(FieldAgg):
    name = "listagg"

    def __init__(self, t: DataType, options: Mapping[str, str], field: str) -> None:
        super().__init__(t, options, field)
        self.delimiter = options.get(f"fields.{field}.list-agg-delimiter", ",")
        self.distinct = options.get(f"fields.{field}.distinct", "false").lower() == "true"

    def agg(self, acc: Any, v: Any) -> Any:
        if v is None or java_is_blank(v):
            return acc
        if acc is None or java_is_blank(acc):
            return v
        if self.distinct:
            existing = set(split_preserve_all_tokens(acc, self.delimiter))
            result = [acc]
            for token in split_preserve_all_tokens(v, self.delimiter):
                if java_is_blank(token) or token in existing:
                    continue
                existing.add(token)
                result.append(self.delimiter)
                result.append(token)
            return "".join(result)
        return acc + self.delimiter + v


def _hashable(x: Any) -> Any:
    if isinstance(x, dict):
        return tuple((k, _hashable(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(v) for v in x)
    return x


class CollectAgg(FieldAgg):
    name = "collect"

    def __init__(self, t: DataType, options: Mapping[str, str], field: str) -> None:
        super().__init__(t, options, field)
        assert isinstance(t, ArrayType)
        self.distinct = options.get(f"fields.{field}.distinct", "false").lower() == "true"

    def agg_reversed(self, acc: Any, v: Any) -> Any:
        return self.agg(acc, v)

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None and v is None:
            return None
        if (acc is None or v is None) and not self.distinct:
            return v if acc is None else acc
        if not self.distinct:
            return list(acc) + list(v)
        # HashSet: order unspecified (the tests compare distinct collections as sets)
        out: dict[Any, Any] = {}
        for e in list(acc or []) + list(v or []):
            out.setdefault(_hashable(e), e)
        return list(out.values())

    def retract(self, acc: Any, v: Any) -> Any:
        if acc is None:
            return None
        if v is None or len(v) == 0:
            return acc
        retracted = list(v)
        out = []
        for candidate in acc:
            if candidate in retracted:
                retracted.remove(candidate)
            else:
                out.append(candidate)
        return out


class MergeMapAgg(FieldAgg):
    name = "merge_map"

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        result = dict(acc)
        result.update(dict(v))
        return list(result.items())

    def retract(self, acc: Any, v: Any) -> Any:
        if acc is None:
            return None
        if v is None or len(v) == 0:
            return acc
        keys = {k for k, _ in v}
        return [(k, x) for k, x in acc if k not in keys]


class PrimaryKeyAgg(FieldAgg):
    name = "primary-key"

    def agg(self, acc: Any, v: Any) -> Any:
        return v

    def retract(self, acc: Any, v: Any) -> Any:
        return v


class IgnoreRetractAgg(FieldAgg):
    """FieldIgnoreRetractAgg: forwards agg and reset only (not aggReversed overrides)."""

    def __init__(self, inner: FieldAgg) -> None:
        self.inner = inner
        self.name = inner.name

    def reset(self) -> None:
        self.inner.reset()

    def agg(self, acc: Any, v: Any) -> Any:
        return self.inner.agg(acc, v)

    def retract(self, acc: Any, v: Any) -> Any:
        return acc


AGGREGATORS: dict[str, type[FieldAgg]] = {
    "sum": SumAgg,
    "product": ProductAgg,
    "max": MaxAgg,
    "min": MinAgg,
    "last_value": LastValueAgg,
    "last_non_null_value": LastNonNullValueAgg,
    "first_value": FirstValueAgg,
    "first_non_null_value": FirstNonNullValueAgg,
    "first_not_null_value": FirstNonNullValueAgg,
    "bool_and": BoolAndAgg,
    "bool_or": BoolOrAgg,
    "listagg": ListaggAgg,
    "collect": CollectAgg,
    "merge_map": MergeMapAgg,
    "primary-key": PrimaryKeyAgg,
}


def make_agg(function: str, t: DataType, options: Mapping[str, str], field: str) -> FieldAgg:
    agg = AGGREGATORS[function](t, options, field)
    if options.get(f"fields.{field}.ignore-retract", "false").lower() == "true":
        return IgnoreRetractAgg(agg)
    return agg


# ======================================================================================
# merge functions
# ======================================================================================


@dataclass
class Field:
    name: str
    type: DataType
    nullable: bool = True


def _flag(options: Mapping[str, str], key: str, *fallbacks: str) -> bool:
    for k in (key, *fallbacks):
        if k in options:
            return options[k].lower() == "true"
    return False


def ignore_delete(options: Mapping[str, str]) -> bool:
    return _flag(
        options,
        "ignore-delete",
        "first-row.ignore-delete",
        "deduplicate.ignore-delete",
        "partial-update.ignore-delete",
    )


class DeduplicateModel:
    def __init__(self, fields: Sequence[Field], pk: Sequence[str], options: Mapping[str, str]) -> None:
        self.ignore_delete = ignore_delete(options)

    def reset(self) -> None:
        self.latest: KV | None = None

    def add(self, kv: KV) -> None:
        if self.ignore_delete and is_retract(kv.kind):
            return
        self.latest = kv

    def result(self) -> KV | None:
        return self.latest


class FirstRowModel:
    def __init__(self, fields: Sequence[Field], pk: Sequence[str], options: Mapping[str, str]) -> None:
        self.ignore_delete = ignore_delete(options)

    def reset(self) -> None:
        self.first: KV | None = None

    def add(self, kv: KV) -> None:
        if is_retract(kv.kind):
            if self.ignore_delete:
                return
            raise ModelError("First row merge engine can not accept DELETE/UPDATE_BEFORE records")
        if self.first is None:
            self.first = kv

    def result(self) -> KV | None:
        return self.first


class AggregateModel:
    def __init__(self, fields: Sequence[Field], pk: Sequence[str], options: Mapping[str, str]) -> None:
        self.fields = list(fields)
        self.options = options
        self.pk = list(pk)
        self.remove_on_delete = _flag(options, "aggregation.remove-record-on-delete")
        seq = [s.strip() for s in options.get("sequence.field", "").split(",") if s.strip()]
        self.functions = []
        for f in fields:
            if f.name in seq:
                self.functions.append("last_value")
            elif f.name in pk:
                self.functions.append("primary-key")
            else:
                self.functions.append(
                    options.get(f"fields.{f.name}.aggregate-function")
                    or options.get("fields.default-aggregate-function")
                    or "last_non_null_value"
                )

    def reset(self) -> None:
        self.latest: KV | None = None
        self.row: list[Any] = [None] * len(self.fields)
        self.aggs = [
            make_agg(fn, f.type, self.options, f.name)
            for fn, f in zip(self.functions, self.fields, strict=False)
        ]
        for a in self.aggs:
            a.reset()
        self.delete_row = False

    def add(self, kv: KV) -> None:
        self.latest = kv
        self.delete_row = self.remove_on_delete and kv.kind == DELETE
        if self.delete_row:
            self.row = self._init_row(kv.value)
            return
        for i, agg in enumerate(self.aggs):
            if is_retract(kv.kind):
                self.row[i] = agg.retract(self.row[i], kv.value[i])
            else:
                self.row[i] = agg.agg(self.row[i], kv.value[i])

    def _init_row(self, value: list[Any]) -> list[Any]:
        for f, v in zip(self.fields, value, strict=False):
            if not f.nullable and v is None:
                raise ModelError(f"Field {f.name} can not be null")
        return list(value)

    def result(self) -> KV | None:
        assert self.latest is not None
        return KV(self.latest.key, self.latest.seq, DELETE if self.delete_row else INSERT, self.row)


class PartialUpdateModel:
    """PartialUpdateMergeFunction, field loop by field loop."""

    def __init__(self, fields: Sequence[Field], pk: Sequence[str], options: Mapping[str, str]) -> None:
        self.fields = list(fields)
        self.options = options
        names = [f.name for f in fields]
        self.ignore_delete = ignore_delete(options)
        self.remove_on_delete = _flag(options, "partial-update.remove-record-on-delete")
        self.comparators: dict[int, tuple[int, ...]] = {}  # field -> its group's sequence fields
        sequence_fields: list[str] = []
        protected: list[str] = []
        group_of_seq: dict[str, int] = {}
        for k in sorted(options):
            if k.startswith("fields.") and k.endswith(".sequence-group"):
                seq = tuple(names.index(s) for s in k[len("fields.") : -len(".sequence-group")].split(","))
                for p in options[k].split(","):
                    self.comparators[names.index(p)] = seq
                    protected.append(p)
                for s in seq:
                    self.comparators[s] = seq
                    sequence_fields.append(names[s])
                    group_of_seq[names[s]] = s
        self.partial_delete: set[int] = set()
        if "partial-update.remove-record-on-sequence-group" in options:
            for s in options["partial-update.remove-record-on-sequence-group"].split(","):
                self.partial_delete.add(group_of_seq[s])
        self.agg_functions: dict[int, str] = {}
        for i, f in enumerate(fields):
            if f.name in sequence_fields:
                continue
            if f.name in pk:
                self.agg_functions[i] = "primary-key"
                continue
            fn = options.get(f"fields.{f.name}.aggregate-function") or options.get(
                "fields.default-aggregate-function"
            )
            if fn is not None:
                self.agg_functions[i] = fn

    def reset(self) -> None:
        self.meet_insert = False
        self.not_null_filled = False
        self.row: list[Any] = [None] * len(self.fields)
        self.latest_seq = 0
        self.aggs = {
            i: make_agg(fn, self.fields[i].type, self.options, self.fields[i].name)
            for i, fn in self.agg_functions.items()
        }
        for a in self.aggs.values():
            a.reset()
        self.delete_row = False
        self.key: tuple[Any, ...] = ()

    def _init_row(self, value: list[Any]) -> list[Any]:
        for f, v in zip(self.fields, value, strict=False):
            if not f.nullable and v is None:
                raise ModelError(f"Field {f.name} can not be null")
        return list(value)

    def _compare(self, value: list[Any], seq: tuple[int, ...]) -> int:
        """UserDefinedSeqComparator: ascending, nulls first."""
        for i in seq:
            a, b = value[i], self.row[i]
            if a is None and b is None:
                continue
            if a is None:
                return -1
            if b is None:
                return 1
            c = (a > b) - (a < b)
            if c:
                return c
        return 0

    def add(self, kv: KV) -> None:
        self.key = kv.key
        self.delete_row = False
        if is_retract(kv.kind):
            if not self.not_null_filled:
                self.row = self._init_row(kv.value)
                self.not_null_filled = True
            if self.ignore_delete:
                return
            self.latest_seq = kv.seq
            if self.comparators:
                self._retract_with_sequence_group(kv)
                return
            if self.remove_on_delete:
                if kv.kind == DELETE:
                    self.delete_row = True
                    self.row = self._init_row(kv.value)
                return
            raise ModelError("By default, Partial update can not accept delete records")
        self.latest_seq = kv.seq
        if not self.comparators:
            for i, v in enumerate(kv.value):
                if v is not None:
                    self.row[i] = v
                elif not self.fields[i].nullable:
                    raise ModelError(f"Field {i} can not be null")
        else:
            self._update_with_sequence_group(kv)
        self.meet_insert = True
        self.not_null_filled = True

    def _empty_group(self, value: list[Any], seq: tuple[int, ...], processed: list[bool]) -> bool:
        if any(value[i] is not None for i in seq):
            return False
        for i in seq:
            processed[i] = True
        return True

    def _update_with_sequence_group(self, kv: KV) -> None:
        processed = [False] * len(self.fields)
        for i in range(len(self.fields)):
            seq = self.comparators.get(i)
            agg = self.aggs.get(i)
            acc = self.row[i]
            v = kv.value[i]
            if seq is not None:
                if processed[i] or self._empty_group(kv.value, seq, processed):
                    continue
                if self._compare(kv.value, seq) >= 0:
                    if i in seq:
                        for s in seq:
                            self.row[s] = kv.value[s]
                            processed[s] = True
                        continue
                    self.row[i] = v if agg is None else agg.agg(acc, v)
                elif agg is not None:
                    self.row[i] = agg.agg_reversed(acc, v)
            elif agg is not None:
                self.row[i] = agg.agg(acc, v)
            elif v is not None:
                self.row[i] = v

    def _retract_with_sequence_group(self, kv: KV) -> None:
        updated: set[int] = set()
        processed = [False] * len(self.fields)
        for i in range(len(self.fields)):
            seq = self.comparators.get(i)
            agg = self.aggs.get(i)
            if seq is None:
                continue
            if processed[i] or self._empty_group(kv.value, seq, processed):
                continue
            if self._compare(kv.value, seq) >= 0:
                if i in seq:
                    for s in seq:
                        if s not in updated:
                            if kv.kind == DELETE and s in self.partial_delete:
                                self.delete_row = True
                                self.row = self._init_row(kv.value)
                                return
                            self.row[s] = kv.value[s]
                            updated.add(s)
                        processed[s] = True
                elif agg is None:
                    self.row[i] = None
                else:
                    self.row[i] = agg.retract(self.row[i], kv.value[i])
            elif agg is not None:
                self.row[i] = agg.retract(self.row[i], kv.value[i])

    def result(self) -> KV | None:
        kind = DELETE if self.delete_row or not self.meet_insert else INSERT
        return KV(self.key, self.latest_seq, kind, self.row)


MODELS = {
    "deduplicate": DeduplicateModel,
    "first-row": FirstRowModel,
    "aggregation": AggregateModel,
    "partial-update": PartialUpdateModel,
}


def model_merge(
    fields: Sequence[Field],
    pk: Sequence[str],
    options: Mapping[str, str],
    rows: Sequence[KV],
    *,
    drop_retracts: bool,
) -> list[KV]:
    """ReducerMergeFunctionWrapper + DropDeleteReader over key-sorted ``rows``.

    Output rows: live kinds become +I, ``seq`` is the maximum of the key's run.
    """
    engine = MODELS[options.get("merge-engine", "deduplicate")]
    out: list[KV] = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j].key == rows[i].key:
            j += 1
        run = rows[i:j]
        i = j
        if len(run) == 1:
            result: KV | None = run[0]
        else:
            mf = engine(fields, pk, options)
            mf.reset()
            for kv in run:
                mf.add(kv)
            result = mf.result()
        if result is None or (drop_retracts and is_retract(result.kind)):
            continue
        kind = result.kind if is_retract(result.kind) else INSERT
        out.append(KV(run[0].key, max(kv.seq for kv in run), kind, list(result.value)))
    return out


# ======================================================================================
# the model's own sanity checks (examples from the Paimon docs and Java tests)
# ======================================================================================


def _kv(seq: int, kind: int, *values: Any) -> KV:
    return KV((values[0],), seq, kind, list(values))


def test_model_documented_aggregation_example() -> None:
    fields = [Field("product_id", BigIntType()), Field("price", DoubleType()), Field("sales", BigIntType())]
    options = {
        "merge-engine": "aggregation",
        "fields.price.aggregate-function": "max",
        "fields.sales.aggregate-function": "sum",
    }
    out = model_merge(
        fields, ["product_id"], options, [_kv(0, 0, 1, 23.0, 15), _kv(1, 0, 1, 30.2, 20)], drop_retracts=True
    )
    assert [o.value for o in out] == [[1, 30.2, 35]]


def test_model_single_row_passes_through() -> None:
    fields = [Field("k", IntType()), Field("v", VarCharType(VarCharType.MAX_LENGTH))]
    options = {"merge-engine": "aggregation", "fields.v.aggregate-function": "listagg"}
    out = model_merge(fields, ["k"], options, [_kv(0, 0, 1, " ")], drop_retracts=True)
    assert [o.value for o in out] == [[1, " "]]  # agg(null, " ") would give null


def test_model_partial_update_rejects_deletes_by_default() -> None:
    fields = [Field("k", IntType()), Field("v", IntType())]
    with pytest.raises(ModelError):
        model_merge(
            fields,
            ["k"],
            {"merge-engine": "partial-update"},
            [_kv(0, 0, 1, 1), _kv(1, 3, 1, 1)],
            drop_retracts=True,
        )
