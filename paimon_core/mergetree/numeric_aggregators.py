"""``sum`` and ``product``: exact like Java, vectorized.

Java folds left to right in the column's own type: ``float`` sums round to float32 at
every step, integer overflow throws (``Math.addExact``), decimals of up to 18 digits add
their unscaled longs and fall back to ``BigDecimal`` (null when the precision overflows).
The vectorized path reproduces that bit for bit: floats through a strict left fold
(:func:`segmented_accumulate`), integers through exact int64 sums with an overflow
bound per segment. Segments the bound cannot clear are checked exactly (narrow ints) or
folded with the scalar rules (BIGINT near 2^63, DECIMAL wider than 18 digits, and
``product`` retractions, whose integer division makes the order matter).
"""

from __future__ import annotations

import decimal
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.mergetree.aggregators import (
    OP_AGG,
    OP_AGG_REVERSED,
    OP_RETRACT,
    OP_SKIP,
    FieldAggregator,
    Fold,
    ScalarRules,
    fold_scalar,
    splice,
)
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.segments import BoolArray, IntArray, Segments, segmented_accumulate

__all__ = ["ProductAggregator", "SumAggregator", "decimal_from_unscaled", "decimal_unscaled"]

_COMPACT_PRECISION = 18
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def decimal_unscaled(values: pa.Array) -> npt.NDArray[np.int64]:
    """Unscaled values of a decimal128 array of precision <= 18 (garbage at null slots)."""
    words = np.frombuffer(values.buffers()[1], dtype=np.int64)
    start = values.offset
    return np.asarray(words[2 * start : 2 * (start + len(values)) : 2], dtype=np.int64)


def decimal_from_unscaled(unscaled: npt.NDArray[np.int64], null: BoolArray, t: pa.DataType) -> pa.Array:
    """A decimal128 array of type ``t`` from unscaled int64 values (little-endian, sign-extended)."""
    n = len(unscaled)
    data = np.empty(2 * n, dtype=np.int64)
    data[0::2] = np.where(null, 0, unscaled)
    data[1::2] = data[0::2] >> 63
    validity = pa.array(~null).buffers()[1] if null.any() else None
    return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(data.tobytes())], null_count=int(null.sum()))


def _int_bounds(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def _type_label(t: pa.DataType) -> str:
    return {8: "byte", 16: "short", 32: "int", 64: "long"}.get(getattr(t, "bit_width", 0), str(t))


# --------------------------------------------------------------------------------------
# scalar rules (Java's FieldSumAgg / FieldProductAgg), for the rare segments
# --------------------------------------------------------------------------------------


def _from_big_decimal(value: Decimal, precision: int, scale: int) -> Decimal | None:
    """Java's ``Decimal.fromBigDecimal``: round HALF_UP to ``scale``; null if too many digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = 400
        rounded = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        digits = len(str(abs(int(rounded.scaleb(scale)))))
    return None if digits > precision else rounded


class _Arithmetic:
    """Exact scalar arithmetic of one Paimon numeric type, with Java's overflow rules."""

    def __init__(self, t: pa.DataType, field: str) -> None:
        self.t = t
        self.field = field
        if pa.types.is_integer(t):
            self.kind = "int"
            self.low, self.high = _int_bounds(t)
        elif pa.types.is_floating(t):
            self.kind = "float"
            self.np_type: type[np.floating[Any]] = np.float32 if t.bit_width == 32 else np.float64
        else:
            self.kind = "decimal"
            self.precision, self.scale = t.precision, t.scale

    def _check(self, value: int, expr: str) -> int:
        if not self.low <= value <= self.high:
            raise MergeError(
                f"{_type_label(self.t)} overflow: {expr} in field '{self.field}'", field=self.field
            )
        return value

    def _float(self, a: Any, b: Any, op: str) -> float:
        x, y = self.np_type(a), self.np_type(b)
        with np.errstate(all="ignore"):
            r = {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op]
        return float(r)

    def _decimal_compact(self, value: Decimal) -> Decimal | None:
        """Java adds compact decimals as longs (no precision check) unless the long overflows."""
        if self.precision <= _COMPACT_PRECISION:
            unscaled = int(value.scaleb(self.scale))
            if _INT64_MIN <= unscaled <= _INT64_MAX:
                return value
        return _from_big_decimal(value, self.precision, self.scale)

    def add(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._check(a + b, f"{a} + {b}")
        if self.kind == "float":
            return self._float(a, b, "+")
        with decimal.localcontext() as ctx:
            ctx.prec = 400
            return self._decimal_compact(a + b)

    def subtract(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._check(a - b, f"{a} - {b}")
        if self.kind == "float":
            return self._float(a, b, "-")
        with decimal.localcontext() as ctx:
            ctx.prec = 400
            return self._decimal_compact(a - b)

    def negate(self, a: Any) -> Any:
        if self.kind == "int":
            return self._check(-a, f"-{a}")
        if self.kind == "float":
            return float(-self.np_type(a))
        return -a

    def multiply(self, a: Any, b: Any) -> Any:
        if self.kind == "int":
            return self._check(a * b, f"{a} * {b}")
        if self.kind == "float":
            return self._float(a, b, "*")
        with decimal.localcontext() as ctx:
            ctx.prec = 400
            return _from_big_decimal(a * b, self.precision, self.scale)

    def divide(self, a: Any, b: Any) -> Any:
        if self.kind == "float":
            return self._float(a, b, "/")
        if b == 0:
            raise MergeError(f"Division by zero retracting product in field '{self.field}'", field=self.field)
        if self.kind == "int":
            q = abs(a) // abs(b)
            return self._check(q if (a >= 0) == (b >= 0) else -q, f"{a} / {b}")
        with decimal.localcontext() as ctx:
            ctx.prec = 400
            ctx.traps[decimal.Inexact] = True
            try:
                q = a / b
            except decimal.Inexact:
                raise MergeError(
                    f"Non-terminating decimal expansion retracting product in field '{self.field}'",
                    field=self.field,
                ) from None
        return _from_big_decimal(q, self.precision, self.scale)


class _SumRules:
    def __init__(self, arith: _Arithmetic) -> None:
        self.arith = arith

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self.arith.add(acc, value)

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        return self.agg(value, acc)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return self.arith.negate(value) if acc is None and value is not None else acc
        return self.arith.subtract(acc, value)


class _ProductRules(_SumRules):
    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self.arith.multiply(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return acc
        return self.arith.divide(acc, value)


# --------------------------------------------------------------------------------------
# vectorized
# --------------------------------------------------------------------------------------


class _NumericAggregator(FieldAggregator):
    retractable = True
    has_rules = True

    def _fold(self, f: Fold) -> pa.Array:
        """Fold every reset-delimited run, keep each key's last one.

        Java computes the rows before a reset too, and their overflow still throws, so
        the runs before the last reset are evaluated (and checked) like the last one.
        """
        if not f.reset.any():
            return self._fold_runs(f)
        starts = np.union1d(f.seg.starts, np.flatnonzero(f.reset)).astype(np.int64)
        runs = Segments.from_starts(starts, f.seg.n)
        out = self._fold_runs(Fold(f.values, runs, f.ops, f.reset))
        return out.take(pa.array(runs.ids[f.seg.ends - 1]))

    def _fold_runs(self, f: Fold) -> pa.Array:
        """The fold when resets only happen on a key's first row."""
        raise NotImplementedError

    def _arith(self) -> _Arithmetic:
        return _Arithmetic(self.arrow_type, self.field.name)

    def _finish_scalar(self, vectorized: pa.Array, f: Fold, which: IntArray) -> pa.Array:
        """Fold segments ``which`` with the scalar rules and patch them in."""
        if len(which) == 0:
            return vectorized
        values = fold_scalar(self._rules, f, which)
        if pa.types.is_decimal(self.arrow_type):
            for v in values:
                if v is not None:
                    self._check_decimal_digits(abs(int(v.scaleb(self.arrow_type.scale))))
        return splice(vectorized, which, values)

    def _check_decimal_digits(self, unscaled_abs: int) -> None:
        t = self.arrow_type
        if unscaled_abs >= 10**t.precision:
            raise MergeError(
                f"{self.name} of field '{self.field.name}' exceeds DECIMAL({t.precision}, {t.scale}); "
                "Java keeps such compact decimals unchecked, paimon_core cannot store them",
                field=self.field.name,
            )

    def _exact_inputs(self, f: Fold) -> npt.NDArray[np.int64]:
        """Integer values (or unscaled decimals) as int64, zero where null."""
        if pa.types.is_decimal(f.values.type):
            raw = decimal_unscaled(f.values)
        else:
            raw = pc.fill_null(f.values, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        return np.where(f.valid, raw, 0)

    def _to_arrow(self, result: npt.NDArray[Any], null: BoolArray) -> pa.Array:
        result = np.where(null, 0, result)
        t = self.arrow_type
        if pa.types.is_decimal(t):
            if len(result):
                self._check_decimal_digits(int(np.abs(result).max()))
            return decimal_from_unscaled(result.astype(np.int64), null, t)
        return pa.array(result.astype(t.to_pandas_dtype()), type=t, mask=null)


def _result_null(f: Fold, contrib: BoolArray) -> BoolArray:
    return np.asarray(~(f.init_valid | (f.last_index(contrib) >= 0)), dtype=np.bool_)


class SumAggregator(_NumericAggregator):
    """``sum``: retractions subtract; nulls are skipped (a retraction from null negates)."""

    name = "sum"

    def _rules(self) -> ScalarRules:
        return _SumRules(self._arith())

    def _fold_runs(self, f: Fold) -> pa.Array:
        t = f.values.type
        everything = np.arange(f.seg.count, dtype=np.int64)
        contrib = f.active & f.valid & (f.ops != OP_SKIP)
        negative = f.ops == OP_RETRACT
        restart = f.last_reset[f.init_valid]
        null = _result_null(f, contrib)
        if pa.types.is_floating(t):
            x = pc.fill_null(f.values, 0).to_numpy(zero_copy_only=False)
            identity = x.dtype.type(-0.0)  # x + (-0.0) == x for every x, signed zeros included
            with np.errstate(all="ignore"):
                terms = np.where(contrib, np.where(negative, -x, x), identity).astype(x.dtype)
                terms[restart] = x[restart] + terms[restart]
            total = segmented_accumulate(terms, f.seg, np.add, identity)[f.seg.ends - 1]
            return self._to_arrow(total, null)
        if pa.types.is_decimal(t) and t.precision > _COMPACT_PRECISION:
            return self._finish_scalar(pa.nulls(f.seg.count, t), f, everything)
        x = self._exact_inputs(f)
        terms = np.where(contrib, np.where(negative, -x, x), 0)
        terms[restart] += x[restart]
        # every partial sum is bounded by (number of terms) * (largest magnitude)
        used = contrib.copy()
        used[restart] = True
        count = np.add.reduceat(contrib.astype(np.int64), f.seg.starts) + f.init_valid
        biggest = np.maximum.reduceat(np.where(used, np.abs(x.astype(np.float64)), 0.0), f.seg.starts)
        if pa.types.is_integer(t) and t.bit_width < 64:
            low, high = _int_bounds(t)
            if (count * biggest > high).any():
                partial = segmented_accumulate(terms, f.seg, np.add, 0)
                bad = np.flatnonzero((partial < low) | (partial > high))
                if len(bad):
                    raise MergeError(
                        f"{_type_label(t)} overflow summing field '{self.field.name}' (partial sum {partial[bad[0]]})",
                        field=self.field.name,
                    )
            return self._to_arrow(np.add.reduceat(terms, f.seg.starts), null)
        # BIGINT and compact decimals: segments that might leave int64 go the scalar way
        risky = np.flatnonzero(count * biggest >= 2.0**62)
        total = np.add.reduceat(np.where(np.isin(f.seg.ids, risky), 0, terms), f.seg.starts)
        return self._finish_scalar(self._to_arrow(total, null | np.isin(everything, risky)), f, risky)


class ProductAggregator(_NumericAggregator):
    """``product``: retractions divide (integer division truncates, as in Java)."""

    name = "product"

    def _rules(self) -> ScalarRules:
        return _ProductRules(self._arith())

    def _fold_runs(self, f: Fold) -> pa.Array:
        t = f.values.type
        everything = np.arange(f.seg.count, dtype=np.int64)
        if pa.types.is_decimal(t):
            return self._finish_scalar(pa.nulls(f.seg.count, t), f, everything)
        # a retraction divides: order-sensitive, so those segments fold one row at a time
        dividing = np.flatnonzero(f.last_index(f.active & f.valid & f.op(OP_RETRACT)) >= 0)
        in_dividing = np.isin(f.seg.ids, dividing)
        contrib = f.active & f.valid & f.op(OP_AGG, OP_AGG_REVERSED) & ~in_dividing
        init = f.init_valid & ~np.isin(everything, dividing)
        restart = f.last_reset[init]
        null = np.asarray(~(init | (f.last_index(contrib) >= 0)), dtype=np.bool_) | np.isin(
            everything, dividing
        )
        if pa.types.is_floating(t):
            x = pc.fill_null(f.values, 0).to_numpy(zero_copy_only=False)
            one = x.dtype.type(1.0)
            with np.errstate(all="ignore"):
                terms = np.where(contrib, x, one).astype(x.dtype)
                terms[restart] = x[restart] * terms[restart]
            total = segmented_accumulate(terms, f.seg, np.multiply, one)[f.seg.ends - 1]
            return self._finish_scalar(self._to_arrow(total, null), f, dividing)
        x = self._exact_inputs(f)
        terms = np.where(contrib, x, 1)
        terms[restart] *= x[restart]
        log_size = np.log2(np.maximum(np.abs(x.astype(np.float64)), 1.0))
        magnitude = np.where(contrib, log_size, 0.0)
        magnitude[restart] += log_size[restart]
        bits = np.add.reduceat(magnitude, f.seg.starts)
        if t.bit_width < 64:
            low, high = _int_bounds(t)
            if (bits >= t.bit_width - 1.001).any():
                partial = segmented_accumulate(terms, f.seg, np.multiply, 1)
                bad = np.flatnonzero(((partial < low) | (partial > high)) & ~in_dividing)
                if len(bad):
                    raise MergeError(
                        f"{_type_label(t)} overflow multiplying field '{self.field.name}'",
                        field=self.field.name,
                    )
            total = np.multiply.reduceat(terms, f.seg.starts)
            return self._finish_scalar(self._to_arrow(total, null), f, dividing)
        risky = np.flatnonzero(bits >= 62.0)
        scalar = np.union1d(dividing, risky)
        with np.errstate(all="ignore"):
            total = np.multiply.reduceat(np.where(np.isin(f.seg.ids, scalar), 1, terms), f.seg.starts)
        return self._finish_scalar(self._to_arrow(total, null | np.isin(everything, scalar)), f, scalar)
