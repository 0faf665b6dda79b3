"""A compaction killed at any file write (SIGKILL-like: ``os._exit``, no cleanup runs) leaves a
readable table with the same rows; a re-run completes it; orphan cleanup removes the leftovers.
The kill comes from :class:`~tests.fixtures.failing_file_io.FailingFileIO` (its N-th write)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

_KILLER = textwrap.dedent(
    """
    import os, sys
    from paimon_core import FileSystemCatalog
    from tests.fixtures.failing_file_io import FailingFileIO

    wh, table, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])

    def kill(op, path):
        os._exit(9)  # SIGKILL-like: no cleanup runs

    file_io = FailingFileIO(
        wh, fail_at=kill_at, ops=("open_output", "write_bytes", "try_write_atomic", "delete"), error=kill
    )
    t = FileSystemCatalog(wh, file_io=file_io).get_table(table)
    t.maintenance.compact(parallelism=1)
    print(file_io.count)
    """
)
ROOT = Path(__file__).resolve().parents[4]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def _make(wh: str, name: str, pk: bool) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    if pk:
        t = cat.create_table(name, SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})
    else:
        t = cat.create_table(name, SCHEMA, partition_keys=["dt"], options={"source.split.open-file-cost": "1 b"})
    for k in range(6):
        ids = list(range(k * 7, k * 7 + 20))
        t.write_arrow(pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [k] * len(ids)}, schema=SCHEMA))
    return t


def _rows(t: FileStoreTable) -> list[tuple[int, str, int]]:
    got = t.to_arrow().sort_by([("id", "ascending"), ("dt", "ascending"), ("v", "ascending")])
    return list(zip(got["id"].to_pylist(), got["dt"].to_pylist(), got["v"].to_pylist(), strict=True))


def _kill(wh: str, name: str, at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _KILLER, wh, name, str(at)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_kill_at_every_write_leaves_a_readable_table(tmp_path: Path) -> None:
    for pk in (True, False):
        probe = _make(str(tmp_path / f"probe-{pk}"), "db.t", pk)
        done = _kill(str(tmp_path / f"probe-{pk}"), "db.t", 10**6)
        assert done.returncode == 0, done.stderr
        steps = int(done.stdout.strip().splitlines()[-1])
        assert steps >= 6 and _rows(probe) == _rows(_make(str(tmp_path / f"ref-{pk}"), "db.t", pk))
        for at in range(1, steps + 1):
            wh = str(tmp_path / f"k{pk}-{at}")
            t = _make(wh, "db.t", pk)
            want, latest = _rows(t), t.latest_snapshot()
            proc = _kill(wh, "db.t", at)
            assert proc.returncode == 9, (at, proc.stderr)
            t = FileSystemCatalog(wh).get_table("db.t")
            assert _rows(t) == want, at  # whatever landed, the rows are the same
            assert latest is not None and t.latest_snapshot().id in (latest.id, latest.id + 1)  # type: ignore[union-attr]
            t.maintenance.compact()  # a re-run finishes (or finds nothing left to do)
            assert _rows(t) == want
            time.sleep(0.02)  # leftovers are older than the cutoff below
            t.maintenance.remove_orphan_files(older_than=t.clock.now_millis() - 1, force=True, dry_run=False)
            assert unreferenced_files(t) == set(), at
