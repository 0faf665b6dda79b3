"""Rebuild the index of one existing data file (Java's ``index.FileIndexProcessor``).

The file's rows are read again (its own columns, in its own schema: no deletion vector, so row
positions are the file's), the configured indexes are computed, and:

* the indexes of an existing index file for columns and types still configured are kept, the
  recomputed ones replace them, the others are dropped (Java's ``remove unnecessary``);
* the new container goes into the manifest entry when it is at most
  ``file-index.in-manifest-threshold`` bytes, else into a new index file next to the data file:
  ``<data file>.index`` when the file had none, else the old name with its number raised
  (``data-x.parquet-1.index``, Java's ``createNewFileIndexFilePath``); an existing file is never
  overwritten (older snapshots and tags may name it), the number goes up instead;
* no index configured: the index is dropped.

:meth:`FileIndexProcessor.process` returns the new :class:`DataFileMeta` (the same object when
nothing changes: the same embedded bytes, or an index file with the same bytes, which is kept
rather than copied under a new name) and the path of the index file it wrote, if any.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.exceptions import CorruptFileError
from paimon_core.fileindex.data_file_index_writer import INDEX_PATH_SUFFIX, DataFileIndexWriter
from paimon_core.fileindex.file_index_format import FileIndexFormatReader, write_column_indexes
from paimon_core.fileindex.file_index_options import FileIndexOptions
from paimon_core.fileindex.java_compat import JavaHashMap, string_map
from paimon_core.io.data_file_reader import DataFileReader, partition_scalars
from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
from paimon_core.schema.data_types import DataField

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["FileIndexProcessor", "ProcessedFile", "new_file_index_file_name"]

#: attempts at a fresh index file name before giving up (each is an exclusive create)
MAX_NAME_ATTEMPTS = 1000


def new_file_index_file_name(name: str) -> str:
    """Java's ``createNewFileIndexFilePath``: ``a-1.index`` -> ``a-2.index``; a name without a
    number (``data-x-0.parquet.index``) gets ``-1`` before the suffix (``data-x-0.parquet-1.index``)."""
    dot = name.rfind(".")
    dash = name.rfind("-")
    if dash != -1 and dot > dash:
        number = name[dash + 1 : dot]
        if number.isdigit():
            return f"{name[: dash + 1]}{int(number) + 1}{INDEX_PATH_SUFFIX}"
    return f"{name[:dot]}-1{INDEX_PATH_SUFFIX}"


@dataclass(frozen=True)
class _SchemaInfo:
    """What a file of one schema needs (Java's ``SchemaInfo``)."""

    fields: tuple[DataField, ...]  # the file's columns to read (its own names and types)
    col_name_mapping: dict[str, str] | None  # table name -> the file's name (None: same schema)
    full_names: frozenset[str]  # configured columns the file has, as stored (``m[k]`` for map keys)
    index_types: dict[str, frozenset[str]]  # full name -> configured index types


@dataclass(frozen=True)
class ProcessedFile:
    """A file after :meth:`FileIndexProcessor.process`: its meta, and the index file written."""

    meta: DataFileMeta
    written_index: str | None = None
    #: the index file a ``write=False`` run would write (nothing is written)
    planned_index: str | None = None

    def changed(self, before: DataFileMeta) -> bool:
        return self.meta != before


class FileIndexProcessor:
    """Rebuilds data-file indexes of one table (a :class:`~paimon_core.store.file_store.FileStore`)."""

    def __init__(self, store: FileStore, options: FileIndexOptions) -> None:
        self.store = store
        self.options = options
        self.file_io = store.file_io
        self.reader = DataFileReader(store.file_io, store.schema_of, table_name=store.name, paths=store.paths)
        self._infos: dict[int, _SchemaInfo] = {}

    def _info(self, schema_id: int) -> _SchemaInfo:
        info = self._infos.get(schema_id)
        if info is None:
            current = self.store.schema
            file_fields = list(self.store.schema_of(schema_id).fields)
            mapping: dict[str, str] | None = None
            if schema_id != current.id:
                by_id = {f.id: f.name for f in file_fields}
                mapping = {f.name: by_id[f.id] for f in current.fields if f.id in by_id}
            names: list[str] = []
            full: set[str] = set()
            types: dict[str, set[str]] = {}
            for column, by_type in self.options.columns:
                name = column.name if mapping is None else mapping.get(column.name)
                if name is None:
                    continue  # added after the file was written: nothing to index
                names.append(name)
                full_name = name if column.nested is None else f"{name}[{column.nested}]"
                full.add(full_name)
                types.setdefault(full_name, set()).update(t for t, _ in by_type)
            wanted = set(names)
            info = _SchemaInfo(
                tuple(f for f in file_fields if f.name in wanted),
                mapping,
                frozenset(full),
                {k: frozenset(v) for k, v in types.items()},
            )
            self._infos[schema_id] = info
        return info

    def process(self, entry: ManifestEntry, *, write: bool = True) -> ProcessedFile:
        """The entry's file with its index rebuilt (see the module docstring). ``write=False``
        (a dry run) computes the same and writes nothing: a new index file is only named, in
        :attr:`ProcessedFile.planned_index`."""
        meta = entry.file
        info = self._info(meta.schema_id)
        bucket_path = self.store.bucket_path(entry.partition, entry.bucket)
        data_path = self.store.paths.file_in_dir(bucket_path, meta.file_name, meta.external_path)
        directory = posixpath.dirname(data_path)
        index_files = [x for x in meta.extra_files if x.endswith(INDEX_PATH_SUFFIX)]
        extras = [x for x in meta.extra_files if not x.endswith(INDEX_PATH_SUFFIX)]
        old_bytes: bytes | None = None
        maintainers: JavaHashMap[str, JavaHashMap[str, bytes | None]]
        if index_files:
            old_path = self.store.paths.file_in_dir(directory, index_files[0], kind="extra file")
            old_bytes = self.file_io.read_bytes(old_path)
            maintainers = FileIndexFormatReader(old_bytes, path=old_path).read_all()
            new_name = new_file_index_file_name(index_files[0])
        else:
            maintainers = string_map()
            new_name = meta.file_name + INDEX_PATH_SUFFIX
        for name in list(maintainers.keys()):  # remove what is no longer configured
            configured = info.index_types.get(name)
            types = maintainers.get(name)
            if configured is None or types is None:
                maintainers.remove(name)
                continue
            for index_type in list(types.keys()):
                if index_type not in configured:
                    types.remove(index_type)
        writer = DataFileIndexWriter.create(info.fields, self.options, col_name_mapping=info.col_name_mapping)
        if writer is not None and info.fields:
            for batch in self._rows(entry, bucket_path, meta, info.fields):
                writer.write(batch)
            for column, types in writer.serialize_maintainers().items():
                target = maintainers.compute_if_absent(column, string_map)
                for index_type, data in types.items():
                    target.put(index_type, data)
        data = (
            write_column_indexes([(c, types.items()) for c, types in maintainers.items()])
            if len(maintainers)
            else b""
        )
        if len(data) > self.options.in_manifest_threshold:
            if data == old_bytes and len(index_files) == 1:
                return ProcessedFile(
                    meta.copy(embedded_index=None) if meta.embedded_index is not None else meta
                )
            if not write:
                planned = self.store.paths.file_in_dir(directory, new_name, kind="extra file")
                return ProcessedFile(
                    meta.copy(extra_files=(*extras, new_name), embedded_index=None), planned_index=planned
                )
            written = self._write_new(directory, new_name, data)
            return ProcessedFile(
                meta.copy(extra_files=(*extras, posixpath.basename(written)), embedded_index=None), written
            )
        new_meta = meta.copy(extra_files=tuple(extras), embedded_index=data or None)
        return ProcessedFile(meta if new_meta == meta else new_meta)

    def _rows(
        self, entry: ManifestEntry, bucket_path: str, meta: DataFileMeta, fields: Sequence[DataField]
    ) -> Iterator[pa.RecordBatch]:
        partition_fields = self.store.schema.partition_fields
        partition_values = (
            partition_scalars(partition_fields, self.store.partition_codec.decode(entry.partition))
            if partition_fields
            else None
        )
        return self.reader.read(bucket_path, meta, fields, streaming=True, partition_values=partition_values)

    def _write_new(self, directory: str, name: str, data: bytes) -> str:
        for _ in range(MAX_NAME_ATTEMPTS):
            path = self.store.paths.file_in_dir(directory, name, kind="extra file")
            try:
                self.file_io.write_bytes(path, data, overwrite=False)
                return path
            except FileExistsError:
                name = new_file_index_file_name(name)
        raise CorruptFileError(
            f"No free index file name next to {directory}/{name} after {MAX_NAME_ATTEMPTS} tries",
            path=directory,
        )
