"""Every maintenance method of the table facade records exactly one ledger row with the right
action and status. The methods are found on ``table.maintenance`` (:class:`MaintenanceTable`), not
listed here: a method added later fails this test until it records (``@recorded``) and has a
scenario below."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from paimon_core import FileStoreTable, FileSystemCatalog
from paimon_core.ledger import ACTIONS, Ledger, ledger_disabled
from paimon_core.ledger.metrics import metrics_of
from paimon_core.ledger.recorder import result_dict
from paimon_core.table.maintenance import MaintenanceTable
from tests.unit.paimon_core.ledger.helpers import (
    interleaved_de_table,
    ledger_rows,
    old_file,
    rows,
    small_table,
)


def facade_methods() -> list[str]:
    return sorted(
        name
        for name, member in vars(MaintenanceTable).items()
        if not name.startswith("_") and inspect.isfunction(member)
    )


@dataclass(frozen=True)
class Scenario:
    call: Callable[[FileStoreTable], Any]
    status: str
    setup: Callable[[FileStoreTable], object] = lambda t: None


def _orphan(t: FileStoreTable) -> None:
    old_file(os.path.join(t.path, "dt=2024-01-01", "bucket-0", "data-orphan.parquet"))


def _consumer(t: FileStoreTable) -> None:
    from paimon_core.consumer.consumer_manager import Consumer

    t.consumer_manager.reset_consumer("c1", Consumer(1))


def _branch_at_1(t: FileStoreTable) -> None:
    t.maintenance.create_tag("b0", 1)
    t.maintenance.create_branch("b", "b0")


def _data_evolution(t: FileStoreTable) -> None:
    """db.t again, as a data-evolution table whose partitions' row ids interleave."""
    catalog = FileSystemCatalog(os.path.dirname(os.path.dirname(t.path)))
    catalog.drop_table(t.name)
    interleaved_de_table(catalog, t.name)


def _watermarks(t: FileStoreTable) -> None:
    """Two more commits with watermarks 1000 and 2000."""
    for i, wm in enumerate((1000, 2000)):
        write = t.new_batch_write_builder().new_write()
        write.write_arrow(rows(500 + 10 * i, 3))
        t.new_file_store_commit(f"wm-{i}").commit(write.prepare_commit(), 2**63 - 1, watermark=wm)


def _branch_from_tag(t: FileStoreTable) -> None:
    t.maintenance.create_tag("b0", 2)
    t.maintenance.create_branch("b", "b0")


def _old_partition(t: FileStoreTable) -> None:
    t.write_arrow(rows(900, 3, dt="2000-01-01"))


SCENARIOS: dict[str, Scenario] = {
    "expire_snapshots": Scenario(lambda t: t.maintenance.expire_snapshots(retain_max=2, retain_min=1), "success"),
    "expire_changelogs": Scenario(lambda t: t.maintenance.expire_changelogs(), "no_op"),
    "remove_orphan_files": Scenario(
        lambda t: t.maintenance.remove_orphan_files(older_than=int(time.time() * 1000) - 86_400_000, dry_run=False), "success", _orphan
    ),
    "remove_unexisting_files": Scenario(lambda t: t.maintenance.remove_unexisting_files(dry_run=False), "no_op"),
    "compact": Scenario(lambda t: t.maintenance.compact(), "success"),
    "compact_manifest": Scenario(lambda t: t.maintenance.compact_manifest(dry_run=True), "dry_run"),
    "expire_partitions": Scenario(
        lambda t: t.maintenance.expire_partitions("30 d", timestamp_formatter="yyyy-MM-dd"), "success", _old_partition
    ),
    "mark_partition_done": Scenario(lambda t: t.maintenance.mark_partition_done("dt=2024-01-01"), "success"),
    "create_tag": Scenario(lambda t: t.maintenance.create_tag("t1"), "success"),
    "create_tag_from_timestamp": Scenario(lambda t: t.maintenance.create_tag_from_timestamp("t0", 0), "success"),
    "replace_tag": Scenario(lambda t: t.maintenance.replace_tag("t1", 1), "success", lambda t: t.maintenance.create_tag("t1")),
    "rename_tag": Scenario(lambda t: t.maintenance.rename_tag("t1", "t2"), "success", lambda t: t.maintenance.create_tag("t1")),
    "delete_tag": Scenario(lambda t: t.maintenance.delete_tag("t1", dry_run=False), "success", lambda t: t.maintenance.create_tag("t1", 1)),
    "expire_tags": Scenario(lambda t: t.maintenance.expire_tags(), "no_op"),
    "trigger_tag_automatic_creation": Scenario(lambda t: t.maintenance.trigger_tag_automatic_creation(), "no_op"),
    "rollback_to": Scenario(lambda t: t.maintenance.rollback_to(1, dry_run=False), "success"),
    "rollback_to_timestamp": Scenario(
        lambda t: t.maintenance.rollback_to_timestamp(int(time.time() * 1000), dry_run=True), "dry_run"
    ),
    "rollback_to_as_latest": Scenario(lambda t: t.maintenance.rollback_to_as_latest(1), "success"),
    "reset_consumer": Scenario(lambda t: t.maintenance.reset_consumer("c1", 2), "success", _consumer),
    "clear_consumers": Scenario(lambda t: t.maintenance.clear_consumers(dry_run=False), "success", _consumer),
    "create_branch": Scenario(lambda t: t.maintenance.create_branch("b"), "success"),
    "delete_branch": Scenario(lambda t: t.maintenance.delete_branch("b", dry_run=False), "success", lambda t: t.maintenance.create_branch("b")),
    "fast_forward": Scenario(lambda t: t.maintenance.fast_forward("b", dry_run=True), "dry_run", _branch_from_tag),
    "rename_branch": Scenario(lambda t: t.maintenance.rename_branch("b", "b2"), "success", lambda t: t.maintenance.create_branch("b")),
    "merge_branch": Scenario(lambda t: t.maintenance.merge_branch("b"), "no_op", _branch_at_1),
    "purge_files": Scenario(lambda t: t.maintenance.purge_files(dry_run=True), "dry_run"),
    "repair_earliest_snapshot": Scenario(lambda t: t.maintenance.repair_earliest_snapshot(1), "no_op"),
    "create_tag_from_watermark": Scenario(lambda t: t.maintenance.create_tag_from_watermark("w", 1500), "success", _watermarks),
    "rollback_to_watermark": Scenario(lambda t: t.maintenance.rollback_to_watermark(1500, dry_run=False), "success", _watermarks),
    "drop_partition": Scenario(lambda t: t.maintenance.drop_partition("dt=2024-01-01", dry_run=False), "success"),
    "remove_unexisting_manifests": Scenario(lambda t: t.maintenance.remove_unexisting_manifests(dry_run=False), "no_op"),
    "rewrite_file_index": Scenario(lambda t: t.maintenance.rewrite_file_index(), "no_op"),
    "reassign_row_id": Scenario(lambda t: t.maintenance.reassign_row_id(), "success", _data_evolution),
}


def test_every_facade_method_is_recorded_and_has_a_scenario() -> None:
    methods = facade_methods()
    assert len(methods) >= 23
    undecorated = [m for m in methods if getattr(getattr(MaintenanceTable, m), "__ledger_action__", None) != m]
    assert undecorated == [], "decorate with @recorded(<action>) (paimon_core.ledger.recorder)"
    assert sorted(SCENARIOS) == methods, "add a Scenario for each new maintenance method"
    assert set(methods) <= set(ACTIONS)


@pytest.mark.parametrize("method", facade_methods())
def test_facade_method_writes_exactly_one_row(method: str, local_warehouse: str) -> None:
    scenario = SCENARIOS[method]
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog, commits=6)
    Ledger(catalog).ensure()
    with ledger_disabled():
        scenario.setup(table)
    table = catalog.get_table("db.t")
    before = table.snapshot_manager.latest_snapshot_id()
    result = scenario.call(table)
    [row] = ledger_rows(catalog)
    assert (row["table_name"], row["action"], row["status"]) == ("db.t", method, scenario.status), row[
        "error"
    ]
    assert row["snapshot_before"] == before
    assert row["snapshot_after"] == catalog.get_table("db.t").snapshot_manager.latest_snapshot_id()
    reported = metrics_of(method, result_dict(result))
    assert {k: row[k] for k in reported} == reported  # the row says what the action reported
