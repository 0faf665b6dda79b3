"""One exception root for everything paimon_core raises.

Every error derives from :class:`PaimonError`. Errors that a caller may retry
(a commit conflict, an I/O hiccup) also derive from :class:`TransientError`;
errors that will fail again on retry (bad input, a corrupt file) derive from
:class:`TerminalError`. All errors pickle cleanly so that Spark executors can
send them to the driver.
"""

from __future__ import annotations

from typing import Any


class PaimonError(Exception):
    """Root of every error raised by paimon_core."""

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context = context
        for key, value in context.items():
            setattr(self, key, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.message, self.context))

    def __str__(self) -> str:
        return self.message


def _rebuild_error(cls: type[PaimonError], message: str, context: dict[str, Any]) -> PaimonError:
    err = cls.__new__(cls)
    PaimonError.__init__(err, message, **context)
    return err


class TransientError(PaimonError):
    """An error that may go away when the operation is retried."""


class TerminalError(PaimonError):
    """An error that will happen again on retry: fix the input or the table first."""


# --- catalog -----------------------------------------------------------------


class CatalogError(TerminalError):
    """A catalog operation failed."""


class DatabaseNotFoundError(CatalogError):
    """The database does not exist."""


class DatabaseAlreadyExistsError(CatalogError):
    """The database already exists."""


class DatabaseNotEmptyError(CatalogError):
    """The database still holds tables."""


class TableNotFoundError(CatalogError):
    """The table does not exist."""


class TableAlreadyExistsError(CatalogError):
    """The table already exists."""


# --- schema and options --------------------------------------------------------


class SchemaError(TerminalError):
    """A schema is invalid or a change to it is not allowed."""


class SchemaMismatchError(SchemaError):
    """Data does not match the table schema and cannot be cast safely."""


class InvalidOptionError(TerminalError):
    """An option key is unknown or its value is invalid."""


class UnsupportedTableKindError(InvalidOptionError):
    """A table of a kind paimon_core cannot read, write or maintain (a chain table, blob or vector
    columns, a global index ...): ``feature`` names it. Raised before anything is changed."""


class InvalidArgumentError(TerminalError):
    """An argument to an API call is invalid."""


class DuplicateKeyError(TerminalError):
    """A primary key lives in more than one partition or bucket of a table that must hold it
    once (a cross-partition upsert table written by two jobs at once)."""


# --- metadata files --------------------------------------------------------------


class CorruptFileError(TerminalError):
    """A metadata file (snapshot, schema, manifest...) cannot be parsed."""


class MetadataFileNotFoundError(CorruptFileError, FileNotFoundError):
    """A manifest list, manifest or index manifest a snapshot or tag names is missing (the table
    is damaged, or an expiry removed it while it was read). Also a ``FileNotFoundError``."""


class SnapshotNotFoundError(TerminalError):
    """The requested snapshot does not exist (never written, or expired)."""


class TagNotFoundError(TerminalError):
    """The requested tag does not exist."""


class TagAlreadyExistsError(TerminalError):
    """A tag of that name already exists."""


# --- commit --------------------------------------------------------------------


class CommitError(PaimonError):
    """A commit failed; the table is unchanged."""


class CommitConflictError(CommitError, TransientError):
    """Another writer changed the table in a way that conflicts with this commit."""


class CommitRetriesExhaustedError(CommitError, TransientError):
    """The commit lost the race for a snapshot id too many times."""


class LockAcquireTimeoutError(CommitError, TransientError):
    """The commit lock (``lock.enabled``) was not acquired within ``lock-acquire-timeout``."""


class CommitStateUnknownError(CommitError, TerminalError):
    """The commit may or may not have been published (I/O failed while publishing)."""


# --- I/O -------------------------------------------------------------------------


class FileIOError(TransientError):
    """A storage operation failed."""


class StorageDriverMissingError(TerminalError):
    """No fsspec driver is installed for a warehouse URL's scheme (e.g. s3fs for ``s3://``)."""


class DataFileNotFoundError(TerminalError, FileNotFoundError):
    """A data file a snapshot references is gone (expired or cleaned while being read, or the
    table is damaged). Also a ``FileNotFoundError``, so callers catching that keep working."""


# --- maintenance ---------------------------------------------------------------------


class OrphanCleanAbortedError(TerminalError):
    """Orphan clean stopped before deleting anything: it could not read what the table
    references (a corrupt or missing metadata file, a branch without schema)."""


class UnsafePathError(CorruptFileError):
    """Metadata names a file outside the table directory and its external data paths (a ``..``
    segment, an absolute path or another location where a bare file name belongs). Nothing
    is read or deleted through it. ``path`` is the offending value; ``snapshot_id`` names the
    snapshot or tag whose metadata held it, when known."""


class SnapshotExpiredWhileReadingError(TransientError):
    """A file of the snapshot an operation started from (a writer's restore, a commit's base) is
    gone because a concurrent expiry, rollback or orphan clean removed that snapshot, and the
    re-reads from newer snapshots lost the same race every time. ``path`` is the missing file,
    ``snapshot_id`` the snapshot it belonged to. Retrying the operation starts from the latest
    snapshot."""


class CommitFilesMissingError(CommitError, TransientError):
    """A file the commit adds (data, changelog or index file written by this job) is gone before
    the commit published: nothing was committed. Usually an orphan clean whose ``older_than`` was
    shorter than the write took (``force``). ``path`` is the first missing file; rerun the write."""


class CommitFilesLostError(CommitStateUnknownError):
    """The commit published its snapshot, but files it adds are gone after all (a clean that
    ignored the commit's announcement, or one older than a day): ``missing_files`` names them,
    ``snapshot_ids`` what was published. Reads of the table fail on them until they are restored
    or dropped (``remove_unexisting_files``); the caller must not delete the commit's files."""


class BranchNotFoundError(TerminalError):
    """The requested branch does not exist (no ``branch/branch-<name>`` directory)."""


class BranchAlreadyExistsError(TerminalError):
    """A branch of that name already exists."""
