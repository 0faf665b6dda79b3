"""Read and write manifest files (``manifest/manifest-<uuid>-<n>``).

A manifest file is an Avro file of :class:`ManifestEntry` records. Reading is
on the scan-planning hot path: a decoder generated for the file's writer
schema builds the dataclasses directly (see ``avro_schemas``), with no
intermediate dicts.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

from paimon_core.io.file_io import FileIO
from paimon_core.manifest.avro_schemas import (
    MANIFEST_ENTRY_VERSION,
    STATS_PLAN,
    ManifestRecord,
    RecordPlan,
    read_avro_objects,
    stats_to_record,
    write_avro_records,
)
from paimon_core.manifest.entries import (
    EMPTY_STATS,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)

_KINDS = {0: FileKind.ADD, 1: FileKind.DELETE}


def encode_manifest_entries(entries: Sequence[ManifestEntry]) -> bytes:
    """The bytes of a manifest file holding ``entries``."""
    return write_avro_records("manifest_entry", (entry_to_record(e) for e in entries))


def write_manifest_file(
    file_io: FileIO,
    path: str,
    entries: Sequence[ManifestEntry],
    *,
    partition_stats: SimpleStats,
    schema_id: int,
    data: bytes | None = None,
) -> ManifestFileMeta:
    """Write ``entries`` to a new manifest file and describe it.

    ``data``: the entries already encoded by :func:`encode_manifest_entries` (a caller that
    measured the size first, to split before writing anything).

    ``partition_stats`` (over the partition columns of all entries) is
    computed by the caller. As in Java, the meta's schema id is the largest
    schema id of the entries' files, or ``schema_id`` (the table's latest
    schema) when there are no entries. Bucket and level bounds cover all
    entries; row-id bounds are set only when every file has a first row id.
    """
    if data is None:
        data = encode_manifest_entries(entries)
    file_io.write_bytes(path, data, overwrite=False)

    added = deleted = 0
    for e in entries:
        if e.kind == FileKind.ADD:
            added += 1
        else:
            deleted += 1
    min_bucket = max_bucket = min_level = max_level = None
    min_row_id = max_row_id = None
    meta_schema_id = schema_id
    if entries:
        buckets = [e.bucket for e in entries]
        levels = [e.file.level for e in entries]
        min_bucket, max_bucket = min(buckets), max(buckets)
        min_level, max_level = min(levels), max(levels)
        meta_schema_id = max(e.file.schema_id for e in entries)
        if all(e.file.first_row_id is not None for e in entries):
            min_row_id = min(e.file.first_row_id or 0 for e in entries)
            max_row_id = max((e.file.first_row_id or 0) + e.file.row_count - 1 for e in entries)
    return ManifestFileMeta(
        file_name=posixpath.basename(path),
        file_size=len(data),
        num_added_files=added,
        num_deleted_files=deleted,
        partition_stats=partition_stats,
        schema_id=meta_schema_id,
        min_bucket=min_bucket,
        max_bucket=max_bucket,
        min_level=min_level,
        max_level=max_level,
        min_row_id=min_row_id,
        max_row_id=max_row_id,
    )


def read_manifest_file(file_io: FileIO, path: str) -> list[ManifestEntry]:
    """Read every entry of a manifest file (Java, pypaimon or pypaimon-rust written).

    Fields are matched by name, so files of older writers (fewer fields,
    nullable records) read too; fields they lack come back as None. Raises
    :class:`CorruptFileError` naming ``path`` when the file cannot be decoded,
    lacks a required field or has a ``_VERSION`` other than 2.
    """
    entries: list[ManifestEntry] = read_avro_objects(file_io.read_bytes(path), path, ENTRY_PLAN)
    return entries


# --- decoding plans -----------------------------------------------------------------


def _tuple_or_none(value: list[Any] | None) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


def _build_data_file(
    file_name: str,
    file_size: int,
    row_count: int,
    min_key: bytes,
    max_key: bytes,
    key_stats: SimpleStats | None,
    value_stats: SimpleStats | None,
    min_sequence_number: int,
    max_sequence_number: int,
    schema_id: int,
    level: int,
    extra_files: list[str] | None,
    creation_time: int | None,
    delete_row_count: int | None,
    embedded_index: bytes | None,
    file_source: int | None,
    value_stats_cols: list[str] | None,
    external_path: str | None,
    first_row_id: int | None,
    write_cols: list[str] | None,
    write_cols_sequences: list[int] | None,
) -> DataFileMeta:
    return DataFileMeta(
        file_name,
        file_size,
        row_count,
        min_key,
        max_key,
        EMPTY_STATS if key_stats is None else key_stats,
        EMPTY_STATS if value_stats is None else value_stats,
        min_sequence_number,
        max_sequence_number,
        schema_id,
        level,
        tuple(extra_files) if extra_files else (),
        creation_time,
        delete_row_count,
        embedded_index,
        file_source,
        None if value_stats_cols is None else tuple(value_stats_cols),
        external_path,
        first_row_id,
        None if write_cols is None else tuple(write_cols),
        None if write_cols_sequences is None else tuple(write_cols_sequences),
    )


def _build_entry(
    version: int, kind: int, partition: bytes, bucket: int, total_buckets: int, file: DataFileMeta | None
) -> ManifestEntry:
    if version != MANIFEST_ENTRY_VERSION:
        raise ValueError(f"unsupported manifest entry _VERSION {version}")
    if file is None:
        raise ValueError("manifest entry without _FILE")
    return ManifestEntry(_KINDS[kind], partition, bucket, total_buckets, file)


_FILE_FIELDS = (
    "_FILE_NAME",
    "_FILE_SIZE",
    "_ROW_COUNT",
    "_MIN_KEY",
    "_MAX_KEY",
    "_KEY_STATS",
    "_VALUE_STATS",
    "_MIN_SEQUENCE_NUMBER",
    "_MAX_SEQUENCE_NUMBER",
    "_SCHEMA_ID",
    "_LEVEL",
    "_EXTRA_FILES",
    "_CREATION_TIME",
    "_DELETE_ROW_COUNT",
    "_EMBEDDED_FILE_INDEX",
    "_FILE_SOURCE",
    "_VALUE_STATS_COLS",
    "_EXTERNAL_PATH",
    "_FIRST_ROW_ID",
    "_WRITE_COLS",
    "_WRITE_COLS_SEQUENCES",
)

#: Decodes a ``_FILE`` record into a :class:`DataFileMeta`.
FILE_PLAN = RecordPlan(
    fields=_FILE_FIELDS,
    build=_build_data_file,
    required=frozenset(_FILE_FIELDS[:11]),
    nested=(("_KEY_STATS", STATS_PLAN), ("_VALUE_STATS", STATS_PLAN)),
)

_ENTRY_FIELDS = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")

#: Decodes a manifest-file record into a :class:`ManifestEntry`.
ENTRY_PLAN = RecordPlan(
    fields=_ENTRY_FIELDS,
    build=_build_entry,
    required=frozenset(_ENTRY_FIELDS),
    nested=(("_FILE", FILE_PLAN),),
)


# --- encoding -------------------------------------------------------------------------


def _list_or_none(value: tuple[Any, ...] | None) -> list[Any] | None:
    return None if value is None else list(value)


def data_file_to_record(f: DataFileMeta) -> ManifestRecord:
    """Encode a :class:`DataFileMeta` as its ``_FILE`` record."""
    return {
        "_FILE_NAME": f.file_name,
        "_FILE_SIZE": f.file_size,
        "_ROW_COUNT": f.row_count,
        "_MIN_KEY": f.min_key,
        "_MAX_KEY": f.max_key,
        "_KEY_STATS": stats_to_record(f.key_stats),
        "_VALUE_STATS": stats_to_record(f.value_stats),
        "_MIN_SEQUENCE_NUMBER": f.min_sequence_number,
        "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
        "_SCHEMA_ID": f.schema_id,
        "_LEVEL": f.level,
        "_EXTRA_FILES": list(f.extra_files),
        "_CREATION_TIME": f.creation_time,
        "_DELETE_ROW_COUNT": f.delete_row_count,
        "_EMBEDDED_FILE_INDEX": f.embedded_index,
        "_FILE_SOURCE": None if f.file_source is None else int(f.file_source),
        "_VALUE_STATS_COLS": _list_or_none(f.value_stats_cols),
        "_EXTERNAL_PATH": f.external_path,
        "_FIRST_ROW_ID": f.first_row_id,
        "_WRITE_COLS": _list_or_none(f.write_cols),
        "_WRITE_COLS_SEQUENCES": _list_or_none(f.write_cols_sequences),
    }


def entry_to_record(e: ManifestEntry) -> ManifestRecord:
    """Encode a :class:`ManifestEntry` as its Avro record (``_VERSION`` 2)."""
    return {
        "_VERSION": MANIFEST_ENTRY_VERSION,
        "_KIND": int(e.kind),
        "_PARTITION": e.partition,
        "_BUCKET": e.bucket,
        "_TOTAL_BUCKETS": e.total_buckets,
        "_FILE": data_file_to_record(e.file),
    }
