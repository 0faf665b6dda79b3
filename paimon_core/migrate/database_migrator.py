"""Migrate every table directory of a source database (Java's ``MigrateDatabaseProcedure``:
``migrate_database(connector, source_database, options, parallelism)``).

Java lists the source database's tables in the metastore (Hive) and migrates each with the table
migrator, counting successes and failures ("migrate database is finished, success cnt: N ,
failed cnt: M"); a table that fails does not stop the others. A filesystem catalog has no
metastore, so here the source database is a directory (a Hive database directory such as
``.../warehouse/sales.db``) whose subdirectories are the tables: each is adopted exactly as
``migrate_table`` adopts a directory (:func:`~paimon_core.migrate.file_migrator.migrate_directory`:
Parquet files moved under their own names, one APPEND snapshot per table), into
``<target_database>.<subdirectory>``. Java keeps the database name; the default target database is
the source directory's name without ``.db``.

Refused before anything changes: a source that is, or lies inside, a Paimon table or the
warehouse's metadata (``migrate_table``'s check), a source that is (or holds, or lies in) the
target database's own directory, a symbolic link among the subdirectories, and a source with no
table directory. Subdirectories starting with ``_`` or ``.`` are skipped, as ``migrate_table``
skips such files. ``dry_run`` checks every table and creates nothing.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidArgumentError, PaimonError
from paimon_core.io.file_io import strip_scheme
from paimon_core.migrate.file_migrator import check_source, migrate_directory
from paimon_core.paths import DB_SUFFIX

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog

__all__ = ["MigrateDatabaseResult", "migrate_database"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9_\-$]+$")  # the catalog's database and table names


@dataclass(frozen=True)
class MigrateDatabaseResult:
    """Every table's migration (``dry_run``: the checks), and Java's counts."""

    source_database: str
    target_database: str
    dry_run: bool
    tables: tuple[dict[str, Any], ...]

    @property
    def success_count(self) -> int:
        return sum(1 for t in self.tables if t["status"] == "ok")

    @property
    def failed_count(self) -> int:
        return len(self.tables) - self.success_count

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_database": self.source_database,
            "target_database": self.target_database,
            "dry_run": self.dry_run,
            "tables": [dict(t) for t in self.tables],
            "files": sum(int(t.get("files") or 0) for t in self.tables),
            "rows": sum(int(t.get("rows") or 0) for t in self.tables),
            "success_count": self.success_count,
            "failed_count": self.failed_count,
            "result": f"migrate database is finished, success cnt: {self.success_count} , "
            f"failed cnt: {self.failed_count}",
        }


def _inside(a: str, b: str) -> bool:
    """Whether path ``a`` is ``b`` or lies below it."""
    a, b = posixpath.normpath(a), posixpath.normpath(b)
    return a == b or a.startswith(b.rstrip("/") + "/")


def source_tables(catalog: FileSystemCatalog, source_database: str) -> list[tuple[str, str]]:
    """(table name, directory) of each table directory of the source, sorted; refuses links."""
    file_io = catalog.file_io
    out = []
    for st in sorted(file_io.list_dirs(source_database), key=lambda s: s.name):
        if st.name.startswith(("_", ".")):
            continue
        if file_io.is_symlink(st.path):
            raise InvalidArgumentError(
                f"{st.path} is a symbolic link: migrate_database moves files and never follows a link; "
                "nothing was changed",
                path=st.path,
            )
        out.append((st.name, st.path))
    return out


def migrate_database(
    catalog: FileSystemCatalog,
    source_database: str,
    *,
    target_database: str | None = None,
    options: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> MigrateDatabaseResult:
    """Migrate each table directory of ``source_database`` (see the module docstring)."""
    file_io = catalog.file_io
    source = source_database.rstrip("/") or source_database
    if "://" not in source and not source.startswith(("/", "file:")):
        source = os.path.abspath(source)
    if not file_io.exists(source):
        raise InvalidArgumentError(f"Source database directory {source} does not exist; nothing was changed", path=source)
    check_source(file_io, source)
    name = posixpath.basename(strip_scheme(source).rstrip("/"))
    target = target_database or (name[: -len(DB_SUFFIX)] if name.endswith(DB_SUFFIX) else name)
    if not _NAME.match(target):
        raise InvalidArgumentError(
            f"Invalid target database name {target!r}: use letters, digits, '_', '-' or '$' (give target_database)",
            argument="target_database",
        )
    target_dir = strip_scheme(catalog.database_path(target))
    if _inside(strip_scheme(source), target_dir) or _inside(target_dir, strip_scheme(source)):
        raise InvalidArgumentError(
            f"Source {source} and the target database '{target}' ({catalog.database_path(target)}) overlap: "
            "the tables would be migrated into the directories they are read from; give another "
            "target_database (nothing was changed)",
            path=source,
        )
    tables = source_tables(catalog, source)
    if not tables:
        raise InvalidArgumentError(
            f"Source database directory {source} holds no table directory; nothing was changed", path=source
        )
    if not dry_run:
        catalog.create_database(target, ignore_if_exists=True)
    results: list[dict[str, Any]] = []
    for table, directory in tables:
        identifier = f"{target}.{table}"
        try:
            if not _NAME.match(table):
                raise InvalidArgumentError(f"Invalid table name {table!r} (the directory's name): not migrated")
            r = migrate_directory(catalog, directory, identifier, options=options, dry_run=dry_run).to_dict()
            results.append({"status": "ok", **r})
        except (PaimonError, OSError) as e:
            logger.error("Call migrate_database error: %s: %s", identifier, e)
            results.append(
                {"table": identifier, "source": directory, "status": "error", "error_type": type(e).__name__, "error": str(e)}
            )
    out = MigrateDatabaseResult(source, target, dry_run, tuple(results))
    logger.info("Migrated database %s into %s: %s", source, target, out.to_dict()["result"])
    return out
