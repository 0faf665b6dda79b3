"""``repair`` over a filesystem catalog (Java's ``Catalog.repairCatalog / repairDatabase /
repairTable``, procedure ``repair(database_or_table)``).

Java's repair makes a metastore (Hive, JDBC) consistent with the file system: it registers tables
and databases the warehouse has and the metastore lacks, and updates their metadata. A filesystem
catalog has no metastore: the warehouse directory is the catalog, so there is nothing to sync
(Java's ``FileSystemCatalog`` does not implement it). Ours therefore keeps Java's argument and
checks, and reports what it verified, changing nothing:

* ``database_or_table`` blank: the whole catalog (every database and table);
* ``'db'``, ``'db.t'`` or a comma-separated list of them: those (Java splits on ``,`` then ``.``;
  more than two parts: "Cannot get splits from '...' to get database and table");
* a database or table that does not exist: :class:`DatabaseNotFoundError` /
  :class:`TableNotFoundError` (Java's ``TableNotExistException``);
* every table named is loaded (its latest schema read), so a table the catalog cannot open fails
  here with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import DatabaseNotFoundError, InvalidArgumentError
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog

__all__ = ["RepairResult", "repair"]

NOTHING_TO_SYNC = "filesystem catalog: the warehouse directory is the catalog, no metastore to sync"


@dataclass(frozen=True)
class RepairResult(_ToDict):
    """What ``repair`` checked (Java's output: ``result`` true)."""

    database_or_table: str | None
    databases: tuple[str, ...]
    tables: tuple[str, ...]
    note: str = NOTHING_TO_SYNC
    result: bool = True


def repair(catalog: FileSystemCatalog, database_or_table: str | None = None) -> RepairResult:
    """Check the catalog, databases or tables named (see the module docstring)."""
    databases: list[str] = []
    tables: list[str] = []
    if database_or_table is None or not database_or_table.strip():
        for db in catalog.list_databases():
            databases.append(db)
            tables.extend(f"{db}.{t}" for t in catalog.list_tables(db))
    else:
        for split in database_or_table.split(","):
            parts = split.strip().split(".")
            if len(parts) == 1 and parts[0]:
                if not catalog.database_exists(parts[0]):
                    raise DatabaseNotFoundError(
                        f"Database '{parts[0]}' does not exist in {catalog.warehouse}", database=parts[0]
                    )
                databases.append(parts[0])
                tables.extend(f"{parts[0]}.{t}" for t in catalog.list_tables(parts[0]))
            elif len(parts) == 2 and all(parts):
                tables.append(".".join(parts))
            else:
                raise InvalidArgumentError(
                    f"Cannot get splits from '{split}' to get database and table", argument="database_or_table"
                )
    for name in tables:
        catalog.get_table(name)  # TableNotFoundError; a table that cannot be opened fails with why
    return RepairResult(
        database_or_table=database_or_table,
        databases=tuple(dict.fromkeys(databases)),
        tables=tuple(dict.fromkeys(tables)),
    )
