"""Translate predicates into ``pyarrow.compute`` expressions for exact row filtering.

SQL null semantics: ``Table.filter`` drops rows where the expression is null, so comparisons
with a null field drop the row. Two spots need care because Arrow's ``is_in`` is a hash
lookup, not ``==``: it matches NaN with NaN and tells ``0.0`` from ``-0.0``, and it returns
False (not null) for null input, which ``NOT IN`` must not turn into True. So NaN literals are
removed (NaN equals nothing), a zero literal stands for both zeros, and ``NOT IN`` also
requires a non-null field.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.data.internal import internal_to_arrow_scalar
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.predicate.predicate import CompoundPredicate, LeafPredicate, Predicate

__all__ = ["predicate_to_arrow"]

_COMPARISONS = {
    "equal": operator.eq,
    "not_equal": operator.ne,
    "less_than": operator.lt,
    "less_or_equal": operator.le,
    "greater_than": operator.gt,
    "greater_or_equal": operator.ge,
}


def predicate_to_arrow(predicate: Predicate, schema: pa.Schema | None = None) -> Any:
    """The ``pyarrow.compute.Expression`` of ``predicate`` (see :meth:`Predicate.to_arrow`)."""
    if isinstance(predicate, CompoundPredicate):
        children = [predicate_to_arrow(c, schema) for c in predicate.children]
        return functools.reduce(operator.and_ if predicate.function == "and" else operator.or_, children)
    if isinstance(predicate, LeafPredicate):
        return _leaf_to_arrow(predicate, schema)
    raise InvalidArgumentError(f"Cannot translate {predicate!r} to an Arrow expression")


def _leaf_to_arrow(p: LeafPredicate, schema: pa.Schema | None) -> Any:
    field = pc.field(p.field_name)
    function = p.function
    if function == "is_null":
        return field.is_null()
    if function == "is_not_null":
        return field.is_valid()
    if function in ("in", "not_in"):
        return _in_to_arrow(p, field, schema)
    literal = p.literals[0]
    if literal is None:
        return pc.scalar(False)
    if function in _COMPARISONS:
        return _COMPARISONS[function](field, _scalar(p, literal, schema))
    if function in ("starts_with", "ends_with", "contains"):
        field = _decoded(p, field, schema)
    if function == "starts_with":
        return pc.starts_with(field, pattern=literal)
    if function == "ends_with":
        return pc.ends_with(field, pattern=literal)
    if function == "contains":
        return pc.match_substring(field, pattern=literal)
    raise InvalidArgumentError(f"Cannot translate {p} to an Arrow expression")


def _in_to_arrow(p: LeafPredicate, field: Any, schema: pa.Schema | None) -> Any:
    if p.function == "not_in" and any(lit is None for lit in p.literals):
        return pc.scalar(False)  # x NOT IN (..., NULL) is never true
    values = _set_values(p.literals)
    if not values:
        return pc.scalar(False) if p.function == "in" else field.is_valid()
    scalars = [_scalar(p, v, schema) for v in values]
    contained = field.isin(pa.array(scalars, type=scalars[0].type))
    return contained if p.function == "in" else field.is_valid() & ~contained


def _set_values(literals: Sequence[object]) -> list[object]:
    values: list[object] = []
    for lit in literals:
        if lit is None or (isinstance(lit, float) and math.isnan(lit)):
            continue
        if isinstance(lit, float) and lit == 0.0:
            values.extend((0.0, -0.0))
        else:
            values.append(lit)
    return values


def _decoded(p: LeafPredicate, field: Any, schema: pa.Schema | None) -> Any:
    """The field, decoded when ``schema`` says it is dictionary-encoded (string kernels need that)."""
    if schema is not None:
        index = schema.get_field_index(p.field_name)
        if index >= 0 and pa.types.is_dictionary(schema.field(index).type):
            return field.cast(schema.field(index).type.value_type)
    return field


def _arrow_type(p: LeafPredicate, schema: pa.Schema | None) -> pa.DataType:
    if schema is not None:
        index = schema.get_field_index(p.field_name)
        if index >= 0:
            field_type = schema.field(index).type
            return field_type.value_type if pa.types.is_dictionary(field_type) else field_type
    return to_arrow_type(p.type)


def _scalar(p: LeafPredicate, value: object, schema: pa.Schema | None) -> pa.Scalar:
    scalar = internal_to_arrow_scalar(value, p.type)
    target = _arrow_type(p, schema)
    if scalar.type != target:
        try:
            scalar = scalar.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # let the compute kernel find a common type
    return scalar
