"""Spark writes and compaction of postpone-bucket tables (``bucket = -2``).

* A DataFrame written by several tasks into a postpone table: each task stages its rows in
  ``bucket-postpone`` (one writer each, no routing needed), the driver's commit replays them into
  real buckets (``postpone.batch-write-fixed-bucket``, the default): rows readable at once.
* With the option off, the rows wait in ``bucket-postpone``; ``spark_jobs compact`` (map tasks per
  postpone file, reduce tasks per bucket) makes them readable, newer rows winning.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from spark_jobs.common.postpone_compact import compact_postpone_table
from spark_jobs.compact import parse_args

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def _layout(wh: str) -> set[tuple[str, int]]:
    t = FileSystemCatalog(wh).get_table("db.t")
    return {(t.partition_path(e.partition), e.total_buckets) for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}


def test_spark_writes_and_compacts_a_postpone_table(spark: SparkSession, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_database("db")
    opts = {"bucket": "-2", "postpone.target-row-num-per-bucket": "50"}
    cat.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)
    df = spark.createDataFrame([(i, "ab"[i % 2], f"v{i}") for i in range(300)], "id long, dt string, v string")
    df.repartition(3).write.format("paimon").option("warehouse", wh).option("table", "db.t").mode("append").save()
    assert _layout(wh) == {("dt=a", 4), ("dt=b", 4)}  # 150 rows / 50: 3, rounded up to 4
    t = FileSystemCatalog(wh).get_table("db.t")
    assert t.to_arrow().num_rows == 300

    # with the option off, rows wait in bucket-postpone until the Spark compaction
    from paimon_core.schema.schema_change import SetOption

    t.schema_manager.commit_changes([SetOption("postpone.batch-write-fixed-bucket", "false")])
    later = spark.createDataFrame([(i, "ab"[i % 2], f"w{i}") for i in range(0, 300, 5)], "id long, dt string, v string")
    later.repartition(2).write.format("paimon").option("warehouse", wh).option("table", "db.t").mode("append").save()
    assert ("dt=a", -2) in _layout(wh)
    assert sorted(set(FileSystemCatalog(wh).get_table("db.t").to_arrow().column("v").to_pylist()))[0].startswith("v")
    args = parse_args(["--warehouse", wh, "--table", "db.t"])
    out = compact_postpone_table(FileSystemCatalog(wh).get_table("db.t"), args, spark=spark)
    assert out["mode"] == "distributed" and out["snapshot_id"] is not None, out
    assert _layout(wh) == {("dt=a", 4), ("dt=b", 4)}
    rows = {r["id"]: r["v"] for r in FileSystemCatalog(wh).get_table("db.t").to_arrow().to_pylist()}
    assert len(rows) == 300 and all(v == (f"w{k}" if k % 5 == 0 else f"v{k}") for k, v in rows.items())
