"""record_action: one row per action, nesting, failures, Airflow ids, and ledger failures that
never touch the action (retried, spooled, flushed by the next write)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import SnapshotNotFoundError
from paimon_core.ledger import (
    LEDGER_TABLE,
    Ledger,
    current_recording,
    deferred_ledger,
    ledger_context,
    ledger_disabled,
    record_action,
)
from paimon_core.ledger.spool import Spool
from tests.unit.paimon_core.ledger.helpers import (
    LedgerFailingFileIO,
    ledger_rows,
    ledger_snapshot_ids,
    rows,
    small_table,
)


class AirflowSkipException(Exception):  # what Airflow's skip looks like, without Airflow
    pass


def test_no_ledger_no_rows_and_no_table_created(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    assert table.maintenance.expire_snapshots(retain_max=1, retain_min=1).expired_snapshot_ids == (1, 2)
    assert not catalog.database_exists("paimon_maintenance")


def test_facade_call_records_one_row_checked_against_its_result(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog, commits=6)  # compaction.min.file-num is 5
    Ledger(catalog).ensure()
    before = int(time.time() * 1000)
    result = table.maintenance.compact()
    expired = table.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    [compact, expire] = ledger_rows(catalog)
    assert (
        compact["action"] == "compact" and compact["status"] == "success" and compact["table_name"] == "db.t"
    )
    assert (
        (compact["files_read"], compact["bytes_read"])
        == (result.files_read, result.bytes_read)
        == (6, result.bytes_read)
    )
    assert (compact["files_written"], compact["bytes_written"], compact["rows_written"]) == (
        result.files_written,
        result.bytes_written,
        result.rows_written,
    )
    assert (compact["snapshot_before"], compact["snapshot_after"]) == (6, result.snapshot_id) == (6, 7)
    assert compact["table_files"] == 1 and compact["table_bytes"] == result.bytes_written
    assert (
        compact["health_score"] == 100.0 and compact["entry_point"] == "python" and compact["error"] is None
    )
    assert json.loads(str(compact["details"]))["files_read"] == 6
    assert int(compact["start_millis"]) >= before and int(compact["duration_ms"]) >= 0
    assert float(compact["cpu_seconds"]) > 0
    files = sum(
        getattr(expired, k)
        for k in (
            "deleted_data_files",
            "deleted_changelog_files",
            "deleted_manifest_files",
            "deleted_index_files",
            "deleted_statistics_files",
            "deleted_snapshot_files",
        )
    )
    assert expire["status"] == "success" and expire["files_deleted"] == files > 0
    assert (
        expire["bytes_deleted"] == expired.deleted_bytes and expire["table_files"] is None
    )  # no health: not cheap


def test_statuses_no_op_dry_run_failed_skipped(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    Ledger(catalog).ensure()
    table.maintenance.expire_snapshots()  # retention keeps everything: no_op
    table.maintenance.expire_snapshots(retain_max=1, retain_min=1, dry_run=True)
    with pytest.raises(SnapshotNotFoundError) as info:
        table.maintenance.rollback_to(99, dry_run=False)
    with pytest.raises(AirflowSkipException), record_action(table, "create_tag"):
        raise AirflowSkipException("tag period 'none'")
    got = [(r["action"], r["status"], r["error"]) for r in ledger_rows(catalog)]
    assert got == [
        ("expire_snapshots", "no_op", None),
        ("expire_snapshots", "dry_run", None),
        ("rollback_to", "failed", f"SnapshotNotFoundError: {info.value}"),
        ("create_tag", "skipped", "AirflowSkipException: tag period 'none'"),
    ]
    assert table.snapshot_manager.earliest_snapshot_id() == 1  # the dry run deleted nothing


def test_nested_calls_record_once_with_the_outer_action(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    Ledger(catalog).ensure()
    with record_action(table, "expire_snapshots", entry_point="spark_job") as rec:
        table.maintenance.expire_snapshots(retain_max=2, retain_min=1)  # the job's facade call
        table.maintenance.create_tag("t1")
        rec.add_cpu(1.5)
        assert current_recording() is rec
    assert current_recording() is None
    [row] = ledger_rows(catalog)
    assert (row["action"], row["status"], row["entry_point"]) == ("expire_snapshots", "success", "spark_job")
    assert json.loads(str(row["details"]))["expired_snapshot_ids"] == [
        1
    ]  # the inner result, the outer set none
    assert float(row["cpu_seconds"]) >= 1.5


def test_airflow_ids_from_context_and_environment(
    local_warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    Ledger(catalog).ensure()
    monkeypatch.setenv(
        "PAIMON_LEDGER_CONTEXT",
        json.dumps({"dag_id": "env_dag", "run_id": "r1", "task_id": "t", "map_index": 2, "try_number": 3}),
    )
    table.maintenance.create_tag("from_env")
    with ledger_context(dag_id="ctx_dag", task_id="tt", map_index=-1, entry_point="airflow"):
        table.maintenance.create_tag("from_ctx")
    monkeypatch.delenv("PAIMON_LEDGER_CONTEXT")
    table.maintenance.create_tag("plain")
    ids = [
        (r["dag_id"], r["run_id"], r["task_id"], r["map_index"], r["try_number"], r["entry_point"])
        for r in ledger_rows(catalog)
    ]
    assert ids == [
        ("env_dag", "r1", "t", 2, 3, "python"),
        ("ctx_dag", "r1", "tt", -1, 3, "airflow"),
        (None, None, None, None, None, "python"),
    ]
    with pytest.raises(Exception, match="ledger_context takes"), ledger_context(dag="x"):
        pass


def test_disabled_records_nothing(local_warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    Ledger(catalog).ensure()
    with ledger_disabled():
        table.maintenance.create_tag("a")
    monkeypatch.setenv("PAIMON_LEDGER", "off")
    table.maintenance.create_tag("b")
    assert ledger_rows(catalog) == []


def test_deferred_ledger_writes_a_batch_in_one_commit(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    tables = [small_table(catalog, f"db.t{i}") for i in range(3)]
    Ledger(catalog).ensure()
    with deferred_ledger():
        for t in tables:
            t.maintenance.expire_snapshots(retain_max=1, retain_min=1)
            t.maintenance.create_tag("x")
        assert ledger_snapshot_ids(catalog) == []  # nothing written yet
    assert ledger_snapshot_ids(catalog) == [1]
    assert [(r["table_name"], r["action"]) for r in ledger_rows(catalog)] == [
        (f"db.t{i}", a) for i in range(3) for a in ("expire_snapshots", "create_tag")
    ]


def test_a_failing_ledger_never_touches_the_action_and_its_row_lands_later(tmp_path: Path) -> None:
    io = LedgerFailingFileIO()
    catalog = FileSystemCatalog(str(tmp_path / "wh"), file_io=io)
    table = small_table(catalog, commits=6)
    control = small_table(FileSystemCatalog(str(tmp_path / "control")), commits=6)
    Ledger(catalog).ensure()
    with io.fail():
        result = table.maintenance.compact()
        with pytest.raises(SnapshotNotFoundError):
            table.maintenance.rollback_to(99, dry_run=False)  # the action's own error, unchanged
    want = control.maintenance.compact()
    assert io.failed_writes > 0
    assert (result.snapshot_id, result.files_read, result.files_written, result.rows_written) == (
        want.snapshot_id,
        want.files_read,
        want.files_written,
        want.rows_written,
    )
    reread = catalog.get_table("db.t")
    assert reread.to_arrow().sort_by("id").equals(control.to_arrow().sort_by("id"))
    assert reread.snapshot_manager.latest_snapshot_id() == 7 == want.snapshot_id
    assert ledger_rows(catalog) == []
    spool = Spool(catalog.warehouse)
    assert len(spool.pending()) == 2  # one file per failed write
    table.maintenance.create_tag("after")  # the next successful write flushes the spool with its own row
    assert [(r["action"], r["status"]) for r in ledger_rows(catalog)] == [
        ("compact", "success"),
        ("rollback_to", "failed"),
        ("create_tag", "success"),
    ]
    assert spool.pending() == [] and ledger_snapshot_ids(catalog) == [1]


def test_a_corrupt_ledger_snapshot_spools_and_a_spooled_row_is_written_once(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog)
    ledger = Ledger(catalog)
    ledger.ensure()
    table.maintenance.create_tag("first")
    snap = Path(local_warehouse) / "paimon_maintenance.db" / "ledger" / "snapshot" / "snapshot-1"
    good = snap.read_bytes()
    snap.write_bytes(b"{not json")
    result = table.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert result.expired_snapshot_ids == (1, 2)
    assert len(Spool(catalog.warehouse).pending()) == 1
    snap.write_bytes(good)
    # the spooled row already landed (an unknown commit state): the flush must not add it twice
    [spooled] = Spool(catalog.warehouse).claim().records
    Spool(catalog.warehouse).release(Spool(catalog.warehouse).claim())
    ledger.append([spooled])
    with ledger_disabled():
        table.write_arrow(rows(100, 1))
    table.maintenance.create_tag("second")
    got = [(r["action"], r["record_id"]) for r in ledger_rows(catalog)]
    assert [a for a, _ in got] == ["create_tag", "expire_snapshots", "create_tag"]
    assert sum(1 for _, rid in got if rid == spooled.record_id) == 1
    assert Spool(catalog.warehouse).pending() == []


def test_ledger_on_another_table_of_the_same_catalog_is_found_by_path(tmp_path: Path) -> None:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    small_table(catalog, "db.a")
    small_table(catalog, "other.b")
    Ledger(catalog).ensure()
    for name in ("db.a", "other.b", LEDGER_TABLE):
        FileSystemCatalog(str(tmp_path / "wh")).get_table(name).maintenance.expire_snapshots()
    assert [r["table_name"] for r in ledger_rows(catalog)] == ["db.a", "other.b", LEDGER_TABLE]


def test_writes_and_their_automatic_maintenance_record_nothing(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    catalog.create_database("db")
    keep2 = {
        "snapshot.num-retained.max": "2",
        "snapshot.num-retained.min": "1",
        "tag.automatic-creation": "batch",
    }
    table = catalog.create_table("db.w", rows(0, 1).schema, partition_keys=["dt"], options=keep2)
    Ledger(catalog).ensure()
    for i in range(4):
        result = table.write_arrow(rows(i * 10, 10))
    assert result.expired_snapshots == 1 and result.created_tags  # the writer's own expiry and tags ran
    with deferred_ledger():  # and the ledger's own writes (expiring its snapshots) record nothing either
        for _ in range(3):
            table.maintenance.create_tag(f"x{_}")
    assert [r["action"] for r in ledger_rows(catalog)] == ["create_tag"] * 3


def test_a_ledger_that_cannot_be_created_spools_the_row(tmp_path: Path) -> None:
    io = LedgerFailingFileIO()
    catalog = FileSystemCatalog(str(tmp_path / "wh"), file_io=io)
    table = small_table(catalog)
    with io.fail(), record_action(table, "expire_snapshots", entry_point="spark_job", ensure=True) as rec:
        rec.set_result(table.maintenance.expire_snapshots(retain_max=1, retain_min=1))
    assert not Ledger(catalog).exists(refresh=True)
    assert len(Spool(catalog.warehouse).pending()) == 1
    with record_action(table, "create_tag", entry_point="spark_job", ensure=True) as rec:
        rec.set_result(table.maintenance.create_tag("t"))
    assert [(r["action"], r["status"]) for r in ledger_rows(catalog)] == [
        ("expire_snapshots", "success"),
        ("create_tag", "success"),
    ]
