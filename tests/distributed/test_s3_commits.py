"""Concurrent writer processes committing to one table on an S3 API server (moto, its own process).

* The server honours ``If-None-Match: *``: an exclusive create of an existing key is refused
  (412), so ``snapshot-N`` is published by exactly one committer; the store built with
  ``conditional_put=False`` ignores the header (the same PUT overwrites), the case a commit
  lock is for.
* 8 writer processes x ``PAIMON_DIST_COMMITS`` commits (CI: 5; the full run: 100) on the
  conditional-put store, then on the store without it with the SQL-table commit lock
  (``lock.enabled``/``lock.type=jdbc`` on a SQLite file): no commit lost, every row there
  once, snapshot ids contiguous, every writer's snapshots its own.
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
from paimon_core.io import FsspecFileIO
from tests.distributed.s3_server import S3Server

pytestmark = pytest.mark.distributed

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("s3_writer.py")
WRITERS = 8
COMMITS = int(os.environ.get("PAIMON_DIST_COMMITS", "5"))
ROWS = 5
TIMEOUT = float(os.environ.get("PAIMON_DIST_TIMEOUT", "900"))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@pytest.fixture(scope="module")
def s3_no_conditional_put() -> Iterator[S3Server]:
    with S3Server(conditional_put=False) as server:
        yield server


def _publish_twice(server: S3Server) -> tuple[bool, bool, bytes]:
    fio = FsspecFileIO("s3", server.storage_options())
    path = server.url(f"probe-{uuid.uuid4().hex}/snapshot-1")
    return fio.try_write_atomic(path, b"first"), fio.try_write_atomic(path, b"second"), fio.read_bytes(path)


def test_server_honours_if_none_match(s3: S3Server, s3_no_conditional_put: S3Server) -> None:
    assert _publish_twice(s3) == (True, False, b"first")  # 412 Precondition Failed
    # control: a store without conditional put lets the second exclusive create overwrite
    assert _publish_twice(s3_no_conditional_put) == (True, True, b"second")


def _run_writers(server: S3Server, warehouse: str, options: dict[str, str]) -> list[dict[str, Any]]:
    catalog = FileSystemCatalog(warehouse, storage_options=server.storage_options(), options=options)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("writer", pa.int32())])
    retry = {"commit.max-retries": "1000", "commit.min-retry-wait": "5 ms", "commit.max-retry-wait": "200 ms"}
    catalog.create_table("db.t", schema, options=retry)
    env = {**os.environ, **server.env(), "PYTHONPATH": str(ROOT)}
    argv = [warehouse, "db.t", "", str(COMMITS), str(ROWS), json.dumps(options)]
    procs = []
    for w in range(WRITERS):
        argv[2] = str(w)
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WRITER), *argv], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    reports = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, err.decode()[-3000:]
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for p in procs:  # a failed or timed-out run leaves no writer behind
            if p.poll() is None:
                p.kill()
            p.communicate()  # reaps it and closes its pipes
    return reports


def _check_table(server: S3Server, warehouse: str, reports: list[dict[str, Any]]) -> None:
    total = WRITERS * COMMITS
    table = FileSystemCatalog(warehouse, storage_options=server.storage_options()).get_table("db.t")
    snapshots = list(table.snapshot_manager.snapshots())
    assert [s.id for s in snapshots] == list(range(1, total + 1))  # contiguous, nothing overwritten
    claimed = sorted(s for r in reports for s in r["snapshots"])
    assert claimed == list(range(1, total + 1))  # each commit landed in its own snapshot
    owner = {s.id: s.commit_user for s in snapshots}
    for r in reports:
        assert {owner[s] for s in r["snapshots"]} == {f"writer-{r['writer']}"}
    ids = table.to_arrow().column("id").to_pylist()
    assert sorted(ids) == list(range(total * ROWS))  # every row, once
    assert sum(r["attempts"] for r in reports) > total  # the writers did race


def test_concurrent_writer_processes_with_conditional_put(s3: S3Server) -> None:
    warehouse = s3.url(f"wh-{uuid.uuid4().hex[:8]}")
    reports = _run_writers(s3, warehouse, {})
    _check_table(s3, warehouse, reports)


def test_concurrent_writer_processes_with_jdbc_lock_without_conditional_put(
    s3_no_conditional_put: S3Server, tmp_path: Path
) -> None:
    warehouse = s3_no_conditional_put.url(f"wh-{uuid.uuid4().hex[:8]}")
    options = {
        "lock.enabled": "true",
        "lock.type": "jdbc",
        "uri": f"sqlite:///{tmp_path / 'locks.db'}",
        "lock-check-max-sleep": "50 ms",
    }
    reports = _run_writers(s3_no_conditional_put, warehouse, options)
    _check_table(s3_no_conditional_put, warehouse, reports)
