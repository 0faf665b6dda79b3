"""The compaction lease, the compaction operators' arguments, and ``create_tag``'s ``ignore_if_exists``,
against real warehouses (``execute`` with a task context; no DAG run)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.io.local_io import LocalFileIO
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import table_with_snapshots

LEASE = "_airflow/compaction-leases/db.t.json"


class _Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def _lease(wh: str, holder: str, clock: _Clock, ttl: int = 1000) -> Any:
    from paimon_airflow.utils.lease import CompactionLease

    return CompactionLease(LocalFileIO(), wh, "db.t", holder=holder, ttl_millis=ttl, now_millis=clock)


def test_lease_one_holder_at_a_time_then_expiry(tmp_path: Any) -> None:
    wh = str(tmp_path)
    clock = _Clock(10_000)
    a, b = _lease(wh, "a", clock), _lease(wh, "b", clock)
    assert a.acquire() is None
    held = b.acquire()
    assert held is not None and held.holder == "a" and held.expires_millis == 11_000
    assert b.release() is False  # not b's: left alone
    assert json.loads((tmp_path / LEASE).read_text())["holder"] == "a"
    clock.now = 10_500
    assert a.acquire() is None  # a's retry (same task instance) takes it back, renewed
    clock.now = 11_200
    assert b.acquire() is not None  # renewed at 10 500 + ttl: still a's
    clock.now = 11_500
    assert b.acquire() is None  # expired: broken and taken
    assert json.loads((tmp_path / LEASE).read_text())["holder"] == "b"
    assert a.release() is False and b.release() is True
    assert not (tmp_path / LEASE).exists()
    # the lease directory is not a database: the catalog does not see it
    FileSystemCatalog(wh).create_database("db")
    assert FileSystemCatalog(wh).list_databases() == ["db"]


def test_lease_unreadable_file_counts_as_expired(tmp_path: Any) -> None:
    (tmp_path / LEASE).parent.mkdir(parents=True)
    (tmp_path / LEASE).write_text("{not json")
    lease = _lease(str(tmp_path), "a", _Clock(5))
    assert lease.acquire() is None and lease.current() is not None


def test_compact_operator_skips_waits_or_fails_on_a_held_lease(paimon_warehouse: str) -> None:
    import datetime as dt

    from airflow.sdk.exceptions import AirflowException, AirflowSkipException

    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    table_with_snapshots(paimon_warehouse, n=6)
    other = _lease(paimon_warehouse, "paimon_maintenance/r/table.compact/0", _Clock(2**41), ttl=10**6)
    assert other.acquire() is None

    def op(**kw: Any) -> PaimonCompactOperator:
        return PaimonCompactOperator(
            task_id="compact", table="db.t", compact_strategy="full", mode="local", **kw
        )

    with pytest.raises(AirflowSkipException, match="being compacted by paimon_maintenance"):
        render_and_execute(op(), task_context())
    with pytest.raises(AirflowException, match="being compacted"):
        render_and_execute(op(if_busy="fail"), task_context())
    with pytest.raises(AirflowException, match="being compacted"):
        render_and_execute(op(if_busy="wait", lease_wait=dt.timedelta(seconds=0)), task_context())
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.latest_snapshot_id() == 6
    assert other.release() is True
    out = render_and_execute(op(), task_context())
    assert out["snapshot_id"] == 7
    assert not os.path.exists(os.path.join(paimon_warehouse, LEASE))  # released after the job


def test_compact_operator_argv_from_templates(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    op = PaimonCompactOperator(
        task_id="compact",
        table="db.t",
        compact_strategy="{{ params.strategy }}",
        partition_idle_time="{{ params.idle }}",
        dry_run="{{ params.dry_run }}",
    )
    ctx = task_context()
    ctx["params"] = {"strategy": "minor", "idle": "1 d", "dry_run": True}
    op.render_template_fields(ctx)
    argv = op.job_argv(ctx)
    assert argv[argv.index("--compact_strategy") + 1] == "minor"
    assert argv[argv.index("--partition_idle_time") + 1] == "1 d"
    assert "--dry-run" in argv and "--commit_user" not in argv
    ctx["params"] = {"strategy": "minor", "idle": None, "dry_run": False}
    op = PaimonCompactOperator(
        task_id="compact",
        table="db.t",
        partition_idle_time="{{ params.idle }}",
        dry_run="{{ params.dry_run }}",
    )
    op.render_template_fields(ctx)
    argv = op.job_argv(ctx)
    assert "--partition_idle_time" not in argv and "--dry-run" not in argv and "--commit_user" in argv
    bad = PaimonCompactOperator(task_id="compact", table="db.t", dry_run="maybe")
    with pytest.raises(AirflowFailException, match="dry_run"):
        bad.job_argv(ctx)


def test_compact_database_operator_argv(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.compact_database import PaimonCompactDatabaseOperator

    op = PaimonCompactDatabaseOperator(
        task_id="cd",
        including_databases="db",
        mode="combined",
        excluding_tables=r".*_tmp",
        table_options={"b": "2", "a": "1"},
        partition_idle_time="",
        compact_strategy="minor",
        execution="local",
    )
    ctx = task_context()
    assert op.job_argv(ctx)[2:] == [
        "--including_databases", "db",
        "--mode", "combined",
        "--excluding_tables", r".*_tmp",
        "--table_options", "a=1,b=2",
        "--compact_strategy", "minor",
        "--execution", "local",
        "--commit_user", op.job_argv(ctx)[-3], "--commit_identifier", "1",
    ]  # fmt: skip
    assert not op.runs_spark_submit
    op._busy = {"db.x": "other"}  # tables whose lease another task holds are excluded too
    argv = op.job_argv(ctx)
    assert argv[argv.index("--excluding_tables") + 1] == r"(?:.*_tmp)|db\.x"
    assert PaimonCompactDatabaseOperator(task_id="cd2").runs_spark_submit  # apply, distributed


def test_create_tag_ignore_if_exists(paimon_warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.maintenance import PaimonCreateTagOperator

    t = table_with_snapshots(paimon_warehouse, n=3)
    t.maintenance.create_tag("v1", 1)
    ctx = task_context()
    kept = render_and_execute(
        PaimonCreateTagOperator(task_id="tag", table="db.t", tag_name="v1", snapshot_id=3), ctx
    )
    assert kept["created"] is False and kept["reason"] == "exists" and kept["snapshot_id"] == 1
    strict = PaimonCreateTagOperator(
        task_id="tag", table="db.t", tag_name="v1", snapshot_id=3, ignore_if_exists=False
    )
    with pytest.raises(AirflowFailException, match="already exists"):
        render_and_execute(strict, ctx)
    # another writer creates the tag between the check and the create: still "exists", not an error
    from paimon_core.tag.tag_manager import TagManager

    real = TagManager.try_get
    calls: list[str] = []

    def late(self: TagManager, name: str) -> Any:
        calls.append(name)
        return None if len(calls) == 1 else real(self, name)

    monkeypatch.setattr(TagManager, "try_get", late)
    raced = render_and_execute(
        PaimonCreateTagOperator(task_id="tag", table="db.t", tag_name="v1", snapshot_id=3), ctx
    )
    assert raced["created"] is False and raced["snapshot_id"] == 1 and len(calls) == 2
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").tag_manager.tags()["v1"].id == 1
