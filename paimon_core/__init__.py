"""paimon_core: Apache Paimon tables in pure Python.

>>> from paimon_core import FileSystemCatalog
>>> catalog = FileSystemCatalog("memory://doc-wh")
>>> catalog.create_database("db")
"""

from __future__ import annotations

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    CommitStateUnknownError,
    CorruptFileError,
    DatabaseNotFoundError,
    InvalidArgumentError,
    InvalidOptionError,
    PaimonError,
    SchemaError,
    SchemaMismatchError,
    SnapshotNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TagNotFoundError,
    TerminalError,
    TransientError,
)
from paimon_core.ledger import Ledger, LedgerRecord, LedgerWriteError, ledger_context, record_action
from paimon_core.predicate import Predicate, PredicateBuilder, parse_predicate
from paimon_core.results import CommitResult
from paimon_core.schema import schema_change as SchemaChange
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from paimon_core.version import __version__

__all__ = [
    "CommitConflictError",
    "CommitMessage",
    "CommitResult",
    "CommitRetriesExhaustedError",
    "CommitStateUnknownError",
    "CorruptFileError",
    "DatabaseNotFoundError",
    "FileStoreTable",
    "FileSystemCatalog",
    "InvalidArgumentError",
    "InvalidOptionError",
    "Ledger",
    "LedgerRecord",
    "LedgerWriteError",
    "PaimonError",
    "Predicate",
    "PredicateBuilder",
    "SchemaChange",
    "SchemaError",
    "SchemaMismatchError",
    "SnapshotNotFoundError",
    "TableAlreadyExistsError",
    "TableNotFoundError",
    "TagNotFoundError",
    "TerminalError",
    "TransientError",
    "__version__",
    "ledger_context",
    "parse_predicate",
    "record_action",
]
