"""``spark_jobs compact`` on Spark executors for a data-evolution table pypaimon 2.1.0 wrote and
updated by ``_ROW_ID``: each partition's row-id runs are merged into one file per task on the
executors, the driver commits once; pypaimon reads the same rows with the same ids after."""

from __future__ import annotations

import json

import pyarrow as pa
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from spark_jobs.compact import call, parse_args
from tests.interop.peers import Peer
from tests.peer_python import run_peer_script

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("a", pa.int32())])

#: pypaimon updates column ``a`` of the rows ``argv[2]`` (JSON list of row ids) to 1000 + id.
UPDATE = """
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table("db.t")
ids = json.loads(sys.argv[2])
wb = t.new_batch_write_builder()
rows = pa.table({"_ROW_ID": pa.array(ids, pa.int64()), "a": pa.array([1000 + i for i in ids], pa.int32())})
wb.new_commit().commit(wb.new_update().with_update_type(["a"]).update_by_arrow_with_row_id(rows))
"""


def id_map(t: pa.Table) -> dict[int, tuple[int, str, int]]:
    return {r["_ROW_ID"]: (r["id"], r["dt"], r["a"]) for r in t.to_pylist()}


def test_spark_compacts_a_data_evolution_table(spark: SparkSession, wh: str, pypaimon: Peer) -> None:
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1", "compaction.min.file-num": "2"}
    pypaimon.create_table(wh, "db.t", SCHEMA, partition_keys=["dt"], options=opts)
    for k in range(4):  # each commit one partition: two runs of follow-on ids per partition
        dt = "ab"[k // 2]
        pypaimon.write(wh, "db.t", pa.table({"id": range(k * 20, k * 20 + 20), "dt": [dt] * 20, "a": range(20)}, schema=SCHEMA))
    run_peer_script(UPDATE, wh, json.dumps(list(range(0, 80, 3))))  # one column file per range
    projection = ["id", "dt", "a", "_ROW_ID"]
    want = id_map(pypaimon.read(wh, "db.t", projection=projection))
    assert sorted(want) == list(range(80)) and want[3] == (3, "a", 1003)

    out = call(FileSystemCatalog(wh).get_table("db.t"), parse_args(["--warehouse", wh, "--table", "db.t"]), spark=spark)
    assert out["mode"] == "distributed" and out["tasks"] == 2 and out["files_read"] == 8 and out["files_written"] == 2
    t = FileSystemCatalog(wh).get_table("db.t")
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == out["snapshot_id"] == 6
    live = t.new_file_store_scan().live_entries(latest)
    assert sorted((t.partition_path(e.partition), e.file.first_row_id, e.file.row_count) for e in live) == [
        ("dt=a", 0, 40),
        ("dt=b", 40, 40),
    ]
    assert id_map(pypaimon.read(wh, "db.t", projection=projection)) == want
    assert id_map(t.inspect.system_table("row_tracking").select(projection)) == want
