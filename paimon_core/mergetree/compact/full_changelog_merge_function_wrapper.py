"""FullChangelogMergeFunctionWrapper: the changelog of a full compaction, a chunk of keys at a time.

Java's ``FullChangelogMergeFunctionWrapper`` sees, per key, every record of the compaction (each
tagged with the level of its file). The record from the max level (at most one: only full
compactions write the max level) is the key's state before the compaction; the merged result is
its state after. Per key, with ``n`` records:

* no max-level record, merged result is an insert: ``+I`` (the merged row);
* a max-level record and ``n > 1``: merged result deleted (or none): ``-D`` (the old row); else
  ``-U`` (old) ``+U`` (merged), skipped with ``changelog-producer.row-deduplicate`` when the two
  rows are equal (ignoring ``changelog-producer.row-deduplicate-ignore-fields``);
* a max-level record alone: unchanged, nothing.

Here the same happens over Arrow: :meth:`merge` gets a key-sorted chunk (all records of each key
it holds, from :func:`~paimon_core.mergetree.merge_reader.merge_sorted_runs`) with a boolean
:data:`TOP_LEVEL` column, merges it with the table's merge function (every key's rows tagged with
their segment number, which the merge copies into the result) and builds the changelog rows of
the chunk with whole-array operations; they wait in :attr:`pending` until the rewriter writes
them. One deliberate difference: a max-level record that is itself a retraction (only files
written with deletes kept at the max level have one) counts as "no old row", so a consumer never
sees ``-U``/``-D`` of a row it was never given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.format.key_value import VALUE_KIND
from paimon_core.mergetree.base import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    KeyedMergeFunction,
    is_retract,
)
from paimon_core.mergetree.compact.changelog_rows import rows_equal
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.segments import key_changes, to_array

__all__ = ["SEGMENT", "TOP_LEVEL", "FullChangelogMergeFunctionWrapper"]

#: Per input row: whether it comes from a max-level file (added by the rewriter's reader).
TOP_LEVEL = "_PAIMON_TOP_LEVEL"
#: Per input row: the number of its key within the chunk (the merge copies it into the result).
SEGMENT = "_PAIMON_KEY_SEGMENT"

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class FullChangelogMergeFunctionWrapper:
    """Wraps a merge function; a :class:`~paimon_core.mergetree.merge_function.MergeFunction` itself."""

    def __init__(
        self,
        merge_function: KeyedMergeFunction,
        *,
        key_names: Sequence[str],
        compare_names: Sequence[str],
        row_deduplicate: bool,
    ) -> None:
        self.merge_function = merge_function
        self.key_names = list(key_names)
        self.compare_names = list(compare_names)
        self.row_deduplicate = row_deduplicate
        #: changelog rows built but not yet written, in key order
        self.pending: list[pa.Table] = []

    def take_pending(self) -> list[pa.Table]:
        out, self.pending = self.pending, []
        return out

    def merge(self, data: pa.Table, *, drop_retracts: bool = True) -> pa.Table:
        """The merged rows of ``data`` (retractions dropped: a full compaction drops deletes);
        the chunk's changelog goes to :attr:`pending`."""
        if data.num_rows == 0:
            return data.drop_columns([TOP_LEVEL])
        change = key_changes(data, self.key_names)
        seg_of_row = np.cumsum(change, dtype=np.int64) - 1
        count = int(seg_of_row[-1]) + 1
        lengths = np.bincount(seg_of_row, minlength=count)
        kinds = np.asarray(to_array(data.column(VALUE_KIND)).to_numpy(zero_copy_only=False), dtype=np.int8)
        top_mask = np.asarray(to_array(data.column(TOP_LEVEL)).to_numpy(zero_copy_only=False), dtype=np.bool_)
        top_rows = np.flatnonzero(top_mask)
        if len(np.unique(seg_of_row[top_rows])) != len(top_rows):
            raise MergeError(
                "Top level key-value already exists! This is unexpected (two max-level rows of one key)."
            )
        top_of = np.full(count, -1, dtype=np.int64)
        live_top = top_rows[~is_retract(kinds[top_rows])]
        top_of[seg_of_row[live_top]] = live_top

        body = data.drop_columns([TOP_LEVEL])
        merged = self.merge_function.merge(
            body.append_column(SEGMENT, pa.array(seg_of_row, pa.int64())), drop_retracts=False
        )
        m_seg = np.asarray(to_array(merged.column(SEGMENT)).to_numpy(zero_copy_only=False), dtype=np.int64)
        m_kinds = np.asarray(
            to_array(merged.column(VALUE_KIND)).to_numpy(zero_copy_only=False), dtype=np.int8
        )
        m_add = ~is_retract(m_kinds)
        merged_of = np.full(count, -1, dtype=np.int64)
        merged_of[m_seg[m_add]] = np.flatnonzero(m_add)
        merged = merged.drop_columns([SEGMENT])
        self._changelog(body, merged, top_of, merged_of, lengths > 1)
        result = merged.filter(pa.array(m_add)) if drop_retracts and not m_add.all() else merged
        return result

    def _changelog(
        self, body: pa.Table, merged: pa.Table, top_of: IntArray, merged_of: IntArray, several: BoolArray
    ) -> None:
        has_top = top_of >= 0
        has_add = merged_of >= 0
        inserts = np.flatnonzero(~has_top & has_add)
        deletes = np.flatnonzero(has_top & several & ~has_add)
        updates = np.flatnonzero(has_top & several & has_add)
        if self.row_deduplicate and len(updates):
            same = rows_equal(
                body.take(pa.array(top_of[updates])),
                merged.take(pa.array(merged_of[updates])),
                self.compare_names,
            )
            updates = updates[~same]
        parts: list[tuple[pa.Table, IntArray]] = []

        def add(source: pa.Table, rows: IntArray, segs: IntArray, kind: int, order: int) -> None:
            if len(rows):
                t = source.take(pa.array(rows))
                i = t.schema.get_field_index(VALUE_KIND)
                t = t.set_column(
                    i,
                    t.schema.field(i),
                    pa.array(np.full(len(rows), kind, np.int8)).cast(t.schema.field(i).type),
                )
                parts.append((t, segs * 2 + order))

        add(merged, merged_of[inserts], inserts, INSERT, 0)
        add(body, top_of[deletes], deletes, DELETE, 0)
        add(body, top_of[updates], updates, UPDATE_BEFORE, 0)
        add(merged, merged_of[updates], updates, UPDATE_AFTER, 1)
        if not parts:
            return
        table = pa.concat_tables([t.select(merged.column_names) for t, _ in parts])
        if len(parts) > 1:
            order = np.argsort(np.concatenate([o for _, o in parts]), kind="stable")
            table = table.take(pa.array(order))
        self.pending.append(table)
