"""The ``ingest`` job: sources, logical-date partitions, run-id idempotency, overwrite, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from spark_jobs import ingest
from spark_jobs.common.args import UsageError
from tests.integration.helpers import catalog, core_rows, events

REPO = Path(__file__).resolve().parents[2]


def _plan(wh: str, table: str, source: str, *extra: str) -> ingest.IngestPlan:
    return ingest.parse_args(["--warehouse", wh, "--table", table, "--source", source, *extra])


def _source(tmp_path: Path, fmt: str, data: pa.Table) -> str:
    d = tmp_path / f"src-{fmt}"
    d.mkdir()
    if fmt == "parquet":
        pq.write_table(data, d / "part-0.parquet")
    elif fmt == "csv":
        pacsv.write_csv(data, d / "part-0.csv")
    else:
        (d / "part-0.json").write_text("\n".join(json.dumps(r) for r in data.to_pylist()))
    return str(d)


@pytest.mark.parametrize("writer", ["native", "datasource"])
def test_run_id_makes_ingest_idempotent_into_the_logical_date_partition(
    spark: SparkSession, wh: str, tmp_path: Path, writer: str
) -> None:
    src = _source(tmp_path, "parquet", events(100).drop_columns(["dt"]))
    args = ("--logical-date", "2024-03-01", "--run-id", "2024-03-01T00", "--partition-by", "dt", "--writer", writer)
    first = ingest.run(spark, _plan(wh, "db.ev", src, *args))
    assert (
        first["already_committed"] is False
        and first["snapshot_id"] == 1
        and first["delta_record_count"] == 100
    )
    assert first["commit_user"] == "ingest-db.ev-2024-03-01T00" and first["commit_identifier"] == 1
    again = ingest.run(spark, _plan(wh, "db.ev", src, *args))
    assert again["already_committed"] is True and again["snapshot_id"] == 1
    t = catalog(wh).get_table("db.ev")
    assert t.latest_snapshot().id == 1  # type: ignore[union-attr]
    assert list(t.schema.partition_keys) == ["dt"]
    assert Counter(r[0] for r in core_rows(wh, "db.ev", "dt")) == {"2024-03-01": 100}
    # another run id for the next day appends; --overwrite replaces exactly that day
    ingest.run(spark, _plan(wh, "db.ev", src, "--logical-date", "2024-03-02", "--run-id", "d2", "--writer", writer))
    small = _source(tmp_path, "json", events(3).drop_columns(["dt"]))
    res = ingest.run(
        spark, _plan(wh, "db.ev", small, "--logical-date", "2024-03-02", "--run-id", "d2b", "--overwrite", "--writer", writer)
    )
    assert res["commit_kind"] == "OVERWRITE"
    assert Counter(r[0] for r in core_rows(wh, "db.ev", "dt")) == {"2024-03-01": 100, "2024-03-02": 3}


def test_csv_and_spark_table_sources_and_primary_key_tables(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    src = _source(tmp_path, "csv", events(50))
    res = ingest.run(spark, _plan(wh, "db.pk", src, "--primary-key", "id", "--bucket", "2"))
    assert res["delta_record_count"] == 50
    t = catalog(wh).get_table("db.pk")
    assert list(t.schema.primary_keys) == ["id"] and t.schema.options["bucket"] == "2"
    spark.createDataFrame(events(10, start=45, v=99.0).to_pandas()).createOrReplaceTempView("ingest_updates")
    ingest.run(spark, _plan(wh, "db.pk", "ingest_updates", "--format", "table"))
    got = core_rows(wh, "db.pk", "id", "v")
    assert len(got) == 55 and got[-1] == (54, 99.0 + 54 * 0.5) and got[44] == (44, 22.0)


def test_argument_errors() -> None:
    with pytest.raises(UsageError, match="DB.TABLE"):
        _plan("/w", "nodot", "x.parquet")
    with pytest.raises(UsageError, match="YYYY-MM-DD"):
        _plan("/w", "db.t", "x.parquet", "--logical-date", "03/01/2024")
    with pytest.raises(UsageError, match="the following arguments are required: --source"):
        ingest.parse_args(["--warehouse", "/w", "--table", "db.t"])
    with pytest.raises(UsageError, match="pass --format"):
        ingest.source_format(str(REPO / "spark_jobs"))
    assert ingest.source_format("/data/x.parquet") == "parquet"
    assert ingest.source_format("some_view") == "table"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_jobs", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd="/",
    )


def test_cli_bad_arguments_print_one_json_line_and_exit_2() -> None:
    for args, message in (
        (["ingest", "--warehouse", "/w", "--table", "t", "--source", "s"], "DB.TABLE"),
        (["nope"], "unknown job"),
        (["ingest", "--table", "db.t"], "required"),
    ):
        proc = _cli(*args)
        assert proc.returncode == 2, proc
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1
        out = json.loads(lines[0])
        assert out["status"] == "error" and message in out["error"]
        assert message in proc.stderr


@pytest.mark.skipif(
    shutil.which("spark-submit", path=os.path.dirname(sys.executable)) is None, reason="no spark-submit"
)
def test_spark_submit_runs_ingest(wh: str, tmp_path: Path) -> None:
    src = _source(tmp_path, "parquet", events(20))
    main = Path(ingest.__file__).with_name("__main__.py")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "spark-submit"),
        "--master",
        "local[1]",
        "--conf",
        "spark.ui.enabled=false",
        str(main),
        "ingest",
        "--warehouse",
        wh,
        "--table",
        "db.sub",
        "--source",
        src,
        "--run-id",
        "r1",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stdout
    out = json.loads(lines[0])
    assert out["status"] == "ok" and out["snapshot_id"] == 1 and out["delta_record_count"] == 20
    # the same run again through python -m: a no-op that needs no Spark session
    again = _cli("ingest", "--warehouse", wh, "--table", "db.sub", "--source", src, "--run-id", "r1", env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["already_committed"] is True
