"""The ``compact`` job on a deletion-vector table with the lookup changelog producer: tasks run on
Spark executors (their lookup levels and vectors travel in the task), one COMPACT commit carries
the new vectors and the changelog."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.append.append_deletion_index import DeletionIndex
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table_read import TableRead
from spark_jobs import compact as job

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def _write(wh: str, ids: list[int], v: int) -> None:
    t = FileSystemCatalog(wh).get_table("db.dv")
    t.write_arrow(pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [v] * len(ids)}, schema=SCHEMA))


def test_distributed_lookup_compaction(spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    cat.create_table("db.dv", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                     options={"bucket": "2", "write-only": "true", "deletion-vectors.enabled": "true",
                              "changelog-producer": "lookup"})
    _write(wh, list(range(400)), 0)
    assert job.main(["--warehouse", wh, "--table", "db.dv"]) == 0
    capsys.readouterr()
    _write(wh, list(range(0, 400, 3)), 1)  # both partitions
    assert FileSystemCatalog(wh).get_table("db.dv").to_arrow().num_rows == 400  # new rows not visible yet
    assert job.main(["--warehouse", wh, "--table", "db.dv", "--commit_user", "af", "--compact_strategy", "minor"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "ok" and out["mode"] == "distributed"
    t = FileSystemCatalog(wh).get_table("db.dv")
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT
    rows = t.to_arrow()
    got = dict(zip(rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True))
    assert got == {i: (1 if i % 3 == 0 else 0) for i in range(400)}
    entries = t.new_file_store_scan().live_entries(snap)
    vectors = sum(len(DeletionIndex.load(t.store, p, b).deletion_files) for p, b in {(e.partition, e.bucket) for e in entries})
    assert vectors == 4 and {e.file.level for e in entries} == {4, 5}  # each bucket's max-level file is marked
    units = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}).plan_delta(snap)
    changelog = TableRead(t, row_kind=True).to_arrow(units or [])
    assert sorted(changelog["_ROW_KIND"].to_pylist()) == ["+U"] * 134 + ["-U"] * 134
