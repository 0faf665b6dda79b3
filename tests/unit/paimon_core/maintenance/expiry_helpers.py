"""Shared helpers for the expiry / tag deletion tests: tables on a ManualClock, file listings,
and the set of files retained snapshots, tags and changelogs reference."""

from __future__ import annotations

import dataclasses
import posixpath
import time

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.io.file_io import FileIO
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file, write_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list
from paimon_core.operation.file_deletion_base import read_tagged_snapshots
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

#: A realistic "now" (consumer files carry real modification times).
T0 = int(time.time() * 1000)
HOUR = 3_600_000
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def make_table(
    warehouse: str,
    *,
    pk: bool = False,
    partitioned: bool = False,
    options: dict[str, str] | None = None,
    clock: ManualClock | None = None,
    name: str = "t",
) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse, clock=clock or ManualClock(T0))
    catalog.create_database("db", ignore_if_exists=True)
    opts = {"bucket": "2" if pk else "-1", **(options or {})}
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        primary_keys=(["dt", "id"] if partitioned else ["id"]) if pk else (),
        partition_keys=["dt"] if partitioned else (),
        options=opts,
    )


def rows(ids: list[int], tag: str = "a", dt: str = "p1") -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "v": [f"{tag}{i}" for i in ids]},
        schema=SCHEMA,
    )


def commit(
    table: FileStoreTable, data: pa.Table, *, overwrite: bool | dict[str, str] = False, step: int = 1000
) -> int:
    """Write one commit, then move the table's ManualClock on by ``step`` ms."""
    res = table.write_arrow(data, overwrite=overwrite)
    clock = table.clock
    assert isinstance(clock, ManualClock)
    clock.advance(step)
    assert res.snapshot_id is not None
    return res.snapshot_id


def read(
    table: FileStoreTable, *, snapshot_id: int | None = None, tag: str | None = None
) -> list[tuple[object, ...]]:
    opts = {}
    if snapshot_id is not None:
        opts["scan.snapshot-id"] = str(snapshot_id)
    if tag is not None:
        opts["scan.tag-name"] = tag
    t = table.copy(opts) if opts else table
    out = t.to_arrow().sort_by([("dt", "ascending"), ("id", "ascending")])
    return list(zip(*(out.column(n).to_pylist() for n in out.column_names), strict=True))


def list_all_files(file_io: FileIO, root: str) -> set[str]:
    """Every file under ``root``, relative to it."""
    out: set[str] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        for st in file_io.list_status(d):
            if st.is_dir:
                stack.append(st.path)
            else:
                out.add(posixpath.relpath(st.path, root) if "://" not in root else st.path[len(root) + 1 :])
    return out


def _rel(table: FileStoreTable, path: str) -> str:
    return path[len(table.path) + 1 :]


def referenced_files(table: FileStoreTable) -> set[str]:
    """Files the existing snapshots, tags and long-lived changelogs reference (relative)."""
    io, paths = table.file_io, table.paths
    snaps: list[Snapshot] = list(table.snapshot_manager.snapshots())
    snaps += [s for s, _ in read_tagged_snapshots(table.store)]
    cm = ChangelogManager(io, paths)
    changelogs = [c for c in (cm.try_changelog(i) for i in cm.list_ids()) if c is not None]
    out: set[str] = set()

    def add_list(name: str | None, *, changelog: bool = False) -> list[ManifestEntry]:
        if name is None:
            return []
        out.add(f"manifest/{name}")
        entries: list[ManifestEntry] = []
        for meta in read_manifest_list(io, paths.manifest_path(name)):
            out.add(f"manifest/{meta.file_name}")
            entries += read_manifest_file(io, paths.manifest_path(meta.file_name))
        return entries

    def data_path(e: ManifestEntry) -> str:
        return _rel(table, posixpath.join(table.bucket_path(e.partition, e.bucket), e.file.file_name))

    for s in snaps + changelogs:
        is_changelog = any(s is c for c in changelogs)
        out.update(data_path(e) for e in add_list(s.changelog_manifest_list) if e.kind == FileKind.ADD)
        if is_changelog and (
            s.changelog_manifest_list is not None or not io.exists(paths.manifest_path(s.delta_manifest_list))
        ):
            continue  # with a producer, a changelog needs only its changelog files
        live: dict[tuple[object, ...], ManifestEntry] = {}
        for e in add_list(s.base_manifest_list) + add_list(s.delta_manifest_list):
            key = e.identifier()
            if e.kind == FileKind.ADD:
                live[key] = e
            else:
                live.pop(key, None)
        out.update(data_path(e) for e in live.values())
        if is_changelog:  # without a producer, its delta's deleted (appended) files are the changelog
            out.update(data_path(e) for e in add_list(s.delta_manifest_list) if e.kind == FileKind.DELETE)
        if s.index_manifest is not None:
            out.add(f"manifest/{s.index_manifest}")
            for ie in read_index_manifest(io, paths.manifest_path(s.index_manifest)):
                out.add(f"index/{ie.index_file.file_name}")
        if s.statistics is not None:
            out.add(f"statistics/{s.statistics}")
    return out


META_DIRS = ("schema/", "snapshot/", "tag/", "consumer/", "changelog/")


def unreferenced_files(table: FileStoreTable) -> set[str]:
    """Data/manifest/index files nothing retained references: must be empty after a full run."""
    files = {f for f in list_all_files(table.file_io, table.path) if not f.startswith(META_DIRS)}
    return files - referenced_files(table)


class _PlainWrites(LocalFileIO):
    """Local writes without the temp-file publish (test set-up speed only)."""

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        with open(path, "wb") as f:
            f.write(data)


def synthesize_history(table: FileStoreTable, n: int) -> None:
    """Append ``n`` snapshots cheaply, written directly as metadata: snapshot k replaces the
    previous data file by a new one (delta: DELETE old, ADD new; base: one manifest with the
    old file). Used to build thousands of snapshots in seconds (local tables only)."""
    first = table.snapshot_manager.latest_snapshot()
    assert first is not None
    io, paths = _PlainWrites(), table.paths
    live = table.new_file_store_scan().live_entries(first)
    assert len(live) == 1
    prev = live[0]
    bucket_dir = table.bucket_path(prev.partition, prev.bucket)
    stats = table.partition_codec.stats([prev.partition])
    for k in range(first.id + 1, first.id + n + 1):
        name = f"data-synth-{k}.parquet"
        io.write_bytes(f"{bucket_dir}/{name}", b"x" * 16)
        new = dataclasses.replace(prev, file=dataclasses.replace(prev.file, file_name=name))
        metas = []
        for entries in ([prev], [dataclasses.replace(prev, kind=FileKind.DELETE), new]):
            mname = paths.new_manifest_name()
            metas.append(
                write_manifest_file(
                    io, paths.manifest_path(mname), entries, partition_stats=stats, schema_id=0
                )
            )
        base, delta = paths.new_manifest_list_name(), paths.new_manifest_list_name()
        base_size = write_manifest_list(io, paths.manifest_path(base), metas[:1])
        delta_size = write_manifest_list(io, paths.manifest_path(delta), metas[1:])
        snap = Snapshot(
            id=k,
            schema_id=0,
            base_manifest_list=base,
            base_manifest_list_size=base_size,
            delta_manifest_list=delta,
            delta_manifest_list_size=delta_size,
            commit_user="synth",
            commit_identifier=k,
            commit_kind=CommitKind.OVERWRITE,
            time_millis=first.time_millis + k,
            total_record_count=prev.file.row_count,
            delta_record_count=0,
        )
        io.write_bytes(paths.snapshot_path(k), snap.to_json().encode())
        prev = new
    table.snapshot_manager.commit_latest_hint(first.id + n)


def attach_changelog(table: FileStoreTable, snapshot_id: int) -> str:
    """Give snapshot ``snapshot_id`` a changelog manifest list with one changelog file, as a
    changelog producer would (the committer here writes none); returns the file's path."""
    io, paths = table.file_io, table.paths
    snap = table.snapshot_manager.snapshot(snapshot_id)
    entry = read_manifest_file(
        io,
        paths.manifest_path(
            read_manifest_list(io, paths.manifest_path(snap.delta_manifest_list))[0].file_name
        ),
    )[0]
    name = f"changelog-{snapshot_id}-{paths.new_data_file_name()}"
    path = posixpath.join(table.bucket_path(entry.partition, entry.bucket), name)
    io.write_bytes(path, b"changelog")
    cl = dataclasses.replace(entry, kind=FileKind.ADD, file=dataclasses.replace(entry.file, file_name=name))
    mname = paths.new_manifest_name()
    meta = write_manifest_file(
        io,
        paths.manifest_path(mname),
        [cl],
        partition_stats=table.partition_codec.stats([cl.partition]),
        schema_id=0,
    )
    lname = paths.new_manifest_list_name()
    size = write_manifest_list(io, paths.manifest_path(lname), [meta])
    updated = snap.copy(changelog_manifest_list=lname, changelog_manifest_list_size=size)
    io.write_bytes(paths.snapshot_path(snapshot_id), updated.to_json().encode(), overwrite=True)
    return path
