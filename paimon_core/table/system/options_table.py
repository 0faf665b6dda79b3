"""``$options``: the latest schema's table options (Java's ``OptionsTable``).

Dynamic options of a table handle (``table.copy({...})``) are not table options and are not listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string(), nullable=False)]
)


def read(table: FileStoreTable) -> pa.Table:
    """One row per option of the latest schema, in the schema file's order."""
    latest = table.schema_manager.latest()
    options = dict(latest.options) if latest is not None else dict(table.schema.options)
    return pa.Table.from_arrays(
        [pa.array(list(options), pa.string()), pa.array(list(options.values()), pa.string())], schema=SCHEMA
    )
