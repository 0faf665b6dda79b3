"""AppendOnlyFileStore: the store of a table without a primary key (Java's ``AppendOnlyFileStore``)."""

from __future__ import annotations

from paimon_core.append.row_tracking import data_evolution_enabled, row_tracking_enabled
from paimon_core.store.file_store import FileStore

__all__ = ["AppendOnlyFileStore"]


class AppendOnlyFileStore(FileStore):
    """An append table's store: rows are never merged, so there is no key or merge function."""

    @property
    def row_tracking_enabled(self) -> bool:
        return row_tracking_enabled(self.options.options)

    @property
    def data_evolution_enabled(self) -> bool:
        return data_evolution_enabled(self.options.options)
