"""Table checks of the distributed tests, independent of the jobs under test."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core import FileSystemCatalog

DAY_MILLIS = 86_400_000


def write_source(path: Path, data: pa.Table) -> str:
    """A Parquet source file for ``ingest``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path)
    return str(path)


def table_dir(wh: str, table: str) -> Path:
    db, name = table.split(".")
    return Path(wh) / f"{db}.db" / name


def data_files_on_disk(wh: str, table: str) -> set[str]:
    """Every data file under the table's bucket directories (``data-*``), by name."""
    return {p.name for p in table_dir(wh, table).rglob("bucket-*/data-*")}


def referenced_data_files(wh: str, table: str) -> set[str]:
    """The data files some snapshot still reads: the union of every snapshot's scan plan."""
    t = FileSystemCatalog(wh).get_table(table)
    names: set[str] = set()
    for snap in t.snapshot_manager.snapshots():
        for split in t.copy({"scan.snapshot-id": str(snap.id)}).new_read_builder().plan().splits:
            names.update(f.file_name for f in split.files)
    return names


def plant_orphan(
    wh: str, table: str, name: str = "data-orphan-0.parquet", *, age_millis: int = 2 * DAY_MILLIS
) -> Path:
    """A stray data file (as a crashed writer leaves) in bucket-0, ``age_millis`` old."""
    bucket = next(table_dir(wh, table).rglob("bucket-0"))
    path = bucket / name
    path.write_bytes(b"PAR1 leftover of a dead task")
    stamp = time.time() - age_millis / 1000
    os.utime(path, (stamp, stamp))
    return path


def sorted_rows(data: pa.Table, *columns: str) -> list[tuple[Any, ...]]:
    cols = list(columns) or data.column_names
    return sorted(zip(*(data.column(c).to_pylist() for c in cols), strict=True))
