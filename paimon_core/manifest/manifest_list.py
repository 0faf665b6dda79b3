"""Read and write manifest lists (``manifest/manifest-list-<uuid>-<n>``).

A manifest list is an Avro file of :class:`ManifestFileMeta` records; a
snapshot points at a base, a delta and optionally a changelog manifest list.
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_core.io.file_io import FileIO
from paimon_core.manifest.avro_schemas import (
    MANIFEST_FILE_META_VERSION,
    STATS_PLAN,
    ManifestRecord,
    RecordPlan,
    read_avro_objects,
    stats_to_record,
    write_avro_records,
)
from paimon_core.manifest.entries import EMPTY_STATS, ManifestFileMeta, SimpleStats


def write_manifest_list(file_io: FileIO, path: str, metas: Sequence[ManifestFileMeta]) -> int:
    """Write a new manifest list holding ``metas``; return its size in bytes."""
    data = write_avro_records("manifest_file_meta", (meta_to_record(m) for m in metas))
    file_io.write_bytes(path, data, overwrite=False)
    return len(data)


def read_manifest_list(file_io: FileIO, path: str) -> list[ManifestFileMeta]:
    """Read every manifest file meta of a manifest list.

    Fields are matched by name. Fields some writers add beyond Java's schema
    (pypaimon and pypaimon-rust write ``_TOTAL_BUCKETS`` and ``_EXTRA_FILES``)
    are ignored; optional fields a writer lacks come back as None. Raises
    :class:`CorruptFileError` naming ``path`` when the file cannot be decoded,
    lacks a required field or has a ``_VERSION`` other than 2.
    """
    metas: list[ManifestFileMeta] = read_avro_objects(file_io.read_bytes(path), path, META_PLAN)
    return metas


def _build_meta(
    version: int,
    file_name: str,
    file_size: int,
    num_added_files: int,
    num_deleted_files: int,
    partition_stats: SimpleStats | None,
    schema_id: int,
    min_bucket: int | None,
    max_bucket: int | None,
    min_level: int | None,
    max_level: int | None,
    min_row_id: int | None,
    max_row_id: int | None,
) -> ManifestFileMeta:
    if version != MANIFEST_FILE_META_VERSION:
        raise ValueError(f"unsupported manifest file meta _VERSION {version}")
    return ManifestFileMeta(
        file_name,
        file_size,
        num_added_files,
        num_deleted_files,
        EMPTY_STATS if partition_stats is None else partition_stats,
        schema_id,
        min_bucket,
        max_bucket,
        min_level,
        max_level,
        min_row_id,
        max_row_id,
    )


_META_FIELDS = (
    "_VERSION",
    "_FILE_NAME",
    "_FILE_SIZE",
    "_NUM_ADDED_FILES",
    "_NUM_DELETED_FILES",
    "_PARTITION_STATS",
    "_SCHEMA_ID",
    "_MIN_BUCKET",
    "_MAX_BUCKET",
    "_MIN_LEVEL",
    "_MAX_LEVEL",
    "_MIN_ROW_ID",
    "_MAX_ROW_ID",
)

#: Decodes a manifest-list record into a :class:`ManifestFileMeta`.
META_PLAN = RecordPlan(
    fields=_META_FIELDS,
    build=_build_meta,
    required=frozenset(_META_FIELDS[:7]),
    nested=(("_PARTITION_STATS", STATS_PLAN),),
)


def meta_to_record(m: ManifestFileMeta) -> ManifestRecord:
    """Encode a :class:`ManifestFileMeta` as its Avro record (``_VERSION`` 2)."""
    return {
        "_VERSION": MANIFEST_FILE_META_VERSION,
        "_FILE_NAME": m.file_name,
        "_FILE_SIZE": m.file_size,
        "_NUM_ADDED_FILES": m.num_added_files,
        "_NUM_DELETED_FILES": m.num_deleted_files,
        "_PARTITION_STATS": stats_to_record(m.partition_stats),
        "_SCHEMA_ID": m.schema_id,
        "_MIN_BUCKET": m.min_bucket,
        "_MAX_BUCKET": m.max_bucket,
        "_MIN_LEVEL": m.min_level,
        "_MAX_LEVEL": m.max_level,
        "_MIN_ROW_ID": m.min_row_id,
        "_MAX_ROW_ID": m.max_row_id,
    }
