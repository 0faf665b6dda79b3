"""Real tables, hostile metadata written with the project's own writers, and a guard that sees
every change outside the table (issue 27)."""

from __future__ import annotations

import dataclasses
import os
import stat
import time
from collections.abc import Iterable, Sequence

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.manifest.manifest_file import read_manifest_file, write_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

#: a clock past every file's mtime (year 2096): every file is old enough for orphan cleanup
LATER = 4_000_000_000_000
NOW = int(time.time() * 1000)
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def make_table(
    warehouse: str,
    *,
    name: str = "t",
    partitioned: bool = False,
    options: dict[str, str] | None = None,
    clock: ManualClock | None = None,
) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse, clock=clock or ManualClock(NOW))
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_keys=["dt"] if partitioned else (),
        options={"bucket": "-1", **(options or {})},
    )


def rows(ids: Sequence[int], dt: str = "p1") -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA
    )


def commit(table: FileStoreTable, data: pa.Table) -> int:
    sid = table.write_arrow(data).snapshot_id
    assert sid is not None
    if isinstance(table.clock, ManualClock):
        table.clock.advance(1000)
    return sid


def at(table: FileStoreTable, millis: int) -> FileStoreTable:
    """The same table through a catalog whose clock reads ``millis``."""
    warehouse = os.path.dirname(os.path.dirname(table.path.rstrip("/")))
    return FileSystemCatalog(warehouse, clock=ManualClock(millis)).get_table(table.name)


def delta_entries(table: FileStoreTable, sid: int) -> list[ManifestEntry]:
    snap = table.snapshot_manager.snapshot(sid)
    out: list[ManifestEntry] = []
    for meta in read_manifest_list(table.file_io, table.paths.manifest_path(snap.delta_manifest_list)):
        out.extend(read_manifest_file(table.file_io, table.paths.manifest_path(meta.file_name)))
    return out


def with_file(
    entry: ManifestEntry,
    *,
    kind: FileKind | None = None,
    file_name: str | None = None,
    external_path: str | None = None,
    extra_files: tuple[str, ...] | None = None,
) -> ManifestEntry:
    f = entry.file
    f = dataclasses.replace(
        f,
        file_name=f.file_name if file_name is None else file_name,
        external_path=external_path,
        extra_files=f.extra_files if extra_files is None else extra_files,
    )
    return dataclasses.replace(entry, kind=entry.kind if kind is None else kind, file=f)


def write_list(table: FileStoreTable, entries: Sequence[ManifestEntry]) -> tuple[str, int]:
    """A new manifest list holding one new manifest with ``entries``: (list name, list size)."""
    io, paths = table.file_io, table.paths
    name = paths.new_manifest_name()
    meta = write_manifest_file(
        io,
        paths.manifest_path(name),
        list(entries),
        partition_stats=table.partition_codec.stats([e.partition for e in entries]),
        schema_id=0,
    )
    list_name = paths.new_manifest_list_name()
    return list_name, write_manifest_list(io, paths.manifest_path(list_name), [meta])


def rewrite_snapshot(table: FileStoreTable, sid: int, **changes: object) -> Snapshot:
    snap = table.snapshot_manager.snapshot(sid).copy(**changes)
    table.file_io.write_bytes(
        table.snapshot_manager.snapshot_path(sid), snap.to_json().encode(), overwrite=True
    )
    return snap


def set_delta(table: FileStoreTable, sid: int, entries: Sequence[ManifestEntry]) -> Snapshot:
    name, size = write_list(table, entries)
    return rewrite_snapshot(table, sid, delta_manifest_list=name, delta_manifest_list_size=size)


def set_base(table: FileStoreTable, sid: int, entries: Sequence[ManifestEntry]) -> Snapshot:
    name, size = write_list(table, entries)
    return rewrite_snapshot(table, sid, base_manifest_list=name, base_manifest_list_size=size)


def write_schema_option(table: FileStoreTable, key: str, value: str) -> int:
    """Hand-write the next ``schema/schema-N``: the latest schema plus one option (no alter path)."""
    import json

    latest = max(table.schema_manager.list_ids())
    path = table.schema_manager.paths.schema_path(latest)
    doc = json.loads(table.file_io.read_text(path))
    doc["id"] = latest + 1
    doc["options"] = {**doc.get("options", {}), key: value}
    table.file_io.write_bytes(table.schema_manager.paths.schema_path(latest + 1), json.dumps(doc).encode())
    return latest + 1


# --- the guard ----------------------------------------------------------------------------------

Entry = tuple[str, int, int, int, int, str]  # kind, mode, size, mtime_ns, inode, link target


def tree_state(roots: Iterable[str], *, exclude: Iterable[str] = ()) -> dict[str, Entry]:
    """Every entry (file, directory, link) under ``roots`` with its type, mode, size, mtime,
    inode and link target, links never followed; ``exclude``: directories (real paths) left out."""
    skip = {os.path.realpath(p) for p in exclude}
    out: dict[str, Entry] = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        stack = [root]
        while stack:
            p = stack.pop()
            if os.path.realpath(p) in skip and not os.path.islink(p):
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("link", st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                # a directory's mtime changes when an entry is added or removed inside it
                out[p] = ("dir", st.st_mode, 0, st.st_mtime_ns, st.st_ino, "")
                stack.extend(os.path.join(p, n) for n in os.listdir(p))
            else:
                out[p] = ("file", st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, "")
    return out


def diff(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    out = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    out += [f"added {p}" for p in sorted(after.keys() - before.keys())]
    out += [
        f"changed {p}: {before[p]} -> {after[p]}"
        for p in sorted(before.keys() & after.keys())
        if before[p] != after[p]
    ]
    return out
