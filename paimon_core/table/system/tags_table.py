"""``$tags``: one row per tag, by name (Java's ``TagsTable``).

``commit_time`` is the tagged snapshot's commit time and ``create_time`` the tag's creation
time, both wall-clock times in the local zone; ``time_retained`` is Java's ``Duration.toString()``
(``PT24H``) or null when the tag never expires by time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.table.system.rendering import (
    java_duration_string,
    java_sorted,
    local_date_time_millis,
    local_wall_millis,
)

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("tag_name", pa.string(), nullable=False),
        pa.field("snapshot_id", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("commit_time", pa.timestamp("ms"), nullable=False),
        pa.field("record_count", pa.int64()),
        pa.field("create_time", pa.timestamp("ms")),
        pa.field("time_retained", pa.string()),
    ]
)


def read(table: FileStoreTable) -> pa.Table:
    """Every tag file (a TreeMap by name in Java: String order)."""
    tags = table.tag_manager.tags()
    names = java_sorted(list(tags))
    snaps = [tags[n] for n in names]
    columns = [
        names,
        [s.id for s in snaps],
        [s.schema_id for s in snaps],
        [local_wall_millis(s.time_millis) for s in snaps],
        [s.total_record_count for s in snaps],
        [local_date_time_millis(s.tag_create_time) for s in snaps],
        [java_duration_string(s.tag_time_retained) for s in snaps],
    ]
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
