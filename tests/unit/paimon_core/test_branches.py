"""Branches: create (from a tag, empty), write and read a branch, fast_forward, delete, bad names,
orphan cleanup keeping branch files, and pypaimon reading (and writing) our branches.

Layout checked against Java's: ``branch/branch-<name>/{snapshot,schema,tag}`` hold the branch's
own metadata; manifests, index and data files stay in the table's directories.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import (
    BranchAlreadyExistsError,
    BranchNotFoundError,
    InvalidArgumentError,
    SnapshotNotFoundError,
    TagNotFoundError,
)
from paimon_core.schema.data_types import IntType
from paimon_core.schema.schema_change import AddColumn
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

LATER = 4_000_000_000_000  # a clock past every file's mtime (year 2096)


def _cleaner(wh: str) -> FileStoreTable:
    """db.t with a clock at LATER, so every file is old enough for orphan clean."""
    return FileSystemCatalog(wh, clock=ManualClock(LATER)).get_table("db.t")


def _rows(ids: list[int], v: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [v] * len(ids)})


def _ids(t: FileStoreTable) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def _values(t: FileStoreTable) -> dict[int, str]:
    d = t.to_arrow().to_pydict()
    return dict(zip(d["id"], d["v"], strict=True))


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def _table(wh: str, commits: int = 3, *, pk: bool = True) -> FileStoreTable:
    """db.t (id, v); commit i upserts ids i*10, i*10+1 with v='m<i>'; tag t<i> on each snapshot."""
    c = FileSystemCatalog(wh)
    c.create_database("db", ignore_if_exists=True)
    t = c.create_table(
        "db.t",
        pa.schema([("id", pa.int64()), ("v", pa.string())]),
        primary_keys=["id"] if pk else (),
        options={"bucket": "1"} if pk else None,
    )
    for i in range(1, commits + 1):
        t.write_arrow(_rows([i * 10, i * 10 + 1], f"m{i}"))
        t.maintenance.create_tag(f"t{i}", i)
    return t


def _tree(root: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def _data_files(table_dir: str) -> set[str]:
    return {k for k in _tree(table_dir) if "/bucket-" in f"/{k}" and k.split("/")[-1].startswith("data-")}


# --- create ---------------------------------------------------------------------------------


def test_create_from_tag_copies_tag_snapshot_and_schemas_in_javas_layout(wh: str) -> None:
    t = _table(wh)
    FileSystemCatalog(wh).alter_table("db.t", [AddColumn("extra", IntType())])  # schema-1, after t2
    res = t.maintenance.create_branch("b", "t2")
    assert res.to_dict() == {
        "table": "db.t", "branch": "b", "tag": "t2", "snapshot_id": 2, "schema_id": 0, "created": True,
    }  # fmt: skip
    root = Path(t.path)
    files = sorted(
        str(p.relative_to(root / "branch/branch-b"))
        for p in (root / "branch/branch-b").rglob("*")
        if p.is_file()
    )
    # the tag, its snapshot, the schemas up to the snapshot's (not schema-1), hints: nothing else
    assert files == [
        "schema/schema-0",
        "snapshot/EARLIEST",
        "snapshot/LATEST",
        "snapshot/snapshot-2",
        "tag/tag-t2",
    ]
    assert (root / "branch/branch-b/snapshot/snapshot-2").read_bytes() == (
        root / "snapshot/snapshot-2"
    ).read_bytes()
    assert (root / "branch/branch-b/tag/tag-t2").read_bytes() == (root / "tag/tag-t2").read_bytes()
    b = FileSystemCatalog(wh).get_table("db.t$branch_b")
    assert b.branch == "b" and b.name == "db.t$branch_b" and b.schema.id == 0
    assert _values(b) == {10: "m1", 11: "m1", 20: "m2", 21: "m2"}
    assert b.tag_manager.list_names() == ["t2"] and b.latest_snapshot().id == 2  # type: ignore[union-attr]
    assert t.branches() == ["b"]


def test_create_from_a_tag_whose_snapshot_expired_writes_it_from_the_tag(wh: str) -> None:
    t = _table(wh)
    os.remove(os.path.join(t.path, "snapshot", "snapshot-1"))  # as if expired; the tag keeps it
    t.maintenance.create_branch("b", "t1")
    snap = Snapshot.from_json(Path(t.path, "branch/branch-b/snapshot/snapshot-1").read_bytes())
    assert snap.id == 1 and snap.tag_create_time is None  # the tag trimmed back to a snapshot
    assert _ids(t.switch_to_branch("b")) == [10, 11]


def test_empty_branch_has_every_schema_up_to_the_latest_and_starts_at_snapshot_1(wh: str) -> None:
    t = _table(wh, 2)
    FileSystemCatalog(wh).alter_table("db.t", [AddColumn("extra", IntType())])
    res = t.maintenance.create_branch("e")
    assert (res.tag, res.snapshot_id, res.schema_id) == (None, None, 1)
    root = Path(t.path, "branch/branch-e")
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["schema-0", "schema-1"]
    e = FileSystemCatalog(wh).get_table("db.t$branch_e")
    assert e.latest_snapshot() is None and e.to_arrow().num_rows == 0
    assert [f.name for f in e.schema.fields] == ["id", "v", "extra"]
    r = e.write_arrow(
        pa.table({"id": pa.array([5], pa.int64()), "v": ["e"], "extra": pa.array([1], pa.int32())})
    )
    assert r.snapshot_id == 1 and (root / "snapshot" / "snapshot-1").is_file()
    assert _ids(e) == [5] and _ids(FileSystemCatalog(wh).get_table("db.t")) == [10, 11, 20, 21]


def test_ignore_if_exists_and_existing_branch(wh: str) -> None:
    t = _table(wh, 1)
    t.maintenance.create_branch("b", "t1")
    before = _tree(t.path)
    with pytest.raises(BranchAlreadyExistsError, match="'b' already exists"):
        t.maintenance.create_branch("b")
    assert not t.maintenance.create_branch("b", ignore_if_exists=True).created
    assert _tree(t.path) == before


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("main", "default branch"),
        ("", "blank"),
        ("   ", "blank"),
        ("123", "pure numeric"),
        ("a/b", "Invalid branch name"),
        ("..", "Invalid branch name"),
        ("../../x", "Invalid branch name"),
        ("a.b", "Invalid branch name"),
        ("a$b", "Invalid branch name"),
        ("a b", "Invalid branch name"),
        ("a\nb", "Invalid branch name"),
    ],
)
def test_bad_branch_names_fail_clearly_and_change_nothing(wh: str, name: str, needle: str) -> None:
    t = _table(wh, 1)
    before = _tree(os.path.dirname(t.path))
    with pytest.raises(InvalidArgumentError, match=needle):
        t.maintenance.create_branch(name, "t1")
    with pytest.raises(InvalidArgumentError):
        t.maintenance.create_branch(name)
    assert _tree(os.path.dirname(t.path)) == before


def test_unknown_tag_fails_and_leaves_no_branch(wh: str) -> None:
    t = _table(wh, 1)
    with pytest.raises(TagNotFoundError, match="nope"):
        t.maintenance.create_branch("b", "nope")
    assert not Path(t.path, "branch").exists() and t.branches() == []


# --- read and write a branch ----------------------------------------------------------------


def test_writes_go_to_the_branch_and_main_is_unchanged(wh: str) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("b", "t1")
    main_before = _tree(os.path.join(t.path, "snapshot"))
    b = FileSystemCatalog(wh).get_table("db.t$branch_b")
    r = b.write_arrow(_rows([10, 99], "b"))
    assert r.snapshot_id == 2  # the branch's own sequence, after the tagged snapshot 1
    assert _values(b) == {10: "b", 11: "m1", 99: "b"}
    main = FileSystemCatalog(wh).get_table("db.t")
    assert _values(main) == {10: "m1", 11: "m1", 20: "m2", 21: "m2"}
    assert _tree(os.path.join(t.path, "snapshot")) == main_before
    # main's later commits stay out of the branch
    main.write_arrow(_rows([30], "m3"))
    assert 30 not in _ids(FileSystemCatalog(wh).get_table("db.t$branch_b"))
    # the branch's data files and manifests live in the table's directories
    branch_root = Path(t.path, "branch/branch-b")
    assert {p.name for p in branch_root.iterdir()} == {"schema", "snapshot", "tag"}
    snap = Snapshot.from_json((branch_root / "snapshot/snapshot-2").read_bytes())
    assert Path(t.path, "manifest", snap.delta_manifest_list).is_file()


def test_branch_handles_by_option_switch_and_pickle(wh: str) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("b", "t1")
    t.switch_to_branch("b").write_arrow(_rows([7], "b"))
    by_option = t.copy({"branch": "b"})
    by_switch = t.switch_to_branch("b")
    unpickled = pickle.loads(pickle.dumps(by_option))
    for h in (by_option, by_switch, unpickled):
        assert h.branch == "b" and _ids(h) == [7, 10, 11]
    # time travel inside the branch, and back to main
    assert _ids(t.copy({"branch": "b", "scan.snapshot-id": "1"})) == [10, 11]
    assert _ids(by_switch.switch_to_branch("main")) == [10, 11, 20, 21]
    assert by_switch.switch_to_branch("main").name == "db.t"
    with pytest.raises(BranchNotFoundError):
        t.switch_to_branch("nope")
    with pytest.raises(BranchNotFoundError):
        FileSystemCatalog(wh).get_table("db.t$branch_nope")
    with pytest.raises(InvalidArgumentError):
        FileSystemCatalog(wh).get_table("db.t$branch_../x")


def test_tags_and_consumers_of_a_branch_live_in_the_branch(wh: str) -> None:
    t = _table(wh, 1)
    t.maintenance.create_branch("b", "t1")
    b = t.switch_to_branch("b")
    b.write_arrow(_rows([5], "b"))
    b.maintenance.create_tag("bt", 2)
    b.maintenance.reset_consumer("c1", 2)
    root = Path(t.path, "branch/branch-b")
    assert (root / "tag/tag-bt").is_file() and (root / "consumer/consumer-c1").is_file()
    assert t.tag_manager.list_names() == ["t1"] and not Path(t.path, "consumer").exists()
    assert b.inspect.system_table("tags").column("tag_name").to_pylist() == ["bt", "t1"]
    rows = t.inspect.system_table("branches").to_pylist()
    assert [r["branch_name"] for r in rows] == ["b"] and rows[0]["create_time"] is not None


# --- fast_forward -------------------------------------------------------------------------------


def test_fast_forward_replaces_main_from_the_branchs_earliest_snapshot(wh: str) -> None:
    t = _table(wh, 4)  # main: snapshots 1-4, tags t1-t4
    t.maintenance.create_branch("b", "t2")
    b = t.switch_to_branch("b")
    b.write_arrow(_rows([20, 50], "b3"))  # branch snapshot 3
    b.write_arrow(_rows([51], "b4"))  # branch snapshot 4
    b.write_arrow(_rows([52], "b5"))  # branch snapshot 5
    branch_rows = _values(b)
    last = b.latest_snapshot().id  # type: ignore[union-attr]  # 5, or 6 with a compaction
    snap1 = Path(t.path, "snapshot/snapshot-1").read_bytes()
    before = _tree(t.path)
    plan = t.maintenance.fast_forward("b", dry_run=True)
    assert _tree(t.path) == before  # a dry run changes nothing
    assert (plan.from_snapshot_id, plan.latest_snapshot_id) == (2, last)
    assert plan.removed_snapshots == (2, 3, 4) and plan.copied_snapshots == tuple(range(2, last + 1))
    assert plan.removed_tags == ("t2", "t3", "t4") and plan.copied_tags == ("t2",)
    res = t.maintenance.fast_forward("b", dry_run=False)
    assert res.to_dict() == {**plan.to_dict(), "dry_run": False}
    main = FileSystemCatalog(wh).get_table("db.t")
    assert _values(main) == branch_rows and main.latest_snapshot().id == last  # type: ignore[union-attr]
    assert Path(t.path, "snapshot/snapshot-1").read_bytes() == snap1  # older snapshots stay
    for i in range(2, last + 1):
        assert (
            Path(t.path, f"snapshot/snapshot-{i}").read_bytes()
            == Path(t.path, f"branch/branch-b/snapshot/snapshot-{i}").read_bytes()
        )
    assert main.tag_manager.list_names() == ["t1", "t2"]
    assert (
        Path(t.path, "snapshot/LATEST").read_text() == str(last)
        and Path(t.path, "snapshot/EARLIEST").read_text() == "1"
    )
    # main goes on from there; the branch still exists and is unchanged
    assert main.write_arrow(_rows([60], "m6")).snapshot_id == last + 1
    assert _values(FileSystemCatalog(wh).get_table("db.t$branch_b")) == branch_rows
    assert _ids(main.copy({"scan.snapshot-id": "1"})) == [10, 11]


def test_fast_forward_bad_inputs_change_nothing(wh: str) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("e")  # no snapshot
    t.maintenance.create_branch("b", "t1")
    before = _tree(t.path)
    with pytest.raises(InvalidArgumentError, match="do not use in fast-forward"):
        t.maintenance.fast_forward("main", dry_run=False)
    with pytest.raises(BranchNotFoundError, match="nope"):
        t.maintenance.fast_forward("nope", dry_run=False)
    with pytest.raises(SnapshotNotFoundError, match="does not have snapshot"):
        t.maintenance.fast_forward("e", dry_run=False)
    with pytest.raises(InvalidArgumentError, match="current branch"):
        t.switch_to_branch("b").maintenance.fast_forward("b", dry_run=False)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.fast_forward("../b", dry_run=False)
    assert _tree(t.path) == before


def test_fast_forward_a_branch_into_another_branch(wh: str) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("dev", "t2")
    t.maintenance.create_branch("feature", "t2")
    t.switch_to_branch("feature").write_arrow(_rows([70], "f"))
    t.switch_to_branch("dev").maintenance.fast_forward("feature", dry_run=False)
    assert _ids(FileSystemCatalog(wh).get_table("db.t$branch_dev")) == [10, 11, 20, 21, 70]
    assert _ids(FileSystemCatalog(wh).get_table("db.t")) == [10, 11, 20, 21]


# --- delete ---------------------------------------------------------------------------------------


def test_delete_branch_removes_only_its_metadata(wh: str) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("b", "t1")
    t.maintenance.create_branch("c")
    t.switch_to_branch("b").write_arrow(_rows([5], "b"))
    data_before = _data_files(t.path)
    manifests_before = set(os.listdir(os.path.join(t.path, "manifest")))
    plan = t.maintenance.delete_branch("b, c", dry_run=True)
    assert plan.to_dict() == {
        "table": "db.t", "dry_run": True, "deleted_branches": ["b", "c"], "deleted_snapshots": 2, "deleted_tags": 1,
    }  # fmt: skip
    assert t.branches() == ["b", "c"]
    res = t.maintenance.delete_branch("b,c", dry_run=False)
    assert res.deleted_branches == ("b", "c") and not res.dry_run
    assert t.branches() == [] and os.listdir(os.path.join(t.path, "branch")) == []
    assert _data_files(t.path) == data_before  # shared and branch-only data files both stay
    assert set(os.listdir(os.path.join(t.path, "manifest"))) == manifests_before
    assert _values(FileSystemCatalog(wh).get_table("db.t")) == {10: "m1", 11: "m1", 20: "m2", 21: "m2"}


def test_delete_branch_bad_inputs_change_nothing(wh: str) -> None:
    t = _table(wh, 1)
    t.maintenance.create_branch("b", "t1")
    before = _tree(t.path)
    with pytest.raises(BranchNotFoundError, match="nope"):
        t.maintenance.delete_branch("b,nope", dry_run=False)  # one missing: none deleted
    with pytest.raises(BranchNotFoundError):
        t.maintenance.delete_branch("main", dry_run=False)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.delete_branch("b,", dry_run=False)
    with pytest.raises(InvalidArgumentError, match="handle on it"):
        t.switch_to_branch("b").maintenance.delete_branch("b", dry_run=False)
    with pytest.raises(InvalidArgumentError, match="scan.fallback-branch"):
        t.copy({"scan.fallback-branch": "b"}).maintenance.delete_branch("b", dry_run=False)
    assert _tree(t.path) == before


# --- orphan cleanup ----------------------------------------------------------------------------


def test_orphan_clean_keeps_files_of_live_branches_and_drops_them_once_deleted(wh: str) -> None:
    t = _table(wh, 2, pk=False)
    t.maintenance.create_branch("b", "t1")
    before = _data_files(t.path)
    t.switch_to_branch("b").write_arrow(_rows([100, 101], "b"))
    branch_only = _data_files(t.path) - before
    assert len(branch_only) == 1
    t.maintenance.delete_tag("t1", dry_run=False)  # main's tag goes; the branch keeps its own copy
    t.write_arrow(_rows([200], "m3"), overwrite=True)
    res = _cleaner(wh).maintenance.remove_orphan_files(older_than=LATER - 86_400_000, dry_run=False)
    assert res.deleted_file_count == 0, res.deleted_paths  # all referenced by main or branch b
    assert branch_only <= _data_files(t.path)
    assert _values(FileSystemCatalog(wh).get_table("db.t$branch_b")) == {
        10: "m1",
        11: "m1",
        100: "b",
        101: "b",
    }
    t.maintenance.delete_branch("b", dry_run=False)
    res = _cleaner(wh).maintenance.remove_orphan_files(older_than=LATER - 86_400_000, dry_run=False)
    deleted = {os.path.relpath(p, t.path) for p in res.deleted_paths if "/bucket-" in p}
    assert deleted == branch_only  # only what the deleted branch alone referenced
    assert _data_files(t.path) == before | (_data_files(t.path) - before - branch_only)
    assert _values(FileSystemCatalog(wh).get_table("db.t")) == {200: "m3"}
    assert _ids(t.copy({"scan.snapshot-id": "1"})) == [10, 11]


# --- pypaimon ----------------------------------------------------------------------------------


@pytest.mark.interop
def test_pypaimon_reads_and_writes_our_branch(wh: str, pypaimon: Any) -> None:
    t = _table(wh, 2)
    t.maintenance.create_branch("b", "t1")
    t.maintenance.create_branch("e")
    t.switch_to_branch("b").write_arrow(_rows([10, 99], "b"))
    theirs = pypaimon.read(wh, "db.t$branch_b").sort_by("id")
    assert theirs.to_pydict() == {"id": [10, 11, 99], "v": ["b", "m1", "b"]}
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == [10, 11, 20, 21]
    assert pypaimon.read(wh, "db.t$branch_e").num_rows == 0
    # pypaimon commits into our branch layout; we read its commit
    pypaimon.write(wh, "db.t$branch_b", _rows([11, 98], "p"))
    assert _values(FileSystemCatalog(wh).get_table("db.t$branch_b")) == {10: "b", 11: "p", 98: "p", 99: "b"}
    t.maintenance.fast_forward("b", dry_run=False)
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == [10, 11, 98, 99]


# --- maintenance of one branch never deletes what another branch reads -------------------------


def _expire_all_but_latest(t: FileStoreTable) -> tuple[int, ...]:
    return t.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=LATER).expired_snapshot_ids


def test_main_expiry_keeps_what_a_branch_reads(wh: str) -> None:
    t = _table(wh, 2, pk=False)
    t.maintenance.create_branch("b", "t1")
    t.switch_to_branch("b").write_arrow(_rows([5], "b"))
    t.maintenance.delete_tag("t1", dry_run=False)
    t.maintenance.delete_tag("t2", dry_run=False)
    t.write_arrow(_rows([9], "m"), overwrite=True)  # main drops every file of snapshots 1-2
    assert _expire_all_but_latest(t) == (1, 2)
    # main's expiry found snapshot 1's manifests and data files unused in main, but branch b reads them
    b = FileSystemCatalog(wh).get_table("db.t$branch_b")
    assert _values(b) == {10: "m1", 11: "m1", 5: "b"}
    assert _values(FileSystemCatalog(wh).get_table("db.t")) == {9: "m"}
    # once the branch is gone, orphan clean takes what only it kept
    t.maintenance.delete_branch("b", dry_run=False)
    assert _cleaner(wh).maintenance.remove_orphan_files(older_than=LATER - 86_400_000, dry_run=False).deleted_file_count > 0
    assert _values(FileSystemCatalog(wh).get_table("db.t")) == {9: "m"}


def test_branch_expiry_keeps_what_main_reads(wh: str) -> None:
    t = _table(wh, 2, pk=False)
    t.maintenance.create_branch("b", "t1")
    b = t.switch_to_branch("b")
    b.maintenance.delete_tag("t1", dry_run=False)  # the branch's copy of the tag: nothing protects snapshot 1 in the branch
    b.write_arrow(_rows([5], "b"), overwrite=True)  # the branch drops main's files
    b.write_arrow(_rows([6], "b"))
    assert _expire_all_but_latest(b) == (1, 2)
    assert _values(FileSystemCatalog(wh).get_table("db.t$branch_b")) == {5: "b", 6: "b"}
    main = FileSystemCatalog(wh).get_table("db.t")
    assert _values(main) == {10: "m1", 11: "m1", 20: "m2", 21: "m2"}
    assert _ids(main.copy({"scan.tag-name": "t1"})) == [10, 11]


def test_tag_deletion_keeps_what_a_branch_reads(wh: str) -> None:
    t = _table(wh, 3, pk=False)
    t.maintenance.create_branch("b", "t1")
    t.maintenance.delete_tag("t2", dry_run=False)
    t.maintenance.delete_tag("t3", dry_run=False)
    t.write_arrow(_rows([9], "m"), overwrite=True)
    _expire_all_but_latest(t)  # snapshots 1-3 go; tag t1 (and branch b) keep snapshot 1's files
    res = t.maintenance.delete_tag("t1", dry_run=False)  # t1's files are used by no main snapshot or tag any more...
    assert res.deleted_data_files == 0 and res.deleted_manifest_files == 0  # ...but branch b reads them
    assert _values(FileSystemCatalog(wh).get_table("db.t$branch_b")) == {10: "m1", 11: "m1"}
