"""Merge with lookup during a compaction that involves level-0 files: Java's
``LookupChangelogMergeFunctionWrapper`` (with ``LookupMergeFunction``) and
``FirstRowMergeFunctionWrapper``, over a chunk of keys at a time.

Per key of the chunk (rows sorted by key and sequence order, each with its ``_LEVEL``):

* only the level-0 rows and the *high-level* row of the lowest level >= 1 are merged (the latest
  merged value: Java's ``LookupMergeFunction.pickHighLevel``);
* a key without a high-level row is looked up on the levels above the output level
  (:class:`~paimon_core.mergetree.lookup_levels.LookupLevels`); with deletion vectors the row
  found is marked deleted in its file, and its value (when looked up with values) joins the
  merge in sequence order (Java's ``insertInto``);
* with a changelog, a key with level-0 rows yields, from the high-level row (before) and the
  merge result (after): ``+I`` when there was no live before, ``-D`` (before) when the result is a
  retraction, else ``-U`` (before) and ``+U`` (after) -- unless ``changelog-producer.row-deduplicate``
  and the values are equal.

First-row tables (``FirstRowMergeFunctionWrapper``): a key with a high-level row keeps its merge
result; otherwise it is dropped when a higher level holds it, else kept with a ``+I`` changelog.

All of it is whole-array work: the keys needing a lookup are looked up in one batch.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.deletionvectors.bucketed_dv_maintainer import BucketedDvMaintainer
from paimon_core.format.key_value import VALUE_KIND
from paimon_core.mergetree.base import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, KeyedMergeFunction
from paimon_core.mergetree.compact.changelog_rows import rows_equal
from paimon_core.mergetree.lookup_levels import LEVEL, LookupLevels, LookupResult
from paimon_core.mergetree.segments import key_changes, to_array

__all__ = ["SEGMENT", "LookupChangelogMergeFunctionWrapper"]

logger = logging.getLogger(__name__)

#: The index of a row's key within its chunk (helper column, never written).
SEGMENT = "_LOOKUP_SEGMENT"
_ORDER = "_LOOKUP_ORDER"
_NO_LEVEL = np.iinfo(np.int32).max


def _is_add(kinds: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    return np.asarray((kinds == INSERT) | (kinds == UPDATE_AFTER), dtype=np.bool_)


def _kinds(table: pa.Table) -> npt.NDArray[np.int8]:
    return np.asarray(to_array(table.column(VALUE_KIND)).to_numpy(zero_copy_only=False), dtype=np.int8)


def _with_column(table: pa.Table, name: str, values: npt.NDArray[np.generic], type_: pa.DataType) -> pa.Table:
    arr = pa.array(values, type=type_)
    i = table.schema.get_field_index(name)
    if i >= 0:
        return table.set_column(i, pa.field(name, type_), arr)
    return table.append_column(pa.field(name, type_), arr)


class LookupChangelogMergeFunctionWrapper:
    """A :class:`~paimon_core.mergetree.merge_function.MergeFunction` for the merge of a lookup
    compaction (see the module docstring); the changelog of the chunks merged so far is taken
    with :meth:`take_changelog`, new deletions go to ``dv_maintainer``.

    ``lookup``: the levels above the output level (None: nothing to look up);
    ``insert_looked_up``: whether found rows join the merge (lookup with values);
    ``row_deduplicate_fields``: the value columns compared for ``row-deduplicate`` (None: off).
    """

    def __init__(
        self,
        merge_function: KeyedMergeFunction,
        *,
        key_names: Sequence[str],
        sort_keys: Sequence[tuple[str, str, str]],
        lookup: LookupLevels | None,
        start_level: int,
        produce_changelog: bool,
        dv_maintainer: BucketedDvMaintainer | None,
        row_deduplicate_fields: Sequence[str] | None = None,
        first_row: bool = False,
    ) -> None:
        self.merge_function = merge_function
        self.key_names = list(key_names)
        self.sort_keys = list(sort_keys)
        self.lookup = lookup
        self.start_level = start_level
        self.produce_changelog = produce_changelog
        self.dv_maintainer = dv_maintainer
        self.row_deduplicate_fields = None if row_deduplicate_fields is None else list(row_deduplicate_fields)
        self.first_row = first_row
        self._changelog: list[pa.Table] = []
        self.looked_up = 0
        self.found = 0

    def take_changelog(self) -> list[pa.Table]:
        out, self._changelog = self._changelog, []
        return out

    # --- the merge ------------------------------------------------------------------------
    def merge(self, data: pa.Table, *, drop_retracts: bool = True) -> pa.Table:
        if data.num_rows == 0:
            return data
        change = key_changes(data, self.key_names)
        starts = np.flatnonzero(change).astype(np.int64)
        seg_id = np.cumsum(change, dtype=np.int64) - 1
        nseg = starts.size
        level = np.asarray(to_array(data.column(LEVEL)).to_numpy(zero_copy_only=False), dtype=np.int64)
        is0 = level <= 0
        contain0 = np.add.reduceat(is0.astype(np.int64), starts) > 0
        high = np.where(is0, _NO_LEVEL, level)
        seg_min = np.minimum.reduceat(high, starts)
        has_high = seg_min < _NO_LEVEL
        data = data.append_column(SEGMENT, pa.array(seg_id))
        if self.first_row:
            return self._merge_first_row(data, starts, has_high, drop_retracts)

        high_rows = np.flatnonzero(~is0 & (level == seg_min[seg_id]))
        high_row = np.full(nseg, -1, dtype=np.int64)
        high_row[seg_id[high_rows]] = high_rows  # one per key (a level holds a key once)
        keep = is0 | (high == seg_min[seg_id])
        merged_input = data if keep.all() else data.filter(pa.array(keep))
        before = data.take(pa.array(high_row[has_high])) if has_high.any() else None

        found = self._lookup(data, starts, ~has_high)
        if found is not None and found.rows is not None and found.count:
            rows = found.rows.append_column(SEGMENT, pa.array(np.flatnonzero(~has_high)[found.key_index]))
            rows = rows.select(data.column_names).cast(data.schema)
            merged_input = pa.concat_tables([merged_input, rows])
            merged_input = merged_input.take(pc.sort_indices(merged_input, sort_keys=self.sort_keys))
            before = rows if before is None else pa.concat_tables([before, rows])

        merged = self.merge_function.merge(merged_input, drop_retracts=False)
        if self.produce_changelog:
            self._changelog_of(merged, before, contain0)
        if drop_retracts and merged.num_rows:
            add = _is_add(_kinds(merged))
            if not add.all():
                merged = merged.filter(pa.array(add))
        return merged

    def _lookup(self, data: pa.Table, starts: npt.NDArray[np.int64], need: npt.NDArray[np.bool_]) -> LookupResult | None:
        if self.lookup is None or not need.any():
            return None
        keys = data.take(pa.array(starts[need])).select(self.key_names)
        found = self.lookup.lookup(keys, self.start_level)
        self.looked_up += keys.num_rows
        self.found += found.count
        # First-row keeps the row already stored and drops the new one: nothing to delete (Java
        # refuses first-row with deletion vectors; a table configured so anyway loses no row).
        if self.dv_maintainer is not None and found.count and not self.first_row:
            order = np.argsort(found.file_index, kind="stable")
            files = found.file_index[order]
            positions = found.positions[order]
            bounds = np.flatnonzero(np.diff(files)) + 1
            for part_files, part_pos in zip(np.split(files, bounds), np.split(positions, bounds), strict=True):
                self.dv_maintainer.notify_new_deletion(found.file_names[int(part_files[0])], part_pos)
        return found

    def _merge_first_row(
        self, data: pa.Table, starts: npt.NDArray[np.int64], has_high: npt.NDArray[np.bool_], drop_retracts: bool
    ) -> pa.Table:
        merged = self.merge_function.merge(data, drop_retracts=drop_retracts)
        if has_high.all() or merged.num_rows == 0:
            return merged
        contained = np.zeros(has_high.size, dtype=np.bool_)
        found = self._lookup(data, starts, ~has_high)
        if found is not None and found.count:
            contained[np.flatnonzero(~has_high)[found.key_index]] = True
        seg = np.asarray(to_array(merged.column(SEGMENT)).to_numpy(zero_copy_only=False), dtype=np.int64)
        keep = ~contained[seg]
        new = keep & ~has_high[seg]
        if self.produce_changelog and new.any():
            self._changelog.append(_with_column(merged.filter(pa.array(new)), VALUE_KIND, np.zeros(int(new.sum()), np.int8), pa.int8()))
        return merged if keep.all() else merged.filter(pa.array(keep))

    def _changelog_of(self, merged: pa.Table, before: pa.Table | None, contain0: npt.NDArray[np.bool_]) -> None:
        nseg = contain0.size
        after_row = np.full(nseg, -1, dtype=np.int64)
        after_add = np.zeros(nseg, dtype=np.bool_)
        if merged.num_rows:
            seg = np.asarray(to_array(merged.column(SEGMENT)).to_numpy(zero_copy_only=False), dtype=np.int64)
            after_row[seg] = np.arange(seg.size)
            after_add[seg] = _is_add(_kinds(merged))
        before_row = np.full(nseg, -1, dtype=np.int64)
        before_add = np.zeros(nseg, dtype=np.bool_)
        if before is not None and before.num_rows:
            seg = np.asarray(to_array(before.column(SEGMENT)).to_numpy(zero_copy_only=False), dtype=np.int64)
            before_row[seg] = np.arange(seg.size)
            before_add[seg] = _is_add(_kinds(before))
        insert = contain0 & ~before_add & after_add
        delete = contain0 & before_add & ~after_add
        update = contain0 & before_add & after_add
        if self.row_deduplicate_fields is not None and update.any() and before is not None:
            which = np.flatnonzero(update)
            same = rows_equal(
                before.take(pa.array(before_row[which])),
                merged.take(pa.array(after_row[which])),
                self.row_deduplicate_fields,
            )
            update[which[same]] = False
        parts: list[pa.Table] = []

        def add(table: pa.Table | None, rows_of: npt.NDArray[np.int64], segs: npt.NDArray[np.bool_], kind: int, sub: int) -> None:
            which = np.flatnonzero(segs)
            if table is None or which.size == 0:
                return
            t = table.take(pa.array(rows_of[which]))
            t = _with_column(t, VALUE_KIND, np.full(which.size, kind, np.int8), pa.int8())
            t = _with_column(t, _ORDER, which * 2 + sub, pa.int64())
            parts.append(t.select([*merged.column_names, _ORDER]))

        add(merged, after_row, insert, INSERT, 1)
        add(before, before_row, delete, DELETE, 0)
        add(before, before_row, update, UPDATE_BEFORE, 0)
        add(merged, after_row, update, UPDATE_AFTER, 1)
        if not parts:
            return
        table = pa.concat_tables([p.cast(parts[0].schema) for p in parts])
        table = table.take(pc.sort_indices(table, sort_keys=[(_ORDER, "ascending")]))
        self._changelog.append(table.drop_columns([_ORDER]))
