"""Shared pieces of the data-file formats: the writer protocol, stream handling, read guards."""

from __future__ import annotations

import abc
import logging
import posixpath
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from paimon_core.exceptions import CorruptFileError, PaimonError, SchemaMismatchError

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO

logger = logging.getLogger(__name__)

#: Errors that never mean "bad bytes": bugs and resource exhaustion.
_NOT_CONTENT_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError,
    NameError,
    AssertionError,
    MemoryError,
    RecursionError,
)
#: OSErrors that are about storage, not content: never reported as corruption.
_STORAGE_ERRORS: tuple[type[BaseException], ...] = (
    FileNotFoundError,
    PermissionError,
    IsADirectoryError,
    ConnectionError,
    TimeoutError,
)


class FormatWriter(Protocol):
    """Writes one data file; obtained from :func:`paimon_core.format.file_format.open_writer`."""

    def write(self, data: pa.RecordBatch | pa.Table) -> None:
        """Append rows (conformed to the writer's schema with safe casts)."""

    def bytes_written(self) -> int:
        """Estimated file size so far; cheap, meant to be checked after every batch for rolling."""

    @property
    def num_rows(self) -> int:
        """Rows written so far."""

    def close(self) -> int:
        """Finish the file and return its final size in bytes."""

    def abort(self) -> None:
        """Give up: close quietly and delete the partial file."""


class BaseFormatWriter(abc.ABC):
    """Lifecycle shared by the format writers: open stream, conform input, abort on failure."""

    def __init__(self, file_io: FileIO, path: str, schema: pa.Schema) -> None:
        self.file_io = file_io
        self.path = path
        self.schema = schema
        self._rows = 0
        self._closed = False
        self._final_size: int | None = None
        parent = posixpath.dirname(path)
        if parent:
            file_io.mkdirs(parent)
        self._sink: pa.NativeFile = file_io.arrow_filesystem().open_output_stream(
            file_io.arrow_path(path), compression=None
        )

    @property
    def num_rows(self) -> int:
        """Rows written so far."""
        return self._rows

    def write(self, data: pa.RecordBatch | pa.Table) -> None:
        """Append a batch or table.

        Input that cannot be conformed to the schema raises :class:`SchemaMismatchError` and leaves
        the writer usable; a failure while writing deletes the partial file and re-raises.
        """
        if self._closed:
            raise PaimonError(f"Writer for {self.path} is already closed", path=self.path)
        from paimon_core.format.conform import conform_to_schema

        batches = data.to_batches() if isinstance(data, pa.Table) else [data]
        # Conform first: bad input raises without spoiling the file written so far.
        conformed = [conform_to_schema(b, self.schema) for b in batches if b.num_rows]
        try:
            for batch in conformed:
                self._write_batch(batch)
                self._rows += batch.num_rows
        except BaseException:
            self.abort()
            raise

    def close(self) -> int:
        """Finish the file and return its size."""
        if self._final_size is not None:
            return self._final_size
        if self._closed:
            raise PaimonError(f"Writer for {self.path} was aborted", path=self.path)
        try:
            self._finish()
            size = int(self._sink.tell())  # no extra metadata request on object stores
            self._sink.close()
            self._closed = True
        except BaseException:
            self.abort()
            raise
        self._final_size = size
        return size

    def abort(self) -> None:
        """Close quietly and delete the partial file."""
        if self._final_size is not None:
            return
        self._closed = True
        try:
            self._abort_format()
        except Exception:  # already failing; the original error matters
            logger.debug("Ignoring error while aborting writer of %s", self.path, exc_info=True)
        try:
            if not self._sink.closed:
                self._sink.close()
        except Exception:
            logger.debug("Ignoring error while closing %s", self.path, exc_info=True)
        try:
            self.file_io.delete(self.path)
        except Exception:
            logger.warning("Could not delete partial data file %s", self.path, exc_info=True)

    @abc.abstractmethod
    def _write_batch(self, batch: pa.RecordBatch) -> None:
        """Write one batch already conformed to :attr:`schema`."""

    @abc.abstractmethod
    def _finish(self) -> None:
        """Flush everything and write the footer (the sink is closed by the caller)."""

    @abc.abstractmethod
    def _abort_format(self) -> None:
        """Release format resources without producing a valid file (best effort)."""

    @abc.abstractmethod
    def bytes_written(self) -> int:
        """Estimated file size so far."""


def corrupt(path: str, err: BaseException) -> CorruptFileError:
    """The error for a data file whose content cannot be decoded."""
    return CorruptFileError(f"Cannot read data file {path}: {type(err).__name__}: {err}", path=path)


def is_decode_error(err: BaseException) -> bool:
    """Whether an exception raised while decoding a file means the file is corrupt.

    Decoders fail in many ways on bad bytes (pyarrow's ArrowInvalid/OSError, fastavro's
    ValueError/EOFError/SystemError, codec errors such as ``ZstdError``), so everything counts
    except our own errors, storage errors (missing file, permissions, network) and errors that
    indicate a bug or resource exhaustion rather than bad content.
    """
    if isinstance(err, (PaimonError, *_STORAGE_ERRORS, *_NOT_CONTENT_ERRORS)):
        return False
    return isinstance(err, Exception)


def guard_read(path: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Drop empty batches; re-raise decoding failures as :class:`CorruptFileError` naming ``path``."""
    try:
        for batch in batches:
            if batch.num_rows:
                yield batch
    except Exception as e:
        if is_decode_error(e):
            raise corrupt(path, e) from e
        raise


def check_columns(path: str, file_schema: pa.Schema, columns: Sequence[str] | None) -> list[str]:
    """The columns to read; a requested column missing from the file is a :class:`SchemaMismatchError`."""
    if columns is None:
        return list(file_schema.names)
    present = set(file_schema.names)
    missing = [c for c in columns if c not in present]
    if missing:
        raise SchemaMismatchError(
            f"Columns {missing} are not in data file {path} (file columns: {file_schema.names})",
            path=path,
            missing=missing,
        )
    return list(columns)


def slice_batches(batch: pa.RecordBatch, batch_size: int) -> Iterator[pa.RecordBatch]:
    """Zero-copy slices of ``batch`` with at most ``batch_size`` rows."""
    n = batch.num_rows
    if n <= batch_size:
        if n:
            yield batch
        return
    for start in range(0, n, batch_size):
        yield batch.slice(start, batch_size)


def filter_batch(batch: pa.RecordBatch, arrow_filter: object) -> pa.RecordBatch:
    """Keep the rows of ``batch`` matching a ``pyarrow.compute.Expression``."""
    return batch.filter(arrow_filter)
