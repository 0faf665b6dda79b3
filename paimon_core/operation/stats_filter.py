"""Skip data files whose min/max stats prove no row can match a predicate.

Stats are stored per file over the columns of the schema the file was written
with (or the ``_VALUE_STATS_COLS`` subset). Columns are matched to the current
schema by field id, so pruning stays correct after columns are added, dropped,
renamed or widened: a column the file has no usable stats for is "unknown",
and unknown never prunes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.predicate import Predicate
from paimon_core.schema.data_types import DataField
from paimon_core.schema.table_schema import TableSchema

SchemaLookup = Callable[[int], TableSchema]


class ValueStatsFilter:
    """Callable entry filter: False only when the file cannot hold a matching row."""

    def __init__(self, predicate: Predicate, fields: Sequence[DataField], schema_lookup: SchemaLookup) -> None:
        self.predicate = predicate
        self.fields = list(fields)
        self.schema_lookup = schema_lookup
        self._layout = lru_cache(maxsize=1024)(self._layout_uncached)

    def _layout_uncached(
        self, schema_id: int, cols: tuple[str, ...] | None
    ) -> tuple[list[DataField], list[int | None]] | None:
        try:
            file_schema = self.schema_lookup(schema_id)
        except Exception:  # noqa: BLE001 - an unknown schema must not prune
            return None
        if cols is None:
            stats_fields = list(file_schema.fields)
        else:
            by_name = {f.name: f for f in file_schema.fields}
            if any(c not in by_name for c in cols):
                return None
            stats_fields = [by_name[c] for c in cols]
        pos_by_id = {f.id: i for i, f in enumerate(stats_fields)}
        mapping: list[int | None] = []
        for f in self.fields:
            i = pos_by_id.get(f.id)
            if i is not None and stats_fields[i].type.copy(nullable=True) != f.type.copy(nullable=True):
                i = None  # type changed since the file was written: its stats are in the old type
            mapping.append(i)
        return stats_fields, mapping

    def __call__(self, entry: ManifestEntry) -> bool:
        meta = entry.file
        cols = meta.value_stats_cols
        if cols is not None and len(cols) == 0:
            return True
        layout = self._layout(meta.schema_id, None if cols is None else tuple(cols))
        if layout is None:
            return True
        stats_fields, mapping = layout
        stats = meta.value_stats
        types = [f.type for f in stats_fields]
        try:
            mins = deserialize_binary_row(stats.min_values, types)
            maxs = deserialize_binary_row(stats.max_values, types)
        except Exception:  # noqa: BLE001 - stats we cannot read never prune
            return True
        if len(mins) != len(types) or len(maxs) != len(types):
            return True
        nulls = stats.null_counts
        cur_min = [None if i is None else mins[i] for i in mapping]
        cur_max = [None if i is None else maxs[i] for i in mapping]
        cur_nulls: list[int | None] | None
        if nulls is None or len(nulls) != len(types):
            cur_nulls = None
        else:
            cur_nulls = [None if i is None else nulls[i] for i in mapping]
        # Unknown min/max for a column with values: make the predicate see "no stats".
        return self.predicate.test_stats(meta.row_count, cur_min, cur_max, _unknown_aware(cur_nulls, mapping))


def _unknown_aware(nulls: list[int | None] | None, mapping: list[int | None]) -> list[int | None] | None:
    if nulls is None:
        return None
    return [None if m is None else n for n, m in zip(nulls, mapping, strict=True)]
