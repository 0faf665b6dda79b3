"""Decoupled changelog lifecycle: snapshot expiry writes changelog-N, expire_changelogs removes it."""

from __future__ import annotations

import os

import pytest

from paimon_core import InvalidArgumentError
from paimon_core.operation.expire_changelogs import ExpireChangelogsResult
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .expiry_helpers import (
    HOUR,
    T0,
    attach_changelog,
    commit,
    list_all_files,
    make_table,
    read,
    rows,
    unreferenced_files,
)

DECOUPLED = {"snapshot.time-retained": "1 h", "changelog.time-retained": "10 d"}


def _table(warehouse: str, *, pk: bool = False, **extra: str) -> tuple[FileStoreTable, ManualClock]:
    clock = ManualClock(T0)
    t = make_table(warehouse, pk=pk, clock=clock, options={**DECOUPLED, **extra})
    for i in range(8):
        commit(t, rows([i], f"c{i}"), overwrite=(i % 3 == 2))
    return t, clock


def _changelog_ids(t: FileStoreTable) -> list[int]:
    return ChangelogManager(t.file_io, t.paths).list_ids()


def test_snapshot_expiry_writes_changelogs_and_changelog_expiry_removes_them(warehouse: str) -> None:
    t, clock = _table(warehouse)
    assert t.options.changelog_lifecycle_decoupled
    latest = read(t)
    clock.advance(2 * HOUR)  # old for snapshots, young for changelogs
    data_before = {f for f in list_all_files(t.file_io, t.path) if f.startswith("bucket-")}
    res = t.maintenance.expire_snapshots(retain_min=2)
    assert res.expired_snapshot_ids == tuple(range(1, 7)) and res.written_changelogs == 6
    # Without a changelog producer the appended files are the changelog: all kept.
    assert res.deleted_data_files == 0
    assert {f for f in list_all_files(t.file_io, t.path) if f.startswith("bucket-")} == data_before
    cm = ChangelogManager(t.file_io, t.paths)
    assert _changelog_ids(t) == list(range(1, 7)) and cm.latest_id() == 6 and cm.earliest_id() == 1
    assert cm.try_changelog(3).id == 3 and read(t) == latest  # type: ignore[union-attr]
    assert unreferenced_files(t) == set()

    assert t.maintenance.expire_changelogs(retain_min=2).expired_changelog_ids == ()  # too young
    clock.advance(11 * 24 * HOUR)
    before = list_all_files(t.file_io, t.path)
    dry = t.maintenance.expire_changelogs(retain_min=2, dry_run=True)
    assert list_all_files(t.file_io, t.path) == before
    res = t.maintenance.expire_changelogs(retain_min=2)
    assert isinstance(res, ExpireChangelogsResult)
    # The latest changelog (6) stays as the range's retained end, as in Java.
    assert res.expired_changelog_ids == dry.expired_changelog_ids == (1, 2, 3, 4, 5)
    assert res.deleted_data_files == dry.deleted_data_files > 0
    assert _changelog_ids(t) == [6] and cm.earliest_id() == 6
    assert read(t) == latest and unreferenced_files(t) == set()

    res = t.maintenance.expire_changelogs(delete_all=True)
    assert res.expired_changelog_ids == (6,) and _changelog_ids(t) == []
    assert not t.file_io.exists(f"{t.paths.changelog_dir}/LATEST")
    assert read(t) == latest and unreferenced_files(t) == set()


def test_tags_protect_files_from_changelog_expiry(local_warehouse: str) -> None:
    t, clock = _table(local_warehouse)
    t.tag_manager.create_from_snapshot_id("t2", t.snapshot_manager, 2)
    tagged = read(t, tag="t2")
    clock.advance(2 * HOUR)
    t.maintenance.expire_snapshots(retain_min=2)
    clock.advance(11 * 24 * HOUR)
    t.maintenance.expire_changelogs(retain_min=2)
    t.maintenance.expire_changelogs(delete_all=True)
    assert read(t, tag="t2") == tagged and unreferenced_files(t) == set()


def test_changelog_producer_files(local_warehouse: str) -> None:
    """With a producer, snapshot expiry keeps changelog files only while decoupled."""
    # a primary-key table (Java refuses changelog-producer on append tables, as create does since
    # issue 17) whose producer writes no changelog of its own here: write-only, no compaction runs
    producer = {"changelog-producer": "full-compaction", "write-only": "true"}
    coupled = make_table(local_warehouse, pk=True, options=producer, name="coupled")
    for i in range(4):
        commit(coupled, rows([i]))
    path = attach_changelog(coupled, 2)
    assert isinstance(coupled.clock, ManualClock)
    coupled.clock.advance(2 * HOUR)
    res = coupled.maintenance.expire_snapshots(retain_min=1)
    assert res.deleted_changelog_files == 1 and not os.path.exists(path)
    assert unreferenced_files(coupled) == set()

    t, clock = _table(local_warehouse, pk=True, **producer)
    path = attach_changelog(t, 3)
    clock.advance(2 * HOUR)
    res = t.maintenance.expire_snapshots(retain_min=2)
    assert res.deleted_changelog_files == 0 and os.path.exists(path) and res.deleted_data_files > 0
    assert unreferenced_files(t) == set()
    clock.advance(11 * 24 * HOUR)
    res = t.maintenance.expire_changelogs(retain_min=2)
    assert res.deleted_changelog_files == 1 and not os.path.exists(path)
    t.maintenance.expire_changelogs(delete_all=True)
    assert unreferenced_files(t) == set()


def test_not_decoupled_writes_no_changelog(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    for i in range(4):
        commit(t, rows([i]))
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(2 * HOUR)
    assert t.maintenance.expire_snapshots(retain_min=1).written_changelogs == 0
    assert _changelog_ids(t) == [] and t.maintenance.expire_changelogs().expired_changelog_ids == ()


def test_delete_all_refuses_an_inconsistent_table(local_warehouse: str) -> None:
    t, clock = _table(local_warehouse)
    clock.advance(2 * HOUR)
    t.maintenance.expire_snapshots(retain_min=2)
    cm = ChangelogManager(t.file_io, t.paths)
    # A changelog that is not older than the earliest snapshot: the table is inconsistent.
    cm.commit_changelog(t.snapshot_manager.snapshot(7))
    before = list_all_files(t.file_io, t.path)
    with pytest.raises(InvalidArgumentError, match="earliest"):
        t.maintenance.expire_changelogs(delete_all=True)
    assert list_all_files(t.file_io, t.path) == before
    with pytest.raises(InvalidArgumentError):
        t.maintenance.expire_changelogs(retain_max=1, retain_min=2)
