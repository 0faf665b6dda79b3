"""The batch executor of a maintenance pass: many tables' planned actions in one process."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.maintenance.executor import ActionItem, execute_action, execute_batch, order_items

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
DAY = 86_400_000


def _table(catalog: FileSystemCatalog, name: str, commits: int) -> None:
    t = catalog.create_table(name, SCHEMA)
    for i in range(commits):
        t.copy({"write-only": "true"}).write_arrow(pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]}))


@pytest.fixture
def wh(local_warehouse: str) -> FileSystemCatalog:
    c = FileSystemCatalog(local_warehouse)
    c.create_database("db")
    _table(c, "db.a", 6)
    _table(c, "db.b", 3)
    return c


def _rows(catalog: FileSystemCatalog, name: str) -> list[int]:
    return sorted(catalog.get_table(name).to_arrow().column("id").to_pylist())


def test_order_items_groups_tables_in_pass_order() -> None:
    items = [
        ActionItem("db.a", "remove_orphan_files"),
        ActionItem("db.b", "expire_snapshots"),
        ActionItem("db.a", "compact"),
        ActionItem("db.a", "create_tag", {"tag_name": "x"}),
        ActionItem("db.b", "compact"),
    ]
    assert [(i.table, i.action) for i in order_items(items)] == [
        ("db.a", "compact"),
        ("db.a", "create_tag"),
        ("db.a", "remove_orphan_files"),
        ("db.b", "compact"),
        ("db.b", "expire_snapshots"),
    ]


def test_batch_runs_every_table_and_a_retry_changes_nothing(wh: FileSystemCatalog) -> None:
    now = int(time.time() * 1000)
    items = [
        ActionItem(t, a, args)
        for t in ("db.a", "db.b")
        for a, args in (
            ("compact", {"compact_strategy": "full"}),
            ("create_tag", {"tag_name": "2026-11-27"}),
            ("expire_snapshots", {"retain_min": 1, "retain_max": 2}),
            ("remove_orphan_files", {"older_than_days": 2}),
        )
    ]
    before = {t: _rows(wh, t) for t in ("db.a", "db.b")}
    result = execute_batch(wh.get_table, items, commit_user_of=lambda t: f"pass-1:{t}", now_millis=now)
    statuses = {(o.table, o.action): o.status for o in result.outcomes}
    assert statuses == {
        ("db.a", "compact"): "success",
        ("db.a", "create_tag"): "success",
        ("db.a", "expire_snapshots"): "success",
        ("db.a", "remove_orphan_files"): "no_op",
        ("db.b", "compact"): "no_op",  # 3 files: under compaction.min.file-num (5)
        ("db.b", "create_tag"): "success",
        ("db.b", "expire_snapshots"): "success",
        ("db.b", "remove_orphan_files"): "no_op",
    }, result.to_dict()
    assert {t: _rows(wh, t) for t in ("db.a", "db.b")} == before
    a = wh.get_table("db.a")
    assert len(a.new_read_builder().new_scan().plan().splits[0].files) == 1  # compacted into one file
    assert a.tag_manager.try_get("2026-11-27") is not None

    # a retried task (same commit users) changes nothing
    snapshots = {t: wh.get_table(t).snapshot_manager.latest_snapshot_id() for t in ("db.a", "db.b")}
    again = execute_batch(wh.get_table, items, commit_user_of=lambda t: f"pass-1:{t}", now_millis=now)
    assert {o.status for o in again.outcomes} == {"no_op"}, again.to_dict()
    assert {t: wh.get_table(t).snapshot_manager.latest_snapshot_id() for t in ("db.a", "db.b")} == snapshots


def test_a_failing_table_stops_its_own_later_actions_only(wh: FileSystemCatalog) -> None:
    items = [
        ActionItem("db.missing", "compact"),
        ActionItem("db.missing", "expire_snapshots"),
        ActionItem("db.b", "expire_snapshots", {"retain_min": 1, "retain_max": 1}),
        ActionItem("db.a", "bogus_action"),
        ActionItem("db.a", "remove_orphan_files"),
    ]
    result = execute_batch(wh.get_table, items, commit_user_of=lambda t: t, now_millis=int(time.time() * 1000))
    by = {(o.table, o.action): o for o in result.outcomes}
    assert by[("db.missing", "compact")].status == "failed"
    assert "db.missing" in (by[("db.missing", "compact")].error or "")
    assert by[("db.missing", "expire_snapshots")].status == "skipped"
    assert by[("db.b", "expire_snapshots")].status == "success"
    assert by[("db.a", "bogus_action")].status == "failed"
    assert "bogus_action" in (by[("db.a", "bogus_action")].error or "")
    assert by[("db.a", "remove_orphan_files")].status == "skipped"
    assert len(result.failed) == 2


def test_dry_run_changes_nothing(wh: FileSystemCatalog) -> None:
    t = wh.get_table("db.a")
    orphan = os.path.join(t.path, "bucket-0", "data-orphan.parquet")
    os.makedirs(os.path.dirname(orphan), exist_ok=True)
    with open(orphan, "wb") as f:
        f.write(b"x")
    old = time.time() - 3 * 86400
    os.utime(orphan, (old, old))
    listing = sorted(os.listdir(os.path.join(t.path, "snapshot")))
    items = [ActionItem("db.a", a) for a in ("compact", "expire_snapshots", "remove_orphan_files")]
    result = execute_batch(wh.get_table, items, commit_user_of=lambda t: t, now_millis=int(time.time() * 1000), dry_run=True)
    assert {o.status for o in result.outcomes} == {"dry_run"}
    assert sorted(os.listdir(os.path.join(t.path, "snapshot"))) == listing
    assert os.path.exists(orphan)
    # and for real: the old orphan goes
    real = execute_batch(wh.get_table, items[2:], commit_user_of=lambda t: t, now_millis=int(time.time() * 1000))
    assert real.outcomes[0].status == "success" and not os.path.exists(orphan)


def test_orphan_cutoff_is_never_younger_than_a_day(wh: FileSystemCatalog) -> None:
    now = int(time.time() * 1000)
    out = execute_action(
        wh.get_table("db.a"), "remove_orphan_files", {"older_than_days": 0}, commit_user="u", now_millis=now, dry_run=True
    )
    assert out["older_than_millis"] == now - DAY


def test_create_tag_needs_a_name(wh: FileSystemCatalog) -> None:
    with pytest.raises(InvalidArgumentError, match="tag_name"):
        execute_action(wh.get_table("db.a"), "create_tag", {}, commit_user="u", now_millis=0)
