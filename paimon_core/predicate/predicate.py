"""Immutable predicate trees over the fields of a row, after Java's ``org.apache.paimon.predicate``.

A :class:`LeafPredicate` applies one leaf function (see :mod:`.functions`) to one field,
referenced by its position in the field list the predicate was built on and by name; a
:class:`CompoundPredicate` combines children with ``and`` / ``or``. There is no NOT node:
:meth:`Predicate.negate` pushes negation down to the leaves, as Java does.

Three evaluations, with SQL null semantics (a comparison with null is not true):

* :meth:`Predicate.test_stats`: might any row of a file with these stats match? Used to
  skip data files and manifests (never returns False when a row could match).
* :meth:`Predicate.test_values`: exact result on one row of internal values (partition values).
* :meth:`Predicate.to_arrow`: a ``pyarrow.compute.Expression`` selecting exactly the matching
  rows of Arrow data, by field name.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.predicate.functions import (
    BINARY_FUNCTIONS,
    LEAF_FUNCTIONS,
    UNARY_FUNCTIONS,
    LeafFunction,
    negate_function,
    test_stats,
    test_value,
)
from paimon_core.schema.data_types import DataType

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CompoundPredicate",
    "LeafPredicate",
    "Predicate",
    "and_all",
    "or_all",
    "pick_by_fields",
    "split_and",
    "split_or",
]


class Predicate(ABC):
    """A filter on rows; see the module docstring for its three evaluations."""

    @abstractmethod
    def test_stats(
        self,
        row_count: int,
        min_values: Sequence[object | None],
        max_values: Sequence[object | None],
        null_counts: Sequence[int | None] | None,
    ) -> bool:
        """Whether any of ``row_count`` rows with these per-field stats might match.

        Stats are positional, indexed by each leaf's ``field_index``; ``None`` (or a missing
        ``null_counts``) means unknown. Returns False only when no row can match.
        """

    @abstractmethod
    def test_values(self, values: Sequence[object | None]) -> bool:
        """Exact result on one row of internal values, indexed by ``field_index``."""

    def to_arrow(self, schema: pa.Schema | None = None) -> Any:
        """A ``pyarrow.compute.Expression`` keeping exactly the rows that match.

        Fields are referenced by name. Literals become Arrow scalars of the field's Arrow
        type (``to_arrow_type``), or of its type in ``schema`` when given.
        """
        from paimon_core.predicate.arrow import predicate_to_arrow

        return predicate_to_arrow(self, schema)

    @abstractmethod
    def negate(self) -> Predicate | None:
        """NOT this predicate with the negation pushed to the leaves; None if not expressible."""

    @abstractmethod
    def field_names(self) -> set[str]:
        """Names of all fields the predicate reads."""

    @abstractmethod
    def remap(self, field_index_by_name: Mapping[str, int]) -> Predicate:
        """The same predicate over another field list, given the new position of each field.

        Raises:
            InvalidArgumentError: if a field the predicate reads is not in the mapping.
        """


@dataclass(frozen=True)
class LeafPredicate(Predicate):
    """``function(field, *literals)``; literals are internal values of ``type``."""

    function: LeafFunction
    field_index: int
    field_name: str
    type: DataType
    literals: tuple[object, ...] = ()

    def __post_init__(self) -> None:
        if self.function not in LEAF_FUNCTIONS:
            raise InvalidArgumentError(
                f"Unknown predicate function {self.function!r}", function=self.function
            )
        if not isinstance(self.literals, tuple):
            object.__setattr__(self, "literals", tuple(self.literals))
        expected = 0 if self.function in UNARY_FUNCTIONS else 1 if self.function in BINARY_FUNCTIONS else None
        if expected is not None and len(self.literals) != expected:
            raise InvalidArgumentError(
                f"{self.function} takes {expected} literal(s), got {len(self.literals)}",
                function=self.function,
            )

    def test_stats(
        self,
        row_count: int,
        min_values: Sequence[object | None],
        max_values: Sequence[object | None],
        null_counts: Sequence[int | None] | None,
    ) -> bool:
        """See :meth:`Predicate.test_stats` (Java ``LeafPredicate.test`` on stats)."""
        lo = min_values[self.field_index]
        hi = max_values[self.field_index]
        null_count = null_counts[self.field_index] if null_counts is not None else None
        if self.function not in UNARY_FUNCTIONS and (null_count is None or null_count != row_count):
            # Not all null: unknown min or max (no stats, nested type, NaN) decides nothing.
            if lo is None or hi is None or _is_nan(lo) or _is_nan(hi):
                return True
        return test_stats(self.function, row_count, lo, hi, null_count, self.literals)

    def test_values(self, values: Sequence[object | None]) -> bool:
        """See :meth:`Predicate.test_values`."""
        return test_value(self.function, values[self.field_index], self.literals)

    def negate(self) -> Predicate | None:
        """Java's ``LeafFunction.negate``: comparisons, null checks and IN flip; LIKE-style ones don't."""
        negated = negate_function(self.function)
        if negated is None:
            return None
        return LeafPredicate(negated, self.field_index, self.field_name, self.type, self.literals)

    def field_names(self) -> set[str]:
        """The one field this leaf reads."""
        return {self.field_name}

    def remap(self, field_index_by_name: Mapping[str, int]) -> Predicate:
        """See :meth:`Predicate.remap`."""
        index = field_index_by_name.get(self.field_name)
        if index is None:
            raise InvalidArgumentError(
                f"Field {self.field_name!r} is not among the target fields", field=self.field_name
            )
        return LeafPredicate(self.function, index, self.field_name, self.type, self.literals)

    def __str__(self) -> str:
        args = [self.field_name, *(repr(lit) for lit in self.literals)]
        return f"{self.function}({', '.join(args)})"


@dataclass(frozen=True)
class CompoundPredicate(Predicate):
    """``and`` / ``or`` of two or more children (use :func:`and_all` / :func:`or_all` to build)."""

    function: Literal["and", "or"]
    children: tuple[Predicate, ...]

    def __post_init__(self) -> None:
        if self.function not in ("and", "or"):
            raise InvalidArgumentError(f"Unknown compound function {self.function!r}", function=self.function)
        if not isinstance(self.children, tuple):
            object.__setattr__(self, "children", tuple(self.children))
        if not self.children:
            raise InvalidArgumentError(f"{self.function} needs at least one child predicate")

    def test_stats(
        self,
        row_count: int,
        min_values: Sequence[object | None],
        max_values: Sequence[object | None],
        null_counts: Sequence[int | None] | None,
    ) -> bool:
        """See :meth:`Predicate.test_stats`."""
        results = (c.test_stats(row_count, min_values, max_values, null_counts) for c in self.children)
        return all(results) if self.function == "and" else any(results)

    def test_values(self, values: Sequence[object | None]) -> bool:
        """See :meth:`Predicate.test_values`."""
        results = (c.test_values(values) for c in self.children)
        return all(results) if self.function == "and" else any(results)

    def negate(self) -> Predicate | None:
        """De Morgan: NOT (a AND b) = NOT a OR NOT b (valid under SQL's three-valued logic)."""
        negated = [c.negate() for c in self.children]
        if any(n is None for n in negated):
            return None
        children = [n for n in negated if n is not None]
        return or_all(children) if self.function == "and" else and_all(children)

    def field_names(self) -> set[str]:
        """Names of all fields the children read."""
        names: set[str] = set()
        for child in self.children:
            names |= child.field_names()
        return names

    def remap(self, field_index_by_name: Mapping[str, int]) -> Predicate:
        """See :meth:`Predicate.remap`."""
        return CompoundPredicate(self.function, tuple(c.remap(field_index_by_name) for c in self.children))

    def __str__(self) -> str:
        return f"{self.function}({', '.join(str(c) for c in self.children)})"


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _combine(function: Literal["and", "or"], predicates: Iterable[Predicate]) -> Predicate:
    given = list(predicates)
    if len(given) == 1 and isinstance(given[0], Predicate):
        return given[0]
    flat: list[Predicate] = []
    for p in given:
        if isinstance(p, CompoundPredicate) and p.function == function:
            flat.extend(p.children)
        elif isinstance(p, Predicate):
            flat.append(p)
        else:
            raise InvalidArgumentError(f"Not a predicate: {p!r}")
    if not flat:
        raise InvalidArgumentError(f"{function} needs at least one predicate")
    if len(flat) == 1:
        return flat[0]
    return CompoundPredicate(function, tuple(flat))


def and_all(predicates: Iterable[Predicate]) -> Predicate:
    """AND of one or more predicates (nested ANDs are flattened, a single one is returned as is)."""
    return _combine("and", predicates)


def or_all(predicates: Iterable[Predicate]) -> Predicate:
    """OR of one or more predicates (nested ORs are flattened, a single one is returned as is)."""
    return _combine("or", predicates)


def _split(function: str, predicate: Predicate | None) -> list[Predicate]:
    if predicate is None:
        return []
    if isinstance(predicate, CompoundPredicate) and predicate.function == function:
        return [leaf for child in predicate.children for leaf in _split(function, child)]
    return [predicate]


def split_and(predicate: Predicate | None) -> list[Predicate]:
    """The conjuncts of ``predicate`` (itself if it is not an AND; nothing for None)."""
    return _split("and", predicate)


def split_or(predicate: Predicate | None) -> list[Predicate]:
    """The disjuncts of ``predicate`` (itself if it is not an OR; nothing for None)."""
    return _split("or", predicate)


def pick_by_fields(predicate: Predicate | None, names: Iterable[str]) -> Predicate | None:
    """AND of the conjuncts of ``predicate`` that only read fields in ``names``, or None.

    The result is implied by ``predicate``, so it can prune e.g. partitions: combine with
    :meth:`Predicate.remap` to evaluate it on the partition fields alone.
    """
    allowed = set(names)
    picked = [p for p in split_and(predicate) if p.field_names() <= allowed]
    return and_all(picked) if picked else None
