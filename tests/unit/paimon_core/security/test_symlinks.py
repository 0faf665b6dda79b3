"""Issue 27 item 2: no listing that leads to a deletion follows a symbolic link, and nothing is
deleted through one. A directory link (``bucket-N``, partition, ``index/``, ``_staging/<x>``,
``branch/branch-<x>``) is left alone with a warning; a file that is a link is deleted as a link."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from paimon_core.exceptions import UnsafePathError

from .hostile import LATER, at, commit, diff, make_table, rows, tree_state


def _outside_dir(tmp_path: pathlib.Path, name: str) -> pathlib.Path:
    d = tmp_path / "outside" / name
    d.mkdir(parents=True)
    (d / "data-old.parquet").write_bytes(b"someone else's")
    (d / "index-old").write_bytes(b"someone else's")
    os.utime(d / "data-old.parquet", (1, 1))
    os.utime(d / "index-old", (1, 1))
    return d


@pytest.mark.parametrize(
    "link", ["bucket-1", "dt=p9", "dt=p1/bucket-1", "index", "_staging/x", "manifest", "statistics"]
)
def test_orphan_cleanup_never_follows_a_directory_link(
    tmp_path: pathlib.Path, link: str, caplog: pytest.LogCaptureFixture
) -> None:
    t = make_table(str(tmp_path / "wh"), partitioned=True)
    commit(t, rows([1, 2]))
    target = _outside_dir(tmp_path, "target")
    if link == "manifest":  # the table's own manifest directory moved out and linked back
        real = pathlib.Path(t.paths.manifest_dir)
        for f in real.iterdir():
            shutil.copy2(f, target / f.name)
        shutil.rmtree(real)
    at_link = pathlib.Path(t.path) / link
    at_link.parent.mkdir(parents=True, exist_ok=True)
    at_link.symlink_to(target, target_is_directory=True)
    outside = str(tmp_path / "outside")
    before = tree_state([outside, str(at_link)])
    at(t, LATER).maintenance.remove_orphan_files(dry_run=False)
    assert diff(before, tree_state([outside, str(at_link)])) == []
    assert "symbolic link" in caplog.text
    if link != "manifest":
        assert sorted(at(t, LATER).to_arrow().column("id").to_pylist()) == [1, 2]


def test_orphan_cleanup_deletes_a_file_link_not_its_target(tmp_path: pathlib.Path) -> None:
    t = make_table(str(tmp_path / "wh"))
    commit(t, rows([1]))
    target = _outside_dir(tmp_path, "target") / "data-old.parquet"
    link = pathlib.Path(t.paths.bucket_path("", 0)) / "data-link.parquet"
    link.symlink_to(target)
    before = tree_state([str(tmp_path / "outside")])
    at(t, LATER).maintenance.remove_orphan_files(dry_run=False)
    assert diff(before, tree_state([str(tmp_path / "outside")])) == []
    assert not os.path.lexists(link)  # an unreferenced link in the table: removed, target kept


def test_expiry_never_deletes_through_a_linked_bucket_directory(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    t = make_table(str(tmp_path / "wh"))
    commit(t, rows([1]))
    t.write_arrow(rows([2]), overwrite=True)  # snapshot 2 deletes snapshot 1's file
    commit(t, rows([3]))
    bucket = pathlib.Path(t.paths.bucket_path("", 0))
    moved = tmp_path / "outside" / "bucket-0"
    shutil.move(str(bucket), str(moved))
    bucket.symlink_to(moved, target_is_directory=True)
    before = tree_state([str(tmp_path / "outside"), str(bucket)])
    at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert diff(before, tree_state([str(tmp_path / "outside"), str(bucket)])) == []
    assert "symbolic link" in caplog.text


@pytest.mark.parametrize(
    "link", ["branch/branch-b1", "branch/branch-b1/snapshot", "branch/branch-b1/tag", "branch"]
)
def test_delete_branch_refuses_a_linked_branch_directory(tmp_path: pathlib.Path, link: str) -> None:
    t = make_table(str(tmp_path / "wh"))
    commit(t, rows([1]))
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    real = pathlib.Path(t.path) / link
    target = tmp_path / "outside" / "moved"
    shutil.copytree(real, target, symlinks=True)
    shutil.rmtree(real)
    real.symlink_to(target, target_is_directory=True)
    before = tree_state([str(tmp_path / "outside"), t.path])
    for dry_run in (True, False):
        with pytest.raises(UnsafePathError, match="symbolic link"):
            t.maintenance.delete_branch("b1", dry_run=dry_run)
    assert diff(before, tree_state([str(tmp_path / "outside"), t.path])) == []
