"""delete_tag: the files only the tag used go; files neighbours need stay; never forced."""

from __future__ import annotations

import os

import pytest

from paimon_core import InvalidArgumentError, TagNotFoundError
from paimon_core.operation.tag_deletion import DeleteTagResult, delete_tags, parse_tag_names
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .expiry_helpers import HOUR, commit, list_all_files, make_table, read, rows, unreferenced_files


def _tag(t: FileStoreTable, name: str, sid: int) -> None:
    t.tag_manager.create_from_snapshot_id(name, t.snapshot_manager, sid)


def _data_files(t: FileStoreTable) -> set[str]:
    return {f for f in list_all_files(t.file_io, t.path) if f.startswith("dt=")}


def _expire_all_but_latest(t: FileStoreTable) -> None:
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(10 * HOUR)
    t.maintenance.expire_snapshots(retain_min=1, max_deletes=1000)


def _two_tag_table(warehouse: str, *, pk: bool = False) -> FileStoreTable:
    """s1: A (p1); s2: B (p2) -> tag t1 {A, B}; s3: overwrite p2 with C -> tag t2 {A, C};
    s4: overwrite everything with D (the only snapshot left after expiry)."""
    opts = {"dynamic-partition-overwrite": "false", **({"bucket": "1"} if pk else {})}
    t = make_table(warehouse, partitioned=True, pk=pk, options=opts)
    commit(t, rows([1], "A", dt="p1"))
    _tag(t, "t1", commit(t, rows([2], "B", dt="p2")))
    _tag(t, "t2", commit(t, rows([3], "C", dt="p2"), overwrite={"dt": "p2"}))
    commit(t, rows([4], "D", dt="p3"), overwrite=True)
    _expire_all_but_latest(t)
    assert t.snapshot_manager.earliest_snapshot_id() == 4
    return t


@pytest.mark.parametrize("pk", [False, True])
def test_keeps_what_neighbours_need_and_removes_what_only_the_tag_used(warehouse: str, pk: bool) -> None:
    t = _two_tag_table(warehouse, pk=pk)
    t1, t2, latest = read(t, tag="t1"), read(t, tag="t2"), read(t)
    assert [r[2] for r in t1] == ["A1", "B2"] and [r[2] for r in t2] == ["A1", "C3"]
    files = _data_files(t)
    assert len(files) == 4  # A, B, C, D
    res = t.maintenance.delete_tag("t1", dry_run=False)
    assert isinstance(res, DeleteTagResult)
    assert res.deleted_tags == ("t1",) and res.deleted_data_files == 1  # B; A is t2's too
    assert res.deleted_manifest_files >= 2  # t1's own manifest lists at least
    assert len(files - _data_files(t)) == 1
    assert read(t, tag="t2") == t2 and read(t) == latest
    assert not t.tag_manager.exists("t1") and unreferenced_files(t) == set()
    res = t.maintenance.delete_tag("t2", dry_run=False)
    assert res.deleted_data_files == 2  # A and C: the latest snapshot only has D
    assert len(_data_files(t)) == 1 and read(t) == latest and unreferenced_files(t) == set()


def test_tag_of_a_live_snapshot_only_loses_its_tag_file(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    commit(t, rows([1]))
    _tag(t, "live", commit(t, rows([2])))
    commit(t, rows([3]), overwrite=True)
    before = list_all_files(t.file_io, t.path)
    res = t.maintenance.delete_tag("live", dry_run=False)
    assert res.deleted_tags == ("live",) and res.deleted_data_files == res.deleted_manifest_files == 0
    assert before - list_all_files(t.file_io, t.path) == {"tag/tag-live"}
    assert read(t, snapshot_id=2) == [(1, "p1", "a1"), (2, "p1", "a2")]


def test_two_tags_on_one_snapshot_keep_its_files(local_warehouse: str) -> None:
    t = _two_tag_table(local_warehouse)
    t.tag_manager.create("t1b", t.tag_manager.get("t1"))  # a second tag on expired snapshot 2
    want = read(t, tag="t1b")
    files = list_all_files(t.file_io, t.path)
    res = t.maintenance.delete_tag("t1", dry_run=False)
    assert res.deleted_data_files == res.deleted_manifest_files == 0
    assert files - list_all_files(t.file_io, t.path) == {"tag/tag-t1"}
    assert read(t, tag="t1b") == want


def test_unreadable_neighbour_deletes_only_the_tag_file(local_warehouse: str) -> None:
    """Issue #6479: a neighbouring tag's manifest list is missing: no data file may go."""
    t = _two_tag_table(local_warehouse)
    os.remove(t.paths.manifest_path(t.tag_manager.get("t1").base_manifest_list))
    files = list_all_files(t.file_io, t.path)
    res = t.maintenance.delete_tag("t2", dry_run=False)
    assert res.deleted_tags == ("t2",) and res.kept_files_of == ("t2",)
    assert res.deleted_data_files == res.deleted_manifest_files == 0
    assert files - list_all_files(t.file_io, t.path) == {"tag/tag-t2"}


def test_missing_tag_is_reported_before_anything_is_deleted(local_warehouse: str) -> None:
    t = _two_tag_table(local_warehouse)
    files = list_all_files(t.file_io, t.path)
    with pytest.raises(TagNotFoundError, match="nope"):
        t.maintenance.delete_tag("t1,nope", dry_run=False)
    with pytest.raises(TagNotFoundError, match="nope"):
        t.maintenance.delete_tag(["t2", "nope"], dry_run=False)
    assert list_all_files(t.file_io, t.path) == files
    with pytest.raises(InvalidArgumentError):
        t.maintenance.delete_tag("t1,,t2", dry_run=False)
    assert parse_tag_names(" t1 , t2,t1") == ["t1", "t2"]


def test_comma_separated_dry_run_predicts_and_changes_nothing(warehouse: str) -> None:
    t = _two_tag_table(warehouse)
    files = {p: t.file_io.read_bytes(f"{t.path}/{p}") for p in list_all_files(t.file_io, t.path)}
    dry = delete_tags(t.store, "t1,t2", dry_run=True)
    assert {p: t.file_io.read_bytes(f"{t.path}/{p}") for p in list_all_files(t.file_io, t.path)} == files
    assert dry.dry_run and dry.deleted_tags == ("t1", "t2") and dry.deleted_data_files == 3
    real = delete_tags(t.store, "t1,t2")
    assert (real.deleted_data_files, real.deleted_manifest_files) == (
        dry.deleted_data_files,
        dry.deleted_manifest_files,
    )
    assert t.tag_manager.list_names() == [] and unreferenced_files(t) == set()
    assert real.to_dict()["deleted_tags"] == ["t1", "t2"]


def test_tag_deletion_with_snapshot_gaps_keeps_files_of_later_snapshots(local_warehouse: str) -> None:
    """A tag above a hand-made gap: snapshots after it are its neighbours, not just the earliest."""
    t = make_table(local_warehouse, partitioned=True)
    commit(t, rows([1], dt="p1"))
    commit(t, rows([2], dt="p1"))
    _tag(t, "mid", commit(t, rows([3], dt="p1")))
    commit(t, rows([4], dt="p1"))
    latest = read(t)
    os.remove(t.snapshot_manager.snapshot_path(3))  # the tag's snapshot vanished (gap)
    res = t.maintenance.delete_tag("mid", dry_run=False)
    assert res.deleted_data_files == 0 and read(t) == latest
