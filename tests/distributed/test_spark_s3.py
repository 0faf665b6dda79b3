"""Spark jobs with an ``s3://`` warehouse on the S3 API server (moto, its own process).

``ingest`` (twice), ``compact`` and ``remove_orphan_files`` run as ``python -m spark_jobs`` on
``local[2]`` (the standalone cluster is covered with the cluster fixture) in one driver process
whose S3 endpoint and credentials come from the environment only (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``...), as a deployed job's; pypaimon, in its own virtualenv, reads the same
bucket through its own S3 client (pyarrow's) and sees every row.

Spark's own Parquet writer cannot reach ``s3://`` here (pyspark ships no hadoop-aws/S3A, see
``bench/results/s3-ingest.md``): ``ingest --writer auto`` takes the data source, which writes
each file once under its final name, and ``--writer native`` is refused with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from tests.distributed.s3_server import S3Server
from tests.peer_python import run_peer_script

pytestmark = pytest.mark.distributed

ROOT = Path(__file__).resolve().parents[2]
ROWS = 3000

_DRIVER = """
import json, sys
from spark_jobs.__main__ import main
for argv in sys.argv[1:]:
    rc = main(json.loads(argv))
    print("RC", rc, flush=True)
    if rc:
        sys.exit(rc)
"""

_PYPAIMON_READ = """
import json, os, sys
from pypaimon import CatalogFactory
catalog = CatalogFactory.create({
    "warehouse": sys.argv[1],
    "fs.s3.endpoint": os.environ["AWS_ENDPOINT_URL"],
    "fs.s3.accessKeyId": os.environ["AWS_ACCESS_KEY_ID"],
    "fs.s3.accessKeySecret": os.environ["AWS_SECRET_ACCESS_KEY"],
    "fs.s3.region": os.environ["AWS_DEFAULT_REGION"],
    "fs.s3.path-style-access": "true",
})
table = catalog.get_table(sys.argv[2])
rb = table.new_read_builder()
t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
print(json.dumps(sorted(t.column("id").to_pylist())))
"""


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


def _source(path: Path, start: int, n: int) -> Path:
    ids = list(range(start, start + n))
    pq.write_table(
        pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"2024-01-0{1 + i % 3}" for i in ids], "v": ids}), path
    )
    return path


def _run_jobs(server: S3Server, *jobs: list[str]) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SPARK_MASTER"))}
    env.update(server.env(), PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    argv = [sys.executable, "-c", _DRIVER, *(json.dumps([*job, "--master", "local[2]"]) for job in jobs)]
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_ingest_compact_and_orphan_clean_on_s3_read_by_pypaimon(s3: S3Server, tmp_path: Path) -> None:
    wh = s3.url(f"wh-{uuid.uuid4().hex[:8]}")
    a, b = _source(tmp_path / "a.parquet", 0, ROWS), _source(tmp_path / "b.parquet", ROWS, ROWS)
    common = ["--warehouse", wh, "--table", "db.ev"]
    ingest = ["ingest", *common, "--partition-by", "dt", "--primary-key", "id,dt", "--bucket", "2"]
    results = _run_jobs(s3, [*ingest, "--source", str(a)], [*ingest, "--source", str(b)], ["compact", *common])
    assert [r["status"] for r in results] == ["ok", "ok", "ok"], results
    table = FileSystemCatalog(wh, storage_options=s3.storage_options()).get_table("db.ev")
    snapshots = list(table.snapshot_manager.snapshots())
    assert [s.commit_kind for s in snapshots] == ["APPEND", "APPEND", "COMPACT"], results
    files = table.new_file_store_scan().live_entries(snapshots[-1])
    assert len(files) == 6  # 3 partitions x 2 buckets, one file each after compaction
    assert sorted(table.to_arrow().column("id").to_pylist()) == list(range(2 * ROWS))

    # a file a crashed writer left behind (the files compaction replaced stay: snapshots 1-2 use them)
    orphan = f"{table.path}/dt=2024-01-01/bucket-0/data-{uuid.uuid4()}-0.parquet"
    table.file_io.write_bytes(orphan, b"left by a failed task")
    before = len(table.file_io.list_files(f"{table.path}/dt=2024-01-01/bucket-0"))
    time.sleep(2)  # S3 stamps real (whole-second) times: everything written so far is older than this
    older = str(int(time.time() * 1000) - 500)
    (cleaned,) = _run_jobs(s3, ["remove_orphan_files", *common, "--older-than", older, "--force", "--dry-run", "false"])
    assert cleaned["status"] == "ok", cleaned
    assert not table.file_io.exists(orphan)
    after = len(table.file_io.list_files(f"{table.path}/dt=2024-01-01/bucket-0"))
    assert after == before - 1
    assert sorted(table.to_arrow().column("id").to_pylist()) == list(range(2 * ROWS))

    # pypaimon, its own process and S3 client, reads the same bucket
    env_script = _PYPAIMON_READ
    old = dict(os.environ)
    os.environ.update(s3.env())
    try:
        ids = json.loads(run_peer_script(env_script, wh, "db.ev"))
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert ids == list(range(2 * ROWS))


def test_native_writer_is_refused_on_s3_with_the_reason(s3: S3Server, tmp_path: Path) -> None:
    wh = s3.url(f"wh-{uuid.uuid4().hex[:8]}")
    src = _source(tmp_path / "a.parquet", 0, 10)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(s3.env(), PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    argv = [sys.executable, "-c", _DRIVER]
    argv.append(json.dumps(["ingest", "--warehouse", wh, "--table", "db.t", "--source", str(src), "--writer", "native"]))
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode != 0
    assert "object store" in proc.stdout + proc.stderr
