"""Route the rows of a cross-partition upsert to (partition, bucket) (Java's
``GlobalIndexAssigner`` plus ``crosspartition.BucketAssigner``), vectorized.

The key index is an Arrow table of the primary-key columns plus numpy arrays of the key's
partition id and bucket. A batch is grouped by key (one ``group_by``), joined with the index
(one hash join), routed by :func:`existing_processor.route`, and new or moved keys get a
bucket in their partition: the first bucket (ascending) holding fewer than
``dynamic-bucket.target-row-num`` keys, else the smallest unused id. As in Java, moving a key
out of a bucket frees its slot, and no HASH index files are kept (Java's ``KEY_DYNAMIC`` mode
rebuilds the index from the data at every write job), and ``dynamic-bucket.max-buckets`` does
not apply (Java's cross-partition ``BucketAssigner`` ignores it too).

``dynamic-bucket.initial-buckets`` = N models Java's N assigners: a key belongs to assigner
``abs(hash(primary key) % N)``, which fills only its own buckets (``abs(b % N)`` equal to it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.bucket import bucket_hashes
from paimon_core.crosspartition.existing_processor import KeyGroups, Mode, route
from paimon_core.crosspartition.index_bootstrap import BootstrapSplit
from paimon_core.crosspartition.partitions import PartitionRegistry
from paimon_core.data.row_kind import DELETE
from paimon_core.exceptions import DuplicateKeyError, InvalidArgumentError
from paimon_core.index.bucket_assigner import fill_buckets, group_indices, java_abs_mod
from paimon_core.schema.data_types import DataField

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

_ROW = "__paimon_row"
_KEY = "__paimon_key"
_POS = "__paimon_index_pos"


@dataclass(frozen=True)
class RoutedGroup:
    """Rows bound for one (partition, bucket)."""

    partition: bytes
    partition_path: str
    bucket: int
    rows: pa.Table
    kinds: pa.Array


class GlobalIndexAssigner:
    """Key index and bucket counts of one cross-partition writer."""

    def __init__(
        self,
        *,
        key_fields: Sequence[DataField],
        registry: PartitionRegistry,
        mode: Mode,
        target_row_num: int,
        num_assigners: int = 1,
        rowkind_field: str | None = None,
        in_scope: Callable[[bytes], bool] | None = None,
        scope_hint: str = "",
        bootstrap: Callable[[], Sequence[BootstrapSplit]] | None = None,
    ) -> None:
        self.key_fields = list(key_fields)
        self.key_names = [f.name for f in self.key_fields]
        self.registry = registry
        self.mode = mode
        self.target = target_row_num
        self.num_assigners = num_assigners
        self.rowkind_field = rowkind_field
        self.in_scope = in_scope
        self.scope_hint = scope_hint
        self._keys: pa.Table | None = None  # key columns + _POS
        self._part: I32 = np.empty(0, np.int32)
        self._bucket: I32 = np.empty(0, np.int32)
        self._counts: dict[int, dict[int, int]] = {}
        self._bootstrap = bootstrap

    @property
    def num_keys(self) -> int:
        return len(self._part)

    def load(self, splits: Sequence[BootstrapSplit]) -> None:
        """Seed the index from bootstrapped keys (Java's ``bootstrapKey`` + bulk load)."""
        tables: list[pa.Table] = []
        parts: list[I32] = []
        buckets: list[I32] = []
        for s in splits:
            pid = self.registry.register_stored(s.partition)
            tables.append(s.keys.select(self.key_names))
            parts.append(np.full(s.keys.num_rows, pid, np.int32))
            buckets.append(np.full(s.keys.num_rows, s.bucket, np.int32))
        if not tables:
            return
        keys = pa.concat_tables(tables)
        dupes = keys.group_by(self.key_names, use_threads=False).aggregate([([], "count_all")])
        dupes = dupes.filter(pc.greater(dupes.column("count_all"), 1))
        if dupes.num_rows:
            sample = dupes.slice(0, 3).select(self.key_names).to_pylist()
            raise DuplicateKeyError(
                f"{dupes.num_rows} primary key(s) live in more than one partition or bucket (e.g. {sample}); "
                "the table was probably written by two jobs at once. Dynamic-bucket tables allow one writer; "
                "remove the duplicates (e.g. overwrite the affected partitions) before upserting",
                count=dupes.num_rows,
            )
        self._append(keys, np.concatenate(parts), np.concatenate(buckets))
        for (pid, b), c in zip(*self._pair_counts(self._part, self._bucket), strict=True):
            self._counts.setdefault(pid, {})[b] = c

    @staticmethod
    def _pair_counts(parts: I32, buckets: I32) -> tuple[list[tuple[int, int]], list[int]]:
        code = parts.astype(np.int64) << 32 | buckets.astype(np.int64)
        uniq, counts = np.unique(code, return_counts=True)
        pairs = [(int(u >> 32), int(u & 0xFFFFFFFF)) for u in uniq]
        return pairs, counts.tolist()

    def _append(self, keys: pa.Table, parts: I32, buckets: I32) -> None:
        start = self.num_keys
        pos = pa.array(np.arange(start, start + keys.num_rows, dtype=np.int64))
        block = keys.select(self.key_names).append_column(_POS, pos)
        self._keys = block if self._keys is None else pa.concat_tables([self._keys, block])
        if self._keys.num_columns and self._keys.column(0).num_chunks > 64:
            self._keys = self._keys.combine_chunks()
        self._part = np.concatenate([self._part, parts.astype(np.int32)])
        self._bucket = np.concatenate([self._bucket, buckets.astype(np.int32)])

    # --- routing -----------------------------------------------------------------------
    def process(self, data: pa.Table, kinds: pa.Array, *, locate: bool = False) -> list[RoutedGroup]:
        """Split one batch into per-(partition, bucket) groups, updating the index.

        ``locate``: send every row to its key's current partition and bucket and drop rows of
        unknown keys (deletes by key); otherwise the merge engine's processor decides.
        """
        if self._bootstrap is not None:
            self.load(self._bootstrap())
            self._bootstrap = None
        n = data.num_rows
        parts = self.registry.ids_for(data)
        indexed = data.select(self.key_names).append_column(_ROW, pa.array(np.arange(n, dtype=np.int64)))
        grouped = indexed.group_by(self.key_names, use_threads=False).aggregate([(_ROW, "list")])
        lists = grouped.column(f"{_ROW}_list").combine_chunks()
        offsets = lists.offsets.to_numpy().astype(np.int64)
        groups = KeyGroups(lists.values.to_numpy().astype(np.int64), offsets[:-1], np.diff(offsets))
        unique_keys = grouped.select(self.key_names)
        old_pos = self._lookup(unique_keys)
        has_old = old_pos >= 0
        old_part = np.where(has_old, self._part[np.maximum(old_pos, 0)] if self.num_keys else -1, -1).astype(np.int32)
        old_bucket = np.where(has_old, self._bucket[np.maximum(old_pos, 0)] if self.num_keys else -1, -1).astype(np.int32)
        r = route("locate" if locate else self.mode, parts, groups, old_part)
        self._check_scope(r.target_part[r.row_keys], old_part[r.retract_keys])
        # Moving out frees the slot (Java's BucketAssigner.decrement), then new keys are placed.
        for (pid, b), c in zip(*self._pair_counts(old_part[r.retract_keys], old_bucket[r.retract_keys]), strict=True):
            counts = self._counts.setdefault(pid, {})
            counts[b] = counts.get(b, 0) - c
        bucket = np.where(r.needs_bucket, -1, old_bucket).astype(np.int32)
        self._assign(unique_keys, r.target_part, r.needs_bucket, r.arrival, bucket)
        # Index update: known keys in place, new keys appended.
        self._part[old_pos[has_old]] = r.target_part[has_old]
        self._bucket[old_pos[has_old]] = bucket[has_old]
        new = np.nonzero(~has_old & (r.target_part >= 0))[0]
        if len(new):
            self._append(unique_keys.take(pa.array(new)), r.target_part[new], bucket[new])
        return self._groups(data, kinds, r.rows, r.target_part[r.row_keys], bucket[r.row_keys],
                            r.retract_rows, old_part[r.retract_keys], old_bucket[r.retract_keys], parts)

    def _lookup(self, unique_keys: pa.Table) -> I64:
        """Index position of every key (-1 when unknown), by a hash join."""
        out = np.full(unique_keys.num_rows, -1, dtype=np.int64)
        if self._keys is None or unique_keys.num_rows == 0:
            return out
        probe = unique_keys.append_column(_KEY, pa.array(np.arange(unique_keys.num_rows, dtype=np.int64)))
        joined = probe.join(self._keys, keys=self.key_names, join_type="inner", use_threads=False)
        out[joined.column(_KEY).to_numpy()] = joined.column(_POS).to_numpy()
        return out

    def _assign(self, unique_keys: pa.Table, target: I32, needs: npt.NDArray[np.bool_], arrival: I64, bucket: I32) -> None:
        todo = np.nonzero(needs)[0]
        if not len(todo):
            return
        todo = todo[np.argsort(arrival[todo], kind="stable")]
        if self.num_assigners > 1:
            keys = unique_keys.take(pa.array(todo))
            hashes = bucket_hashes([keys.column(f.name) for f in self.key_fields], [f.type for f in self.key_fields])
            owners = java_abs_mod(hashes, self.num_assigners)
        else:
            owners = np.zeros(len(todo), np.int64)
        code = target[todo].astype(np.int64) * self.num_assigners + owners
        for c, idx in group_indices(code):
            pid, owner = divmod(c, self.num_assigners)
            bucket[todo[idx]] = fill_buckets(
                self._counts.setdefault(pid, {}),
                len(idx),
                target=self.target,
                num_assigners=self.num_assigners,
                assign_id=owner,
            )

    def _check_scope(self, parts: I32, retract_parts: I32) -> None:
        if self.in_scope is None:
            return
        touched = np.unique(np.concatenate([parts, retract_parts]))
        outside = [int(p) for p in touched if not self.in_scope(self.registry.partitions[int(p)])]
        if outside:
            raise InvalidArgumentError(
                f"This overwrite of {self.scope_hint} would also change rows outside the overwritten partitions "
                f"(in {[self.registry.paths[p] for p in outside[:3]]}): keys of the new data already live there. "
                "Overwrite the whole table (overwrite(dynamic=False)) or upsert without overwrite"
            )

    def _groups(
        self,
        data: pa.Table,
        kinds: pa.Array,
        rows: I64,
        parts: I32,
        buckets: I32,
        retract_rows: I64,
        retract_parts: I32,
        retract_buckets: I32,
        row_parts: I32,
    ) -> list[RoutedGroup]:
        all_rows = np.concatenate([rows, retract_rows])
        all_parts = np.concatenate([parts, retract_parts]).astype(np.int32)
        all_buckets = np.concatenate([buckets, retract_buckets]).astype(np.int32)
        if not len(all_rows):
            return []
        out = data.take(pa.array(all_rows))
        out_kinds = pc.take(kinds, pa.array(all_rows))
        if len(retract_rows):
            out_kinds = pa.array(np.concatenate([out_kinds.to_numpy()[: len(rows)], np.full(len(retract_rows), DELETE, np.int8)]))
        if np.any(all_parts != row_parts[all_rows]):
            values = self.registry.values()
            take = pa.array(all_parts)
            for name in self.registry.names:
                i = out.schema.get_field_index(name)
                out = out.set_column(i, out.schema.field(i), values.column(name).take(take))
        if len(retract_rows) and self.rowkind_field:
            i = out.schema.get_field_index(self.rowkind_field)
            is_retract = pa.array(np.arange(len(all_rows)) >= len(rows))
            out = out.set_column(i, out.schema.field(i), pc.if_else(is_retract, "-D", out.column(i)))
        code = all_parts.astype(np.int64) << 32 | all_buckets.astype(np.int64)
        result = []
        for c, idx in group_indices(code):
            pid, b = c >> 32, c & 0xFFFFFFFF
            take_idx = pa.array(idx)
            result.append(
                RoutedGroup(
                    self.registry.partitions[pid], self.registry.paths[pid], b, out.take(take_idx), out_kinds.take(take_idx)
                )
            )
        return result
