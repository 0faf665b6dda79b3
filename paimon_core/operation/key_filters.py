"""Primary-key pruning: which buckets and files can hold keys matching a predicate.

Both are safe under merge-on-read: a bucket or file is skipped only when it cannot
hold any version of a matching key.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from paimon_core.bucket import check_bucket_function, scalar_bucket
from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.predicate import CompoundPredicate, LeafPredicate, Predicate, pick_by_fields, split_and
from paimon_core.schema.data_types import DataField

MAX_BUCKET_COMBINATIONS = 1024


def _literal_set(p: Predicate, name: str) -> set[object] | None:
    """Values ``p`` pins field ``name`` to (equal, IN, or an OR of equals), else None."""
    if isinstance(p, LeafPredicate) and p.field_name == name:
        if p.function == "equal" and p.literals and p.literals[0] is not None:
            return {p.literals[0]}
        if p.function == "in" and None not in p.literals:
            return set(p.literals)
        return None
    if isinstance(p, CompoundPredicate) and p.function == "or":
        out: set[object] = set()
        for child in p.children:
            sub = _literal_set(child, name)
            if sub is None:
                return None
            out |= sub
        return out
    return None


def buckets_for(
    predicate: Predicate | None,
    bucket_fields: Sequence[DataField],
    num_buckets: int,
    *,
    function: str = "default",
) -> frozenset[int] | None:
    """The fixed buckets that can hold matching rows, or None when all can."""
    if predicate is None or num_buckets <= 0 or not bucket_fields:
        return None
    conjuncts = split_and(predicate)
    choices: list[list[object]] = []
    for f in bucket_fields:
        values: set[object] | None = None
        for c in conjuncts:
            vs = _literal_set(c, f.name)
            if vs is not None:
                values = vs if values is None else values & vs
        if values is None:
            return None
        choices.append(sorted(values, key=repr))
    combos = 1
    for options in choices:
        combos *= len(options)
    if combos > MAX_BUCKET_COMBINATIONS:
        return None
    types = [f.type for f in bucket_fields]
    if function == "mod":
        try:
            check_bucket_function(function, types)  # a key Java's ModBucketFunction refuses: no pruning
        except InvalidArgumentError:
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in choices[0]):
            return None  # a literal that is no integer: every bucket may hold it
    return frozenset(
        scalar_bucket(list(vals), types, num_buckets, function=function) for vals in itertools.product(*choices)
    )


class KeyStatsFilter:
    """Entry filter on ``_KEY_STATS`` (min/max of the trimmed primary key per file)."""

    def __init__(self, predicate: Predicate, key_fields: Sequence[DataField]) -> None:
        self.key_types = [f.type for f in key_fields]
        self.predicate = predicate.remap({f.name: i for i, f in enumerate(key_fields)})

    def __call__(self, entry: ManifestEntry) -> bool:
        stats = entry.file.key_stats
        try:
            mins = deserialize_binary_row(stats.min_values, self.key_types)
            maxs = deserialize_binary_row(stats.max_values, self.key_types)
        except Exception:  # noqa: BLE001 - unreadable stats never prune
            return True
        n = len(self.key_types)
        if len(mins) != n or len(maxs) != n:
            return True
        nulls = list(stats.null_counts) if stats.null_counts and len(stats.null_counts) == n else None
        return self.predicate.test_stats(entry.file.row_count, list(mins), list(maxs), nulls)


def key_stats_filter(predicate: Predicate | None, key_fields: Sequence[DataField]) -> KeyStatsFilter | None:
    key_pred = pick_by_fields(predicate, [f.name for f in key_fields]) if predicate is not None else None
    return None if key_pred is None else KeyStatsFilter(key_pred, key_fields)
