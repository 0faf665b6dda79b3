"""The distributed ``compact`` job on a ``changelog-producer = full-compaction`` table: the executors'
full compactions write the changelog files, the driver's one COMPACT commit carries them in its
changelog manifests, and a streaming read of them is the diff between the two full compactions."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead
from spark_jobs import compact as job

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())]
)


def _write(t: FileStoreTable, ids: list[int], v: int) -> None:
    t.write_arrow(pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [v] * len(ids)}, schema=SCHEMA))


def _compact(capsys: pytest.CaptureFixture[str], wh: str) -> dict[str, object]:
    assert job.main(["--warehouse", wh, "--table", "db.t"]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "ok" and out["mode"] == "distributed"
    return out


def _changelog(t: FileStoreTable) -> list[tuple[str, int, int]]:
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT
    units = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}).plan_delta(snap)
    assert units is not None
    got = TableRead(t, row_kind=True).to_arrow(units)
    rows = zip(got["_ROW_KIND"].to_pylist(), got["id"].to_pylist(), got["v"].to_pylist(), strict=True)
    return sorted(rows, key=lambda r: (r[1], r[0] != "-U"))


def test_distributed_full_compaction_writes_the_changelog(
    spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table(
        "db.t",
        SCHEMA,
        primary_keys=["id", "dt"],
        partition_keys=["dt"],
        options={"bucket": "3", "write-only": "true", "changelog-producer": "full-compaction"},
    )
    _write(t, list(range(40)), 0)
    _write(t, list(range(20, 60)), 1)
    assert _compact(capsys, wh)["tasks"] == 6
    t = cat.get_table("db.t")
    assert _changelog(t) == sorted(("+I", i, 0 if i < 20 else 1) for i in range(60))
    _write(t, [5, 25, 70], 2)
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(pa.table({"id": [6], "dt": ["d0"]}, schema=SCHEMA.remove(2)))
    b.new_commit().commit(w.prepare_commit())
    _compact(capsys, wh)
    t = cat.get_table("db.t")
    assert _changelog(t) == [("-U", 5, 0), ("+U", 5, 2), ("-D", 6, 0), ("-U", 25, 1), ("+U", 25, 2), ("+I", 70, 2)]
    snap = t.latest_snapshot()
    assert snap is not None and snap.changelog_record_count == 6
