"""``$snapshots``: one row per snapshot file (Java's ``SnapshotsTable``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.table.system.rendering import local_wall_millis

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("snapshot_id", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("commit_user", pa.string(), nullable=False),
        pa.field("commit_identifier", pa.int64(), nullable=False),
        pa.field("commit_kind", pa.string(), nullable=False),
        pa.field("commit_time", pa.timestamp("ms"), nullable=False),
        pa.field("base_manifest_list", pa.string(), nullable=False),
        pa.field("delta_manifest_list", pa.string(), nullable=False),
        pa.field("changelog_manifest_list", pa.string()),
        pa.field("total_record_count", pa.int64()),
        pa.field("delta_record_count", pa.int64()),
        pa.field("changelog_record_count", pa.int64()),
        pa.field("watermark", pa.int64()),
        pa.field("next_row_id", pa.int64()),
        pa.field("operation", pa.string()),
        pa.field("writer_version", pa.string()),
    ]
)


def read(table: FileStoreTable) -> pa.Table:
    """Every snapshot still on disk, by ascending id (``commit_time`` in the local zone)."""
    snaps = list(table.snapshot_manager.snapshots())
    columns = [
        [s.id for s in snaps],
        [s.schema_id for s in snaps],
        [s.commit_user for s in snaps],
        [s.commit_identifier for s in snaps],
        [str(s.commit_kind) for s in snaps],
        [local_wall_millis(s.time_millis) for s in snaps],
        [s.base_manifest_list for s in snaps],
        [s.delta_manifest_list for s in snaps],
        [s.changelog_manifest_list for s in snaps],
        [s.total_record_count for s in snaps],
        [s.delta_record_count for s in snaps],
        [s.changelog_record_count for s in snaps],
        [s.watermark for s in snaps],
        [s.next_row_id for s in snaps],
        [s.operation for s in snaps],
        [s.writer_version for s in snaps],
    ]
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
