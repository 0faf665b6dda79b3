"""Batch writers on a flaky object store: a commit that fails never costs a landed snapshot its files.

The S3 server here (moto, its own process) carries out some writes and then answers 500, and
answers some reads 503, the way a store behaves when connections drop or it throttles: the client
cannot tell a landed PUT from a lost one. Botocore retries are cut to one attempt in the writers so
these errors reach the commit code instead of being absorbed by the SDK.

8 writer processes each make ``PAIMON_DIST_COMMITS`` one-shot ``write_arrow`` commits (the batch
path, which deletes its files after a failed commit) and carry on after errors. Afterwards every
snapshot reads in full (a missing data file fails its read), no row is there twice, every call
that returned is there, and only calls that raised may be missing. An earlier 8 x 100 run on a
struggling server ended with the latest snapshot naming a deleted data file: the publish had landed,
its look-up failed, and the writer deleted its files as if the commit had not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from tests.distributed.s3_server import S3Server

pytestmark = pytest.mark.distributed

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("s3_writer.py")
WRITERS = 8
COMMITS = int(os.environ.get("PAIMON_DIST_COMMITS", "5"))
ROWS = 3
FAULTS = float(os.environ.get("PAIMON_DIST_FAULTS", "0.04"))
TIMEOUT = float(os.environ.get("PAIMON_DIST_TIMEOUT", "900"))


@pytest.fixture(scope="module")
def flaky() -> Iterator[S3Server]:
    with S3Server(faults=FAULTS, seed=7) as server:
        yield server


def _run(server: S3Server, warehouse: str) -> list[dict[str, Any]]:
    catalog = FileSystemCatalog(warehouse, storage_options=server.storage_options())
    catalog.create_database("db", ignore_if_exists=True)
    retry = {"commit.max-retries": "1000", "commit.min-retry-wait": "5 ms", "commit.max-retry-wait": "200 ms"}
    catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("writer", pa.int32())]), options=retry)
    env = {**os.environ, **server.env(), "PYTHONPATH": str(ROOT), "AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), warehouse, "db.t", str(w), str(COMMITS), str(ROWS), "", "batch"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for w in range(WRITERS)
    ]
    reports = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, err.decode()[-3000:]
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()  # reaps it and closes its pipes
    return reports


def test_failed_commits_on_a_flaky_store_never_delete_landed_files(flaky: S3Server) -> None:
    warehouse = flaky.url(f"wh-{uuid.uuid4().hex[:8]}")
    reports = _run(flaky, warehouse)
    table = FileSystemCatalog(warehouse, storage_options=flaky.storage_options()).get_table("db.t")
    snapshots = [s.id for s in table.snapshot_manager.snapshots()]
    assert snapshots, reports
    for sid in snapshots:  # every snapshot readable: none names a deleted file
        table.copy({"scan.snapshot-id": str(sid)}).to_arrow()
    ids = table.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids))  # no row twice
    landed = {i for r in reports for i in r["landed"]}
    uncertain = {i for r in reports for i in r["uncertain"]}
    assert landed <= set(ids)  # every call that returned is there
    assert set(ids) <= landed | uncertain  # and nothing else
    errors = {k: sum(r["errors"].get(k, 0) for r in reports) for r in reports for k in r["errors"]}
    print("flaky-store errors:", errors, "uncertain:", len(uncertain), "landed:", len(landed), "rows:", len(ids))
    assert errors, "no injected fault reached a writer: the test exercised nothing"
