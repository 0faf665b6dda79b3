"""Spark writes into fixed-bucket tables, faster: the routing's bucket column goes to the writer
(rows are hashed once), and Python workers are forked from ``spark_jobs.daemon`` (paimon_core
imported before the fork)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from paimon_core import FileSystemCatalog
from paimon_core.bucket import compute_buckets
from paimon_core.schema.data_types import BigIntType
from spark_jobs import daemon
from spark_jobs.common.session import DAEMON_MODULE, DAEMON_MODULE_CONF, SessionConfig, session_conf
from spark_jobs.datasource.options import SourceOptions
from spark_jobs.datasource.paimon_source import PaimonWriter
from spark_jobs.datasource.routing import BUCKET_COLUMN, distribute_for_table
from spark_jobs.datasource.stream_writer import PaimonStreamWriter
from spark_jobs.datasource.types import spark_schema
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events


def _bucket_of_files(wh: str, name: str) -> dict[int, set[int]]:
    """Bucket directory -> buckets paimon_core computes for the ids in its files."""
    out: dict[int, set[int]] = {}
    for f in (Path(wh) / "db.db" / name).rglob("data-*.parquet"):
        assert BUCKET_COLUMN not in pq.read_schema(f).names  # the routing column is never written
        ids = pq.read_table(f, columns=["id"]).column("id")
        bucket = int(f.parent.name.split("-")[1])
        out.setdefault(bucket, set()).update(compute_buckets([ids], [BigIntType(nullable=False)], 4).tolist())
    return out


def test_routed_frame_carries_its_buckets_into_the_write(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    table = FileSystemCatalog(wh).get_table("db.pk")
    df = spark.createDataFrame(events(3000).to_pandas()).repartition(3)
    routed = distribute_for_table(df, table)
    assert routed.columns == [*df.columns, BUCKET_COLUMN]
    assert dict(routed.dtypes)[BUCKET_COLUMN] == "int"
    assert distribute_for_table(df, table, keep_bucket=False).columns == df.columns
    routed.write.format("paimon").option("warehouse", wh).mode("append").save("db.pk")
    assert core_rows(wh, "db.pk", "id", "name") == [(i, f"n{i}") for i in range(3000)]
    assert _bucket_of_files(wh, "pk") == {b: {b} for b in range(4)}
    # an update through write_table (routing + the same column) merges as before
    from spark_jobs.datasource import write_table

    write_table(spark.createDataFrame(events(100, start=2950, v=1000.0).to_pandas()), wh, "db.pk")
    got = dict(core_rows(wh, "db.pk", "id", "v"))
    assert len(got) == 3050 and got[2950] == 1000.0 + 2950 * 0.5 and got[10] == 5.0


def test_a_wrong_bucket_column_is_refused(spark: SparkSession, wh: str) -> None:
    """The writer uses the column it is given (so it checks it): wrong buckets never land."""
    catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    df = spark.createDataFrame(events(400).to_pandas())
    wrong = df.withColumn(BUCKET_COLUMN, (F.col("id") % 4).cast("int"))
    wrong = wrong.repartitionById(4, F.col(BUCKET_COLUMN))
    with pytest.raises(Exception, match="disagree with the table's bucket function"):
        wrong.write.format("paimon").option("warehouse", wh).mode("append").save("db.pk")
    assert FileSystemCatalog(wh).get_table("db.pk").latest_snapshot() is None


def test_writers_accept_the_column_outside_spark(wh: str) -> None:
    """Batch and stream writers (no Spark needed to drive them): the column is used, not written."""
    catalog(wh).create_table("db.pk", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    table = FileSystemCatalog(wh).get_table("db.pk")
    data = events(500).cast(EVENTS_SCHEMA)
    buckets = compute_buckets([data.column("id")], [BigIntType(nullable=False)], 4)
    routed = data.append_column(BUCKET_COLUMN, pa.array(buckets, pa.int32()))
    schema = spark_schema(table.schema.fields).add(BUCKET_COLUMN, IntegerType())
    opts = SourceOptions.parse({"warehouse": wh, "path": "db.pk"})
    for cls in (PaimonWriter, PaimonStreamWriter):
        writer = cls(opts, schema, False)
        assert writer.bucket_column == BUCKET_COLUMN
        rows = 0
        for b in range(4):
            part = routed.filter(pa.array(buckets == b))
            msg = writer.write(iter(part.to_batches(max_chunksize=37)))
            assert [m.bucket for m in msg.messages] == [b]
            rows += msg.rows
        assert rows == 500
    # without the column: as before
    plain = PaimonWriter(opts, spark_schema(table.schema.fields), False)
    assert plain.bucket_column is None
    msg = plain.write(iter(data.to_batches(max_chunksize=100)))
    assert sorted(m.bucket for m in msg.messages) == [0, 1, 2, 3]


def test_session_uses_the_preloading_daemon(spark: SparkSession, wh: str) -> None:
    assert spark.sparkContext.getConf().get(DAEMON_MODULE_CONF) == DAEMON_MODULE

    def probe(_: object) -> tuple[str, str, str, list[str], str]:
        main = sys.modules["__main__"]
        return (
            os.environ.get(daemon.DAEMON_ENV, ""),
            str(os.getppid()),
            str(getattr(main, "__file__", "")),
            list(getattr(main, "PRELOADED", ())),
            str(sys.modules["pyspark"].__file__),
        )

    env_pid, parent, main_file, preloaded, pyspark_file = (
        spark.sparkContext.parallelize([0], 1).map(probe).collect()[0]
    )
    assert env_pid == parent  # the worker was forked from our daemon
    assert main_file.endswith(os.path.join("spark_jobs", "daemon.py"))
    assert {"paimon_core.table.table_write", "spark_jobs.datasource.paimon_source", "pyspark.worker"} <= set(
        preloaded
    )
    assert ".zip" not in pyspark_file  # the installed pyspark (bytecode), not pyspark.zip
    # and the data source works through it
    catalog(wh).create_table("db.d", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    from spark_jobs.datasource import write_table

    write_table(spark.createDataFrame(events(50).to_pandas()), wh, "db.d")
    assert core_rows(wh, "db.d", "id") == [(i,) for i in range(50)]


def test_daemon_module_conf_respects_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAIMON_SPARK_CONF", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert session_conf(SessionConfig())[DAEMON_MODULE_CONF] == DAEMON_MODULE
    given = SessionConfig(conf={DAEMON_MODULE_CONF: "pyspark.daemon"})
    assert session_conf(given)[DAEMON_MODULE_CONF] == "pyspark.daemon"
    monkeypatch.setenv("PAIMON_SPARK_CONF", f"{DAEMON_MODULE_CONF}=my.daemon")
    assert session_conf(SessionConfig())[DAEMON_MODULE_CONF] == "my.daemon"


def test_daemon_module_given_to_spark_submit_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark

    class SubmittedConf:
        def contains(self, key: str) -> bool:
            return key == DAEMON_MODULE_CONF

    monkeypatch.delenv("PAIMON_SPARK_CONF", raising=False)
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # as under spark-submit
    monkeypatch.setattr(pyspark.SparkContext, "_ensure_initialized", classmethod(lambda cls: None))
    monkeypatch.setattr(pyspark, "SparkConf", SubmittedConf)
    assert DAEMON_MODULE_CONF not in session_conf(SessionConfig())  # spark-submit's value stays


def test_prefer_installed_pyspark_moves_only_its_own_zips(tmp_path: Path) -> None:
    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    own = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    other = str(tmp_path / "spark-home" / "python" / "lib" / "pyspark.zip")
    path = [*own, other, "/usr/lib/python3.11", str(site)]
    assert daemon.prefer_installed_pyspark(path) == own
    assert path == [other, "/usr/lib/python3.11", str(site), *own]
    no_install = [*own, "/usr/lib/python3.11"]
    assert daemon.prefer_installed_pyspark(no_install) == [] and no_install == [*own, "/usr/lib/python3.11"]


def test_preload_skips_what_fails_and_keeps_stdout_clean(capsys: pytest.CaptureFixture[str]) -> None:
    loaded = daemon.preload(("json", "no_such_module_for_paimon", "numpy"))
    assert loaded == ("json", "numpy")
    out = capsys.readouterr()
    assert out.out == "" and "no_such_module_for_paimon" in out.err
    assert np is sys.modules["numpy"]
