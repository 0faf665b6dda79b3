from __future__ import annotations

from paimon_core.catalog.filesystem_catalog import FileSystemCatalog, parse_identifier

__all__ = ["FileSystemCatalog", "parse_identifier"]
