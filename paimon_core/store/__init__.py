"""The store layer under :class:`~paimon_core.table.table.FileStoreTable` (Java's ``org.apache.paimon``
``FileStore`` / ``AbstractFileStore`` / ``KeyValueFileStore`` / ``AppendOnlyFileStore``).

A :class:`FileStore` is built once per table handle from the *resolved* options (schema options plus
the handle's dynamic options). It owns the file IO, the path factory, the snapshot, schema, tag and
consumer managers, the partition codec and, for primary-key tables, the key fields, the merge function
factory and the sort order, and hands out scans and commits. Operations, merge-tree, append, tag and
branch code take the store, never the table; nothing in this package or below it imports
:mod:`paimon_core.table` (``tests/unit/paimon_core/test_store_layering.py``).
"""

from __future__ import annotations

from paimon_core.store.append_only_file_store import AppendOnlyFileStore
from paimon_core.store.file_store import FileStore, create_file_store
from paimon_core.store.key_value_file_store import KeyValueFileStore

__all__ = ["AppendOnlyFileStore", "FileStore", "KeyValueFileStore", "create_file_store"]
