"""Value stats of a data file seen through the table's current schema, rendered as Java does.

Mirrors Java's ``SimpleStatsEvolution(s)`` as ``FilesTable.StatsLazyGetter`` uses it: a file's
stats row covers the fields of the schema it was written with (projected to its ``write_cols``
for data-evolution files, or to its dense ``value_stats_cols``); fields are matched to the
table's fields by id. A field the file's schema does not have is all nulls (null count = row
count); a field the stored stats do not cover is unknown (null min, max and null count). A field
whose type changed is rendered with the type the file was written with (Java casts it; for the
widening changes Paimon allows the text is the same).

The maps are Java ``TreeMap.toString()`` output: ``{a=1, b=x}``, keys in String order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.schema.data_types import DataField, DataType
from paimon_core.schema.table_schema import TableSchema
from paimon_core.table.system.rendering import java_object_string, java_sorted

__all__ = ["RenderedStats", "StatsRenderer"]

#: (null counts, min values, max values) as Java's map strings.
RenderedStats = tuple[str, str, str]


@dataclass(frozen=True)
class _Layout:
    stored_types: list[DataType]  # the types of the stored stats row
    # per output field (TreeMap order): name, render type, stored index or None, absent from file
    columns: list[tuple[str, DataType, int | None, bool]]


class StatsRenderer:
    """Renders ``null_value_counts`` / ``min_value_stats`` / ``max_value_stats`` of data files."""

    def __init__(self, table_schema: TableSchema, schema_lookup: Callable[[int], TableSchema]) -> None:
        self.table_schema = table_schema
        self.schema_lookup = schema_lookup
        self._layouts: dict[tuple[int, tuple[str, ...] | None, tuple[str, ...] | None], _Layout] = {}

    def _layout(self, meta: DataFileMeta) -> _Layout:
        key = (meta.schema_id, meta.value_stats_cols, meta.write_cols)
        layout = self._layouts.get(key)
        if layout is None:
            layout = self._layouts[key] = self._build_layout(*key)
        return layout

    def _build_layout(
        self, schema_id: int, stats_cols: tuple[str, ...] | None, write_cols: tuple[str, ...] | None
    ) -> _Layout:
        file_fields: list[DataField] = list(self.schema_lookup(schema_id).fields)
        if write_cols is not None:
            by_name = {f.name: f for f in file_fields}
            file_fields = [by_name[c] for c in write_cols if c in by_name]
        if stats_cols is None:
            stored = file_fields
        else:
            by_name = {f.name: f for f in self.schema_lookup(schema_id).fields}
            stored = [by_name[c] for c in stats_cols if c in by_name]
            if len(stored) != len(stats_cols):
                stored = []  # stats over columns the schema does not know: unusable
        stored_pos = {f.id: i for i, f in enumerate(stored)}
        file_ids = {f.id: f for f in file_fields}
        evolved = schema_id != self.table_schema.id or write_cols is not None
        out_fields = list(self.table_schema.fields) if evolved else file_fields
        columns: list[tuple[str, DataType, int | None, bool]] = []
        for f in out_fields:
            source = file_ids.get(f.id)
            if source is None:
                columns.append((f.name, f.type, None, True))
            else:
                columns.append((f.name, source.type, stored_pos.get(f.id), False))
        # Java renders min(#stats fields, #table fields) columns of the evolved row.
        columns = columns[: len(self.table_schema.fields)]
        order = {n: i for i, n in enumerate(java_sorted([c[0] for c in columns]))}
        columns.sort(key=lambda c: order[c[0]])
        return _Layout([f.type for f in stored], columns)

    def render(self, meta: DataFileMeta) -> RenderedStats:
        """The three map strings of one file."""
        layout = self._layout(meta)
        stats = meta.value_stats
        n = len(layout.stored_types)
        mins: tuple[object | None, ...] | None = None
        maxs: tuple[object | None, ...] | None = None
        if n:
            try:
                mins = deserialize_binary_row(stats.min_values, layout.stored_types)
                maxs = deserialize_binary_row(stats.max_values, layout.stored_types)
            except Exception:  # noqa: BLE001 - unreadable stats render as unknown
                mins = maxs = None
        nulls = stats.null_counts if stats.null_counts is not None and len(stats.null_counts) == n else None
        null_parts, min_parts, max_parts = [], [], []
        for name, t, idx, absent in layout.columns:
            if absent:
                null_parts.append(f"{name}={meta.row_count}")
                min_parts.append(f"{name}=null")
                max_parts.append(f"{name}=null")
                continue
            count = None if idx is None or nulls is None else nulls[idx]
            null_parts.append(f"{name}={'null' if count is None else count}")
            lo = None if idx is None or mins is None else mins[idx]
            hi = None if idx is None or maxs is None else maxs[idx]
            min_parts.append(f"{name}={_safe_string(lo, t)}")
            max_parts.append(f"{name}={_safe_string(hi, t)}")
        return (
            "{" + ", ".join(null_parts) + "}",
            "{" + ", ".join(min_parts) + "}",
            "{" + ", ".join(max_parts) + "}",
        )


def _safe_string(value: object, t: DataType) -> str:
    try:
        return java_object_string(value, t)
    except Exception:  # noqa: BLE001 - a value that does not fit its type is shown raw
        return str(value)
