"""``$consumers``: every consumer and the next snapshot it will read (Java's ``ConsumersTable``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("consumer_id", pa.string(), nullable=False),
        pa.field("next_snapshot_id", pa.int64(), nullable=False),
    ]
)


def read(table: FileStoreTable) -> pa.Table:
    """Consumers from ``ConsumerManager.consumers()``, by id."""
    consumers = table.consumer_manager.consumers()
    return pa.Table.from_arrays(
        [pa.array(list(consumers), pa.string()), pa.array(list(consumers.values()), pa.int64())],
        schema=SCHEMA,
    )
