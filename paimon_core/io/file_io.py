"""The FileIO contract: every byte paimon_core reads or writes goes through it.

Paths are plain strings: either local absolute paths (``/tmp/wh/db.db/t``) or
URLs (``s3://bucket/wh/db.db/t``, ``memory://wh/...``). Implementations must be
picklable so Spark executors can carry them.
"""

from __future__ import annotations

import abc
import functools
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from paimon_core.exceptions import (
    CorruptFileError,
    FileIOError,
    FileIONotFoundError,
    FileIOPermissionError,
    PaimonError,
)
from paimon_core.io.uri import parse_path

if TYPE_CHECKING:
    import pyarrow.fs as pafs


@dataclass(frozen=True, slots=True)
class FileStatus:
    """One entry of a directory listing."""

    path: str
    size: int
    mtime_millis: int
    is_dir: bool

    @property
    def name(self) -> str:
        """The last path component."""
        return posixpath.basename(self.path.rstrip("/"))


class FileIO(abc.ABC):
    """Storage operations used by paimon_core."""

    #: True when :meth:`try_write_atomic` is a real no-overwrite publish that two
    #: processes (or machines) can race on safely.
    atomic_publish_is_safe: bool = True
    #: ``try_write_atomic`` returning False proves another writer created the file (a local
    #: link/O_EXCL). False for stores whose client may retry a request that already landed (HTTP
    #: conditional PUTs): "exists" may then be this writer's own file, still in flight.
    publish_taken_is_definite: bool = False

    @abc.abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """Return the whole content of a file (FileNotFoundError if missing)."""

    @abc.abstractmethod
    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        """Write a whole file. The content appears all at once or not at all.

        Raises FileExistsError when the file exists and ``overwrite`` is False.
        """

    @abc.abstractmethod
    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """Publish a file only if no file of that name exists.

        Returns True when this call created the file, False when it already
        existed. Never overwrites, never leaves a partial file at ``path``.
        """

    @abc.abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file or directory exists."""

    @abc.abstractmethod
    def delete(self, path: str, *, recursive: bool = False) -> bool:
        """Delete a file (or a directory with ``recursive``). False if it was missing."""

    @abc.abstractmethod
    def list_status(self, path: str) -> list[FileStatus]:
        """Entries directly under a directory; empty when the directory is missing."""

    @abc.abstractmethod
    def mkdirs(self, path: str) -> None:
        """Create a directory and its parents (no-op on object stores)."""

    @abc.abstractmethod
    def open_input(self, path: str) -> IO[bytes]:
        """A seekable binary stream for reading."""

    @abc.abstractmethod
    def open_output(self, path: str) -> IO[bytes]:
        """A binary stream for writing a new file (overwrites)."""

    @abc.abstractmethod
    def get_file_size(self, path: str) -> int:
        """Size of a file in bytes."""

    @abc.abstractmethod
    def arrow_filesystem(self) -> pafs.FileSystem:
        """A pyarrow filesystem over the same storage (for Parquet/ORC I/O)."""

    def arrow_path(self, path: str) -> str:
        """Translate one of our paths into a path for :meth:`arrow_filesystem`."""
        return strip_scheme(path)

    def read_text(self, path: str) -> str:
        """Read a UTF-8 file (:class:`CorruptFileError` naming it when it is not UTF-8)."""
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptFileError(f"File {path} is not UTF-8 text: {e}", path=path) from e

    def overwrite_text(self, path: str, text: str) -> None:
        """Replace a small UTF-8 file (hint files such as LATEST) atomically."""
        self.write_bytes(path, text.encode("utf-8"), overwrite=True)

    def write_hint(self, path: str, text: str) -> None:
        """Replace an advisory file that readers verify (the LATEST hint) atomically, without
        forcing it to stable storage: losing it in a crash only costs a listing."""
        self.overwrite_text(path, text)

    @contextmanager
    def durable_together(self) -> Iterator[None]:
        """Files written in the block are durable when the block ends without an exception,
        though not necessarily when each write returns: a store that forces each file to stable
        storage may force them together at the end (the local file system ``fsync`` s them
        concurrently, which the journal commits as one). Nothing may reference them until then.
        On an object store a write is durable when it returns: the block changes nothing."""
        yield

    def list_files(self, path: str) -> list[FileStatus]:
        """Files (not directories) directly under a directory."""
        return [s for s in self.list_status(path) if not s.is_dir]

    def list_dirs(self, path: str) -> list[FileStatus]:
        """Directories directly under a directory."""
        return [s for s in self.list_status(path) if s.is_dir]

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` itself is a symbolic link (never on an object store). Listings that
        lead to deletions never descend into one (see :func:`paimon_core.path_confinement.link_below`)."""
        return False

    def rename(self, src: str, dst: str) -> None:
        """Move a file to a new name that must not exist yet (``FileExistsError`` otherwise).
        A rename on a file system; on an object store a server-side copy and a delete."""
        raise NotImplementedError(f"{type(self).__name__} cannot rename files")


#: S3 / botocore ``ClientError`` codes of a refused request (credentials, bucket policy)
_DENIED_CODES = frozenset(
    {"AccessDenied", "403", "Forbidden", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch"}
)
#: ... and of a missing key or bucket
_MISSING_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "404", "NotFound"})
#: OSErrors that are an answer the caller handles (a lost no-overwrite race, a path of the wrong kind)
_PASS_THROUGH = (FileExistsError, IsADirectoryError, NotADirectoryError)

F = TypeVar("F", bound=Callable[..., Any])


def _client_error_code(error: BaseException) -> str | None:
    """The ``Error.Code`` of a botocore ``ClientError`` (or an error carrying its ``response``)."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code is not None else None


def classify_io_error(error: BaseException, path: str, operation: str) -> BaseException | None:
    """The typed error a storage failure of ``operation`` on ``path`` becomes, or None to keep it.

    ``PermissionError`` and S3 ``AccessDenied`` / 403: :class:`FileIOPermissionError` (terminal,
    also a ``PermissionError``); ``FileNotFoundError`` and ``NoSuchKey`` / 404:
    :class:`FileIONotFoundError` (terminal, also a ``FileNotFoundError``); any other ``OSError``
    (timeouts, dropped connections, a full disk ...): :class:`FileIOError` (transient). Errors
    that are already typed (:class:`PaimonError`), ``FileExistsError`` (a lost race) and
    ``Is/NotADirectoryError`` stay as they are, as does anything that is not an I/O error."""
    if isinstance(error, (PaimonError, *_PASS_THROUGH)):
        return None
    code = _client_error_code(error)
    message = f"{operation} {path}: {type(error).__name__}: {error}"
    typed: PaimonError
    if isinstance(error, PermissionError) or code in _DENIED_CODES:
        typed = FileIOPermissionError(message, path=path, operation=operation)
    elif isinstance(error, FileNotFoundError) or code in _MISSING_CODES:
        typed = FileIONotFoundError(message, path=path, operation=operation)
    elif isinstance(error, OSError):
        typed = FileIOError(message, path=path, operation=operation)
    else:
        return None
    if isinstance(typed, OSError):  # keep what code reading an OSError looks at
        typed.errno = error.errno if isinstance(error, OSError) else None
        typed.filename = (error.filename if isinstance(error, OSError) else None) or path
    return typed


def wrap_io_error(operation: str) -> Callable[[F], F]:
    """Decorate a FileIO method whose first argument is the path: its storage errors are raised
    as typed errors (:func:`classify_io_error`), the original as ``__cause__``. Used at the
    FileIO boundary (:class:`~paimon_core.io.local_io.LocalFileIO`,
    :class:`~paimon_core.io.fsspec_io.FsspecFileIO`), so a permission error is not retried."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(self: object, path: str, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, path, *args, **kwargs)
            except Exception as e:
                typed = classify_io_error(e, path, operation)
                if typed is None:
                    raise
                raise typed from e

        return cast(F, wrapper)

    return decorate


def strip_scheme(path: str) -> str:
    """``s3://b/k`` -> ``b/k``; ``file:/x``, ``file:///x``, ``file://localhost/x`` -> ``/x``;
    plain paths unchanged (parsed by :func:`paimon_core.io.uri.parse_path`, which refuses a
    ``file:`` URI naming another host)."""
    parsed = parse_path(path)
    return parsed.authority + parsed.path


def join(*parts: str) -> str:
    """Join path parts with ``/``, keeping a URL scheme intact."""
    out = parts[0].rstrip("/") if parts[0] not in ("/",) else "/"
    for p in parts[1:]:
        p = p.strip("/")
        if not p:
            continue
        out = out + p if out.endswith("/") else out + "/" + p
    return out
