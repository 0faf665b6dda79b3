"""Crafted metadata for the confinement tests: a victim file outside the warehouse, and
snapshots, manifests and index manifests rewritten to name it."""

from __future__ import annotations

import dataclasses
import os
import pathlib

from paimon_core.manifest.entries import FileKind, IndexFileMeta, IndexManifestEntry, ManifestEntry
from paimon_core.manifest.index_manifest import write_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file, write_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable


def outside_state(root: pathlib.Path, table_path: str) -> dict[str, tuple[bytes, int]]:
    """(content, mtime) of every file under ``root`` that is not inside the table directory."""
    table_dir = os.path.realpath(table_path)
    out: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirs, files in os.walk(root):
        if os.path.realpath(dirpath).startswith(table_dir):
            continue
        for f in files:
            p = os.path.join(dirpath, f)
            out[p] = (pathlib.Path(p).read_bytes(), os.stat(p).st_mtime_ns)
    return out


def table_state(table: FileStoreTable) -> dict[str, bytes]:
    """Every file of the table with its content."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(table.path):
        for f in files:
            p = os.path.join(dirpath, f)
            out[p] = pathlib.Path(p).read_bytes()
    return out


def rel_to(victim: pathlib.Path, directory: str) -> str:
    """``victim`` as a ``../``-relative name from ``directory``."""
    return os.path.relpath(victim, directory)


def rewrite_snapshot(table: FileStoreTable, sid: int, **changes: object) -> Snapshot:
    snap = table.snapshot_manager.snapshot(sid).copy(**changes)
    table.file_io.write_bytes(table.snapshot_manager.snapshot_path(sid), snap.to_json().encode(), overwrite=True)
    return snap


def first_entry(table: FileStoreTable, snap: Snapshot) -> ManifestEntry:
    io, paths = table.file_io, table.paths
    meta = read_manifest_list(io, paths.manifest_path(snap.delta_manifest_list))[0]
    return read_manifest_file(io, paths.manifest_path(meta.file_name))[0]


def crafted_entry(
    table: FileStoreTable, sid: int, kind: FileKind, *, file_name: str, external_path: str | None = None
) -> ManifestEntry:
    """An entry like snapshot ``sid``'s first one, naming another file."""
    e = first_entry(table, table.snapshot_manager.snapshot(sid))
    return dataclasses.replace(
        e, kind=kind, file=dataclasses.replace(e.file, file_name=file_name, external_path=external_path)
    )


def manifest_list_of(table: FileStoreTable, entries: list[ManifestEntry]) -> tuple[str, int]:
    """A new manifest list holding one manifest with ``entries``: (list name, size)."""
    io, paths = table.file_io, table.paths
    name = paths.new_manifest_name()
    meta = write_manifest_file(
        io,
        paths.manifest_path(name),
        entries,
        partition_stats=table.partition_codec.stats([e.partition for e in entries]),
        schema_id=0,
    )
    list_name = paths.new_manifest_list_name()
    return list_name, write_manifest_list(io, paths.manifest_path(list_name), [meta])


def add_to_delta(table: FileStoreTable, sid: int, extra: ManifestEntry) -> Snapshot:
    """Snapshot ``sid``'s delta plus ``extra`` (a new manifest and delta list)."""
    snap = table.snapshot_manager.snapshot(sid)
    entries = [first_entry(table, snap), extra]
    name, size = manifest_list_of(table, entries)
    return rewrite_snapshot(table, sid, delta_manifest_list=name, delta_manifest_list_size=size)


def with_index_file(table: FileStoreTable, sid: int, *, file_name: str, external_path: str | None = None) -> Snapshot:
    """Give snapshot ``sid`` an index manifest naming one index file."""
    meta = IndexFileMeta("DELETION_VECTORS", file_name, 4, 1, dv_ranges=(), external_path=external_path)
    e = first_entry(table, table.snapshot_manager.snapshot(sid))
    name = table.paths.new_index_manifest_name()
    write_index_manifest(
        table.file_io, table.paths.manifest_path(name), [IndexManifestEntry(FileKind.ADD, e.partition, e.bucket, meta)]
    )
    return rewrite_snapshot(table, sid, index_manifest=name)
