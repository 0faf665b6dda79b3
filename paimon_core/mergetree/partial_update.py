"""The ``partial-update`` engine (Java's ``PartialUpdateMergeFunction``), vectorized.

Without sequence groups every field takes the last non-null value of the key's inserts.
Retractions (``-U``/``-D``) are an error unless one of:

* ``ignore-delete``: retractions are skipped;
* ``partial-update.remove-record-on-delete``: a ``-D`` replaces the whole row with its
  own values and marks the key deleted (a later insert revives it);
* sequence groups (below), optionally with
  ``partial-update.remove-record-on-sequence-group``.

``fields.<s1>,<s2>.sequence-group = <f1>,<f2>``: the group's fields change only when a
row's ``(s1, s2)`` is not older than the current one (lexicographic, nulls smallest); a
row whose sequence fields are all null leaves the group alone. An accepted insert
overwrites the group's fields, nulls included; an accepted retraction sets them to
null; ``-D`` on a group listed in ``remove-record-on-sequence-group`` replaces the row
and deletes the key. Group fields may carry ``fields.<f>.aggregate-function``: accepted
inserts ``agg``, older inserts ``aggReversed``, any retraction ``retract``.

Java quirk kept: a key's first row, when it is a retraction, initializes the row with
its own values (``initRow``) before anything else, even with ``ignore-delete``.

Vectorization: a group's state only ever advances to the newest sequence it has seen,
so "accepted" is ``rank >= running max of earlier ranks`` within the key, one
``np.maximum.accumulate`` per group; a row reset restarts the running max. Every field
is then "the value written by the last writing row" or an aggregator fold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.agg_factory import agg_option_key, create_field_aggregator
from paimon_core.mergetree.aggregators import (
    OP_AGG,
    OP_AGG_REVERSED,
    OP_RETRACT,
    OP_SKIP,
    FieldAggregator,
)
from paimon_core.mergetree.base import DELETE, INSERT, Int8Array, KeyedMergeFunction, RunResult, is_retract
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_options import (
    AGGREGATE_FUNCTION,
    FIELDS_DEFAULT_AGG_FUNC,
    IGNORE_DELETE,
    IGNORE_DELETE_FALLBACK_KEYS,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP,
    SequenceGroup,
    field_option,
    get_bool,
    parse_sequence_groups,
)
from paimon_core.mergetree.segments import (
    BoolArray,
    IntArray,
    Segments,
    last_index,
    segmented_running_max,
    take_or_null,
    to_array,
)
from paimon_core.schema.data_types import DataField

__all__ = ["PartialUpdateMergeFunction", "lexicographic_rank"]

_DELETE_HELP = (
    "By default, Partial update can not accept delete records, you can choose one of the following "
    "solutions: 1. Configure 'ignore-delete' to ignore delete records. 2. Configure "
    "'partial-update.remove-record-on-delete' to remove the whole row when receiving delete records. "
    "3. Configure 'sequence-group's to retract partial columns. Also configure "
    "'partial-update.remove-record-on-sequence-group' to remove the whole row when receiving deleted "
    "records of `specified sequence group`."
)


def lexicographic_rank(columns: Sequence[pa.Array]) -> IntArray:
    """Dense rank of rows compared column by column, nulls smallest (Java's sequence comparator)."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if len(columns) == 1 and pa.types.is_integer(columns[0].type) and columns[0].null_count == 0:
        values = columns[0].to_numpy(zero_copy_only=False).astype(np.int64)
        return np.asarray(np.unique(values, return_inverse=True)[1], dtype=np.int64)
    table = pa.table({f"c{i}": c for i, c in enumerate(columns)})
    keys = [(f"c{i}", "ascending", "at_start") for i in range(len(columns))]
    order = pc.sort_indices(table, sort_keys=keys).to_numpy()
    differ = np.zeros(n, dtype=np.bool_)
    for i in range(len(columns)):
        col = to_array(table.column(i)).take(pa.array(order))
        left, right = col.slice(1), col.slice(0, n - 1)
        ne = pc.fill_null(pc.not_equal(left, right), False)
        ne = pc.or_(ne, pc.not_equal(pc.is_null(left), pc.is_null(right)))
        differ[1:] |= np.asarray(ne.to_numpy(zero_copy_only=False), dtype=np.bool_)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.cumsum(differ)
    return rank


class _GroupState:
    """One sequence group over the rows being merged: rank of its sequence per row."""

    def __init__(self, group: SequenceGroup, data: pa.Table) -> None:
        self.group = group
        columns = [to_array(data.column(name)) for name in group.sequence_fields]
        valid = np.zeros(data.num_rows, dtype=np.bool_)
        for col in columns:
            valid |= np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), dtype=np.bool_)
        self.nonempty = valid
        self.rank = np.where(valid, lexicographic_rank(columns), -1).astype(np.int64)

    def accepted(
        self, seg: Segments, participates: BoolArray, pre_reset: BoolArray, post_reset: BoolArray
    ) -> BoolArray:
        """Per row: the row's sequence is not older than the group's current sequence."""
        resets = pre_reset | post_reset
        contribution = np.where(resets | (participates & self.nonempty), self.rank, -1)
        running = segmented_running_max(contribution, seg.is_start | post_reset)
        before = np.empty_like(running)
        before[1:] = running[:-1]
        starts = seg.starts
        before[starts] = np.where(pre_reset[starts], contribution[starts], -1)
        return np.asarray(self.nonempty & participates & (self.rank >= before), dtype=np.bool_)


class PartialUpdateMergeFunction(KeyedMergeFunction):
    """Java's ``PartialUpdateMergeFunction`` over Arrow (see the module docstring)."""

    def __init__(
        self, key_fields: Sequence[DataField], value_fields: Sequence[DataField], options: Mapping[str, str]
    ) -> None:
        super().__init__(key_fields, value_fields)
        names = [f.name for f in value_fields]
        self.ignore_delete = get_bool(options, IGNORE_DELETE, fallback_keys=IGNORE_DELETE_FALLBACK_KEYS)
        self.remove_on_delete = get_bool(options, PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
        self.groups = parse_sequence_groups(options, names, self.key_names)
        self.group_of: dict[str, int] = {}
        for i, g in enumerate(self.groups):
            for name in (*g.sequence_fields, *g.protected_fields):
                self.group_of[name] = i
        self.sequence_field_names = {s for g in self.groups for s in g.sequence_fields}
        self.aggregators = self._aggregators(options)
        self.partial_delete_groups = self._check_deletes(options)
        self.not_null = [f.name for f in value_fields if not f.type.nullable and f.name not in self.key_names]
        self._position = {f.name: i for i, f in enumerate(value_fields)}
        # a lone insert merges to itself only without groups (an empty group would drop its fields)
        self.single_insert_is_identity = not self.groups

    def _aggregators(self, options: Mapping[str, str]) -> dict[str, FieldAggregator]:
        protected = {p for g in self.groups for p in g.protected_fields}
        out: dict[str, FieldAggregator] = {}
        for f in self.value_fields:
            if f.name in self.key_names or f.name in self.sequence_field_names:
                continue
            function = field_option(options, f.name, AGGREGATE_FUNCTION) or options.get(
                FIELDS_DEFAULT_AGG_FUNC
            )
            if function is None:
                continue
            key = agg_option_key(options, f.name)
            if function.strip().lower() != "last_non_null_value" and f.name not in protected:
                raise InvalidOptionError(
                    f"Must use sequence group for aggregation functions but not found for field {f.name}. "
                    f"(option '{key}')",
                    key=key,
                )
            aggregator = create_field_aggregator(f, function, options, option_key=key)
            if f.name in protected:  # outside groups last_non_null_value is a plain non-null update
                out[f.name] = aggregator
        return out

    def _check_deletes(self, options: Mapping[str, str]) -> list[int]:
        def conflict(a: str, b: str) -> InvalidOptionError:
            return InvalidOptionError(
                f"{a} and {b} have conflicting behavior so should not be enabled at the same time.", key=b
            )

        on_group = options.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
        if self.remove_on_delete and self.ignore_delete:
            raise conflict(IGNORE_DELETE, PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
        if on_group is not None and self.ignore_delete:
            raise conflict(IGNORE_DELETE, PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
        if self.remove_on_delete and self.groups:
            raise conflict("sequence-group", PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
        if on_group is None:
            return []
        listed = [s.strip() for s in on_group.split(",")]
        if not set(listed) <= self.sequence_field_names:
            raise InvalidOptionError(
                f"field '{on_group}' defined in '{PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP}' option must be "
                "part of sequence groups",
                key=PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP,
            )
        return [i for i, g in enumerate(self.groups) if set(g.sequence_fields) & set(listed)]

    # ----------------------------------------------------------------------------------

    def _merge_runs(self, data: pa.Table, seg: Segments, kinds: Int8Array) -> RunResult:
        retract = is_retract(kinds)
        insert = ~retract
        pre_reset = seg.is_start & retract  # Java's initRow on a leading retraction
        if not self.groups:
            if self.ignore_delete:
                post_reset = np.zeros(seg.n, dtype=np.bool_)
            elif self.remove_on_delete:
                post_reset = np.asarray(kinds == DELETE, dtype=np.bool_)
            else:
                if retract.any():
                    raise MergeError(_DELETE_HELP)
                post_reset = np.zeros(seg.n, dtype=np.bool_)
            self._check_not_null(data, seg, insert | pre_reset | post_reset)
            columns = {
                name: self._last_written(data, seg, name, post_reset | pre_reset, insert)
                for name in self._value_names()
            }
        else:
            self._check_not_null(data, seg, pre_reset)
            columns, post_reset = self._merge_groups(data, seg, kinds, pre_reset)
            self._check_not_null(data, seg, post_reset)
        deleted = post_reset[seg.ends - 1] | (last_index(insert, seg) < 0)
        out_kinds = np.where(deleted, DELETE, INSERT).astype(np.int8)
        return RunResult(kinds=out_kinds, keep=np.ones(seg.count, np.bool_), columns=columns)

    def _value_names(self) -> list[str]:
        return [f.name for f in self.value_fields if f.name not in self.key_names]

    def _check_not_null(self, data: pa.Table, seg: Segments, rows: BoolArray) -> None:
        multi = (seg.lengths > 1)[seg.ids]
        for name in self.not_null:
            col = to_array(data.column(name))
            if (
                col.null_count
                and (rows & multi & np.asarray(pc.is_null(col).to_numpy(zero_copy_only=False))).any()
            ):
                raise MergeError(f"Field {name} can not be null", field=name)

    @staticmethod
    def _last_written(
        data: pa.Table, seg: Segments, name: str, resets: BoolArray, writers: BoolArray
    ) -> pa.Array:
        """Value of the last row that writes ``name``: a reset row always, ``writers`` when non-null."""
        col = to_array(data.column(name))
        writes = resets | (
            writers & np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), dtype=np.bool_)
        )
        return take_or_null(col, last_index(writes, seg))

    def _merge_groups(
        self, data: pa.Table, seg: Segments, kinds: Int8Array, pre_reset: BoolArray
    ) -> tuple[dict[str, pa.Array], BoolArray]:
        retract = is_retract(kinds)
        insert = ~retract
        participates = insert if self.ignore_delete else np.ones(seg.n, dtype=np.bool_)
        states = [_GroupState(g, data) for g in self.groups]
        post_reset = np.zeros(seg.n, dtype=np.bool_)
        deletes = np.asarray(kinds == DELETE, dtype=np.bool_) & participates
        if self.partial_delete_groups and deletes.any():
            # A -D accepted by a listed group resets the row. Resets move other groups'
            # state, so iterate to the fixpoint (each round settles at least one more reset
            # per key; with one listed group the second round only confirms the first).
            for _ in range(seg.n + 1):
                hit = np.zeros(seg.n, dtype=np.bool_)
                for i in self.partial_delete_groups:
                    hit |= states[i].accepted(seg, participates, pre_reset, post_reset)
                new_reset = deletes & hit
                if np.array_equal(new_reset, post_reset):
                    break
                post_reset = new_reset
        accepted_by_group = [state.accepted(seg, participates, pre_reset, post_reset) for state in states]
        trigger = self._reset_positions(accepted_by_group, post_reset)
        resets = pre_reset | post_reset
        columns: dict[str, pa.Array] = {}
        for name in self._value_names():
            col = to_array(data.column(name))
            gi = self.group_of.get(name)
            if gi is None:
                columns[name] = self._last_written(data, seg, name, resets, insert)
                continue
            state, accepted = states[gi], accepted_by_group[gi]
            aggregator = self.aggregators.get(name)
            if name in state.group.sequence_fields or aggregator is None:
                writes = resets | accepted
                nulls = ~post_reset & accepted & retract
                if name in state.group.sequence_fields:
                    nulls = np.zeros(seg.n, dtype=np.bool_)
                idx = last_index(writes, seg)
                idx = np.where((idx >= 0) & nulls[np.maximum(idx, 0)], -1, idx)
                columns[name] = take_or_null(col, idx)
                continue
            touched = state.nonempty & participates
            # on a resetting -D, Java retracts the fields it walks before the reset position
            retracted = touched & retract & (~post_reset | (self._position[name] < trigger))
            ops = np.where(
                touched & insert,
                np.where(accepted, OP_AGG, OP_AGG_REVERSED),
                np.where(retracted, OP_RETRACT, OP_SKIP),
            ).astype(np.int8)
            columns[name] = aggregator.fold(col, seg, ops, pre_reset, reset_after=post_reset)
        return columns, post_reset

    def _reset_positions(self, accepted_by_group: list[BoolArray], post_reset: BoolArray) -> IntArray:
        """Per row: the field position where Java resets the row (past the last field if none).

        Java walks the fields in order and resets at the first sequence field of a listed
        group that accepts the ``-D``; fields before it were already processed.
        """
        trigger = np.full(len(post_reset), len(self.value_fields), dtype=np.int64)
        if not post_reset.any():
            return trigger
        for gi in self.partial_delete_groups:
            hit = post_reset & accepted_by_group[gi]
            first = min(self._position[s] for s in self.groups[gi].sequence_fields)
            trigger = np.where(hit, np.minimum(trigger, first), trigger)
        return trigger
