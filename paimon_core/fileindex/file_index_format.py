"""The container of a data file's indexes (Java's ``FileIndexFormat``, version 1).

::

    magic (8 bytes long) | version (4 bytes int) | head length (4 bytes int)
    column number (4 bytes int)
    per column: name (writeUTF) | index number (4 bytes int)
                per index: type (writeUTF) | start (4 bytes int) | length (4 bytes int)
    redundant length (4 bytes int, 0)
    BODY: the indexes' bytes, in header order

All big-endian. ``start`` is from the beginning of the file; an index whose writer saw no record
is stored as start -1, length 0 (Java's ``EMPTY_INDEX_FLAG``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from paimon_core.exceptions import CorruptFileError
from paimon_core.fileindex.file_index_result import REMAIN, SKIP, FileIndexResult
from paimon_core.fileindex.file_indexer import FileIndexReader, UnsupportedFileIndexError, create_file_indexer
from paimon_core.fileindex.java_compat import JavaHashMap, read_modified_utf8, string_map, write_modified_utf8
from paimon_core.schema.data_types import DataType

__all__ = [
    "EMPTY_INDEX_FLAG",
    "MAGIC",
    "EmptyFileIndexReader",
    "VERSION",
    "ColumnIndexes",
    "FileIndexFormatReader",
    "write_column_indexes",
]

MAGIC = 1493475289347502
VERSION = 1
EMPTY_INDEX_FLAG = -1


class EmptyFileIndexReader(FileIndexReader):
    """An index whose writer saw no record (Java's ``EmptyFileIndexReader``): the file has no row
    for it, so no value matches."""

    SKIPS = frozenset(
        ("equal", "in", "is_not_null", "starts_with", "ends_with", "contains",
         "less_than", "less_or_equal", "greater_than", "greater_or_equal")
    )  # fmt: skip

    def visit(self, function: str, literals: Sequence[object]) -> FileIndexResult:
        return SKIP if function in self.SKIPS else REMAIN


#: ``[(column, [(index type, bytes or None when empty)...])...]``, in the order to write
ColumnIndexes = Sequence[tuple[str, Sequence[tuple[str, bytes | None]]]]


def write_column_indexes(indexes: ColumnIndexes) -> bytes:
    """The index file holding ``indexes`` (Java's ``Writer.writeColumnIndexes``)."""
    body = bytearray()
    info: list[tuple[bytes, list[tuple[bytes, int, int]]]] = []
    for column, by_type in indexes:
        entries = []
        for index_type, data in by_type:
            if data is None:
                entries.append((write_modified_utf8(index_type), EMPTY_INDEX_FLAG, 0))
            else:
                entries.append((write_modified_utf8(index_type), len(body), len(data)))
                body += data
        info.append((write_modified_utf8(column), entries))
    head_length = (
        8 + 4 + 4 + 4
        + sum(len(entries) for _, entries in info) * 8
        + len(info) * 4
        + 4
        + sum(len(name) + sum(len(t) for t, _, _ in entries) for name, entries in info)
    )  # fmt: skip
    head = bytearray(struct.pack(">qii", MAGIC, VERSION, head_length))
    head += struct.pack(">i", len(info))
    for name, entries in info:
        head += name + struct.pack(">i", len(entries))
        for t, start, length in entries:
            head += t + struct.pack(
                ">ii", EMPTY_INDEX_FLAG if start == EMPTY_INDEX_FLAG else start + head_length, length
            )
    head += struct.pack(">i", 0)  # redundant length
    assert len(head) == head_length
    return bytes(head + body)


class FileIndexFormatReader:
    """Reads the header of an index file and hands out readers of its indexes (Java's ``Reader``)."""

    def __init__(self, data: bytes, *, path: str | None = None) -> None:
        self.data = data
        self.path = path
        what = path or "an embedded file index"
        try:
            magic, version, head_length = struct.unpack_from(">qii", data, 0)
            if magic != MAGIC:
                raise CorruptFileError(f"{what} is not a file index file (magic {magic})", path=path)
            if version != VERSION:
                raise CorruptFileError(
                    f"{what}: file index version {version} is not in the supported list [{VERSION}]",
                    path=path,
                )
            #: column -> index type -> (start, length), in Java's HashMap order
            self.header: JavaHashMap[str, JavaHashMap[str, tuple[int, int]]] = string_map()
            (columns,) = struct.unpack_from(">i", data, 16)
            pos = 20
            for _ in range(columns):
                column, pos = read_modified_utf8(data, pos)
                (n,) = struct.unpack_from(">i", data, pos)
                pos += 4
                types = self.header.compute_if_absent(column, string_map)
                for _ in range(n):
                    index_type, pos = read_modified_utf8(data, pos)
                    start, length = struct.unpack_from(">ii", data, pos)
                    pos += 8
                    if start != EMPTY_INDEX_FLAG and (start < head_length or start + length > len(data)):
                        raise CorruptFileError(
                            f"{what}: index {column}/{index_type} lies outside the file", path=path
                        )
                    types.put(index_type, (start, length))
        except (struct.error, ValueError, IndexError) as e:
            raise CorruptFileError(f"Cannot read {what}: {e}", path=path) from e

    def metas(self) -> list[tuple[str, str, int, bool]]:
        """``(column, index type, size in bytes, empty)`` of every index (Java's ``indexMetas``)."""
        return [
            (c, t, ln, s == EMPTY_INDEX_FLAG)
            for c, types in self.header.items()
            for t, (s, ln) in types.items()
        ]

    def read_all(self) -> JavaHashMap[str, JavaHashMap[str, bytes | None]]:
        """Every index's bytes (None for an empty one), by column and type."""
        out: JavaHashMap[str, JavaHashMap[str, bytes | None]] = string_map()
        for column, types in self.header.items():
            for index_type, (start, length) in types.items():
                data = None if start == EMPTY_INDEX_FLAG else self.data[start : start + length]
                out.compute_if_absent(column, string_map).put(index_type, data)
        return out

    def column_readers(self, column: str, data_type: DataType) -> list[FileIndexReader]:
        """Readers of the indexes of ``column`` (of ``data_type``) that paimon_core can read;
        an empty index reads nothing (Java's ``EmptyFileIndexReader``: the column was all absent)."""
        types = self.header.get(column)
        if types is None:
            return []
        out: list[FileIndexReader] = []
        for index_type, (start, length) in types.items():
            if start == EMPTY_INDEX_FLAG:
                out.append(EmptyFileIndexReader())
                continue
            try:
                indexer = create_file_indexer(index_type, data_type, {})
            except UnsupportedFileIndexError:
                continue  # an index Java wrote that we cannot read: it decides nothing
            except Exception:  # noqa: BLE001 - an unknown type or an unexpected column type never prunes
                continue
            out.append(indexer.create_reader(self.data[start : start + length]))
        return out
