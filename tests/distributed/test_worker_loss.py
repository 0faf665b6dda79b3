"""A Spark worker dies (SIGKILL: worker JVM, its executor, its Python workers) in the middle of an
``ingest`` and of a ``compact`` on the cluster. Spark reschedules the lost tasks on the other
worker, or the job fails; either way readers see the table exactly as before or exactly as after,
and orphan cleanup leaves nothing but files some snapshot reads."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from tests.distributed.conftest import ClusterJobs, finish
from tests.distributed.lake import (
    data_files_on_disk,
    referenced_data_files,
    sorted_rows,
    table_dir,
    write_source,
)
from tests.distributed.spark_cluster import SparkCluster
from tests.integration.helpers import EVENTS_SCHEMA, catalog, events

_METADATA_DIRS = frozenset(
    {"snapshot", "manifest", "schema", "index", "statistics", "tag", "consumer", "branch"}
)


@pytest.fixture
def both_workers(spark_cluster: SparkCluster) -> Iterator[SparkCluster]:
    """The cluster with both workers alive before and after the test (a killed one is replaced)."""
    for w in spark_cluster.workers:
        if not w.alive:
            spark_cluster.restart_worker(w.index)
    yield spark_cluster
    for w in spark_cluster.workers:
        if not w.alive:
            spark_cluster.restart_worker(w.index)


def _kill_when_busy(
    cluster: SparkCluster, index: int, proc: subprocess.Popen[str], timeout: float = 180
) -> None:
    """SIGKILL worker ``index`` as soon as its executor of the new application runs a task; the
    job must still be running then (else the kill proves nothing)."""
    work = cluster.workers[index].work_dir
    before = {p.name for p in work.iterdir()}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"job ended before its worker was killed: {finish(proc, check=False)}"
        for app in (p for p in work.iterdir() if p.name not in before):
            for log in app.glob("*/stderr"):
                if "Got assigned task" in log.read_text(errors="replace"):
                    cluster.kill_worker(index)
                    return
        time.sleep(0.05)
    raise AssertionError("no task reached the worker's executor")


def _stray_files(wh: str, table: str) -> set[str]:
    """Files outside the metadata directories that no snapshot reads (data, staging leftovers)."""
    root = table_dir(wh, table)
    live = referenced_data_files(wh, table)
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in _METADATA_DIRS and p.name not in live
    }


def _clean_orphans(jobs: ClusterJobs, wh: str) -> dict[str, Any]:
    """Orphan cleanup right after the job (local mode: no JVM), files older than one second."""
    time.sleep(1.1)
    cutoff = str(int(time.time() * 1000) - 1000)
    return jobs.run(
        "remove_orphan_files", "--warehouse", wh, "--table", "db.t", "--older-than", cutoff, "--force",
        "--mode", "local", "--dry-run", "false",
    )  # fmt: skip


def test_worker_killed_during_ingest(
    cluster_jobs: ClusterJobs, both_workers: SparkCluster, tmp_path: Path, pypaimon: Any
) -> None:
    wh = str(tmp_path / "wh")
    t = catalog(wh).create_table("db.t", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(events(100))
    before = sorted_rows(pypaimon.read(wh, "db.t"), "id", "v")
    src = tmp_path / "in"
    for i in range(4):
        write_source(src / f"part-{i}.parquet", events(50_000, start=1000 + i * 50_000, v=1.0))

    proc = cluster_jobs.popen(
        "ingest", "--warehouse", wh, "--table", "db.t", "--source", str(src), "--num-partitions", "4"
    )
    _kill_when_busy(both_workers, 0, proc)
    result = finish(proc, check=False)
    assert "Lost executor" in result["stderr"], result["stderr"][-3000:]  # the kill hit the running job

    after = sorted_rows(pypaimon.read(wh, "db.t"), "id", "v")
    expected_after = sorted({**dict(before), **{i: 1.0 + i * 0.5 for i in range(1000, 201_000)}}.items())
    if result["returncode"] == 0:
        assert after == expected_after, result
        assert FileSystemCatalog(wh).get_table("db.t").snapshot_manager.latest_snapshot_id() == 2
    else:
        assert after == before, result
        assert FileSystemCatalog(wh).get_table("db.t").snapshot_manager.latest_snapshot_id() == 1
    rm = _clean_orphans(cluster_jobs, wh)
    assert rm["status"] == "ok", rm
    assert _stray_files(wh, "db.t") == set()
    assert data_files_on_disk(wh, "db.t") == referenced_data_files(wh, "db.t")


def test_worker_killed_during_compaction(
    cluster_jobs: ClusterJobs, both_workers: SparkCluster, tmp_path: Path, pypaimon: Any
) -> None:
    wh = str(tmp_path / "wh")
    t = catalog(wh).create_table("db.t", EVENTS_SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    for round_ in range(4):  # 4 overlapping sorted runs per bucket
        t.write_arrow(events(20_000, v=float(round_)).cast(EVENTS_SCHEMA))
    before = sorted_rows(pypaimon.read(wh, "db.t"), "id", "v")
    files_before = data_files_on_disk(wh, "db.t")

    proc = cluster_jobs.popen("compact", "--warehouse", wh, "--table", "db.t")
    _kill_when_busy(both_workers, 1, proc)
    result = finish(proc, check=False)
    assert "Lost executor" in result["stderr"], result["stderr"][-3000:]

    table = FileSystemCatalog(wh).get_table("db.t")
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None
    if result["returncode"] == 0:
        assert (latest.id, latest.commit_kind) == (5, "COMPACT"), result
    else:
        assert latest.id == 4, result  # nothing committed
    assert sorted_rows(pypaimon.read(wh, "db.t"), "id", "v") == before  # compaction never changes rows
    rm = _clean_orphans(cluster_jobs, wh)
    assert rm["status"] == "ok", rm
    assert _stray_files(wh, "db.t") == set()
    assert data_files_on_disk(wh, "db.t") == referenced_data_files(wh, "db.t")
    assert files_before <= data_files_on_disk(wh, "db.t")  # older snapshots' files untouched
