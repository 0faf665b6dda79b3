"""``$manifests``: the manifest files of a snapshot (Java's ``ManifestsTable``).

Base, delta and changelog manifests of the snapshot the handle reads (``readAllManifests``), with
the partition min/max stats cast to STRING as rows (``{2024-01-01, 3}``; ``{}`` unpartitioned).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.table.system.rendering import row_cast_string_of_bytes
from paimon_core.table.system.time_travel import try_travel_or_latest

if TYPE_CHECKING:
    from paimon_core.manifest.entries import ManifestFileMeta
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("file_size", pa.int64(), nullable=False),
        pa.field("num_added_files", pa.int64(), nullable=False),
        pa.field("num_deleted_files", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("min_partition_stats", pa.string()),
        pa.field("max_partition_stats", pa.string()),
        pa.field("min_row_id", pa.int64()),
        pa.field("max_row_id", pa.int64()),
    ]
)


def all_manifests(table: FileStoreTable) -> list[ManifestFileMeta]:
    """Data (base + delta) then changelog manifests of the snapshot the handle reads."""
    snapshot = try_travel_or_latest(table)
    if snapshot is None:
        return []
    scan = table.new_file_store_scan()
    metas = scan.data_manifests(snapshot)
    if snapshot.changelog_manifest_list:
        metas += scan.read_list(snapshot.changelog_manifest_list)
    return metas


def read(table: FileStoreTable) -> pa.Table:
    """One row per manifest file."""
    metas = all_manifests(table)
    types = [f.type for f in table.schema.partition_fields]
    columns = [
        [m.file_name for m in metas],
        [m.file_size for m in metas],
        [m.num_added_files for m in metas],
        [m.num_deleted_files for m in metas],
        [m.schema_id for m in metas],
        [row_cast_string_of_bytes(m.partition_stats.min_values, types) for m in metas],
        [row_cast_string_of_bytes(m.partition_stats.max_values, types) for m in metas],
        [m.min_row_id for m in metas],
        [m.max_row_id for m in metas],
    ]
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
