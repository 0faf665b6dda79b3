"""Every Spark job on a real standalone cluster (master + 2 workers on loopback), submitted as a
user would (``python -m spark_jobs <job> --master spark://...``), the project shipped to
executors as ``paimon-jobs.zip``; results read back with pypaimon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from paimon_core import FileSystemCatalog
from tests.distributed.conftest import ClusterJobs
from tests.distributed.lake import (
    data_files_on_disk,
    plant_orphan,
    referenced_data_files,
    sorted_rows,
    write_source,
)
from tests.distributed.spark_cluster import SparkCluster
from tests.integration.helpers import EVENTS_SCHEMA, catalog, events

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent.parent


def test_executors_import_the_shipped_archive_and_stream(
    cluster_jobs: ClusterJobs, spark_cluster: SparkCluster, tmp_path: Path, pypaimon: Any
) -> None:
    wh = str(tmp_path / "wh")
    c = catalog(wh)
    src = c.create_table("db.src", EVENTS_SCHEMA)
    src.write_arrow(events(30))
    src.write_arrow(events(20, start=30))
    c.create_table("db.dst", EVENTS_SCHEMA)

    out = cluster_jobs.run_script(_HERE / "cluster_driver.py", wh)

    work_dirs = [str(w.work_dir) for w in spark_cluster.workers]
    probe = out["probe"]
    assert len(probe) == 4
    for p in probe:
        # imported from the archive Spark fetched into the executor's directory on a worker ...
        assert p["paimon_core"].endswith("paimon-jobs.zip/paimon_core/__init__.pyc"), p  # its bytecode
        assert any(p["paimon_core"].startswith(d + "/") for d in work_dirs), (p, work_dirs)
        assert p["cwd"].startswith(tuple(work_dirs)), p
        # ... never from the repository, and by a worker forked from the jobs' daemon
        assert not p["paimon_core"].startswith(str(REPO) + "/"), p
        assert p["daemon_pid"] and int(p["daemon_pid"]) != p["pid"], p
    # both workers ran tasks (executors on two JVMs)
    assert {next(d for d in work_dirs if p["cwd"].startswith(d)) for p in probe} == set(work_dirs)

    # streaming read of db.src -> streaming write of db.dst, checked by pypaimon
    assert out["stream_batches"] >= 1
    assert sorted_rows(pypaimon.read(wh, "db.dst"), "id", "v") == sorted_rows(events(50), "id", "v")


def test_ingest_merge_compact_and_orphan_cleanup(
    cluster_jobs: ClusterJobs, tmp_path: Path, pypaimon: Any
) -> None:
    wh = str(tmp_path / "wh")
    source = write_source(tmp_path / "in" / "a.parquet", events(800))
    pk = ("--primary-key", "id", "--bucket", "2", "--num-partitions", "2")
    r1 = cluster_jobs.run("ingest", "--warehouse", wh, "--table", "db.t", "--source", source, *pk)
    assert (r1["status"], r1["snapshot_id"], r1["delta_record_count"]) == ("ok", 1, 800), r1
    # a second writer (no JVM) updates ids 400..799: the compaction below merges two runs
    FileSystemCatalog(wh).get_table("db.t").write_arrow(events(400, start=400, v=100.0).cast(EVENTS_SCHEMA))

    # merge_into: a source table of updates (ids 0..49) and inserts (1000..1009)
    updates = pa.concat_tables([events(50, v=-1000.0), events(10, start=1000)])
    s = catalog(wh).create_table("db.s", EVENTS_SCHEMA)
    s.write_arrow(updates.cast(EVENTS_SCHEMA))
    m = cluster_jobs.run(
        "merge_into", "--warehouse", wh, "--table", "db.t", "--source_table", "db.s",
        "--merge-condition", "T.id = S.id", "--matched_upsert_setting", "v = S.v",
        "--not_matched_insert_values", "*",
    )  # fmt: skip
    assert (m["updated_rows"], m["inserted_rows"], m["snapshot_id"]) == (50, 10, 3), m

    comp = cluster_jobs.run("compact", "--warehouse", wh, "--table", "db.t")
    assert comp["status"] == "ok", comp
    t = FileSystemCatalog(wh).get_table("db.t")
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.id == 4 and latest.commit_kind == "COMPACT", comp

    orphan = plant_orphan(wh, "db.t")
    live_before = referenced_data_files(wh, "db.t")
    rm = cluster_jobs.run("remove_orphan_files", "--warehouse", wh, "--table", "db.t", "--dry-run", "false")
    assert rm["status"] == "ok" and rm["deleted_file_count"] == 1, rm
    assert not orphan.exists()
    assert data_files_on_disk(wh, "db.t") == live_before  # every file a snapshot reads is still there

    expected = {i: i * 0.5 for i in range(400)} | {i: 100.0 + i * 0.5 for i in range(400, 800)}
    expected |= {i: -1000.0 + i * 0.5 for i in range(50)} | {i: i * 0.5 for i in range(1000, 1010)}
    assert sorted_rows(pypaimon.read(wh, "db.t"), "id", "v") == sorted(expected.items())
