"""Inputs and pre-built tables of the cases, made once per work directory and reused.

Every table here is written by OUR writer (paimon_core) with default options, so all sides read
or commit on byte-identical tables. A fixture directory carries a fingerprint of its parameters
and of paimon_core's source code: it is rebuilt whenever either changes, so a cached table never
hides a change in our writer.

Also here: the neutral checks the harness applies to what a side wrote (plain pyarrow over the
data files, snapshot JSON), so a writer is never verified by its own reader.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import datagen

REPO_ROOT = Path(__file__).resolve().parent.parent
TABLE = "db.t"
#: Bump when the layout of a fixture changes.
FIXTURE_VERSION = 1


def source_hash() -> str:
    """sha256 over paimon_core's Python sources (what a measurement actually ran)."""
    h = hashlib.sha256()
    for p in sorted((REPO_ROOT / "paimon_core").rglob("*.py")):
        h.update(p.relative_to(REPO_ROOT).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _source_hash() -> str:
    h = hashlib.sha256(source_hash().encode())
    for p in (Path(__file__), Path(datagen.__file__)):
        h.update(p.read_bytes())
    return h.hexdigest()


_SOURCE_HASH: str | None = None


def fingerprint(params: dict[str, Any]) -> str:
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        _SOURCE_HASH = _source_hash()
    doc = json.dumps({"v": FIXTURE_VERSION, "params": params, "src": _SOURCE_HASH}, sort_keys=True)
    return hashlib.sha256(doc.encode()).hexdigest()


def cached(path: Path, params: dict[str, Any], build: Callable[[Path], None], log: Callable[[str], None]) -> Path:
    """``path`` built by ``build(path)`` unless it already holds a build with the same fingerprint."""
    stamp = path / ".fingerprint"
    want = fingerprint(params)
    if stamp.is_file() and stamp.read_text() == want:
        return path
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    log(f"building fixture {path.name} {params}")
    build(path)
    stamp.write_text(want)
    return path


# ---------------------------------------------------------------------------------------------
# tables written with paimon_core
# ---------------------------------------------------------------------------------------------

def warehouse_of(path: Path) -> str:
    return str(path / "wh")


def table_dir(warehouse: str) -> Path:
    return Path(warehouse) / "db.db" / "t"


def create_empty_table(warehouse: str, partition_keys: Sequence[str] = ()) -> None:
    from paimon_core import FileSystemCatalog

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(TABLE, datagen.SCHEMA, partition_keys=list(partition_keys))


def write_commits(warehouse: str, commits: Iterable[pa.Table]) -> int:
    """One commit per table, in order, with our writer; returns the number of commits."""
    from paimon_core import FileSystemCatalog

    table = FileSystemCatalog(warehouse).get_table(TABLE)
    n = 0
    for data in commits:
        table.write_arrow(data)
        n += 1
    return n


def build_table(path: Path, input_file: Path, *, commits: int = 1, partition_keys: Sequence[str] = ()) -> None:
    """The input written in ``commits`` consecutive slices (ascending ids) into a fresh table."""
    data = pq.read_table(input_file)
    wh = warehouse_of(path)
    create_empty_table(wh, partition_keys)
    step = -(-data.num_rows // commits)
    write_commits(wh, (data.slice(i, step) for i in range(0, data.num_rows, step)))


def build_history(path: Path, snapshots: int, rows_per_commit: int, *, seed: int) -> None:
    """An unpartitioned table with ``snapshots`` small commits (ids 0 .. snapshots*rows-1)."""
    wh = warehouse_of(path)
    create_empty_table(wh)
    write_commits(wh, (pa.Table.from_batches([datagen.batch(i * rows_per_commit, rows_per_commit, seed=seed)])
                       for i in range(snapshots)))


def plan_partitions(partitions: int) -> tuple[str, ...]:
    return tuple(f"p{i:04d}" for i in range(partitions))


def many_files_commit(commit: int, partitions: int, rows_per_file: int, *, seed: int) -> pa.Table:
    """Commit ``commit`` of the many-files table: ``rows_per_file`` rows in each partition."""
    n = partitions * rows_per_file
    b = datagen.batch(commit * n, n, seed=seed)
    values = pa.array(plan_partitions(partitions))
    dt = values.take(pc.cast(pc.divide(pc.subtract(b.column("id"), commit * n), rows_per_file), pa.int64()))
    return pa.Table.from_batches([b]).set_column(1, "dt", dt)


def build_many_files(path: Path, commits: int, partitions: int, rows_per_file: int, *, seed: int) -> None:
    """``commits`` commits x ``partitions`` partitions = that many tiny data files."""
    wh = warehouse_of(path)
    create_empty_table(wh, ["dt"])
    write_commits(wh, (many_files_commit(c, partitions, rows_per_file, seed=seed) for c in range(commits)))


# ---------------------------------------------------------------------------------------------
# floor files (plain pyarrow)
# ---------------------------------------------------------------------------------------------

ZSTD1: dict[str, Any] = {"compression": "zstd", "compression_level": 1}


def build_floor_file(path: Path, input_file: Path) -> None:
    pq.write_table(pq.read_table(input_file), path / "data.parquet", **ZSTD1)


def build_hive_dir(path: Path, input_file: Path, *, commits: int) -> None:
    """The input as a hive-partitioned dataset ``dt=X/part-K.parquet``, one file per slice and dt."""
    data = pq.read_table(input_file)
    step = -(-data.num_rows // commits)
    root = path / "hive"
    for k, start in enumerate(range(0, data.num_rows, step)):
        part = data.slice(start, step)
        for dt in datagen.DT_VALUES:
            rows = part.filter(pc.equal(part.column("dt"), dt)).drop_columns(["dt"])
            if rows.num_rows:
                (root / f"dt={dt}").mkdir(parents=True, exist_ok=True)
                pq.write_table(rows, root / f"dt={dt}" / f"part-{k:04d}.parquet", **ZSTD1)


# ---------------------------------------------------------------------------------------------
# neutral checks of what a side wrote
# ---------------------------------------------------------------------------------------------

def data_files(table: Path) -> list[Path]:
    """Every data file of a table directory (``[partition/]bucket-N/*.parquet``)."""
    return sorted(p for p in table.rglob("*.parquet") if p.parent.name.startswith("bucket-"))


def read_files(files: Sequence[Path]) -> pa.Table:
    """Data files read with plain pyarrow (columns id, dt, v, s), independent of any Paimon reader."""
    if not files:
        return datagen.SCHEMA.empty_table()
    tables = [pq.read_table(f, columns=list(datagen.SCHEMA.names)) for f in files]
    return pa.concat_tables([t.cast(datagen.SCHEMA) for t in tables])


def snapshots(table: Path) -> dict[int, dict[str, Any]]:
    """Snapshot id -> snapshot JSON of a table directory."""
    out = {}
    for p in (table / "snapshot").glob("snapshot-*"):
        suffix = p.name.rsplit("-", 1)[-1]
        if suffix.isdigit():
            out[int(suffix)] = json.loads(p.read_text())
    return out


def dir_bytes(files: Iterable[Path]) -> int:
    return sum(f.stat().st_size for f in files)
