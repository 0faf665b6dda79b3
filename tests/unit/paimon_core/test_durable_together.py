"""Commit metadata is durable before the snapshot names it, synced together (``durable_together``).

The local file system's fsyncs are recorded (by the path of the file descriptor) along with every
``link(2)``, so the order a crash would expose is checked: each manifest, manifest list and
index manifest the new snapshot names is fsynced before ``snapshot-N`` is linked into place.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import read_manifest_list
from paimon_core.table.table import FileStoreTable


def _table(tmp_path: Path, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                         primary_keys=["id"] if options.get("bucket") else [], options=options)
    return catalog.get_table("db.t")


def _commit(table: FileStoreTable, start: int, n: int = 10) -> None:
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                                "v": pa.array([f"v{i}" for i in range(start, start + n)])}))
    builder.new_commit().commit(write.prepare_commit())


class _Events:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, str]] = []
        real_fsync, real_link = os.fsync, os.link

        def fsync(fd: int) -> None:
            real_fsync(fd)
            self.log.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))

        def link(src: str, dst: str, *args: object, **kwargs: object) -> None:
            real_link(src, dst, *args, **kwargs)  # type: ignore[arg-type]
            self.log.append(("link", os.path.basename(dst)))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "link", link)


@pytest.mark.parametrize("options", [{}, {"bucket": "2", "deletion-vectors.enabled": "true"}], ids=["append", "pk-dv"])
def test_snapshot_names_only_files_already_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    options: dict[str, str]) -> None:
    table = _table(tmp_path, **options)
    for k in range(3):
        _commit(table, k * 5)  # updates on a primary-key table: deletion-vector index manifests too
    events = _Events(monkeypatch)
    _commit(table, 100)
    snap = table.latest_snapshot()
    assert snap is not None
    named = [snap.base_manifest_list, snap.delta_manifest_list]
    named += [m.file_name for m in read_manifest_list(table.file_io, table.paths.manifest_path(snap.delta_manifest_list))]
    if snap.index_manifest:
        named.append(snap.index_manifest)
    published = events.log.index(("link", f"snapshot-{snap.id}"))
    synced_before = {name for op, name in events.log[:published] if op == "fsync"}
    assert set(named) <= synced_before, (named, events.log)
    # the snapshot file itself: written to a temp file, fsynced, then linked
    assert any(op == "fsync" and name.startswith(f".snapshot-{snap.id}.") for op, name in events.log[:published])
    assert table.new_read_builder().new_read().to_arrow(table.new_read_builder().new_scan().plan().splits).num_rows > 0


def test_a_failed_sync_fails_the_commit_before_it_publishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    _commit(table, 0)
    from paimon_core.io import local_io

    def broken(path: str) -> None:
        raise OSError(5, "Input/output error", path)

    monkeypatch.setattr(local_io, "_fsync_path", broken)
    with pytest.raises(OSError, match="Input/output error"):
        _commit(table, 10)
    monkeypatch.undo()
    latest = table.latest_snapshot()
    assert latest is not None and latest.id == 1  # nothing published
    # the manifests it wrote were removed again: only snapshot 1's metadata is left
    listed = set(os.listdir(os.path.dirname(table.paths.manifest_path(latest.base_manifest_list))))
    snap1 = {latest.base_manifest_list, latest.delta_manifest_list}
    snap1 |= {m.file_name for m in read_manifest_list(table.file_io, table.paths.manifest_path(latest.delta_manifest_list))}
    assert listed == snap1


def test_blocks_nest_and_an_exception_syncs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    io = LocalFileIO()
    events = _Events(monkeypatch)
    with io.durable_together():
        io.write_bytes(str(tmp_path / "a"), b"a")
        with io.durable_together():
            io.write_bytes(str(tmp_path / "b"), b"b")
        assert not [e for e in events.log if e[0] == "fsync"]  # the inner block leaves it to the outer
        io.write_bytes(str(tmp_path / "c"), b"c")
    assert sorted(name for op, name in events.log if op == "fsync") == ["a", "b", "c"]
    events.log.clear()
    with pytest.raises(RuntimeError), io.durable_together():
        io.write_bytes(str(tmp_path / "d"), b"d")
        raise RuntimeError("boom")
    assert not [e for e in events.log if e[0] == "fsync"]
    io.write_bytes(str(tmp_path / "e"), b"e")  # outside a block: synced when written, as before
    synced = [name for op, name in events.log if op == "fsync"]
    assert len(synced) == 1 and synced[0].startswith(".e.")
