"""The index of one data file, written with it (Java's ``io.DataFileIndexWriter``).

For each configured (column, index type) a :class:`~paimon_core.fileindex.file_indexer.FileIndexWriter`
takes the column's values of every batch written to the data file; at the end the indexes go into
one :mod:`~paimon_core.fileindex.file_index_format` container. A container of at most
``file-index.in-manifest-threshold`` bytes is embedded in the file's manifest entry
(``_EMBEDDED_FILE_INDEX``); a larger one is written next to the data file as
``<data file name>.index`` and named in the entry's ``_EXTRA_FILES``.

Columns and index types are visited in the order Java's ``HashMap`` s visit them, so the bytes
equal Java's for the same rows. Index types Java writes that paimon_core does not (``bsi``,
``range-bitmap``) are left out of the container, with a warning: readers then keep the file for
predicates on that index (correct, only less selective); ``rewrite_file_index`` refuses them.
A changelog file gets no index (Java's ``KeyValueFileWriterFactory``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.fileindex.file_index_format import write_column_indexes
from paimon_core.fileindex.file_index_options import FileIndexColumn, FileIndexOptions
from paimon_core.fileindex.file_indexer import FileIndexWriter, UnsupportedFileIndexError, create_file_indexer
from paimon_core.fileindex.java_compat import JavaHashMap, string_map
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.schema.data_types import DataField, MapType

__all__ = [
    "INDEX_PATH_SUFFIX",
    "DataFileIndexResult",
    "DataFileIndexWriter",
    "file_index_options_of",
    "store_file_index",
]

logger = logging.getLogger(__name__)

#: Java's ``DataFilePathFactory.INDEX_PATH_SUFFIX``
INDEX_PATH_SUFFIX = ".index"

_warned: set[str] = set()


def file_index_options_of(options: Mapping[str, str]) -> FileIndexOptions | None:
    """The table's file index options, or None when no index is configured."""
    if not any(k.startswith("file-index.") and k.endswith(".columns") for k in options):
        return None
    parsed = FileIndexOptions(options)
    return None if parsed.is_empty() else parsed


class _Maintainer:
    """The index of one type over one top-level column (Java's ``FileIndexMaintainer``)."""

    def __init__(self, column: str, index_type: str, writer: FileIndexWriter) -> None:
        self.column = column
        self.index_type = index_type
        self.writer = writer

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        self.writer.write_array(batch.column(self.column))

    def serialized(self) -> list[tuple[str, bytes | None]]:
        return [(self.column, self.writer.serialized_bytes())]


class _MapMaintainer:
    """The indexes of one type over keys of one MAP column (Java's ``MapFileIndexMaintainer``):
    each row gives the key's value, or null when the map (or the key) is absent."""

    def __init__(self, column: str, index_type: str, field: DataField, options: Mapping[str, str]) -> None:
        self.column = column
        self.index_type = index_type
        assert isinstance(field.type, MapType)
        self.value_type = field.type.value
        self.options = dict(options)
        self.writers: JavaHashMap[str, FileIndexWriter] = string_map()

    def add(self, key: str, options: Mapping[str, str]) -> None:
        indexer = create_file_indexer(self.index_type, self.value_type, {**self.options, **options})
        self.writers.put(key, indexer.create_writer())

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        column = batch.column(self.column)
        for key, writer in self.writers.items():
            writer.write_array(pc.map_lookup(column, pa.scalar(key, pa.string()), "first"))

    def serialized(self) -> list[tuple[str, bytes | None]]:
        out: JavaHashMap[str, bytes | None] = string_map()
        for key, writer in self.writers.items():
            out.put(f"{self.column}[{key}]", None if writer.empty else writer.serialized_bytes())
        return out.items()


@dataclass(frozen=True)
class DataFileIndexResult:
    """Where a data file's index went: embedded bytes or an extra file's name (or neither)."""

    embedded_index: bytes | None = None
    extra_file: str | None = None

    def apply(self, meta: DataFileMeta) -> DataFileMeta:
        """``meta`` carrying this index."""
        if self.embedded_index is None and self.extra_file is None:
            return meta
        extra = (*meta.extra_files, self.extra_file) if self.extra_file else meta.extra_files
        return meta.copy(extra_files=extra, embedded_index=self.embedded_index)


class DataFileIndexWriter:
    """Builds the index container of one data file from the batches written to it."""

    def __init__(
        self,
        fields: Sequence[DataField],
        options: FileIndexOptions,
        *,
        col_name_mapping: Mapping[str, str] | None = None,
    ) -> None:
        """``fields``: the file's columns; ``col_name_mapping``: table column name -> the file's
        name for it (an older schema's file; a column the file lacks is skipped)."""
        by_name = {f.name: f for f in fields}
        self.options = options
        self._maintainers: JavaHashMap[str, JavaHashMap[str, _Maintainer | _MapMaintainer]] = string_map()
        for column, types in options.columns:
            name = column.name
            if col_name_mapping is not None:
                mapped = col_name_mapping.get(name)
                if mapped is None:
                    continue
                name = mapped
            field = by_name.get(name)
            if field is None:
                raise UnsupportedFileIndexError(f"{name} does not exist in column fields", key=None)
            for index_type, type_options in types:
                try:
                    self._add(column, name, field, index_type, type_options)
                except UnsupportedFileIndexError as e:
                    if index_type not in _warned:
                        _warned.add(index_type)
                        logger.warning("Data files are written without their '%s' index: %s", index_type, e)

    def _add(
        self,
        column: FileIndexColumn,
        name: str,
        field: DataField,
        index_type: str,
        type_options: Mapping[str, str],
    ) -> None:
        by_column = self._maintainers.compute_if_absent(index_type, string_map)
        existing = by_column.get(name)
        if column.nested is not None:
            if not isinstance(field.type, MapType):
                raise UnsupportedFileIndexError(
                    f"Column {name} is nested column, but is not map type. Only should map type yet.",
                    key=None,
                )
            if existing is None:
                existing = _MapMaintainer(
                    name, index_type, field, self.options.map_top_level_options(name, index_type)
                )
                by_column.put(name, existing)
            assert isinstance(existing, _MapMaintainer)
            existing.add(column.nested, type_options)
        elif existing is None:
            writer = create_file_indexer(index_type, field.type, type_options).create_writer()
            by_column.put(name, _Maintainer(name, index_type, writer))

    @classmethod
    def create(
        cls,
        fields: Sequence[DataField],
        options: FileIndexOptions | None,
        *,
        col_name_mapping: Mapping[str, str] | None = None,
    ) -> DataFileIndexWriter | None:
        """A writer, or None when no index is configured (Java's ``create``)."""
        if options is None or options.is_empty():
            return None
        return cls(fields, options, col_name_mapping=col_name_mapping)

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Index the rows of ``batch`` (the rows just written to the data file, in order)."""
        for by_column in self._maintainers.values():
            for maintainer in by_column.values():
                maintainer.write(batch)

    def serialize_maintainers(self) -> JavaHashMap[str, JavaHashMap[str, bytes | None]]:
        """column -> index type -> bytes (Java's ``serializeMaintainers``)."""
        out: JavaHashMap[str, JavaHashMap[str, bytes | None]] = string_map()
        for index_type, by_column in self._maintainers.items():
            for maintainer in by_column.values():
                for column, data in maintainer.serialized():
                    out.compute_if_absent(column, string_map).put(index_type, data)
        return out

    def to_bytes(self) -> bytes:
        """The index container (Java's ``close``: written even when no maintainer remains)."""
        return write_column_indexes([(c, types.items()) for c, types in self.serialize_maintainers().items()])

    def finish(self, file_io: FileIO, data_file_path: str) -> DataFileIndexResult:
        """Store the index of the data file at ``data_file_path`` (see :func:`store_file_index`)."""
        return store_file_index(
            file_io, data_file_path + INDEX_PATH_SUFFIX, self.to_bytes(), self.options.in_manifest_threshold
        )


def store_file_index(file_io: FileIO, index_path: str, data: bytes, threshold: int) -> DataFileIndexResult:
    """Embed ``data`` when it is at most ``threshold`` bytes, else write it to ``index_path``
    (refusing to overwrite: an index file, once named by a snapshot, never changes)."""
    if len(data) > threshold:
        file_io.write_bytes(index_path, data, overwrite=False)
        return DataFileIndexResult(extra_file=index_path.rsplit("/", 1)[-1])
    return DataFileIndexResult(embedded_index=data)
