"""The index SPI (Java's ``FileIndexer``, ``FileIndexWriter``, ``FileIndexReader`` and
``FileIndexerFactoryUtils``): one index type over one column of one data file.

A writer takes the column's values batch by batch (Arrow arrays; a null is a record too) and
serializes the index; a reader answers predicate leaves on those bytes. :func:`create_file_indexer`
finds the implementation of a type: ``bloom-filter`` and ``bitmap`` here; Java's ``bsi`` and
``range-bitmap`` are known but not written by paimon_core (:class:`UnsupportedFileIndexError`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import InvalidOptionError
from paimon_core.fileindex.file_index_options import JAVA_INDEX_TYPES, unsupported_type_reason
from paimon_core.fileindex.file_index_result import REMAIN, FileIndexResult
from paimon_core.schema.data_types import DataType

__all__ = [
    "FileIndexReader",
    "FileIndexWriter",
    "FileIndexer",
    "UnsupportedFileIndexError",
    "create_file_indexer",
    "supported_index_types",
]


class UnsupportedFileIndexError(InvalidOptionError):
    """An index type Java writes that paimon_core cannot write or read."""


class FileIndexWriter(ABC):
    """Collects one column's values of one data file (Java's ``FileIndexWriter``)."""

    def __init__(self) -> None:
        self.empty = True

    def write_array(self, values: pa.Array | pa.ChunkedArray) -> None:
        """One record per element, nulls included (Java's ``writeRecord`` for each row)."""
        if len(values):
            self.empty = False
            self.write(values)

    @abstractmethod
    def write(self, values: pa.Array | pa.ChunkedArray) -> None:
        """Add the records (never empty)."""

    @abstractmethod
    def serialized_bytes(self) -> bytes:
        """The index, as Java's writer serializes it."""


class FileIndexReader:
    """Answers predicate leaves on one column's index (Java's ``FileIndexReader``): anything it
    cannot decide is :data:`REMAIN`."""

    def visit(self, function: str, literals: Sequence[Any]) -> FileIndexResult:
        """The result of leaf ``function(column, *literals)`` (literals are internal values)."""
        if function == "equal":
            return self.visit_equal(literals[0])
        if function == "not_equal":
            return self.visit_not_equal(literals[0])
        if function in ("in", "not_in"):
            one = self.visit_equal if function == "in" else self.visit_not_equal
            result: FileIndexResult | None = None
            for literal in literals:
                r = one(literal)
                result = r if result is None else result.or_(r)
            return REMAIN if result is None else result
        if function == "is_null":
            return self.visit_is_null()
        if function == "is_not_null":
            return self.visit_is_not_null()
        return REMAIN

    def visit_equal(self, literal: Any) -> FileIndexResult:
        return REMAIN

    def visit_not_equal(self, literal: Any) -> FileIndexResult:
        return REMAIN

    def visit_is_null(self) -> FileIndexResult:
        return REMAIN

    def visit_is_not_null(self) -> FileIndexResult:
        return REMAIN


class FileIndexer(ABC):
    """One index type for one column type with its options (Java's ``FileIndexer``)."""

    @abstractmethod
    def create_writer(self) -> FileIndexWriter: ...

    @abstractmethod
    def create_reader(self, data: bytes) -> FileIndexReader:
        """A reader of the index bytes ``data`` (this index's slice of the index file)."""


def _bloom(data_type: DataType, options: Mapping[str, str]) -> FileIndexer:
    from paimon_core.fileindex.bloomfilter.bloom_filter_file_index import BloomFilterFileIndex

    return BloomFilterFileIndex(data_type, options)


def _bitmap(data_type: DataType, options: Mapping[str, str]) -> FileIndexer:
    from paimon_core.fileindex.bitmap.bitmap_file_index import BitmapFileIndex

    return BitmapFileIndex(data_type, options)


_FACTORIES: dict[str, Callable[[DataType, Mapping[str, str]], FileIndexer]] = {
    "bloom-filter": _bloom,
    "bitmap": _bitmap,
}


def supported_index_types() -> tuple[str, ...]:
    """The index types paimon_core writes and reads."""
    return tuple(_FACTORIES)


def create_file_indexer(index_type: str, data_type: DataType, options: Mapping[str, str]) -> FileIndexer:
    """The indexer of ``index_type`` for a column of ``data_type`` (Java's ``FileIndexer.create``)."""
    factory = _FACTORIES.get(index_type)
    if factory is None:
        if index_type in JAVA_INDEX_TYPES:
            raise UnsupportedFileIndexError(
                f"The '{index_type}' file index is not supported by paimon_core (it writes and reads "
                f"{', '.join(_FACTORIES)})",
                key=f"file-index.{index_type}.columns",
            )
        raise InvalidOptionError(
            f"Can't find file index for type: {index_type}", key=f"file-index.{index_type}.columns"
        )
    reason = unsupported_type_reason(index_type, data_type)
    if reason is not None:
        raise InvalidOptionError(
            f"Type '{data_type}' is not supported by '{index_type}' index: {reason}",
            key=f"file-index.{index_type}.columns",
        )
    return factory(data_type, options)
