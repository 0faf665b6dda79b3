"""In-process maintenance operators' ``execute`` against real tables, retries included."""

from __future__ import annotations

import datetime as dt
import os
import time

import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import millis, table_with_snapshots


def _reload(wh: str, name: str = "db.t"):  # type: ignore[no-untyped-def]
    return FileSystemCatalog(wh).get_table(name)


def test_expire_snapshots_and_retry(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.maintenance import PaimonExpireSnapshotsOperator

    table_with_snapshots(paimon_warehouse, n=5)
    op = PaimonExpireSnapshotsOperator(
        task_id="expire", table="db.t", retain_max="{{ params.keep }}", retain_min=1
    )
    ctx = task_context()
    ctx["params"] = {"keep": 2}
    dry = PaimonExpireSnapshotsOperator(task_id="dry", table="db.t", retain_max=2, retain_min=1, dry_run=True)
    assert render_and_execute(dry, ctx)["expired_snapshot_ids"] == [1, 2, 3]
    assert _reload(paimon_warehouse).snapshot_manager.earliest_snapshot_id() == 1
    out = render_and_execute(op, ctx)
    assert out["expired_snapshot_ids"] == [1, 2, 3] and out["table"]
    sm = _reload(paimon_warehouse).snapshot_manager
    assert (sm.earliest_snapshot_id(), sm.latest_snapshot_id()) == (4, 5)
    again = render_and_execute(op, ctx)  # a retry: nothing left to expire
    assert again["expired_snapshot_ids"] == []
    assert _reload(paimon_warehouse).snapshot_manager.earliest_snapshot_id() == 4


def test_create_tag_per_logical_date_from_the_right_snapshot(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.maintenance import PaimonCreateTagOperator

    times = [
        millis("2026-01-01", 10),
        millis("2026-01-02", 10),
        millis("2026-01-02", 20),
        millis("2026-01-04", 1),
    ]
    table_with_snapshots(paimon_warehouse, commit_times=times)
    results = {}
    for day in ("2025-12-31", "2026-01-01", "2026-01-02", "2026-01-03"):
        op = PaimonCreateTagOperator(task_id="tag", table="db.t", time_retained="7 d")
        results[day] = render_and_execute(op, task_context(day))
    assert results["2025-12-31"]["created"] is False and results["2025-12-31"]["reason"] == "no_snapshot"
    tags = _reload(paimon_warehouse).tag_manager.tags()
    # each day's tag holds the last snapshot committed by the end of that day (not the latest)
    assert {name: snap.id for name, snap in tags.items()} == {
        "2026-01-01": 1,
        "2026-01-02": 3,
        "2026-01-03": 3,
    }
    assert tags["2026-01-02"].tag_time_retained is not None
    # a retry / re-run of a day adds nothing and changes nothing
    again = render_and_execute(
        PaimonCreateTagOperator(task_id="tag", table="db.t"), task_context("2026-01-02")
    )
    assert again == {**again, "created": False, "reason": "exists", "snapshot_id": 3}
    assert len(_reload(paimon_warehouse).tag_manager.list_names()) == 3


def test_delete_and_expire_tags(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.maintenance import PaimonDeleteTagOperator, PaimonExpireTagsOperator

    t = table_with_snapshots(paimon_warehouse, n=3)
    for name, sid in (("a", 1), ("b", 2), ("c", 3)):
        t.maintenance.create_tag(name, sid)
    assert PaimonDeleteTagOperator(task_id="plan", table="db.t", tag_names="a").is_dry_run is True  # the default
    op = PaimonDeleteTagOperator(task_id="del", table="db.t", tag_names="a,b", dry_run=False)
    assert render_and_execute(op, task_context())["deleted_tags"] == ["a", "b"]
    retry = render_and_execute(op, task_context())  # a retry after the deletion landed
    assert retry["deleted_tags"] == [] and retry["missing_tags"] == ["a", "b"]
    strict = PaimonDeleteTagOperator(task_id="del2", table="db.t", tag_names=["zz"], ignore_missing=False)
    from airflow.sdk.exceptions import AirflowFailException

    with pytest.raises(AirflowFailException, match="TagNotFoundError"):
        render_and_execute(strict, task_context())
    future = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    expire = PaimonExpireTagsOperator(
        task_id="exp", table="db.t", older_than=future.isoformat(), dry_run=True
    )
    assert render_and_execute(expire, task_context())["expired_tags"] == ["c"]
    assert _reload(paimon_warehouse).tag_manager.list_names() == ["c"]


def test_rollback_dry_run_then_real_then_retry(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.maintenance import PaimonRollbackOperator

    table_with_snapshots(paimon_warehouse, n=4)
    plan = render_and_execute(
        PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id="2", dry_run=True), task_context()
    )
    assert plan["dry_run"] is True and plan["target_snapshot_id"] == 2
    assert _reload(paimon_warehouse).snapshot_manager.latest_snapshot_id() == 4
    default = render_and_execute(PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=2), task_context())
    assert default["dry_run"] is True  # rollback_to's default: a dry run
    op = PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=2, dry_run=False)
    out = render_and_execute(op, task_context())
    assert out["current_snapshot_id"] == 2 and set(out["deleted_snapshot_ids"]) == {3, 4}
    render_and_execute(op, task_context())  # retry: already there
    t = _reload(paimon_warehouse)
    assert t.snapshot_manager.latest_snapshot_id() == 2
    assert t.to_arrow().num_rows == 20
    from airflow.sdk.exceptions import AirflowFailException

    with pytest.raises(AirflowFailException, match="exactly one"):
        render_and_execute(
            PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=1, tag="x"), task_context()
        )


def test_reset_consumer(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.maintenance import PaimonResetConsumerOperator

    t = table_with_snapshots(paimon_warehouse, n=3)
    plan = render_and_execute(
        PaimonResetConsumerOperator(
            task_id="rc", table="db.t", consumer_id="c1", next_snapshot_id=2, dry_run=True
        ),
        task_context(),
    )
    assert plan["previous_next_snapshot_id"] is None and plan["latest_snapshot_id"] == 3
    assert t.consumer_manager.consumer("c1") is None
    op = PaimonResetConsumerOperator(task_id="rc", table="db.t", consumer_id="c1", next_snapshot_id="2")
    assert render_and_execute(op, task_context())["next_snapshot_id"] == 2
    assert render_and_execute(op, task_context())["previous_next_snapshot_id"] == 2  # retry: same state
    assert _reload(paimon_warehouse).consumer_manager.consumers() == {"c1": 2}
    delete = PaimonResetConsumerOperator(task_id="rc", table="db.t", consumer_id="c1")
    assert render_and_execute(delete, task_context())["deleted"] is True
    assert _reload(paimon_warehouse).consumer_manager.consumers() == {}


def test_remove_orphan_files(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.maintenance import PaimonRemoveOrphanFilesOperator

    t = table_with_snapshots(paimon_warehouse, n=2)
    bucket_dir = os.path.join(t.path, "bucket-0")
    old = os.path.join(bucket_dir, "data-orphan-old.parquet")
    young = os.path.join(bucket_dir, "data-orphan-young.parquet")
    for path in (old, young):
        with open(path, "wb") as f:
            f.write(b"x" * 10)
    three_days_ago = time.time() - 3 * 86400
    os.utime(old, (three_days_ago, three_days_ago))
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    # a cutoff of an hour ago is refused (terminal: no retry)
    recent = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    with pytest.raises(AirflowFailException, match="less than 1 day"):
        render_and_execute(
            PaimonRemoveOrphanFilesOperator(task_id="o", table="db.t", older_than=recent, dry_run=False),
            task_context(today),
        )
    # default cutoff: data_interval_end - 1 day; the interval of yesterday ends today 00:00
    yesterday = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    dry = render_and_execute(
        PaimonRemoveOrphanFilesOperator(task_id="o", table="db.t"), task_context(yesterday)
    )
    assert dry["dry_run"] is True and [os.path.basename(p) for p in dry["deleted_paths"]] == [
        "data-orphan-old.parquet"
    ]
    assert os.path.exists(old)
    op = PaimonRemoveOrphanFilesOperator(task_id="o", table="db.t", dry_run=False)
    assert render_and_execute(op, task_context(yesterday))["deleted_file_count"] == 1
    assert not os.path.exists(old) and os.path.exists(young)
    assert render_and_execute(op, task_context(yesterday))["deleted_file_count"] == 0  # retry
    assert _reload(paimon_warehouse).to_arrow().num_rows == 20


def test_missing_table_fails_without_retry(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.maintenance import PaimonExpireSnapshotsOperator

    op = PaimonExpireSnapshotsOperator(task_id="expire", table="db.nope", retries=3)
    with pytest.raises(AirflowFailException, match="TableNotFoundError"):
        render_and_execute(op, task_context())
