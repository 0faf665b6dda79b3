"""PaimonSparkJobOperator: spark-submit (real local Spark) and plain-subprocess jobs, errors, retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    # the result came through the job's result file under the warehouse, read and deleted
    assert list((Path(paimon_warehouse) / "_airflow" / "results").iterdir()) == []
    retry = render_and_execute(op, ctx)  # same (dag, run, task, map index): the commit landed already
    assert retry["already_committed"] is True and retry["in_task_process"] is True  # no JVM
    assert {k: retry[k] for k in first if k not in ("seconds", "already_committed")} == {
        k: v for k, v in first.items() if k not in ("seconds", "already_committed")
    }  # the job's result shape and values
    table = FileSystemCatalog(paimon_warehouse).get_table("db.events")
    assert table.snapshot_manager.latest_snapshot_id() == 1
    data = table.to_arrow()
    assert data.num_rows == 5 and set(data.column("dt").to_pylist()) == {"2026-01-01"}


def test_compact_local_mode_retry_commits_once(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    table_with_snapshots(paimon_warehouse, n=6)  # six small files (compaction.min.file-num is 5)
    op = PaimonCompactOperator(
        task_id="compact", table="db.t", compact_strategy="full", mode="local", in_process_max_bytes=0
    )
    assert not op.runs_spark_submit
    ctx = task_context()
    first = render_and_execute(op, ctx)  # the job, in a subprocess
    assert first["status"] == "ok" and "in_task_process" not in first, first
    table = FileSystemCatalog(paimon_warehouse).get_table("db.t")
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT"), first
    retry = render_and_execute(op, ctx)  # a retry of the same task instance: settled in this process
    assert retry["already_committed"] is True and retry["in_task_process"] is True, retry
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


class _NoJob:
    """Stands in for spark-submit and the job subprocess: records each start, answers ``result``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, result: dict[str, object]) -> None:
        import json

        from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

        self.argvs: list[list[str]] = []
        self.result = result

        def run(_op: object, argv: list[str]) -> tuple[list[str], int]:
            self.argvs.append(list(argv))
            # the job's one result line goes to --result-file (what the operator reads)
            result_file = Path(argv[argv.index("--result-file") + 1])
            result_file.parent.mkdir(parents=True, exist_ok=True)
            result_file.write_text(json.dumps(self.result) + "\n")
            return [], 0

        monkeypatch.setattr(PaimonSparkJobOperator, "_run_spark_submit", run)
        monkeypatch.setattr(PaimonSparkJobOperator, "_run_subprocess", run)


def test_ingest_retry_of_a_landed_commit_starts_no_job(
    paimon_warehouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_airflow.operators.spark_job import PaimonIngestOperator

    jobs = _NoJob(monkeypatch, {"job": "ingest", "status": "ok", "already_committed": False})
    table = FileSystemCatalog(paimon_warehouse).create_table(
        "db.events", pa.schema([("id", pa.int64()), ("v", pa.string())])
    )
    table.write_arrow(pa.table({"id": [0], "v": ["other"]}))  # another writer's snapshot 1
    # snapshot 2: what the first try of d/r1/ingest committed (the job's commit user, identifier 1)
    builder = table.new_stream_write_builder("ingest-db.events-d/r1/ingest/-1")
    write = builder.new_write()
    write.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    builder.new_commit().commit(write.prepare_commit(), 1)
    table.write_arrow(pa.table({"id": [3], "v": ["later"]}))  # snapshot 3, another writer again
    args = ["--source", _source(tmp_path), "--logical-date", "{{ ds }}", "--overwrite"]

    def ingest(run_id: str) -> dict[str, object]:
        op = PaimonIngestOperator(task_id="ingest", table="db.events", job_args=args)
        return dict(render_and_execute(op, task_context("2026-01-03", dag_id="d", run_id=run_id, task_id="ingest")))

    retry = ingest("r1")
    assert jobs.argvs == []  # no spark-submit, no subprocess
    assert retry["already_committed"] is True and retry["in_task_process"] is True
    assert (retry["commit_user"], retry["commit_identifier"], retry["snapshot_id"]) == (
        "ingest-db.events-d/r1/ingest/-1", 1, 2,
    )  # fmt: skip
    assert retry["delta_record_count"] == 2 and retry["logical_date"] == "2026-01-03"
    assert retry["overwrite"] is True and retry["run_id"] == "d/r1/ingest/-1"
    # another run id has committed nothing: the job runs (through spark-submit)
    assert ingest("r2") == jobs.result
    assert len(jobs.argvs) == 1 and jobs.argvs[0][jobs.argvs[0].index("--run-id") + 1] == "d/r2/ingest/-1"
    # a table the ingest would create: nothing committed either
    op = PaimonIngestOperator(task_id="ingest", table="db.new", job_args=args)
    render_and_execute(op, task_context("2026-01-03", dag_id="d", run_id="r1", task_id="ingest"))
    assert len(jobs.argvs) == 2
    assert FileSystemCatalog(paimon_warehouse).get_table("db.events").snapshot_manager.latest_snapshot_id() == 3


def test_compaction_small_in_task_process_big_through_spark(
    paimon_warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    jobs = _NoJob(monkeypatch, {"job": "compact", "status": "ok", "tasks": 1})
    for name in ("db.small", "db.big"):
        table_with_snapshots(paimon_warehouse, name, n=6)  # six small files: full compaction rewrites them
    table_with_snapshots(paimon_warehouse, "db.one", n=1)  # nothing to compact
    ctx = task_context()

    def compact(table: str, **kwargs: Any) -> dict[str, Any]:
        op = PaimonCompactOperator(task_id="compact", table=table, compact_strategy="full", **kwargs)
        assert op.runs_spark_submit  # mode distributed: what would start a JVM
        return dict(render_and_execute(op, ctx))

    small = compact("db.small")  # well under the default 64 MiB: compacted here
    assert jobs.argvs == []
    assert small["in_task_process"] is True and small["mode"] == "local" and small["files_read"] == 6
    t = FileSystemCatalog(paimon_warehouse).get_table("db.small")
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT")
    assert latest.commit_user == small["commit_user"] and t.to_arrow().num_rows == 60
    retry = compact("db.small")
    assert retry["already_committed"] is True and jobs.argvs == []
    assert FileSystemCatalog(paimon_warehouse).get_table("db.small").snapshot_manager.latest_snapshot_id() == 7

    nothing = compact("db.one", in_process_max_bytes=0)  # an empty plan never needs the job
    assert nothing["in_task_process"] is True and nothing["tasks"] == 0 and jobs.argvs == []
    assert FileSystemCatalog(paimon_warehouse).get_table("db.one").snapshot_manager.latest_snapshot_id() == 1

    # over the threshold (and forced Spark): the job runs, with the task's commit identity
    for kwargs in ({"in_process_max_bytes": 100}, {"use_spark_submit": True}):
        assert compact("db.big", **kwargs) == jobs.result
        assert "--commit_user" in jobs.argvs[-1] and "--mode" not in jobs.argvs[-1]
    assert len(jobs.argvs) == 2
    assert FileSystemCatalog(paimon_warehouse).get_table("db.big").snapshot_manager.latest_snapshot_id() == 6
