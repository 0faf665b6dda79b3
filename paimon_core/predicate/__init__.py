"""Predicates: build (by API or SQL text), test on stats / values, and filter Arrow data."""

from __future__ import annotations

from paimon_core.predicate.builder import IN_LITERALS_THRESHOLD, PredicateBuilder
from paimon_core.predicate.functions import LeafFunction
from paimon_core.predicate.parser import parse_predicate
from paimon_core.predicate.predicate import (
    CompoundPredicate,
    LeafPredicate,
    Predicate,
    and_all,
    or_all,
    pick_by_fields,
    split_and,
    split_or,
)

__all__ = [
    "IN_LITERALS_THRESHOLD",
    "CompoundPredicate",
    "LeafFunction",
    "LeafPredicate",
    "Predicate",
    "PredicateBuilder",
    "and_all",
    "or_all",
    "parse_predicate",
    "pick_by_fields",
    "split_and",
    "split_or",
]
