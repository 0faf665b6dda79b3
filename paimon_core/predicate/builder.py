"""Build predicates by field name, converting literals to internal values (Java ``PredicateBuilder``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from paimon_core.data.internal import to_internal
from paimon_core.exceptions import InvalidArgumentError, PaimonError
from paimon_core.predicate.functions import LeafFunction
from paimon_core.predicate.predicate import LeafPredicate, Predicate, and_all, or_all
from paimon_core.schema.data_types import DataField, is_nested, is_string

__all__ = ["IN_LITERALS_THRESHOLD", "PredicateBuilder"]

#: Java ``PredicateBuilder.in``: up to this many literals, IN becomes an OR of equals
#: (faster to test); above it (or with none), an ``in`` leaf.
IN_LITERALS_THRESHOLD = 20

_LIKE_PATTERN = re.compile(r"(%?)([^%]+)(%?)", re.DOTALL)


class PredicateBuilder:
    """Predicates over ``fields``; each leaf's ``field_index`` is the field's position there.

    Literals may be internal values or anything :func:`~paimon_core.data.internal.to_internal`
    accepts (``date``, ``datetime``, ``Decimal``, ISO strings...). A ``None`` literal makes a
    comparison that is never true. Comparisons on ARRAY/MAP/ROW fields are refused; null
    checks are allowed on every field.
    """

    def __init__(self, fields: Sequence[DataField]) -> None:
        self._fields = tuple(fields)
        self._index = {f.name: i for i, f in enumerate(self._fields)}

    @property
    def fields(self) -> tuple[DataField, ...]:
        """The fields predicates are built over."""
        return self._fields

    def index_of(self, name: str) -> int:
        """Position of field ``name``; raises :class:`InvalidArgumentError` naming it if absent."""
        index = self._index.get(name)
        if index is None:
            known = ", ".join(f.name for f in self._fields)
            raise InvalidArgumentError(f"Unknown field {name!r} (fields: {known})", field=name)
        return index

    # --- comparisons -----------------------------------------------------------------------

    def equal(self, name: str, value: object) -> Predicate:
        """``name = value``."""
        return self._compare("equal", name, value)

    def not_equal(self, name: str, value: object) -> Predicate:
        """``name <> value``."""
        return self._compare("not_equal", name, value)

    def less_than(self, name: str, value: object) -> Predicate:
        """``name < value``."""
        return self._compare("less_than", name, value)

    def less_or_equal(self, name: str, value: object) -> Predicate:
        """``name <= value``."""
        return self._compare("less_or_equal", name, value)

    def greater_than(self, name: str, value: object) -> Predicate:
        """``name > value``."""
        return self._compare("greater_than", name, value)

    def greater_or_equal(self, name: str, value: object) -> Predicate:
        """``name >= value``."""
        return self._compare("greater_or_equal", name, value)

    def is_in(self, name: str, values: Iterable[object]) -> Predicate:
        """``name IN (values)``: an OR of equals for 1..20 values, else an ``in`` leaf (as Java)."""
        index = self._comparable(name)
        literals = tuple(self._literal(index, v) for v in values)
        if not literals or len(literals) > IN_LITERALS_THRESHOLD:
            return self._leaf("in", index, literals)
        return or_all(self._leaf("equal", index, (lit,)) for lit in literals)

    def is_not_in(self, name: str, values: Iterable[object]) -> Predicate:
        """``name NOT IN (values)``: the negation of :meth:`is_in` (AND of not-equals, or ``not_in``)."""
        negated = self.is_in(name, values).negate()
        if negated is None:  # pragma: no cover - IN always negates
            raise InvalidArgumentError(f"Cannot negate IN on {name!r}")
        return negated

    # --- null checks -----------------------------------------------------------------------

    def is_null(self, name: str) -> Predicate:
        """``name IS NULL``."""
        return self._leaf("is_null", self.index_of(name), ())

    def is_not_null(self, name: str) -> Predicate:
        """``name IS NOT NULL``."""
        return self._leaf("is_not_null", self.index_of(name), ())

    # --- strings -----------------------------------------------------------------------------

    def starts_with(self, name: str, prefix: str) -> Predicate:
        """``name LIKE 'prefix%'`` on a CHAR/VARCHAR field (prunes files by min/max)."""
        return self._string("starts_with", name, prefix)

    def ends_with(self, name: str, suffix: str) -> Predicate:
        """``name LIKE '%suffix'`` (evaluated on data only: never prunes by stats)."""
        return self._string("ends_with", name, suffix)

    def contains(self, name: str, infix: str) -> Predicate:
        """``name LIKE '%infix%'`` (evaluated on data only: never prunes by stats)."""
        return self._string("contains", name, infix)

    def like(self, name: str, pattern: str) -> Predicate:
        """Java's ``LikeOptimization``: ``abc`` -> equal, ``abc%`` -> starts_with, ``%abc`` ->
        ends_with, ``%abc%`` -> contains. Other patterns (``_``, ``\\``, inner ``%``) are refused."""
        self._string_field(name, "LIKE")
        match = None if "_" in pattern or "\\" in pattern else _LIKE_PATTERN.fullmatch(pattern)
        if match is not None:
            head, core, tail = match.group(1), match.group(2), match.group(3)
            if head and tail:
                return self.contains(name, core)
            if head:
                return self.ends_with(name, core)
            if tail:
                return self.starts_with(name, core)
            return self.equal(name, core)
        raise InvalidArgumentError(
            f"Unsupported LIKE pattern {pattern!r}: only 'abc', 'abc%', '%abc' and '%abc%' are supported",
            pattern=pattern,
        )

    # --- combinators -----------------------------------------------------------------------

    @staticmethod
    def and_(*predicates: Predicate) -> Predicate:
        """AND of one or more predicates (a single one is returned as is)."""
        return and_all(predicates)

    @staticmethod
    def or_(*predicates: Predicate) -> Predicate:
        """OR of one or more predicates (a single one is returned as is)."""
        return or_all(predicates)

    # --- helpers -----------------------------------------------------------------------------

    def _leaf(self, function: LeafFunction, index: int, literals: tuple[object, ...]) -> Predicate:
        field = self._fields[index]
        return LeafPredicate(function, index, field.name, field.type, literals)

    def _comparable(self, name: str) -> int:
        index = self.index_of(name)
        t = self._fields[index].type
        if is_nested(t):
            raise InvalidArgumentError(f"Cannot compare field {name!r} of nested type {t}", field=name)
        return index

    def _literal(self, index: int, value: object) -> object:
        field = self._fields[index]
        try:
            return to_internal(value, field.type)
        except PaimonError as e:
            raise InvalidArgumentError(
                f"Invalid literal for field {field.name!r}: {e}", field=field.name
            ) from e

    def _compare(self, function: LeafFunction, name: str, value: object) -> Predicate:
        index = self._comparable(name)
        return self._leaf(function, index, (self._literal(index, value),))

    def _string_field(self, name: str, what: str) -> int:
        index = self.index_of(name)
        t = self._fields[index].type
        if not is_string(t):
            raise InvalidArgumentError(f"{what} needs a CHAR/VARCHAR field; {name!r} is {t}", field=name)
        return index

    def _string(self, function: LeafFunction, name: str, pattern: str) -> Predicate:
        index = self._string_field(name, function)
        if not isinstance(pattern, str):
            raise InvalidArgumentError(f"{function} needs a str pattern, got {pattern!r}", field=name)
        return self._leaf(function, index, (pattern,))
