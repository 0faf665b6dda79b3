"""``$schemas``: one row per schema version (Java's ``SchemasTable``).

``fields``, ``partition_keys``, ``primary_keys`` and ``options`` are compact JSON, as Java's
``JsonSerdeUtil.toFlatJson``; ``update_time`` is the schema's time in the local zone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.table.system.rendering import flat_json, local_wall_millis

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("fields", pa.string(), nullable=False),
        pa.field("partition_keys", pa.string(), nullable=False),
        pa.field("primary_keys", pa.string(), nullable=False),
        pa.field("options", pa.string(), nullable=False),
        pa.field("comment", pa.string()),
        pa.field("update_time", pa.timestamp("ms"), nullable=False),
    ]
)


def read(table: FileStoreTable) -> pa.Table:
    """Every schema file, by ascending id."""
    schemas = table.schema_manager.list_all()
    columns = [
        [s.id for s in schemas],
        [flat_json([f.to_json() for f in s.fields]) for s in schemas],
        [flat_json(list(s.partition_keys)) for s in schemas],
        [flat_json(list(s.primary_keys)) for s in schemas],
        [flat_json(dict(s.options)) for s in schemas],
        [s.comment for s in schemas],
        [local_wall_millis(s.time_millis) for s in schemas],
    ]
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, SCHEMA, strict=True)], schema=SCHEMA
    )
