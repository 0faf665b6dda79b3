"""``$files``: every live data file of a snapshot (Java's ``FilesTable``).

Rows come from the snapshot the handle reads (latest, or its time-travel options), all levels
included (Java sets a level filter so deletion-vector tables do not skip level 0). Rendering as
Java's ``FilesRead.toRow``:

* ``partition``: the partition row CAST to STRING, ``{2024-01-01, 3}`` (``{}`` unpartitioned);
* ``file_path``: the external path, else ``<bucket path>/<file name>``;
* ``file_format``: the file name's extension (``DataFilePathFactory.formatIdentifier``);
* ``min_key`` / ``max_key``: ``Arrays.toString`` of the key (the trimmed primary key of the file's
  schema), null for files without keys (append tables);
* the three stats maps: see :mod:`paimon_core.table.system.stats_evolution`;
* ``creation_time``: the stored wall-clock time; ``file_source``: ``APPEND`` / ``COMPACT``.

Columns are built per file in one pass (metadata only: no data file is opened).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.data.binary_row import binary_row_arity, deserialize_binary_row
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import FileSource
from paimon_core.schema.data_types import DataType
from paimon_core.table.system.rendering import java_object_string, row_cast_string_of_bytes
from paimon_core.table.system.stats_evolution import StatsRenderer
from paimon_core.table.system.time_travel import try_travel_or_latest

if TYPE_CHECKING:
    from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "live_entries", "read"]

SCHEMA = pa.schema(
    [
        pa.field("partition", pa.string()),
        pa.field("bucket", pa.int32(), nullable=False),
        pa.field("file_path", pa.string(), nullable=False),
        pa.field("file_format", pa.string(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("level", pa.int32(), nullable=False),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("min_key", pa.string()),
        pa.field("max_key", pa.string()),
        pa.field("null_value_counts", pa.string(), nullable=False),
        pa.field("min_value_stats", pa.string(), nullable=False),
        pa.field("max_value_stats", pa.string(), nullable=False),
        pa.field("min_sequence_number", pa.int64()),
        pa.field("max_sequence_number", pa.int64()),
        pa.field("creation_time", pa.timestamp("ms")),
        pa.field("deleteRowCount", pa.int64()),
        pa.field("file_source", pa.string()),
        pa.field("first_row_id", pa.int64()),
        pa.field("write_cols", pa.list_(pa.string())),
    ]
)

_FILE_SOURCES = {int(s): s.name for s in FileSource}


def live_entries(table: FileStoreTable) -> list[ManifestEntry]:
    """The live file entries of the snapshot the handle reads (every level)."""
    snapshot = try_travel_or_latest(table)
    if snapshot is None:
        return []
    return table.new_file_store_scan().live_entries(snapshot)


def _format_identifier(file_name: str) -> str:
    return file_name.rsplit(".", 1)[1] if "." in file_name else file_name


class _KeyRenderer:
    """``Arrays.toString`` of min/max keys, with the key types of each file's schema."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self._types: dict[int, list[DataType]] = {}

    def key_types(self, schema_id: int) -> list[DataType]:
        types = self._types.get(schema_id)
        if types is None:
            schema = self.table.schema_manager_cached(schema_id)
            fields = (
                schema.fields_of(schema.trimmed_primary_keys) if schema.primary_keys else list(schema.fields)
            )
            types = self._types[schema_id] = [f.type for f in fields]
        return types

    def render(self, key: bytes, schema_id: int) -> str | None:
        try:
            if binary_row_arity(key) <= 0:
                return None
            types = self.key_types(schema_id)
            values = deserialize_binary_row(key, types)
            return "[" + ", ".join(java_object_string(v, t) for v, t in zip(values, types, strict=True)) + "]"
        except Exception:  # noqa: BLE001 - a key we cannot decode renders as null
            return None


def _memo(fn: Callable[[bytes], str | None]) -> Callable[[bytes], str | None]:
    cache: dict[bytes, str | None] = {}

    def get(key: bytes) -> str | None:
        if key not in cache:
            cache[key] = fn(key)
        return cache[key]

    return get


def read(table: FileStoreTable) -> pa.Table:
    """One row per live data file."""
    return build(table, live_entries(table))


def build(table: FileStoreTable, entries: Sequence[ManifestEntry]) -> pa.Table:
    """The ``$files`` rows of ``entries`` (exposed for callers that already hold the entries)."""
    part_types = [f.type for f in table.schema.partition_fields]
    partition_string = _memo(lambda p: row_cast_string_of_bytes(p, part_types))
    bucket_paths: dict[tuple[bytes, int], str] = {}
    keys = _KeyRenderer(table)
    stats = StatsRenderer(table.schema, table.schema_manager_cached)

    def path(e: ManifestEntry) -> str:
        f = e.file
        if f.external_path:
            return f.external_path
        bp = bucket_paths.get((e.partition, e.bucket))
        if bp is None:
            bp = bucket_paths[(e.partition, e.bucket)] = table.bucket_path(e.partition, e.bucket)
        return join(bp, f.file_name)

    files: list[DataFileMeta] = [e.file for e in entries]
    rendered = [stats.render(f) for f in files]
    columns: list[list[object]] = [
        [partition_string(e.partition) for e in entries],
        [e.bucket for e in entries],
        [path(e) for e in entries],
        [_format_identifier(f.file_name) for f in files],
        [f.schema_id for f in files],
        [f.level for f in files],
        [f.row_count for f in files],
        [f.file_size for f in files],
        [keys.render(f.min_key, f.schema_id) for f in files],
        [keys.render(f.max_key, f.schema_id) for f in files],
        [r[0] for r in rendered],
        [r[1] for r in rendered],
        [r[2] for r in rendered],
        [f.min_sequence_number for f in files],
        [f.max_sequence_number for f in files],
        [f.creation_time for f in files],
        [f.delete_row_count for f in files],
        [
            None if f.file_source is None else _FILE_SOURCES.get(f.file_source, str(f.file_source))
            for f in files
        ],
        [f.first_row_id for f in files],
        [None if f.write_cols is None else list(f.write_cols) for f in files],
    ]
    return pa.Table.from_arrays(
        [pa.array(c, type=fld.type) for c, fld in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
