"""System tables (``t$snapshots``, ``t$files`` ...): a table's metadata as Arrow tables.

Mirrors Java's ``org.apache.paimon.table.system`` (``SystemTableLoader`` and one class per table):
column names, order and nullability follow each Java ``TABLE_TYPE``; types map to Arrow as
BIGINT -> int64, INT -> int32, STRING -> string, BOOLEAN -> bool, TIMESTAMP(3) -> timestamp[ms]
(a wall-clock time, as Java's ``LocalDateTime``), ARRAY<STRING> -> list<string>.

``$files``, ``$manifests`` and ``$partitions`` read the snapshot the table handle's scan would
read (the latest, or ``scan.snapshot-id`` / ``scan.tag-name`` / ``scan.timestamp-millis`` set
with ``table.copy(...)``), as Java's ``FilesTable.copy(dynamicOptions)`` does.

>>> from paimon_core.table.system import SYSTEM_TABLES
>>> SYSTEM_TABLES[:3]
('snapshots', 'schemas', 'options')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError

if TYPE_CHECKING:
    import pyarrow as pa

    from paimon_core.table.table import FileStoreTable

__all__ = ["DATA_SYSTEM_TABLES", "SYSTEM_TABLES", "SYSTEM_TABLE_SPLITTER", "read_system_table", "system_table_name"]

SYSTEM_TABLE_SPLITTER = "$"

#: Supported system tables, in Java's documentation order; each is ``<name>_table.read(table)``.
SYSTEM_TABLES: tuple[str, ...] = (
    "snapshots",
    "schemas",
    "options",
    "files",
    "manifests",
    "tags",
    "consumers",
    "partitions",
    "branches",
)

#: System tables shaped as the table itself (Java's ``DataTable`` system tables): the table's
#: columns plus metadata columns; ``row_tracking`` needs ``row-tracking.enabled``.
DATA_SYSTEM_TABLES: tuple[str, ...] = ("row_tracking",)


def system_table_name(name: str) -> str:
    """``"$Snapshots"`` / ``"snapshots"`` -> ``"snapshots"``; InvalidArgumentError if unknown."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"System table name must be a string, got {name!r}", argument="name")
    key = name.strip()
    if SYSTEM_TABLE_SPLITTER in key:
        key = key.rsplit(SYSTEM_TABLE_SPLITTER, 1)[1]
    key = key.lower()
    if key not in SYSTEM_TABLES and key not in DATA_SYSTEM_TABLES:
        raise InvalidArgumentError(
            f"Unknown system table {name!r}; valid system tables: {', '.join(SYSTEM_TABLES + DATA_SYSTEM_TABLES)}",
            argument="name",
        )
    return key


def read_system_table(table: FileStoreTable, name: str) -> pa.Table:
    """The system table ``name`` (``"snapshots"`` or ``"$snapshots"``) of ``table``, as Arrow."""
    key = system_table_name(name)
    module = importlib.import_module(f"paimon_core.table.system.{key}_table")
    result: pa.Table = module.read(table)
    return result
