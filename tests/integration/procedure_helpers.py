"""Shared helpers of the procedure job tests: a small partitioned table, running a job in-process
(``main(argv)``) or through ``python -m spark_jobs``, and a fingerprint of the table's metadata
(to assert that a failed or dry run changed nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.table.table import FileStoreTable

FUTURE = "2999-01-01T00:00:00"  # an older_than that everything is older than


def make_table(wh: str, commits: int = 4, *, options: dict[str, str] | None = None) -> FileStoreTable:
    """``db.t`` (id, dt) partitioned by dt; commit i writes ids i*10..i*10+2 into partition d<i>."""
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    t = catalog.create_table("db.t", schema, partition_keys=["dt"], options=options)
    for i in range(commits):
        t.write_arrow(
            pa.table({"id": pa.array([i * 10 + j for j in range(3)], pa.int64()), "dt": [f"d{i}"] * 3})
        )
    return t


def reload(wh: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table("db.t")


def ids(t: FileStoreTable) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def run_job(
    module: Any, wh: str, *args: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    """Run a job in-process; its exit code and its one JSON line."""
    capsys.readouterr()
    rc = module.main(["--warehouse", wh, "--table", "db.t", *args])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return rc, json.loads(lines[0])


def cli(*args: str) -> tuple[int, dict[str, Any]]:
    """``python -m spark_jobs <args>`` in a fresh process: exit code and the one JSON line."""
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", *args], capture_output=True, text=True, timeout=300, cwd="/"
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (proc.stdout, proc.stderr[-2000:])
    return proc.returncode, json.loads(lines[0])


def metadata_state(wh: str) -> dict[str, bytes]:
    """Every metadata file of ``db.t`` (snapshots, hints, tags, consumers, changelogs) with its
    content: equal before and after means the run changed nothing."""
    root = os.path.join(wh, "db.db", "t")
    out: dict[str, bytes] = {}
    for sub in ("snapshot", "tag", "consumer", "changelog"):
        d = os.path.join(root, sub)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name), "rb") as f:
                    out[f"{sub}/{name}"] = f.read()
    return out


def table_files(wh: str, table: str = "t") -> dict[str, bytes]:
    """Every file of ``db.<table>`` (metadata, branches and data) with its content: equal before
    and after means the run changed nothing at all."""
    root = os.path.join(wh, "db.db", table)
    out: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                out[os.path.relpath(os.path.join(dirpath, n), root)] = f.read()
    return out


def data_files(wh: str) -> set[str]:
    """Every data file under the table's partition directories (relative paths)."""
    root = os.path.join(wh, "db.db", "t")
    found = set()
    for dirpath, _, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if "bucket-" in rel:
            found |= {os.path.join(rel, n) for n in names}
    return found
