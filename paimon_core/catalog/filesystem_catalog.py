"""A catalog over a warehouse directory: ``<warehouse>/<db>.db/<table>`` (Paimon's FileSystemCatalog)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import (
    DatabaseAlreadyExistsError,
    DatabaseNotEmptyError,
    DatabaseNotFoundError,
    InvalidArgumentError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedTableKindError,
)
from paimon_core.format.arrow_types import fields_from_arrow_schema
from paimon_core.io.file_io import FileIO, join
from paimon_core.io.resolve import load_file_io
from paimon_core.options_support import check_global_index, name_table
from paimon_core.paths import DB_SUFFIX, PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.schema.schema_change import SchemaChange
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.snapshot.snapshot_commit import Lock
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)

_VALID_NAME = re.compile(r"^[A-Za-z0-9_\-$]+$")
SYSTEM_TABLE_SPLITTER = "$"


def parse_identifier(identifier: str) -> tuple[str, str]:
    """``db.table`` -> (db, table), with a clear error otherwise."""
    parts = identifier.split(".")
    if len(parts) != 2 or not all(parts):
        raise InvalidArgumentError(f"Table identifier must be 'database.table', got {identifier!r}")
    return parts[0], parts[1]


def _check_name(kind: str, name: str) -> None:
    if not _VALID_NAME.match(name):
        raise InvalidArgumentError(f"Invalid {kind} name {name!r}: use letters, digits, '_', '-' or '$'")


class FileSystemCatalog:
    """Databases and tables under one warehouse path or URL (``/path``, ``file://``, ``s3://``, ``memory://``...)."""

    def __init__(
        self,
        warehouse: str,
        *,
        file_io: FileIO | None = None,
        storage_options: Mapping[str, Any] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        commit_lock: Lock | None = None,
        options: Mapping[str, str] | None = None,
    ) -> None:
        """``commit_lock``: a lock shared by every committer of this warehouse, for object
        stores without an atomic exclusive create (see README "Storage and commit safety").
        ``options``: catalog options; ``lock.enabled`` = true with ``lock.type`` = jdbc and
        ``uri`` builds a :class:`~paimon_core.catalog.jdbc_lock.JdbcCatalogLock` (one lock row
        per table) when no ``commit_lock`` is given."""
        if not warehouse:
            raise InvalidArgumentError("A warehouse path or URL is required")
        self.warehouse = warehouse.rstrip("/") or "/"
        self.file_io = file_io or load_file_io(self.warehouse, dict(storage_options or {}))
        self.clock = clock
        self.options = dict(options or {})
        if commit_lock is None and self.options.get("lock.enabled", "false").lower() != "false":
            from paimon_core.catalog.jdbc_lock import commit_lock_from_options

            commit_lock = commit_lock_from_options(self.options)
        self.commit_lock = commit_lock

    # --- databases ----------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        return join(self.warehouse, f"{name}{DB_SUFFIX}")

    def list_databases(self) -> list[str]:
        return sorted(
            st.name[: -len(DB_SUFFIX)] for st in self.file_io.list_dirs(self.warehouse) if st.name.endswith(DB_SUFFIX)
        )

    def database_exists(self, name: str) -> bool:
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, *, ignore_if_exists: bool = False) -> None:
        _check_name("database", name)
        if self.database_exists(name):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistsError(f"Database '{name}' already exists in {self.warehouse}", database=name)
        self.file_io.mkdirs(self.database_path(name))

    def drop_database(self, name: str, *, ignore_if_not_exists: bool = False, cascade: bool = False) -> None:
        if not self.database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotFoundError(f"Database '{name}' does not exist in {self.warehouse}", database=name)
        tables = self.list_tables(name)
        if tables and not cascade:
            raise DatabaseNotEmptyError(
                f"Database '{name}' still has tables {tables}; drop them or pass cascade=True", database=name
            )
        self.file_io.delete(self.database_path(name), recursive=True)

    # --- tables ----------------------------------------------------------------------------
    def table_path(self, identifier: str) -> str:
        db, table = parse_identifier(identifier)
        return join(self.database_path(db), table)

    def list_tables(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise DatabaseNotFoundError(f"Database '{database}' does not exist in {self.warehouse}", database=database)
        out = []
        for st in self.file_io.list_dirs(self.database_path(database)):
            if self.file_io.exists(join(st.path, "schema")):
                out.append(st.name)
        return sorted(out)

    def table_exists(self, identifier: str) -> bool:
        path = self.table_path(identifier)
        return bool(SchemaManager(self.file_io, PathFactory(path)).list_ids())

    def create_table(
        self,
        identifier: str,
        schema: pa.Schema | Sequence[DataField],
        *,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        comment: str | None = None,
        ignore_if_exists: bool = False,
    ) -> FileStoreTable:
        """Create a table from an Arrow schema (or Paimon fields) and return it."""
        db, name = parse_identifier(identifier)
        _check_name("table", name)
        if SYSTEM_TABLE_SPLITTER in name:
            raise InvalidArgumentError(
                f"Cannot create table {identifier!r}: '{SYSTEM_TABLE_SPLITTER}' marks a system table "
                f"('table{SYSTEM_TABLE_SPLITTER}snapshots'), a table's own name must not contain it",
                table=identifier,
            )
        if not self.database_exists(db):
            raise DatabaseNotFoundError(
                f"Database '{db}' does not exist in {self.warehouse}; create it first", database=db
            )
        fields = fields_from_arrow_schema(schema)[0] if isinstance(schema, pa.Schema) else list(schema)
        path = self.table_path(identifier)
        manager = SchemaManager(self.file_io, PathFactory(path), clock=self.clock)
        try:
            manager.create_table(
                fields,
                partition_keys=partition_keys,
                primary_keys=primary_keys,
                options={str(k): str(v) for k, v in (options or {}).items()},
                comment=comment,
            )
        except TableAlreadyExistsError:
            if not ignore_if_exists:
                raise TableAlreadyExistsError(f"Table '{identifier}' already exists", table=identifier) from None
        return self.get_table(identifier)

    def get_table(self, identifier: str) -> FileStoreTable:
        """Load a table; TableNotFoundError if it does not exist.

        ``db.t$branch_x`` loads branch ``x`` of ``db.t`` (BranchNotFoundError if it has none)."""
        from paimon_core.branch.branch_names import SYSTEM_BRANCH_PREFIX

        branch_suffix = f"{SYSTEM_TABLE_SPLITTER}{SYSTEM_BRANCH_PREFIX}"
        if branch_suffix in identifier:
            base, branch = identifier.split(branch_suffix, 1)
            return self.get_table(base).switch_to_branch(branch)
        db, name = parse_identifier(identifier)
        path = self.table_path(identifier)
        manager = SchemaManager(self.file_io, PathFactory(path), clock=self.clock)
        try:
            schema = manager.latest()
        except UnsupportedTableKindError as e:  # a column type we cannot read (BLOB, VECTOR ...)
            raise name_table(e, identifier) from None
        if schema is None:
            if not self.database_exists(db):
                raise DatabaseNotFoundError(f"Database '{db}' does not exist in {self.warehouse}", database=db)
            raise TableNotFoundError(f"Table '{identifier}' does not exist in {self.warehouse}", table=identifier)
        lock = self.commit_lock
        for_table = getattr(lock, "for_table", None)  # a lock keyed per table (JdbcCatalogLock)
        if callable(for_table):
            lock = for_table(identifier)
        table = FileStoreTable(self.file_io, path, schema, name=identifier, clock=self.clock, commit_lock=lock)
        check_global_index(table.store)  # table kinds made by options are refused by FileStoreTable itself
        return table

    def drop_table(self, identifier: str, *, ignore_if_not_exists: bool = False) -> None:
        if not self.table_exists(identifier):
            if ignore_if_not_exists:
                return
            raise TableNotFoundError(f"Table '{identifier}' does not exist in {self.warehouse}", table=identifier)
        self.file_io.delete(self.table_path(identifier), recursive=True)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> FileStoreTable:
        """Apply schema changes (columns, options) and return the table at the new schema."""
        table = self.get_table(identifier)
        table.schema_manager.commit_changes(changes)
        return self.get_table(identifier)
