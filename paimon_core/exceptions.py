"""One exception root for everything paimon_core raises.

Every error derives from :class:`PaimonError`. Errors that a caller may retry
(a commit conflict, an I/O hiccup) also derive from :class:`TransientError`;
errors that will fail again on retry (bad input, a corrupt file) derive from
:class:`TerminalError`. All errors pickle cleanly so that Spark executors can
send them to the driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class PaimonError(Exception):
    """Root of every error raised by paimon_core.

    Structured context is typed: every error may name the ``table``, the ``path`` of the file
    it is about, a ``snapshot_id``, a ``file_name`` (a data or manifest file of a snapshot) and
    the ``commit_user`` / ``commit_identifier`` of the commit it belongs to; subclasses add their
    own fields in their constructors (:class:`InvalidOptionError.key`, :class:`CommitFilesLostError.missing_files`
    ...). Other keyword context (``column=``, ``branch=`` ...) is kept in :attr:`details`.
    :attr:`context` holds every keyword the error was built with, so it pickles (Spark executors
    send errors to the driver) as ``type(err)(message, **context)``.
    """

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        path: str | None = None,
        snapshot_id: int | None = None,
        file_name: str | None = None,
        commit_user: str | None = None,
        commit_identifier: int | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.table = table
        self.path = path
        self.snapshot_id = snapshot_id
        self.file_name = file_name
        self.commit_user = commit_user
        self.commit_identifier = commit_identifier
        #: keyword context without a typed field (``column``, ``branch``, ``argument`` ...)
        self.details: dict[str, Any] = details
        common = {
            "table": table,
            "path": path,
            "snapshot_id": snapshot_id,
            "file_name": file_name,
            "commit_user": commit_user,
            "commit_identifier": commit_identifier,
        }
        #: every keyword given (typed fields of subclasses included): what the error pickles with
        self.context: dict[str, Any] = {k: v for k, v in common.items() if v is not None} | details

    def _keep(self, **fields: Any) -> None:
        """Record a subclass's typed fields in :attr:`context` (the constructor sets them)."""
        self.context.update({k: v for k, v in fields.items() if v is not None})
        for key in fields:
            self.details.pop(key, None)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.message, self.context))

    def __str__(self) -> str:
        return self.message


def _rebuild_error(cls: type[PaimonError], message: str, context: dict[str, Any]) -> PaimonError:
    return cls(message, **context)


class TransientError(PaimonError):
    """An error that may go away when the operation is retried."""


class TerminalError(PaimonError):
    """An error that will happen again on retry: fix the input or the table first."""


# --- catalog -----------------------------------------------------------------


class CatalogError(TerminalError):
    """A catalog operation failed."""


class DatabaseNotFoundError(CatalogError):
    """The database does not exist. ``database`` names the database."""

    def __init__(self, message: str, *, database: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.database = database
        self._keep(database=database)


class DatabaseAlreadyExistsError(CatalogError):
    """The database already exists. ``database`` names the database."""

    def __init__(self, message: str, *, database: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.database = database
        self._keep(database=database)


class DatabaseNotEmptyError(CatalogError):
    """The database still holds tables. ``database`` names the database."""

    def __init__(self, message: str, *, database: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.database = database
        self._keep(database=database)


class TableNotFoundError(CatalogError):
    """The table does not exist."""


class TableAlreadyExistsError(CatalogError):
    """The table already exists."""


# --- schema and options --------------------------------------------------------


class SchemaError(TerminalError):
    """A schema is invalid or a change to it is not allowed: ``column`` names the column (when one)."""

    def __init__(self, message: str, *, column: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.column = column
        self._keep(column=column)


class SchemaMismatchError(SchemaError):
    """Data does not match the table schema and cannot be cast safely."""


class InvalidOptionError(TerminalError):
    """An option key is unknown or its value is invalid: ``key`` names it, ``value`` is the bad value."""

    def __init__(self, message: str, *, key: str | None = None, value: Any = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.key = key
        self.value = value
        self._keep(key=key, value=value)


class UnsupportedTableKindError(InvalidOptionError):
    """A table of a kind paimon_core cannot read, write or maintain (a chain table, blob or vector
    columns, a global index ...): ``feature`` names it, ``what`` says what it is, ``action`` what
    was refused, ``type_name`` the column type that makes it (if one does). Raised before
    anything is changed."""

    def __init__(
        self,
        message: str,
        *,
        feature: str = "",
        what: str = "",
        action: str = "open the table",
        type_name: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.feature = feature
        self.what = what
        self.action = action
        self.type_name = type_name
        self._keep(feature=feature, what=what, action=action, type_name=type_name)


class InvalidArgumentError(TerminalError):
    """An argument to an API call is invalid: ``argument`` names it (when known); ``position``
    is the offset of the fault in a parsed text (a predicate expression)."""

    def __init__(
        self, message: str, *, argument: str | None = None, position: int | None = None, **context: Any
    ) -> None:
        super().__init__(message, **context)
        self.argument = argument
        self.position = position
        self._keep(argument=argument, position=position)


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
    """The requested tag does not exist. ``tag`` names the tag."""

    def __init__(self, message: str, *, tag: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.tag = tag
        self._keep(tag=tag)


class TagAlreadyExistsError(TerminalError):
    """A tag of that name already exists. ``tag`` names the tag."""

    def __init__(self, message: str, *, tag: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.tag = tag
        self._keep(tag=tag)


# --- commit --------------------------------------------------------------------


class CommitError(PaimonError):
    """A commit failed; the table is unchanged."""


class CommitConflictError(CommitError, TransientError):
    """Another writer changed the table in a way that conflicts with this commit.

    ``snapshot_id`` / ``file_name``: the snapshot and file the conflict is about. When a commit of
    two snapshots (APPEND then COMPACT) landed its first half only: ``landed_snapshot_ids`` and
    ``landed_kind`` name what landed, ``failed_kind`` the half that lost."""

    def __init__(
        self,
        message: str,
        *,
        conflict: str | None = None,
        landed_snapshot_ids: Sequence[int] = (),
        landed_kind: str | None = None,
        failed_kind: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        #: the kind of conflict (``file-deletion``, ``bucket-count`` ...)
        self.conflict = conflict
        self.landed_snapshot_ids = tuple(landed_snapshot_ids)
        self.landed_kind = landed_kind
        self.failed_kind = failed_kind
        self._keep(
            conflict=conflict,
            landed_snapshot_ids=self.landed_snapshot_ids or None,
            landed_kind=landed_kind,
            failed_kind=failed_kind,
        )


class CommitRetriesExhaustedError(CommitError, TransientError):
    """The commit lost the race for a snapshot id too many times: ``attempts`` made, the
    ``lost_to_snapshot_ids`` other commits took first, the ``written_files`` it no longer references."""

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 0,
        lost_to_snapshot_ids: Sequence[int] = (),
        written_files: Sequence[str] = (),
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.attempts = attempts
        self.lost_to_snapshot_ids = tuple(lost_to_snapshot_ids)
        self.written_files = tuple(written_files)
        self._keep(
            attempts=attempts,
            lost_to_snapshot_ids=self.lost_to_snapshot_ids,
            written_files=self.written_files,
        )


class LockAcquireTimeoutError(CommitError, TransientError):
    """The commit lock (``lock.enabled``) was not acquired within ``lock-acquire-timeout``:
    ``lock_id`` names the lock."""

    def __init__(self, message: str, *, lock_id: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.lock_id = lock_id
        self._keep(lock_id=lock_id)


class CommitStateUnknownError(CommitError, TransientError):
    """The commit may or may not have been published (I/O failed while publishing).

    Transient: the commit's files are kept, and a retry with the same commit user and identifier
    (the task's deterministic identity) settles it. The retry first looks for a snapshot of that
    identity (``FileStoreCommit.is_committed``, Java's ``filterCommitted``): it commits nothing
    when the first try landed and commits once when it did not. ``snapshot_id``: the snapshot
    whose publish is in doubt; ``landed_snapshot_ids``: snapshots of this commit known to have landed.
    """

    def __init__(self, message: str, *, landed_snapshot_ids: Sequence[int] = (), **context: Any) -> None:
        super().__init__(message, **context)
        self.landed_snapshot_ids = tuple(landed_snapshot_ids)
        self._keep(landed_snapshot_ids=self.landed_snapshot_ids or None)


# --- I/O -------------------------------------------------------------------------


class FileIOError(TransientError, OSError):
    """A storage operation failed and may succeed when retried (a timeout, a dropped connection,
    throttling): ``path`` names the file, ``operation`` the FileIO call (``read``, ``rename`` ...).
    Raised by the FileIO boundary (:func:`paimon_core.io.file_io.wrap_io_error`) with the
    original error as ``__cause__``; also an ``OSError`` (its ``errno``), so best-effort
    handlers of storage errors keep catching it."""

    def __init__(self, message: str, *, operation: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.operation = operation
        self._keep(operation=operation)


class FileIOPermissionError(TerminalError, PermissionError):
    """Storage refused the operation (``PermissionError``, S3 ``AccessDenied`` / 403): retrying
    fails the same way until the credentials or the bucket policy change. Also a
    ``PermissionError``. ``path`` names the file, ``operation`` the FileIO call."""

    def __init__(self, message: str, *, operation: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.operation = operation
        self._keep(operation=operation)


class FileIONotFoundError(TerminalError, FileNotFoundError):
    """A file a FileIO call needs does not exist. Also a ``FileNotFoundError``, so code that
    treats a missing file as an answer (``except FileNotFoundError``) keeps working. ``path``
    names the file, ``operation`` the FileIO call."""

    def __init__(self, message: str, *, operation: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.operation = operation
        self._keep(operation=operation)


class StorageDriverMissingError(TerminalError):
    """No fsspec driver is installed for a warehouse URL's scheme (e.g. s3fs for ``s3://``)."""


class DataFileNotFoundError(TerminalError, FileNotFoundError):
    """A data file a snapshot references is gone (expired or cleaned while being read, or the
    table is damaged). Also a ``FileNotFoundError``, so callers catching that keep working."""


def is_explained(error: BaseException) -> bool:
    """Whether ``error`` already says what it is about: a :class:`PaimonError` other than the
    bare storage errors of the FileIO boundary (:class:`FileIONotFoundError`,
    :class:`FileIOPermissionError`, :class:`FileIOError` with an ``operation``), which callers
    still turn into "the table is damaged" or "expired while read" errors."""
    if isinstance(error, (FileIONotFoundError, FileIOPermissionError)):
        return False
    if isinstance(error, FileIOError) and error.operation is not None:
        return False
    return isinstance(error, PaimonError)


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

    def __init__(self, message: str, *, snapshot_ids: Sequence[int] = (), **context: Any) -> None:
        super().__init__(message, **context)
        #: the snapshots read in turn, each expired before its files were
        self.snapshot_ids = tuple(snapshot_ids)
        self._keep(snapshot_ids=self.snapshot_ids)


class CommitFilesMissingError(CommitError, TransientError):
    """A file the commit adds (data, changelog or index file written by this job) is gone before
    the commit published: nothing was committed. Usually an orphan clean whose ``older_than`` was
    shorter than the write took (``force``). ``path`` is the first missing file; rerun the write."""

    def __init__(self, message: str, *, missing_files: Sequence[str] = (), **context: Any) -> None:
        super().__init__(message, **context)
        self.missing_files = tuple(missing_files)
        self._keep(missing_files=self.missing_files)


class CommitFilesLostError(CommitStateUnknownError, TerminalError):
    """The commit published its snapshot, but files it adds are gone after all (a clean that
    ignored the commit's announcement, or one older than a day): ``missing_files`` names them,
    ``snapshot_ids`` what was published. Reads of the table fail on them until they are restored
    or dropped (``remove_unexisting_files``); the caller must not delete the commit's files.
    Terminal (a retry finds the commit landed and does nothing, the files stay lost), although a
    :class:`CommitStateUnknownError` for callers that keep a commit's files on one."""

    def __init__(
        self,
        message: str,
        *,
        missing_files: Sequence[str] = (),
        snapshot_ids: Sequence[int] = (),
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.missing_files = tuple(missing_files)
        self.snapshot_ids = tuple(snapshot_ids)
        self._keep(missing_files=self.missing_files, snapshot_ids=self.snapshot_ids)


class BranchNotFoundError(TerminalError):
    """The requested branch does not exist (no ``branch/branch-<name>`` directory). ``branch`` names the branch."""

    def __init__(self, message: str, *, branch: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.branch = branch
        self._keep(branch=branch)


class BranchAlreadyExistsError(TerminalError):
    """A branch of that name already exists. ``branch`` names the branch."""

    def __init__(self, message: str, *, branch: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.branch = branch
        self._keep(branch=branch)
