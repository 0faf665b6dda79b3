"""Manifest files, manifest lists and index manifests (Avro), and their records."""

from __future__ import annotations

from paimon_core.manifest.entries import (
    EMPTY_ROW_BYTES,
    EMPTY_STATS,
    DataFileMeta,
    DeletionVectorMeta,
    FileIdentifier,
    FileKind,
    FileSource,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)
from paimon_core.manifest.index_manifest import read_index_manifest, write_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file, write_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list

__all__ = [
    "EMPTY_ROW_BYTES",
    "EMPTY_STATS",
    "DataFileMeta",
    "DeletionVectorMeta",
    "FileIdentifier",
    "FileKind",
    "FileSource",
    "GlobalIndexMeta",
    "IndexFileMeta",
    "IndexManifestEntry",
    "ManifestEntry",
    "ManifestFileMeta",
    "SimpleStats",
    "read_index_manifest",
    "read_manifest_file",
    "read_manifest_list",
    "write_index_manifest",
    "write_manifest_file",
    "write_manifest_list",
]
