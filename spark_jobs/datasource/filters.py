"""Spark data source filters -> paimon_core predicates, accepting only what is exact.

Spark does not re-check the filters a Python data source accepts, so a filter is accepted
only when paimon_core evaluates it with exactly Spark's semantics (SQL three-valued logic,
rows whose result is NULL are dropped). Everything else is handed back to Spark, which
then filters the rows itself. Accepted filters prune partitions and (append tables)
data files by their min/max stats, and are applied row by row by the read.

Not accepted (returned to Spark):

* filters on nested fields (``a.b``) or on ARRAY/MAP/ROW columns (except null checks);
* ``>``/``>=`` on FLOAT/DOUBLE, any NaN literal, and NOT over a FLOAT/DOUBLE comparison:
  Spark orders NaN above every number (``NaN > 1`` is true), Arrow and Paimon's stats do not;
* ``NOT (a <=> v)`` for a non-null ``v`` (true for a NULL ``a`` in Spark);
* NOT over ``LIKE``-style filters, and literals paimon_core cannot convert to the column type.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from paimon_core.exceptions import PaimonError
from paimon_core.predicate import Predicate, PredicateBuilder
from paimon_core.schema.data_types import DataField, DoubleType, FloatType, is_nested, is_string

__all__ = ["ConvertedFilters", "convert_filters", "convert_filter"]

logger = logging.getLogger(__name__)

_COMPARISONS = (EqualTo, EqualNullSafe, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)
_STRING_FILTERS = (StringStartsWith, StringEndsWith, StringContains)


class _Unsupported(Exception):
    """This filter cannot be evaluated exactly; Spark keeps it."""


@dataclass
class ConvertedFilters:
    """The outcome of :func:`convert_filters`."""

    predicates: list[Predicate] = field(default_factory=list)  # accepted, to AND together
    rejected: list[Filter] = field(default_factory=list)  # for Spark to evaluate

    @property
    def predicate(self) -> Predicate | None:
        """The AND of the accepted filters (None if none was accepted)."""
        if not self.predicates:
            return None
        return PredicateBuilder.and_(*self.predicates)


def convert_filters(filters: Sequence[Filter], fields: Sequence[DataField]) -> ConvertedFilters:
    """Split Spark's pushed filters into exact paimon_core predicates and the rest."""
    builder = PredicateBuilder(list(fields))
    out = ConvertedFilters()
    for f in filters:
        p = convert_filter(f, builder)
        if p is None:
            out.rejected.append(f)
        else:
            out.predicates.append(p)
    return out


def convert_filter(f: Filter, builder: PredicateBuilder) -> Predicate | None:
    """The exact predicate for one Spark filter, or None when Spark must evaluate it."""
    try:
        return _convert(f, builder, negated=False)
    except (_Unsupported, PaimonError, TypeError, ValueError) as e:
        logger.debug("Filter %s not pushed down: %s", f, e)
        return None


def _field(builder: PredicateBuilder, attribute: tuple[str, ...]) -> DataField:
    if len(attribute) != 1:
        raise _Unsupported(f"nested field {'.'.join(attribute)}")
    return builder.fields[builder.index_of(attribute[0])]


def _is_float(f: DataField) -> bool:
    return isinstance(f.type, (FloatType, DoubleType))


def _check_float_literal(f: DataField, value: object) -> None:
    if _is_float(f) and isinstance(value, float) and math.isnan(value):
        raise _Unsupported("NaN literal")


def _convert(f: Filter, builder: PredicateBuilder, *, negated: bool) -> Predicate:
    if isinstance(f, Not):
        if negated:
            raise _Unsupported("double negation")
        inner = _convert(f.child, builder, negated=True)
        result = inner.negate()
        if result is None:
            raise _Unsupported(f"cannot negate {f.child}")
        return result
    if isinstance(f, (IsNull, IsNotNull)):
        fld = _field(builder, f.attribute)
        return builder.is_null(fld.name) if isinstance(f, IsNull) else builder.is_not_null(fld.name)
    if isinstance(f, _COMPARISONS):
        return _comparison(f, builder, negated=negated)
    if isinstance(f, In):
        return _in(f, builder, negated=negated)
    if isinstance(f, _STRING_FILTERS):
        if negated:
            raise _Unsupported("NOT LIKE is not negatable in paimon_core")
        fld = _field(builder, f.attribute)
        if not is_string(fld.type) or not isinstance(f.value, str):
            raise _Unsupported("string filter on a non-string column")
        if isinstance(f, StringStartsWith):
            return builder.starts_with(fld.name, f.value)
        if isinstance(f, StringEndsWith):
            return builder.ends_with(fld.name, f.value)
        return builder.contains(fld.name, f.value)
    raise _Unsupported(f"unknown filter {type(f).__name__}")


def _comparison(f: Filter, builder: PredicateBuilder, *, negated: bool) -> Predicate:
    fld = _field(builder, f.attribute)  # type: ignore[attr-defined]
    value = f.value  # type: ignore[attr-defined]
    if is_nested(fld.type):
        raise _Unsupported("comparison on a nested type")
    if isinstance(f, EqualNullSafe):
        if value is None:
            return builder.is_null(fld.name)
        if negated:
            raise _Unsupported("NOT (a <=> v) is true for NULL a")
        return builder.equal(fld.name, value)
    if value is None:
        raise _Unsupported("comparison with NULL")  # Spark folds these; never seen in practice
    if _is_float(fld):
        _check_float_literal(fld, value)
        if negated or isinstance(f, (GreaterThan, GreaterThanOrEqual)):
            raise _Unsupported("NaN orders above all numbers in Spark")
    if isinstance(f, EqualTo):
        return builder.equal(fld.name, value)
    if isinstance(f, GreaterThan):
        return builder.greater_than(fld.name, value)
    if isinstance(f, GreaterThanOrEqual):
        return builder.greater_or_equal(fld.name, value)
    if isinstance(f, LessThan):
        return builder.less_than(fld.name, value)
    return builder.less_or_equal(fld.name, value)


def _in(f: In, builder: PredicateBuilder, *, negated: bool) -> Predicate:
    fld = _field(builder, f.attribute)
    if is_nested(fld.type):
        raise _Unsupported("IN on a nested type")
    values = list(f.value)
    if any(v is None for v in values):
        if negated:
            raise _Unsupported("NOT IN with a NULL literal")
        values = [v for v in values if v is not None]  # `a = NULL` is never true
    if _is_float(fld):
        if negated:
            raise _Unsupported("NaN orders above all numbers in Spark")
        for v in values:
            _check_float_literal(fld, v)
    if not values:
        raise _Unsupported("IN without non-null values")
    return builder.is_in(fld.name, values)
