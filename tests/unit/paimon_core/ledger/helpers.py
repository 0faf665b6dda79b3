"""Shared pieces of the ledger tests: small tables, a FileIO whose ledger writes fail, rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from paimon_core import FileStoreTable, FileSystemCatalog
from paimon_core.io.local_io import LocalFileIO
from paimon_core.ledger import LEDGER_TABLE, Ledger, ledger_disabled

LEDGER_DIR = "/paimon_maintenance.db/"
REPO = Path(__file__).resolve().parents[4]


class LedgerFailingFileIO(LocalFileIO):
    """Local files; while ``failing``, every write under the ledger's database fails (a full or
    read-only ledger directory): the table's own files are untouched."""

    def __init__(self) -> None:
        self.failing = False
        self.failed_writes = 0

    def _check(self, path: str) -> None:
        if self.failing and LEDGER_DIR in path:
            self.failed_writes += 1
            raise PermissionError(f"read-only ledger directory: {path}")

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        self._check(path)
        super().write_bytes(path, data, overwrite=overwrite)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        self._check(path)
        return super().try_write_atomic(path, data)

    def open_output(self, path: str) -> IO[bytes]:
        self._check(path)
        return super().open_output(path)

    def write_hint(self, path: str, text: str) -> None:
        self._check(path)
        super().write_hint(path, text)

    @contextmanager
    def fail(self) -> Iterator[None]:
        self.failing = True
        try:
            yield
        finally:
            self.failing = False


def rows(start: int, n: int, dt: str = "2024-01-01") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "dt": pa.array([dt] * n, pa.string()),
            "v": pa.array([f"v{i}" for i in range(start, start + n)]),
        }
    )


def small_table(catalog: FileSystemCatalog, name: str = "db.t", *, commits: int = 3) -> FileStoreTable:
    """A partitioned append table with ``commits`` snapshots (one small file each, same partition),
    written with the ledger off."""
    db = name.split(".")[0]
    if not catalog.database_exists(db):
        catalog.create_database(db)
    table = catalog.create_table(name, rows(0, 1).schema, partition_keys=["dt"])
    with ledger_disabled():
        for i in range(commits):
            table.write_arrow(rows(i * 10, 10))
    return catalog.get_table(name)


def interleaved_de_table(catalog: FileSystemCatalog, name: str = "db.t") -> FileStoreTable:
    """A data-evolution table (``row-tracking.enabled``, ``data-evolution.enabled``) partitioned by
    dt whose four commits alternate two partitions, so their row ids interleave (what
    ``reassign_row_id`` moves), written with the ledger off."""
    db = name.split(".")[0]
    if not catalog.database_exists(db):
        catalog.create_database(db)
    options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    table = catalog.create_table(name, rows(0, 1).schema, partition_keys=["dt"], options=options)
    with ledger_disabled():
        for i in range(4):
            table.write_arrow(rows(i * 10, 10, dt=f"2024-01-0{1 + i % 2}"))
    return catalog.get_table(name)


def ledger_rows(catalog: FileSystemCatalog) -> list[dict[str, Any]]:
    """Every ledger row as a dict (times as epoch millis), oldest first."""
    out = Ledger(catalog).read()
    start = out.column("start_time").cast(pa.int64()).to_pylist()
    rows_ = out.drop_columns(["start_time", "end_time"]).to_pylist()
    for r, s in zip(rows_, start, strict=True):
        r["start_millis"] = s
    return rows_


def ledger_snapshot_ids(catalog: FileSystemCatalog) -> list[int]:
    return catalog.get_table(LEDGER_TABLE).snapshot_manager.list_snapshot_ids()


def old_file(path: str, age_days: float = 3) -> None:
    """Write a file whose modification time is ``age_days`` old."""
    with open(path, "wb") as f:
        f.write(b"orphan")
    t = time.time() - age_days * 86400
    os.utime(path, (t, t))


_WORKER = r"""
import json, sys, time
from paimon_core import FileSystemCatalog
from paimon_core.ledger import Ledger, LedgerRecord
from paimon_core.ledger.record import new_record_id
warehouse, worker, commits, per_commit, start_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
while time.time() < start_at:
    time.sleep(0.005)
ledger = Ledger(FileSystemCatalog(warehouse))
ledger.ensure()
ids = []
for c in range(commits):
    now = int(time.time() * 1000) - (c % 2) * 86_400_000  # two dt partitions
    batch = [LedgerRecord(new_record_id(), f"db.t{worker}", "compact", "success", now, now + 1) for _ in range(per_commit)]
    ledger.append(batch)
    ids += [r.record_id for r in batch]
print(json.dumps(ids))
"""


def run_concurrent_appends(warehouse: str, *, processes: int, commits: int, per_commit: int = 1) -> list[str]:
    """``processes`` processes that each ensure the ledger and append ``commits`` commits, all at
    once; the record ids they wrote."""
    start_at = time.time() + 3.0  # every interpreter is up before the first ensure
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, warehouse, str(i), str(commits), str(per_commit), str(start_at)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    ids: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        ids += json.loads(out.strip().splitlines()[-1])
    return ids
