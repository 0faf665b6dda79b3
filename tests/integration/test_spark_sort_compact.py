"""``compact --order_strategy zorder --order_by a,b`` on Spark: sampled range shuffle on the
executors, files written by the compaction writer, one COMPACT commit on the driver; rows
identical, files even and narrow; pypaimon reads the result; bad arguments refused."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable
from spark_jobs import compact as job
from spark_jobs.common.output import EXIT_TERMINAL


def _table(wh: str) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    rng = np.random.default_rng(5)
    t = None
    for k in range(6):
        n = 3000
        data = pa.table({
            "id": pa.array(np.arange(k * n, (k + 1) * n), pa.int64()),
            "p": pa.array([k % 2] * n, pa.int32()),
            "a": pa.array(rng.integers(0, 10_000, n), pa.int64()),
            "b": pa.array(rng.integers(0, 10_000, n), pa.int32()),
            "s": pa.array([f"v{int(x)}" for x in rng.integers(0, 99, n)]),
        })  # fmt: skip
        if t is None:
            t = cat.create_table("db.t", data.schema, partition_keys=["p"],
                                 options={"write-only": "true", "target-file-size": "20kb"})  # fmt: skip
        t.write_arrow(data)
    assert t is not None
    return t


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = job.main(list(argv))
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    return code, json.loads(lines[0])


def test_distributed_zorder_sort_compaction(
    spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    t = _table(wh)
    want = t.to_arrow().sort_by("id")
    before = t.latest_snapshot()
    assert before is not None
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.t", "--order_strategy", "zorder", "--order_by", "a,b",
                     "--partitions", "p=0", "--options", "sort-compaction.local-sample.magnification=200")  # fmt: skip
    assert code == 0 and out["status"] == "ok" and out["mode"] == "distributed", out
    assert out["order_strategy"] == "zorder" and out["tasks"] == 1 and out["files_read"] == 3
    t = FileSystemCatalog(wh).get_table("db.t")
    snap = t.latest_snapshot()
    assert snap is not None and snap.id == before.id + 1 and snap.commit_kind == CommitKind.COMPACT
    assert t.to_arrow().sort_by("id").equals(want)
    entries = t.new_file_store_scan().live_entries(snap)
    sorted_files = [e.file for e in entries if t.partition_path(e.partition) == "p=0"]
    assert len(sorted_files) == out["files_written"] and len(sorted_files) >= 3
    sizes = sorted(f.file_size for f in sorted_files)
    assert sizes[-1] / sizes[0] < 2.0, sizes  # sampled ranges: even within sampling error
    got = pypaimon.read(wh, "db.t").sort_by("id")
    assert got.select(want.column_names).cast(want.schema).equals(want)

    for bad, msg in [
        (["--order_strategy", "none", "--order_by", "a"], "cannot work with order_by"),
        (["--order_strategy", "zorder", "--order_by", "a", "--partition_idle_time", "1 d"], "partition_idle_time"),
        (["--order_strategy", "hilbert", "--order_by", "a"], "at least two columns"),
        (["--order_strategy", "order", "--order_by", "p"], "partition cols"),
    ]:
        code, err = _run(capsys, "--warehouse", wh, "--table", "db.t", "--mode", "local", *bad)
        assert code in (2, 3) and msg in json.dumps(err), (bad, err)
    assert FileSystemCatalog(wh).get_table("db.t").latest_snapshot() == snap


def test_local_mode_sorts_and_clusters_incrementally(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--mode local`` (no JVM): a sort compaction, then a clustering table compacted by the same
    job: order_strategy none + clustering.incremental = incremental clustering (minor by default)."""
    t = _table(wh)
    want = t.to_arrow().sort_by("id")
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.t", "--mode", "local", "p=1", "full", "hilbert", "a,b")
    assert code == 0 and out["order_strategy"] == "hilbert" and out["tasks"] == 1 and out["mode"] == "local", out
    assert FileSystemCatalog(wh).get_table("db.t").to_arrow().sort_by("id").equals(want)

    cat = FileSystemCatalog(wh)
    c = cat.create_table("db.c", want.schema, partition_keys=["p"],
                         options={"clustering.incremental": "true", "clustering.columns": "a",
                                  "num-sorted-run.compaction-trigger": "2"})  # fmt: skip
    for k in range(3):
        c.write_arrow(want.slice(k * 1000, 1000))
    code, out = _run(capsys, "--warehouse", wh, "--table", "db.c", "--mode", "local")
    assert code == 0 and out["incremental_clustering"] is True and out["order_strategy"] == "order", out
    assert out["files_read"] == 3 and out["snapshot_id"] == 4
    got = cat.get_table("db.c")
    assert got.to_arrow().sort_by("id").equals(want.slice(0, 3000))
    levels = {e.file.level for e in got.new_file_store_scan().live_entries(got.latest_snapshot())}
    assert levels == {2}  # num-levels = trigger + 1 = 3: the max level
    code, err = _run(capsys, "--warehouse", wh, "--table", "db.c", "--mode", "local", "--order_strategy", "zorder",
                     "--order_by", "a,b")  # fmt: skip
    assert code == EXIT_TERMINAL and "incremental clustering" in json.dumps(err)
