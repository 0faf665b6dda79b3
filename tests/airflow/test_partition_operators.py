"""Partition operators' ``execute`` against real tables: expire (dry run, real, retry, skip when
off, bad input without retries) and mark done (templated partitions, metastore action refused)."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from paimon_core import FileStoreTable, FileSystemCatalog
from tests.airflow.context import render_and_execute, task_context

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
DAYS = ["20000101", "20000102", "29990101"]  # long past and far future: no clock needed


def _table(wh: str, options: dict[str, str] | None = None, name: str = "db.t") -> FileStoreTable:
    t = FileSystemCatalog(wh).create_table(name, SCHEMA, partition_keys=["dt"], options=options)
    t.write_arrow(pa.table({"id": pa.array(range(3), pa.int64()), "dt": DAYS}, schema=SCHEMA))
    return t


def _dts(wh: str, name: str = "db.t") -> list[str]:
    return sorted(FileSystemCatalog(wh).get_table(name).to_arrow().column("dt").to_pylist())


def test_expire_partitions_dry_run_real_and_retry(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.partitions import PaimonExpirePartitionsOperator

    _table(paimon_warehouse)
    dry = PaimonExpirePartitionsOperator(
        task_id="dry", table="db.t", expiration_time="{{ params.keep }}", timestamp_formatter="yyyyMMdd", dry_run=True
    )
    ctx = task_context()
    ctx["params"] = {"keep": "1 d"}
    plan = render_and_execute(dry, ctx)
    assert [p["partition"] for p in plan["expired_partitions"]] == ["dt=20000101", "dt=20000102"]
    assert plan["dry_run"] is True and len(_dts(paimon_warehouse)) == 3
    op = PaimonExpirePartitionsOperator(
        task_id="exp", table="db.t", expiration_time="1 d", timestamp_formatter="yyyyMMdd", max_expires="1"
    )
    out = render_and_execute(op, ctx)
    assert out["commit_kind"] == "OVERWRITE" and out["table"] == "db.t"
    assert _dts(paimon_warehouse) == ["20000102", "29990101"]
    render_and_execute(op, ctx)  # the next run takes the next oldest
    again = render_and_execute(op, ctx)  # a retry with nothing left: no snapshot
    assert again["expired_partitions"] == [] and again["snapshot_id"] is None
    assert _dts(paimon_warehouse) == ["29990101"]


def test_expire_partitions_skips_tables_without_expiry_when_asked(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

    from paimon_airflow.operators.partitions import PaimonExpirePartitionsOperator

    _table(paimon_warehouse)
    _table(paimon_warehouse, {"partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyyMMdd"}, "db.on")
    with pytest.raises(AirflowSkipException):
        render_and_execute(PaimonExpirePartitionsOperator(task_id="e", table="db.t", skip_when_off=True), task_context())
    with pytest.raises(AirflowFailException, match="needs expiration_time"):
        render_and_execute(PaimonExpirePartitionsOperator(task_id="e", table="db.t"), task_context())
    out = render_and_execute(PaimonExpirePartitionsOperator(task_id="e", table="db.on", skip_when_off=True), task_context())
    assert len(out["expired_partitions"]) == 2 and _dts(paimon_warehouse, "db.on") == ["29990101"]
    bad = PaimonExpirePartitionsOperator(task_id="e", table="db.t", expiration_time="1 d", expire_strategy="weekly")
    with pytest.raises(AirflowFailException, match="Unknown partition expiration strategy"):
        render_and_execute(bad, task_context())
    assert len(_dts(paimon_warehouse)) == 3


def test_mark_partition_done(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.partitions import PaimonMarkPartitionDoneOperator

    t = _table(paimon_warehouse)
    op = PaimonMarkPartitionDoneOperator(task_id="done", table="db.t", partitions="dt={{ ds_nodash }}")
    out = render_and_execute(op, task_context("2000-01-02"))
    assert out["partitions"] == ["dt=20000102"]
    assert os.path.isfile(os.path.join(t.path, "dt=20000102", "_SUCCESS"))
    _table(paimon_warehouse, {"partition.mark-done-action": "done-partition"}, "db.meta")
    meta = PaimonMarkPartitionDoneOperator(task_id="done", table="db.meta", partitions="dt=20000101")
    with pytest.raises(AirflowFailException, match="without metastore"):
        render_and_execute(meta, task_context())
