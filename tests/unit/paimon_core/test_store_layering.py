"""The store boundary: nothing below :mod:`paimon_core.table` imports it.

Java's split is the model: ``FileStore`` and the operations, merge tree, append, tag and branch code
under it never see ``FileStoreTable``; the table wraps the store. Every import counts, a
``TYPE_CHECKING`` one or one inside a function included, so a module that takes the table "only for
typing" is caught too.

The packages above the table (the catalog that makes tables, the ledger and the maintenance planner
that use them, migration, the CLI) may import it. :data:`PENDING` lists the modules not moved onto the
store yet; it may only shrink: an entry that no longer imports the table fails the test until it is
removed, and a new offender fails it at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "paimon_core"
TABLE = "paimon_core.table"

#: top-level parts of paimon_core allowed to import the table package
ABOVE_TABLE = frozenset({"table", "catalog", "ledger", "maintenance", "migrate", "cli.py", "__init__.py", "__main__.py"})

#: modules still taking the table (to be moved onto the store; the list only shrinks)
PENDING: frozenset[str] = frozenset(
    {
    }
)


def _imports_table(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == TABLE or node.module.startswith(TABLE + "."):
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module == "paimon_core" and any(a.name == "table" for a in node.names):
                found.append(f"{node.lineno}: from paimon_core import table")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name == TABLE or a.name.startswith(TABLE + ".")]
    return found


def _below_table() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and p.relative_to(PACKAGE).parts[0] not in ABOVE_TABLE
    )


def test_nothing_below_the_table_imports_it() -> None:
    modules = _below_table()
    names = {p.relative_to(ROOT).as_posix() for p in modules}
    assert "paimon_core/store/file_store.py" in names and "paimon_core/operation/expire_snapshots.py" in names
    offenders = {
        rel: uses
        for p in modules
        if (uses := _imports_table(p)) and (rel := p.relative_to(ROOT).as_posix()) not in PENDING
    }
    assert offenders == {}, (
        "Modules below paimon_core.table take the FileStore (paimon_core.store), never the table; "
        f"these import the table package: {offenders}"
    )


def test_the_pending_list_only_shrinks() -> None:
    moved = sorted(m for m in PENDING if not (ROOT / m).exists() or not _imports_table(ROOT / m))
    assert moved == [], f"These modules no longer import the table: remove them from PENDING: {moved}"


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from paimon_core.table.table import FileStoreTable\n"
        "def f():\n    import paimon_core.table.table_read\n    from paimon_core import table\n"
        "from paimon_core.tablex import y\n"
    )
    assert [u.split(":")[0] for u in _imports_table(module)] == ["3", "5", "6"]
