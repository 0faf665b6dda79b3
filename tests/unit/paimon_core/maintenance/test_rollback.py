"""Rollback (Java's RollbackHelper, Paimon 1.2+ metadata-only) and rollback_to_as_latest:
what is deleted, what survives, racing commits, and reads by us and by pypaimon afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import (
    CommitConflictError,
    FileSystemCatalog,
    InvalidArgumentError,
    SnapshotNotFoundError,
    TagNotFoundError,
)
from paimon_core.manifest.manifest_list import write_manifest_list
from paimon_core.operation.commit import replace_manifest_list
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.table.rollback_helper import RollbackResult
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

T0 = 1_704_067_200_000
DAY = 86_400_000


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids], pa.string())})


def _catalog(warehouse: str, clock: ManualClock) -> FileSystemCatalog:
    cat = FileSystemCatalog(warehouse, clock=clock)
    cat.create_database("db", ignore_if_exists=True)
    return cat


def _table(warehouse: str, clock: ManualClock, n: int = 5, **kw: object) -> FileStoreTable:
    """Snapshot k (1-based) adds ids 2(k-1), 2(k-1)+1 and is committed at T0 + k seconds."""
    t = _catalog(warehouse, clock).create_table("db.t", _rows([]).schema, **kw)  # type: ignore[arg-type]
    for k in range(n):
        clock.advance(1000)
        t.write_arrow(_rows([2 * k, 2 * k + 1]))
    return t


def _ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


def _state(t: FileStoreTable) -> dict[str, bytes]:
    """Every metadata file of the table (snapshots, hints, tags, changelogs) with its content."""
    out = {}
    for d in (t.paths.snapshot_dir, t.paths.tag_dir, t.paths.changelog_dir, t.paths.consumer_dir):
        for st in t.file_io.list_files(d):
            out[st.path] = t.file_io.read_bytes(st.path)
    return out


def _rows_at(t: FileStoreTable, sid: int) -> list[int]:
    return _ids(t.copy({"scan.snapshot-id": str(sid)}).to_arrow())


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


# --- rollback_to ------------------------------------------------------------------------------
def test_rollback_to_snapshot_id(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("t2", 2)
    t.maintenance.create_tag("t4", 4)
    want = _rows_at(t, 3)
    data_files = {st.path for st in t.file_io.list_files(f"{t.path}/bucket-0")}
    res = t.maintenance.rollback_to(3, dry_run=False)
    assert isinstance(res, RollbackResult)
    assert (res.previous_snapshot_id, res.current_snapshot_id, res.target_snapshot_id) == (5, 3, 3)
    assert res.deleted_snapshot_ids == (4, 5) and res.deleted_tags == ("t4",) and not res.dry_run
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3]
    assert t.file_io.read_text(f"{t.paths.snapshot_dir}/LATEST") == "3"
    assert t.tag_manager.list_names() == ["t2"]
    assert _ids(t.to_arrow()) == want == list(range(6))
    # Metadata-only (Paimon 1.2+): the data files of snapshots 4 and 5 stay for orphan cleanup.
    assert {st.path for st in t.file_io.list_files(f"{t.path}/bucket-0")} == data_files
    # A new commit continues at 4 on top of the rolled-back state.
    assert t.write_arrow(_rows([100])).snapshot_id == 4
    assert _ids(t.to_arrow()) == [*range(6), 100]
    assert res.to_dict()["deleted_snapshot_ids"] == [4, 5]


def test_rollback_to_tag_and_timestamp(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("v2", 2)
    res = t.maintenance.rollback_to("v2", dry_run=False)
    assert res.target_tag == "v2" and res.current_snapshot_id == 2 and res.deleted_snapshot_ids == (3, 4, 5)
    assert _ids(t.to_arrow()) == [0, 1, 2, 3]
    for k in range(3):  # snapshots 3..5 again, at T0+10s..
        clock.set(T0 + 10_000 + k * 1000)
        t.write_arrow(_rows([50 + k]))
    res = t.maintenance.rollback_to_timestamp(T0 + 11_500, dry_run=False)  # newest snapshot committed at or before: 4
    assert res.target_snapshot_id == 4 and res.deleted_snapshot_ids == (5,)
    assert _ids(t.to_arrow()) == [0, 1, 2, 3, 50, 51]
    before = _state(t)
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.rollback_to_timestamp(T0, dry_run=False)  # before the first snapshot
    assert _state(t) == before


def test_rollback_to_tag_whose_snapshot_expired(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("t1", 1, time_retained="1 d")
    t.maintenance.create_tag("t3", 3)
    sm = t.snapshot_manager
    for sid in (1, 2):  # expired by hand
        t.file_io.delete(sm.snapshot_path(sid))
    t.file_io.overwrite_text(f"{t.paths.snapshot_dir}/EARLIEST", "3")
    res = t.maintenance.rollback_to(1, dry_run=False)  # an int whose snapshot expired: Java falls back to a tag on it
    assert res.target_tag == "t1" and res.restored_snapshot_from_tag
    assert res.deleted_snapshot_ids == (3, 4, 5) and res.deleted_tags == ("t3",)
    assert sm.list_snapshot_ids() == [1]
    text = t.file_io.read_text(sm.snapshot_path(1))
    assert "tagCreateTime" not in text and json.loads(text)["id"] == 1  # trimmed to a snapshot
    assert t.file_io.read_text(f"{t.paths.snapshot_dir}/EARLIEST") == "1"
    assert t.file_io.read_text(f"{t.paths.snapshot_dir}/LATEST") == "1"
    assert _ids(t.to_arrow()) == [0, 1]
    assert t.write_arrow(_rows([9])).snapshot_id == 2


def test_dry_run_changes_nothing(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("t4", 4)
    t.maintenance.reset_consumer("c", 5)
    before = _state(t)
    res = t.maintenance.rollback_to(2, dry_run=True)
    assert res.dry_run and res.deleted_snapshot_ids == (3, 4, 5) and res.deleted_tags == ("t4",)
    assert _state(t) == before
    res = t.maintenance.rollback_to_as_latest(2, dry_run=True)
    assert res.dry_run and res.current_snapshot_id == 6 and res.created_tag is None
    assert _state(t) == before


def test_bad_targets_change_nothing(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    before = _state(t)
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.rollback_to(42, dry_run=False)
    with pytest.raises(TagNotFoundError):
        t.maintenance.rollback_to("nope", dry_run=False)
    for bad in (True, 2.0, None, " "):
        with pytest.raises(InvalidArgumentError):
            t.maintenance.rollback_to(bad, dry_run=False)  # type: ignore[arg-type]
    assert _state(t) == before
    empty = _catalog(warehouse, clock).create_table("db.empty", _rows([]).schema)
    with pytest.raises(SnapshotNotFoundError):
        empty.maintenance.rollback_to(1, dry_run=False)


def test_numeric_targets(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("4", 1)  # a numeric tag name on snapshot 1
    assert t.maintenance.rollback_to(4, dry_run=True).target_snapshot_id == 4  # int: a snapshot id (Java)
    assert t.maintenance.rollback_to("4", dry_run=True).target_snapshot_id == 1  # str: the tag
    assert t.maintenance.rollback_to("3", dry_run=True).target_snapshot_id == 3  # no such tag: a snapshot id


def test_rollback_deletes_long_lived_changelogs(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    cm = ChangelogManager(t.file_io, t.paths)
    for sid in range(1, 5):
        cm.commit_changelog(t.snapshot_manager.snapshot(sid))
    res = t.maintenance.rollback_to(2, dry_run=False)
    assert res.deleted_changelogs == (3, 4)
    assert cm.list_ids() == [1, 2] and cm.latest_id() == 2
    assert t.file_io.read_text(f"{cm.changelog_dir}/LATEST") == "2"


# --- racing commits ---------------------------------------------------------------------------
def _other_handle(warehouse: str, clock: ManualClock) -> FileStoreTable:
    return _catalog(warehouse, clock).get_table("db.t")


def _hook_deletes(
    t: FileStoreTable,
    before: Callable[[str, int], None] | None = None,
    after: Callable[[str, int], None] | None = None,
) -> None:
    """Call ``before``/``after(path, n)`` around the n-th deletion of a snapshot file by ``t``."""
    original = t.file_io.delete
    count = [0]

    def delete(path: str, *, recursive: bool = False) -> bool:
        is_snapshot = "/snapshot/snapshot-" in path
        if is_snapshot:
            count[0] += 1
            if before is not None:
                before(path, count[0])
        out = original(path, recursive=recursive)
        if is_snapshot and after is not None:
            after(path, count[0])
        return out

    t.file_io = _Proxy(t.file_io, delete=delete)  # type: ignore[assignment]
    t.snapshot_manager.file_io = t.file_io
    t.tag_manager.file_io = t.file_io


class _Proxy:
    def __init__(self, inner: object, **overrides: object) -> None:
        self._inner = inner
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_commit_racing_the_rollback_fails_cleanly(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("t4", 4)
    other = _other_handle(warehouse, clock)

    def race(path: str, n: int) -> None:
        if n == 1:  # the other writer still sees snapshot 5 as latest and commits 6 on top of it
            assert other.write_arrow(_rows([77])).snapshot_id == 6

    _hook_deletes(t, before=race)
    with pytest.raises(CommitConflictError, match="undone"):
        t.maintenance.rollback_to(2, dry_run=False)
    # Nothing lost: every snapshot is back, the racing commit is kept, tags untouched.
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5, 6]
    assert t.snapshot_manager.latest_snapshot_id() == 6
    assert t.tag_manager.list_names() == ["t4"]
    assert _ids(other.to_arrow()) == [*range(10), 77]


def test_commit_during_planning_aborts_before_any_change(
    warehouse: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(warehouse, clock)
    other = _other_handle(warehouse, clock)
    from paimon_core.table import rollback_helper

    original = rollback_helper.RollbackHelper._read_or_none
    monkeypatch.setattr(
        rollback_helper.RollbackHelper,
        "_read_or_none",
        lambda self, sid: (other.write_arrow(_rows([77])) if sid == 5 else None, original(self, sid))[1],
    )
    before_ids = t.snapshot_manager.list_snapshot_ids()
    with pytest.raises(CommitConflictError, match="nothing was changed"):
        t.maintenance.rollback_to(3, dry_run=False)
    assert t.snapshot_manager.list_snapshot_ids() == [*before_ids, 6]
    assert _ids(t.to_arrow()) == [*range(10), 77]


def test_commit_on_top_of_the_target_is_kept(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    other = _other_handle(warehouse, clock)

    def commit_after_last(path: str, n: int) -> None:
        if path.endswith("/snapshot-3"):  # deleted last: the writer now sees 2 as latest
            assert other.write_arrow(_rows([88])).snapshot_id == 3

    _hook_deletes(t, after=commit_after_last)
    res = t.maintenance.rollback_to(2, dry_run=False)
    assert res.kept_snapshot_ids == (3,) and res.current_snapshot_id == 3
    assert res.deleted_snapshot_ids == (3, 4, 5)
    assert _ids(other.to_arrow()) == [0, 1, 2, 3, 88]
    assert other.write_arrow(_rows([99])).snapshot_id == 4


def test_commit_based_on_a_deleted_snapshot_is_reported(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    other = _other_handle(warehouse, clock)

    def commit_midway(path: str, n: int) -> None:
        if n == 1:  # snapshot 5 is gone, 3 and 4 remain: the writer commits 5 on top of 4
            assert other.write_arrow(_rows([66])).snapshot_id == 5

    _hook_deletes(t, after=commit_midway)
    with pytest.raises(CommitConflictError, match=r"\[5\] were taken"):
        t.maintenance.rollback_to(2, dry_run=False)
    # Snapshots 3 and 4 are back; 5 is the racing commit (on top of 4), the old 5 was the one
    # being rolled back anyway. History is a consistent chain again.
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5]
    assert _ids(other.to_arrow()) == [*range(8), 66]


def test_rollback_then_orphan_clean_loses_no_live_file(tmp_path: Path) -> None:
    """Issue 19 (PR #5712): after a metadata-only rollback, orphan clean removes exactly the
    files only the rolled-back snapshots used; the table stays readable."""
    import time

    clock = ManualClock(int(time.time() * 1000))
    t = _table(str(tmp_path / "wh"), clock)
    t.maintenance.create_tag("keep", 2)
    scan = t.new_file_store_scan()
    live3 = {e.file.file_name for e in scan.live_entries(t.snapshot_manager.snapshot(3))}
    all_data = {st.name for st in t.file_io.list_files(f"{t.path}/bucket-0")}
    assert len(all_data - live3) == 2
    t.maintenance.rollback_to(3, dry_run=False)
    clock.advance(2 * DAY)
    res = t.maintenance.remove_orphan_files(older_than=clock.now_millis() - DAY, dry_run=False)
    # Exactly the data files only snapshots 4 and 5 used are gone (plus their metadata).
    assert {st.name for st in t.file_io.list_files(f"{t.path}/bucket-0")} == live3
    assert res.deleted_file_count > 2
    assert _ids(t.to_arrow()) == list(range(6))
    assert _ids(t.copy({"scan.tag-name": "keep"}).to_arrow()) == list(range(4))
    assert _rows_at(t, 1) == [0, 1]


# --- rollback_to_as_latest --------------------------------------------------------------------
def test_rollback_to_as_latest_keeps_history_and_tags(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("t4", 4)
    res = t.maintenance.rollback_to_as_latest(2)
    assert (res.previous_snapshot_id, res.target_snapshot_id, res.current_snapshot_id) == (5, 2, 6)
    assert res.created_tag is not None and res.created_tag.startswith("rollback-to-as-latest-2-")
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5, 6]
    assert sorted(t.tag_manager.list_names()) == sorted(["t4", res.created_tag])
    snap = t.snapshot_manager.snapshot(6)
    target = t.snapshot_manager.snapshot(2)
    assert snap.commit_kind.value == "OVERWRITE" and snap.total_record_count == target.total_record_count == 4
    assert snap.delta_record_count == -6 and snap.schema_id == target.schema_id
    assert _ids(t.to_arrow()) == [0, 1, 2, 3]
    assert _rows_at(t, 5) == list(range(10))  # history intact
    assert _ids(t.copy({"scan.tag-name": "t4"}).to_arrow()) == list(range(8))
    # Back to the tag (no new tag) and forward again; then a normal commit.
    res = t.maintenance.rollback_to_as_latest("t4")
    assert res.created_tag is None and res.target_tag == "t4" and res.current_snapshot_id == 7
    assert _ids(t.to_arrow()) == list(range(8))
    assert t.write_arrow(_rows([100])).snapshot_id == 8
    assert _ids(t.to_arrow()) == [*range(8), 100]


def test_rollback_to_as_latest_primary_key_table(warehouse: str, clock: ManualClock) -> None:
    cat = _catalog(warehouse, clock)
    t = cat.create_table("db.pk", _rows([]).schema, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(pa.table({"id": pa.array([2, 4], pa.int64()), "v": pa.array(["new2", "new4"])}))
    want = t.copy({"scan.snapshot-id": "1"}).to_arrow().sort_by("id")
    t.maintenance.rollback_to_as_latest(1)
    assert t.to_arrow().sort_by("id").equals(want)


def test_rollback_to_as_latest_conflict_fails_cleanly(
    warehouse: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _table(warehouse, clock)
    other = _other_handle(warehouse, clock)
    original = write_manifest_list
    calls: list[int] = []

    def racing_write(*args: object, **kw: object) -> int:
        if not calls:
            other.write_arrow(_rows([77]))  # takes snapshot 6 first
        calls.append(1)
        return original(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(replace_manifest_list, "write_manifest_list", racing_write)  # what the publish calls
    manifests_before = {st.name for st in t.file_io.list_files(t.paths.manifest_dir)}
    with pytest.raises(CommitConflictError):
        t.maintenance.rollback_to_as_latest(2)
    assert t.tag_manager.list_names() == []  # the protective tag is removed again
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5, 6]
    # Only the racing commit's metadata was added; ours was cleaned up.
    ours = {st.name for st in t.file_io.list_files(t.paths.manifest_dir)} - manifests_before
    latest6 = t.snapshot_manager.snapshot(6)
    assert latest6.base_manifest_list in ours and latest6.delta_manifest_list in ours
    assert _ids(t.to_arrow()) == [*range(10), 77]


# --- interop: pypaimon reads the rolled-back table -------------------------------------------


@pytest.mark.interop
def test_pypaimon_reads_after_rollbacks(tmp_path: Path, clock: ManualClock, pypaimon: object) -> None:
    wh = str(tmp_path / "wh")
    t = _table(wh, clock)
    t.maintenance.create_tag("t2", 2)
    peer = pypaimon
    t.maintenance.rollback_to(4, dry_run=False)
    assert _ids(peer.read(wh, "db.t")) == _ids(t.to_arrow()) == list(range(8))  # type: ignore[attr-defined]
    t.maintenance.rollback_to_as_latest("t2")
    assert _ids(peer.read(wh, "db.t")) == _ids(t.to_arrow()) == [0, 1, 2, 3]  # type: ignore[attr-defined]
    assert [s["id"] for s in peer.list_snapshots(wh, "db.t")] == [1, 2, 3, 4, 5]  # type: ignore[attr-defined]
    # pypaimon commits on top of our rollback and we read its result.
    peer.write(wh, "db.t", _rows([500]))  # type: ignore[attr-defined]
    assert _ids(t.to_arrow()) == [0, 1, 2, 3, 500]


def test_rollback_as_latest_publish_that_lands_late_keeps_its_manifests(tmp_path: Path) -> None:
    """The publish raises (a timed-out PUT) but lands afterwards: its manifests must still be there."""
    from paimon_core import FileSystemCatalog
    from paimon_core.exceptions import CommitStateUnknownError
    from paimon_core.snapshot import snapshot_commit as sc

    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": pa.array([1], pa.int64())}))
    table.write_arrow(pa.table({"id": pa.array([2], pa.int64())}))
    original = sc.RenamingSnapshotCommit.commit
    held: list[tuple[Any, Any]] = []

    def slow(self: Any, snapshot: Any) -> bool:
        held.append((self, snapshot))
        raise TimeoutError("PUT timed out (request still in flight)")

    sc.RenamingSnapshotCommit.commit = slow  # type: ignore[method-assign]
    try:
        with pytest.raises(CommitStateUnknownError, match="may still land"):
            table.maintenance.rollback_to_as_latest(1)
    finally:
        sc.RenamingSnapshotCommit.commit = original  # type: ignore[method-assign]
    original(*held[0])  # the in-flight PUT lands
    again = catalog.get_table("db.t")
    assert again.latest_snapshot().id == 3
    assert again.to_arrow().column("id").to_pylist() == [1]
