"""Records stored in manifest files, manifest lists and index manifests.

These mirror Java Paimon's ``DataFileMeta``, ``ManifestEntry``,
``ManifestFileMeta``, ``IndexManifestEntry`` and friends field for field (see
each class's ``SCHEMA`` row type in ``org.apache.paimon``). Binary rows
(partitions, keys, stats) are carried as their serialized bytes: a 4-byte
big-endian arity prefix followed by the BinaryRow; other modules decode them.

Every record is a slotted frozen dataclass: cheap to build in bulk when a
planner reads tens of thousands of manifest entries, hashable, and safe to
share between threads.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

#: The serialized empty BinaryRow (arity 0): a 4-byte arity prefix plus an
#: 8-byte null-bit header, all zeros. Java's ``BinaryRow.EMPTY_ROW``.
EMPTY_ROW_BYTES = bytes(12)

#: The members of Java's ``FileEntry.Identifier``, in order: partition, bucket,
#: level, file name, extra files, embedded index, external path.
FileIdentifier = tuple[bytes, int, int, str, tuple[str, ...], bytes | None, str | None]


class FileKind(IntEnum):
    """Whether a manifest entry adds or deletes a file (Java ``FileKind``)."""

    ADD = 0
    DELETE = 1


class FileSource(IntEnum):
    """Why a data file was written (Java ``FileSource``; stored as a tinyint)."""

    APPEND = 0
    COMPACT = 1


@dataclass(frozen=True, slots=True)
class SimpleStats:
    """Min/max values and null counts of some columns (Java ``SimpleStats``).

    ``min_values`` and ``max_values`` are serialized BinaryRows over the
    columns the stats cover; ``null_counts`` holds one (nullable) count per
    column, or is None when the writer stored none at all.
    """

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None

    @staticmethod
    def empty() -> SimpleStats:
        """Stats over no columns, exactly as Java writes them (``EMPTY_STATS``)."""
        return EMPTY_STATS

    def is_empty(self) -> bool:
        """Whether these are the empty stats (no columns covered)."""
        return self == EMPTY_STATS


EMPTY_STATS = SimpleStats(EMPTY_ROW_BYTES, EMPTY_ROW_BYTES, ())


@dataclass(frozen=True, slots=True)
class DataFileMeta:
    """Metadata of one data file (Java ``DataFileMeta``).

    ``creation_time`` is Java's ``_CREATION_TIME`` (Avro ``timestamp-millis``)
    kept as the raw stored long: epoch millis of the writer's *local*
    wall-clock time, exactly as Java's ``LocalDateTime`` based value is stored.
    ``file_source`` is a :class:`FileSource` value (0 append, 1 compact).
    ``write_cols_sequences`` is Java's ``_WRITE_COLS_SEQUENCES`` (the max
    sequence number per written column, for data evolution).
    """

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time: int | None = None
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = None

    @classmethod
    def new_level0(
        cls,
        file_name: str,
        file_size: int,
        row_count: int,
        *,
        value_stats: SimpleStats | None,
        min_sequence_number: int,
        max_sequence_number: int,
        schema_id: int,
        min_key: bytes = EMPTY_ROW_BYTES,
        max_key: bytes = EMPTY_ROW_BYTES,
        key_stats: SimpleStats | None = None,
        delete_row_count: int = 0,
    ) -> DataFileMeta:
        """A file a writer just wrote (Java ``DataFileMeta.forAppend`` / ``create`` at level 0):
        ``file_source`` APPEND, created now. ``value_stats=None``: stats disabled (every
        column's mode is ``none``), written as empty stats over no columns, as Java does.
        Append files leave ``min_key``/``max_key``/``key_stats`` empty."""
        return cls(
            file_name=file_name,
            file_size=file_size,
            row_count=row_count,
            min_key=min_key,
            max_key=max_key,
            key_stats=key_stats if key_stats is not None else SimpleStats.empty(),
            value_stats=value_stats if value_stats is not None else SimpleStats.empty(),
            min_sequence_number=min_sequence_number,
            max_sequence_number=max_sequence_number,
            schema_id=schema_id,
            level=0,
            extra_files=(),
            creation_time=local_creation_millis(),
            delete_row_count=delete_row_count,
            embedded_index=None,
            file_source=int(FileSource.APPEND),
            value_stats_cols=() if value_stats is None else None,
            external_path=None,
        )

    def with_level(self, level: int) -> DataFileMeta:
        """A copy of this file meta at another LSM level."""
        return dataclasses.replace(self, level=level)

    def copy(self, **changes: Any) -> DataFileMeta:
        """A copy with some fields replaced (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def add_row_count(self) -> int | None:
        """Rows added by this file (``row_count - delete_row_count``), if known."""
        if self.delete_row_count is None:
            return None
        return self.row_count - self.delete_row_count


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One ADD or DELETE of a data file in a manifest file (Java ``ManifestEntry``)."""

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> FileIdentifier:
        """The key that pairs an ADD with its DELETE (Java ``FileEntry.Identifier``)."""
        f = self.file
        return (
            self.partition,
            self.bucket,
            f.level,
            f.file_name,
            f.extra_files,
            f.embedded_index,
            f.external_path,
        )


@dataclass(frozen=True, slots=True)
class ManifestFileMeta:
    """One manifest file as listed in a manifest list (Java ``ManifestFileMeta``).

    ``partition_stats`` covers the partition columns of all entries;
    bucket/level/row-id bounds are None when unknown.
    """

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None


@dataclass(frozen=True, slots=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector sits in a DV index file.

    ``offset``/``length`` are Java's ``f1``/``f2``; ``cardinality`` is the
    number of deleted rows (None in files written before it was recorded).
    """

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True, slots=True)
class GlobalIndexMeta:
    """Row range and fields covered by a global index file (Java ``GlobalIndexMeta``)."""

    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    """One index file: a ``HASH`` bucket index, deletion vectors, or a global index."""

    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorMeta, ...] | None = None
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True, slots=True)
class IndexManifestEntry:
    """One ADD or DELETE of an index file in an index manifest."""

    kind: FileKind
    partition: bytes
    bucket: int
    index_file: IndexFileMeta


_EPOCH = dt.datetime(1970, 1, 1)


def local_creation_millis() -> int:
    """Java's ``_CREATION_TIME``: local wall-clock time encoded as if it were UTC millis."""
    return int((dt.datetime.now() - _EPOCH).total_seconds() * 1000)
