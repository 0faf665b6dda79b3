"""Issue 27 item 3: ``data-file.external-paths`` is metadata, so a hand-written ``schema-N`` naming a
directory must not make that directory deletable. Orphan cleanup never lists an external root;
expiry deletes a file under one only when the table wrote it there (an ADD entry of the
snapshot's base names that very path); a legitimate external path (set through ``alter_table``)
keeps working."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import UnsafePathError
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.schema.schema_change import SetOption
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .hostile import (
    LATER,
    NOW,
    at,
    commit,
    delta_entries,
    diff,
    make_table,
    rows,
    set_base,
    set_delta,
    tree_state,
    with_file,
    write_schema_option,
)


def _victims(tmp_path: pathlib.Path) -> pathlib.Path:
    d = tmp_path / "outside"
    (d / "bucket-0").mkdir(parents=True)
    for name in ("data-old.parquet", "data-x.parquet"):
        (d / "bucket-0" / name).write_bytes(b"someone else's")
        os.utime(d / "bucket-0" / name, (1, 1))
    return d


def test_orphan_cleanup_never_lists_a_root_a_schema_file_added(tmp_path: pathlib.Path) -> None:
    t = make_table(str(tmp_path / "wh"))
    commit(t, rows([1]))
    outside = _victims(tmp_path)
    write_schema_option(t, "data-file.external-paths", str(outside))
    before = tree_state([str(outside)])
    res = at(t, LATER).maintenance.remove_orphan_files(dry_run=False)
    assert diff(before, tree_state([str(outside)])) == []
    assert not any(str(outside) in p for p in res.deleted_paths)


def test_expiry_never_deletes_under_a_root_a_schema_file_added(tmp_path: pathlib.Path) -> None:
    t = make_table(str(tmp_path / "wh"))
    for i in range(3):
        commit(t, rows([i]))
    outside = _victims(tmp_path)
    write_schema_option(t, "data-file.external-paths", str(outside))
    victim = outside / "bucket-0" / "data-x.parquet"
    e = delta_entries(t, 2)[0]
    crafted = with_file(e, kind=FileKind.DELETE, file_name=victim.name, external_path=str(victim))
    set_delta(t, 2, [*delta_entries(t, 2), crafted])
    before = tree_state([str(outside)])
    with pytest.raises(UnsafePathError, match="did not write it there"):
        at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert diff(before, tree_state([str(outside)])) == []


def test_an_external_path_must_end_in_the_file_name(tmp_path: pathlib.Path) -> None:
    ext = tmp_path / "ext"
    t = make_table(str(tmp_path / "wh"), options={"data-file.external-paths": str(ext)})
    sid = commit(t, rows([1]))
    e = delta_entries(t, sid)[0]
    set_delta(t, sid, [with_file(e, external_path=str(ext / "bucket-0" / "other-name.parquet"))])
    with pytest.raises(UnsafePathError, match="does not end in the file's name"):
        t.to_arrow()


def test_expiry_deletes_what_the_table_wrote_under_a_legitimate_root(tmp_path: pathlib.Path) -> None:
    ext = tmp_path / "ext"
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=ManualClock(NOW))
    make_table(str(tmp_path / "wh"))
    t = catalog.alter_table("db.t", [SetOption("data-file.external-paths", f"file:{ext}")])
    sid = commit(t, rows([1]))
    (e,) = delta_entries(t, sid)
    moved = ext / "bucket-0" / e.file.file_name
    moved.parent.mkdir(parents=True)
    shutil.move(t.paths.data_file_path("", 0, e.file.file_name), moved)
    set_delta(t, sid, [with_file(e, external_path=f"file:{moved}")])  # as Java writes it
    unrelated = ext / "bucket-0" / "data-unrelated.parquet"
    unrelated.write_bytes(b"x")
    os.utime(unrelated, (1, 1))
    assert t.to_arrow().column("id").to_pylist() == [1]
    t.write_arrow(rows([2]), overwrite=True)  # DELETEs the external file
    commit(t, rows([3]))
    at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert not moved.exists() and unrelated.exists()
    assert sorted(at(t, LATER).to_arrow().column("id").to_pylist()) == [2, 3]
    at(t, LATER).maintenance.remove_orphan_files(dry_run=False)
    assert unrelated.exists()  # never listed


def _forge_written(t: FileStoreTable, sid: int, e: ManifestEntry) -> None:
    """Snapshot ``sid``'s base ADDs ``e`` and its delta DELETEs it: metadata saying the table wrote it."""
    snap = t.snapshot_manager.snapshot(sid)
    base = [
        entry
        for meta in read_manifest_list(t.file_io, t.paths.manifest_path(snap.base_manifest_list))
        for entry in read_manifest_file(t.file_io, t.paths.manifest_path(meta.file_name))
    ]
    set_base(t, sid, [*base, e])
    set_delta(
        t,
        sid,
        [*delta_entries(t, sid), with_file(e, kind=FileKind.DELETE, external_path=e.file.external_path)],
    )


def test_a_root_inside_another_table_is_refused_even_with_forged_adds(tmp_path: pathlib.Path) -> None:
    wh = str(tmp_path / "wh")
    other = make_table(wh, name="other")
    commit(other, rows([7]))
    live = next(pathlib.Path(other.paths.bucket_path("", 0)).glob("*.parquet"))
    t = make_table(wh)
    for i in range(3):
        commit(t, rows([i]))
    write_schema_option(t, "data-file.external-paths", other.path)
    _forge_written(
        at(t, NOW), 2, with_file(delta_entries(t, 1)[0], file_name=live.name, external_path=str(live))
    )
    before = tree_state([other.path])
    with pytest.raises(UnsafePathError, match="inside the Paimon table"):
        at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert diff(before, tree_state([other.path])) == []
    assert other.to_arrow().column("id").to_pylist() == [7]


def test_a_file_outside_java_s_layout_under_a_root_is_never_deleted(tmp_path: pathlib.Path) -> None:
    ext = tmp_path / "ext"
    victim = ext / "precious" / "data-x.parquet"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"x")
    t = make_table(str(tmp_path / "wh"), options={"data-file.external-paths": str(ext)})
    for i in range(3):
        commit(t, rows([i]))
    _forge_written(t, 2, with_file(delta_entries(t, 1)[0], file_name=victim.name, external_path=str(victim)))
    with pytest.raises(UnsafePathError, match="bucket's directory"):
        at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert victim.exists()
