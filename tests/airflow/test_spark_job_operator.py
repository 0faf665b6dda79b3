"""PaimonSparkJobOperator: spark-submit (real local Spark) and plain-subprocess jobs, errors, retries."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import table_with_snapshots


def _source(tmp_path: Path, n: int = 5) -> str:
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(
        pa.table({"id": pa.array(range(n), pa.int64()), "v": [f"v{i}" for i in range(n)]}),
        src / "part-0.parquet",
    )
    return str(src)


def test_job_argv_and_commit_identity(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.spark_job import PaimonCompactOperator, PaimonIngestOperator

    op = PaimonIngestOperator(
        task_id="ingest", table="db.e", job_args=["--source", "/s", "--logical-date", "{{ ds }}"]
    )
    ctx = task_context("2026-01-02", dag_id="d", run_id="r1", task_id="ingest", map_index=3)
    op.render_template_fields(ctx)
    assert op.runs_spark_submit
    assert op.job_argv(ctx) == [
        "--warehouse", paimon_warehouse, "--table", "db.e", "--run-id", "d/r1/ingest/3",
        "--source", "/s", "--logical-date", "2026-01-02",
    ]  # fmt: skip
    compact = PaimonCompactOperator(
        task_id="c",
        table="db.e",
        partitions="dt=2026-01-01",
        compact_strategy="full",
        options={"a": "1"},
        dry_run=True,
    )
    assert compact.job_argv(ctx)[4:] == [
        "--partitions", "dt=2026-01-01", "--compact_strategy", "full", "--options", "a=1", "--dry-run",
    ]  # fmt: skip


def test_metadata_job_runs_as_subprocess(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    table_with_snapshots(paimon_warehouse, n=4)
    op = PaimonSparkJobOperator(
        task_id="expire",
        job="expire_snapshots",
        table="db.t",
        job_args=["--retain-max", "{{ params.keep }}", "--retain-min", "1"],
    )
    assert not op.runs_spark_submit
    ctx = task_context()
    ctx["params"] = {"keep": 2}
    out = render_and_execute(op, ctx)
    assert out["status"] == "ok" and out["expired_snapshot_ids"] == [1, 2]
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.earliest_snapshot_id() == 3


def test_terminal_job_error_fails_without_retry(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    missing = PaimonSparkJobOperator(task_id="x", job="expire_snapshots", table="db.missing", retries=3)
    with pytest.raises(AirflowFailException, match="TableNotFoundError"):
        render_and_execute(missing, task_context())
    bad_arg = PaimonSparkJobOperator(task_id="x", job="create_tag", table="db.missing", job_args=["--nope"])
    with pytest.raises(AirflowFailException, match="UsageError"):
        render_and_execute(bad_arg, task_context())
    # an unknown job prints an error line too; no retry either
    with pytest.raises(AirflowException):
        render_and_execute(
            PaimonSparkJobOperator(task_id="x", job="no_such_job", table="db.t"), task_context()
        )


@pytest.mark.integration
def test_ingest_through_spark_submit_retry_commits_once(paimon_warehouse: str, tmp_path: Path) -> None:
    from paimon_airflow.operators.spark_job import PaimonIngestOperator

    source = _source(tmp_path)
    args = ["--source", source, "--logical-date", "{{ ds }}", "--overwrite", "--num-partitions", "1"]
    op = PaimonIngestOperator(
        task_id="ingest", table="db.events", job_args=args, conf={"spark.sql.shuffle.partitions": "2"}
    )
    ctx = task_context("2026-01-01")
    first = render_and_execute(op, ctx)
    assert first["status"] == "ok" and first["already_committed"] is False
    retry = render_and_execute(op, ctx)  # same (dag, run, task, map index): the commit landed already
    assert retry["already_committed"] is True
    table = FileSystemCatalog(paimon_warehouse).get_table("db.events")
    assert table.snapshot_manager.latest_snapshot_id() == 1
    data = table.to_arrow()
    assert data.num_rows == 5 and set(data.column("dt").to_pylist()) == {"2026-01-01"}


def test_compact_local_mode_retry_commits_once(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    table_with_snapshots(paimon_warehouse, n=6)  # six small files (compaction.min.file-num is 5)
    op = PaimonCompactOperator(task_id="compact", table="db.t", compact_strategy="full", mode="local")
    assert not op.runs_spark_submit
    ctx = task_context()
    first = render_and_execute(op, ctx)
    assert first["status"] == "ok", first
    table = FileSystemCatalog(paimon_warehouse).get_table("db.t")
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT"), first
    render_and_execute(op, ctx)  # a retry of the same task instance
    table = FileSystemCatalog(paimon_warehouse).get_table("db.t")
    assert table.snapshot_manager.latest_snapshot_id() == 7
    assert table.to_arrow().num_rows == 60


def test_object_store_credentials_never_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    monkeypatch.setenv(
        "AIRFLOW_CONN_PAIMON_S3",
        json.dumps(
            {
                "conn_type": "paimon",
                "host": "s3://lake/wh",
                "login": "AKID",
                "password": "SECRET",
                "extra": {"endpoint_url": "http://127.0.0.1:9000"},
            }
        ),
    )
    op = PaimonSparkJobOperator(task_id="x", job="expire_snapshots", table="db.t", paimon_conn_id="paimon_s3")
    argv = op.job_argv(task_context())
    assert argv == [
        "--warehouse", "s3://lake/wh", "--table", "db.t", "--storage-option", "endpoint_url=http://127.0.0.1:9000",
    ]  # fmt: skip
    env = op._env()
    assert env["AWS_ACCESS_KEY_ID"] == "AKID" and env["AWS_SECRET_ACCESS_KEY"] == "SECRET"
