"""Read and write index manifests (``manifest/index-manifest-<uuid>``).

An index manifest is an Avro file of :class:`IndexManifestEntry` records: the
full listing of a snapshot's index files (``HASH`` bucket indexes of dynamic
bucket tables, ``DELETION_VECTORS`` files, global indexes).
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_core.io.file_io import FileIO
from paimon_core.manifest.avro_schemas import (
    INDEX_MANIFEST_ENTRY_VERSION,
    ManifestRecord,
    RecordPlan,
    read_avro_objects,
    write_avro_records,
)
from paimon_core.manifest.entries import (
    DeletionVectorMeta,
    FileKind,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
)

_KINDS = {0: FileKind.ADD, 1: FileKind.DELETE}


def write_index_manifest(file_io: FileIO, path: str, entries: Sequence[IndexManifestEntry]) -> int:
    """Write a new index manifest holding ``entries``; return its size in bytes."""
    data = write_avro_records("index_manifest_entry", (index_entry_to_record(e) for e in entries))
    file_io.write_bytes(path, data, overwrite=False)
    return len(data)


def read_index_manifest(file_io: FileIO, path: str) -> list[IndexManifestEntry]:
    """Read every entry of an index manifest (matched by field name).

    Raises :class:`CorruptFileError` naming ``path`` when the file cannot be
    decoded, lacks a required field or has a ``_VERSION`` other than 1.
    """
    entries: list[IndexManifestEntry] = read_avro_objects(file_io.read_bytes(path), path, INDEX_ENTRY_PLAN)
    return entries


# --- decoding plans -----------------------------------------------------------------


def _build_dv(data_file_name: str, offset: int, length: int, cardinality: int | None) -> DeletionVectorMeta:
    return DeletionVectorMeta(data_file_name, offset, length, cardinality)


def _build_global_index(
    row_range_start: int,
    row_range_end: int,
    index_field_id: int,
    extra_field_ids: list[int] | None,
    index_meta: bytes | None,
    source_meta: bytes | None,
) -> GlobalIndexMeta:
    return GlobalIndexMeta(
        row_range_start,
        row_range_end,
        index_field_id,
        None if extra_field_ids is None else tuple(extra_field_ids),
        index_meta,
        source_meta,
    )


def _build_index_entry(
    version: int,
    kind: int,
    partition: bytes,
    bucket: int,
    index_type: str,
    file_name: str,
    file_size: int,
    row_count: int,
    dv_ranges: list[DeletionVectorMeta | None] | None,
    external_path: str | None,
    global_index: GlobalIndexMeta | None,
) -> IndexManifestEntry:
    if version != INDEX_MANIFEST_ENTRY_VERSION:
        raise ValueError(f"unsupported index manifest entry _VERSION {version}")
    ranges = None
    if dv_ranges is not None:
        if any(r is None for r in dv_ranges):
            raise ValueError("null deletion vector range")
        ranges = tuple(r for r in dv_ranges if r is not None)
    return IndexManifestEntry(
        _KINDS[kind],
        partition,
        bucket,
        IndexFileMeta(index_type, file_name, file_size, row_count, ranges, external_path, global_index),
    )


_DV_FIELDS = ("f0", "f1", "f2", "_CARDINALITY")
_GLOBAL_INDEX_FIELDS = (
    "_ROW_RANGE_START",
    "_ROW_RANGE_END",
    "_INDEX_FIELD_ID",
    "_EXTRA_FIELD_IDS",
    "_INDEX_META",
    "_SOURCE_META",
)
_INDEX_ENTRY_FIELDS = (
    "_VERSION",
    "_KIND",
    "_PARTITION",
    "_BUCKET",
    "_INDEX_TYPE",
    "_FILE_NAME",
    "_FILE_SIZE",
    "_ROW_COUNT",
    "_DELETIONS_VECTORS_RANGES",
    "_EXTERNAL_PATH",
    "_GLOBAL_INDEX",
)

#: Decodes an index-manifest record into an :class:`IndexManifestEntry`.
INDEX_ENTRY_PLAN = RecordPlan(
    fields=_INDEX_ENTRY_FIELDS,
    build=_build_index_entry,
    required=frozenset(_INDEX_ENTRY_FIELDS[:8]),
    nested=(
        (
            "_DELETIONS_VECTORS_RANGES",
            RecordPlan(_DV_FIELDS, _build_dv, frozenset(_DV_FIELDS[:3])),
        ),
        (
            "_GLOBAL_INDEX",
            RecordPlan(_GLOBAL_INDEX_FIELDS, _build_global_index, frozenset(_GLOBAL_INDEX_FIELDS[:3])),
        ),
    ),
)


# --- encoding -------------------------------------------------------------------------


def index_entry_to_record(e: IndexManifestEntry) -> ManifestRecord:
    """Encode an :class:`IndexManifestEntry` as its Avro record (``_VERSION`` 1)."""
    f = e.index_file
    g = f.global_index
    return {
        "_VERSION": INDEX_MANIFEST_ENTRY_VERSION,
        "_KIND": int(e.kind),
        "_PARTITION": e.partition,
        "_BUCKET": e.bucket,
        "_INDEX_TYPE": f.index_type,
        "_FILE_NAME": f.file_name,
        "_FILE_SIZE": f.file_size,
        "_ROW_COUNT": f.row_count,
        "_DELETIONS_VECTORS_RANGES": None
        if f.dv_ranges is None
        else [
            {"f0": r.data_file_name, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality}
            for r in f.dv_ranges
        ],
        "_EXTERNAL_PATH": f.external_path,
        "_GLOBAL_INDEX": None
        if g is None
        else {
            "_ROW_RANGE_START": g.row_range_start,
            "_ROW_RANGE_END": g.row_range_end,
            "_INDEX_FIELD_ID": g.index_field_id,
            "_EXTRA_FIELD_IDS": None if g.extra_field_ids is None else list(g.extra_field_ids),
            "_INDEX_META": g.index_meta,
            "_SOURCE_META": g.source_meta,
        },
    }
