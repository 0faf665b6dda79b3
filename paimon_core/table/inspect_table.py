"""``table.inspect``: the table's metadata as Arrow tables (pyiceberg's ``InspectTable``).

Each method reads one of the system tables of :mod:`paimon_core.table.system` (Java's
``t$snapshots``, ``t$files`` ...), with Paimon's column names and types. ``files``,
``manifests`` and ``partitions`` read the snapshot the handle's scan would read (the latest, or
the one ``table.copy({"scan.snapshot-id": ...})`` travels to).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

    from paimon_core.table.table import FileStoreTable

__all__ = ["InspectTable"]

logger = logging.getLogger(__name__)


class InspectTable:
    """``table.inspect``: snapshots, schemas, options, files, manifests, tags, consumers,
    partitions, branches and row_tracking as Arrow tables."""

    __slots__ = ("_table",)

    def __init__(self, table: FileStoreTable) -> None:
        self._table = table

    def __repr__(self) -> str:
        return f"InspectTable({self._table.name!r})"

    def system_table(self, name: str) -> pa.Table:
        """The system table ``name`` (``"snapshots"``, ``"$files"`` ...; see
        :data:`paimon_core.table.system.SYSTEM_TABLES`); InvalidArgumentError if unknown."""
        from paimon_core.table.system import read_system_table

        return read_system_table(self._table, name)

    def snapshots(self) -> pa.Table:
        """``$snapshots``: one row per snapshot (id, schema, commit user/kind/time, row counts)."""
        return self.system_table("snapshots")

    def schemas(self) -> pa.Table:
        """``$schemas``: one row per schema version."""
        return self.system_table("schemas")

    def options(self) -> pa.Table:
        """``$options``: the table's options (key, value)."""
        return self.system_table("options")

    def files(self) -> pa.Table:
        """``$files``: the live data files of the scanned snapshot."""
        return self.system_table("files")

    def manifests(self) -> pa.Table:
        """``$manifests``: the manifests of the scanned snapshot."""
        return self.system_table("manifests")

    def tags(self) -> pa.Table:
        """``$tags``: one row per tag (its snapshot, create time, retention)."""
        return self.system_table("tags")

    def consumers(self) -> pa.Table:
        """``$consumers``: one row per consumer (its next snapshot id)."""
        return self.system_table("consumers")

    def partitions(self) -> pa.Table:
        """``$partitions``: per partition, its record/file counts and sizes."""
        return self.system_table("partitions")

    def branches(self) -> pa.Table:
        """``$branches``: one row per branch."""
        return self.system_table("branches")

    def row_tracking(self) -> pa.Table:
        """``$row_tracking``: the rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (needs
        ``row-tracking.enabled``)."""
        return self.system_table("row_tracking")
