"""Planner tests on real tables use a local warehouse only (the planner reads metadata through the
table's file IO; the file systems themselves are tested elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    """A local warehouse with database ``db`` (overrides the shared local + memory fixture)."""
    c = FileSystemCatalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c
