"""Merge functions of primary-key tables: the ``MergeFunction`` contract and its factory.

``create_merge_function(key_fields, value_fields, options)`` picks the engine named by
``merge-engine`` and validates its options up front:

* ``deduplicate`` (default): the last row of a key wins; a ``-U``/``-D`` last row
  deletes the key, unless ``ignore-delete`` (then retractions are skipped).
* ``first-row``: the first insert of a key wins; retractions are an error unless
  ``ignore-delete``; ``sequence.field`` is not allowed.
* ``partial-update``: :mod:`.partial_update`.
* ``aggregation``: :mod:`.aggregate`.

Every engine is a set of whole-array operations over the bucket (see :mod:`.base`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.base import INSERT, Int8Array, KeyedMergeFunction, RunResult, is_retract
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_options import (
    IGNORE_DELETE,
    IGNORE_DELETE_FALLBACK_KEYS,
    SEQUENCE_FIELD,
    check_field_options,
    engine_of,
    get_bool,
    sequence_fields,
)
from paimon_core.mergetree.segments import Segments, first_index, last_index
from paimon_core.schema.data_types import DataField

__all__ = [
    "DeduplicateMergeFunction",
    "FirstRowMergeFunction",
    "MergeFunction",
    "create_merge_function",
]


class MergeFunction(Protocol):
    """Merges one bucket's key-sorted rows into one row per surviving key (see :class:`KeyedMergeFunction`)."""

    def merge(self, data: pa.Table, *, drop_retracts: bool = True) -> pa.Table: ...


def _ignore_delete(options: Mapping[str, str]) -> bool:
    return get_bool(options, IGNORE_DELETE, fallback_keys=IGNORE_DELETE_FALLBACK_KEYS)


class DeduplicateMergeFunction(KeyedMergeFunction):
    """Java's ``DeduplicateMergeFunction``: keep the latest row of each key."""

    #: A lone insert: ``last`` (or, with ``ignore-delete``, the last non-retraction) is the row
    #: itself, its kind becomes +I and the run's max sequence number is its own: the row passed through.
    exact_lone_insert = True

    def __init__(
        self,
        key_fields: Sequence[DataField],
        value_fields: Sequence[DataField],
        *,
        ignore_delete: bool = False,
    ) -> None:
        super().__init__(key_fields, value_fields)
        self.ignore_delete = ignore_delete

    def _merge_runs(self, data: pa.Table, seg: Segments, kinds: Int8Array) -> RunResult:
        retract = is_retract(kinds)
        if self.ignore_delete:
            # retractions are skipped; a key with nothing else yields no row
            pick = last_index(~retract, seg)
            return RunResult(kinds=np.zeros(seg.count, np.int8), keep=pick >= 0, source=np.maximum(pick, 0))
        last = seg.ends - 1
        out_kinds = np.where(retract[last], kinds[last], INSERT).astype(np.int8)
        return RunResult(kinds=out_kinds, keep=np.ones(seg.count, np.bool_), source=last)


class FirstRowMergeFunction(KeyedMergeFunction):
    """Java's ``FirstRowMergeFunction``: keep the first inserted row of each key."""

    #: A lone insert: the first non-retraction is the row itself, kind +I, its own sequence number.
    exact_lone_insert = True

    def __init__(
        self,
        key_fields: Sequence[DataField],
        value_fields: Sequence[DataField],
        *,
        ignore_delete: bool = False,
    ) -> None:
        super().__init__(key_fields, value_fields)
        self.ignore_delete = ignore_delete

    def _merge_runs(self, data: pa.Table, seg: Segments, kinds: Int8Array) -> RunResult:
        retract = is_retract(kinds)
        if retract.any() and not self.ignore_delete:
            raise MergeError(
                "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records. "
                f"You can config '{IGNORE_DELETE}' to ignore the DELETE/UPDATE_BEFORE records."
            )
        pick = first_index(~retract, seg)
        return RunResult(kinds=np.zeros(seg.count, np.int8), keep=pick >= 0, source=np.maximum(pick, 0))


def create_merge_function(
    key_fields: Sequence[DataField], value_fields: Sequence[DataField], options: Mapping[str, str]
) -> KeyedMergeFunction:
    """The merge function of a primary-key table.

    ``key_fields`` are the (trimmed) primary-key fields, ``value_fields`` all table
    fields (key fields included, as in Java), ``options`` the table options. Invalid
    options raise :class:`InvalidOptionError` naming the option; data that Java's merge
    function rejects raises :class:`MergeError` from ``merge``.
    """
    engine = engine_of(options)
    names = [f.name for f in value_fields]
    missing = [f.name for f in key_fields if f.name not in names]
    if missing:
        raise InvalidOptionError(
            f"Primary key fields {missing} are not table fields {names}", key="primary-key"
        )
    check_field_options(options, names)
    seq_fields = sequence_fields(options, names)
    ignore_delete = _ignore_delete(options)
    if engine == "deduplicate":
        return DeduplicateMergeFunction(key_fields, value_fields, ignore_delete=ignore_delete)
    if engine == "first-row":
        if seq_fields:
            raise InvalidOptionError(
                f"Do not support use sequence field on FIRST_ROW merge engine (option '{SEQUENCE_FIELD}').",
                key=SEQUENCE_FIELD,
            )
        return FirstRowMergeFunction(key_fields, value_fields, ignore_delete=ignore_delete)
    if engine == "partial-update":
        from paimon_core.mergetree.partial_update import PartialUpdateMergeFunction

        return PartialUpdateMergeFunction(key_fields, value_fields, options)
    from paimon_core.mergetree.aggregate import AggregateMergeFunction

    return AggregateMergeFunction(key_fields, value_fields, options, sequence_fields=seq_fields)
