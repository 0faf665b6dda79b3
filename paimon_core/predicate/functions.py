"""Semantics of the leaf functions, on one value and on column stats.

Java reference: ``org.apache.paimon.predicate.{Equal, NotEqual, LessThan, ..., In, NotIn,
IsNull, IsNotNull, StartsWith, EndsWith, Contains}``. Values and literals are internal values
of the same Paimon type; Python's own comparisons order them as Java does (strings by code
point = UTF-8 bytes, ``bytes`` unsigned lexicographically). Floats compare as IEEE 754 (NaN
matches no comparison but ``!=``), the semantics of Arrow's compute kernels used by
:meth:`~paimon_core.predicate.Predicate.to_arrow`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, get_args

from paimon_core.exceptions import InvalidArgumentError

__all__ = [
    "BINARY_FUNCTIONS",
    "LEAF_FUNCTIONS",
    "NARY_FUNCTIONS",
    "STRING_FUNCTIONS",
    "UNARY_FUNCTIONS",
    "LeafFunction",
    "negate_function",
    "test_stats",
    "test_value",
]

LeafFunction = Literal[
    "equal",
    "not_equal",
    "less_than",
    "less_or_equal",
    "greater_than",
    "greater_or_equal",
    "in",
    "not_in",
    "is_null",
    "is_not_null",
    "starts_with",
    "ends_with",
    "contains",
]

LEAF_FUNCTIONS: frozenset[str] = frozenset(get_args(LeafFunction))
UNARY_FUNCTIONS: frozenset[str] = frozenset({"is_null", "is_not_null"})
NARY_FUNCTIONS: frozenset[str] = frozenset({"in", "not_in"})
STRING_FUNCTIONS: frozenset[str] = frozenset({"starts_with", "ends_with", "contains"})
BINARY_FUNCTIONS: frozenset[str] = LEAF_FUNCTIONS - UNARY_FUNCTIONS - NARY_FUNCTIONS

_NEGATIONS: dict[str, LeafFunction] = {
    "equal": "not_equal",
    "not_equal": "equal",
    "less_than": "greater_or_equal",
    "greater_or_equal": "less_than",
    "less_or_equal": "greater_than",
    "greater_than": "less_or_equal",
    "is_null": "is_not_null",
    "is_not_null": "is_null",
    "in": "not_in",
    "not_in": "in",
}


def negate_function(function: str) -> LeafFunction | None:
    """The function computing NOT ``function`` (under SQL null semantics), if there is one."""
    return _NEGATIONS.get(function)


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


# --- one value --------------------------------------------------------------------------


def test_value(function: str, value: Any, literals: Sequence[Any]) -> bool:
    """Exact result of ``function(value, literals)``; anything compared with null is False."""
    if function == "is_null":
        return value is None
    if function == "is_not_null":
        return value is not None
    if value is None:
        return False
    if function == "in":
        return any(lit is not None and value == lit for lit in literals)
    if function == "not_in":
        return all(lit is not None and value != lit for lit in literals)
    literal = literals[0]
    if literal is None:
        return False
    if function == "equal":
        return bool(value == literal)
    if function == "not_equal":
        return bool(value != literal)
    if function == "less_than":
        return bool(value < literal)
    if function == "less_or_equal":
        return bool(value <= literal)
    if function == "greater_than":
        return bool(value > literal)
    if function == "greater_or_equal":
        return bool(value >= literal)
    if function == "starts_with":
        return bool(value.startswith(literal))
    if function == "ends_with":
        return bool(value.endswith(literal))
    if function == "contains":
        return literal in value
    raise InvalidArgumentError(f"Unknown leaf function {function!r}", function=function)


# --- stats ---------------------------------------------------------------------------------


def test_stats(
    function: str,
    row_count: int,
    lo: Any,
    hi: Any,
    null_count: int | None,
    literals: Sequence[Any],
) -> bool:
    """Whether some row of a file with these stats may match ``function`` (False: none can).

    ``lo``/``hi`` are known (not None, not NaN) unless every row is null
    (``null_count == row_count``); :meth:`LeafPredicate.test_stats` checks that first.
    """
    all_null = null_count is not None and null_count == row_count
    if function == "is_null":
        return null_count is None or null_count > 0
    if function == "is_not_null":
        return null_count is None or null_count < row_count
    if all_null:
        return False
    if function == "in":
        return any(lit is not None and _le(lo, lit) and _le(lit, hi) for lit in literals)
    if function == "not_in":
        return not any(lit is None or (_eq(lit, lo) and _eq(lit, hi)) for lit in literals)
    literal = literals[0]
    if literal is None:
        return False
    if function == "equal":
        return _le(lo, literal) and _le(literal, hi)
    if function == "not_equal":
        return not (_eq(literal, lo) and _eq(literal, hi))
    if function == "less_than":
        return _lt(lo, literal)
    if function == "less_or_equal":
        return _le(lo, literal)
    if function == "greater_than":
        return _lt(literal, hi)
    if function == "greater_or_equal":
        return _le(literal, hi)
    if function == "starts_with":
        return _starts_with_in_range(lo, hi, literal)
    if function in ("ends_with", "contains"):
        return True
    raise InvalidArgumentError(f"Unknown leaf function {function!r}", function=function)


def _starts_with_in_range(lo: Any, hi: Any, prefix: Any) -> bool:
    """Java's ``StartsWith.test`` on stats; sound on truncated min/max too.

    The strings starting with ``prefix`` form the range [prefix, prefix + anything]; a min
    above ``prefix`` that does not start with it is above that whole range.
    """
    try:
        return (lo.startswith(prefix) or lo <= prefix) and (hi.startswith(prefix) or hi >= prefix)
    except (AttributeError, TypeError):
        return True


# Stats comparisons: a TypeError (stats of another type than the literal, e.g. after a schema
# change) means "cannot tell", so the file is kept.


def _lt(a: Any, b: Any) -> bool:
    try:
        return bool(a < b)
    except TypeError:
        return True


def _le(a: Any, b: Any) -> bool:
    try:
        return bool(a <= b)
    except TypeError:
        return True


def _eq(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False
