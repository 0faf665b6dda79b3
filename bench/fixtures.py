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
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
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


def fingerprint(params: dict[str, Any], *, ours_source: bool = True) -> str:
    """Hash of the parameters, the bench's own generator code and (``ours_source``) paimon_core's source."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        _SOURCE_HASH = _source_hash()
    src = _SOURCE_HASH if ours_source else hashlib.sha256(
        b"".join(p.read_bytes() for p in (Path(__file__), Path(datagen.__file__)))).hexdigest()
    doc = json.dumps({"v": FIXTURE_VERSION, "params": params, "src": src}, sort_keys=True)
    return hashlib.sha256(doc.encode()).hexdigest()


def cached(path: Path, params: dict[str, Any], build: Callable[[Path], None], log: Callable[[str], None], *,
           ours_source: bool = True) -> Path:
    """``path`` built by ``build(path)`` unless it already holds a build with the same fingerprint.

    ``ours_source=False``: the fixture does not depend on paimon_core's code (a table written by
    a peer), so a change in paimon_core does not rebuild it; ``params`` must then name what it
    does depend on (e.g. the peer's version).
    """
    stamp = path / ".fingerprint"
    want = fingerprint(params, ours_source=ours_source)
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


def create_empty_table(warehouse: str, partition_keys: Sequence[str] = (), *, primary_keys: Sequence[str] = (),
                       options: dict[str, str] | None = None) -> None:
    from paimon_core import FileSystemCatalog

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(TABLE, datagen.SCHEMA, partition_keys=list(partition_keys),
                         primary_keys=list(primary_keys), options=dict(options or {}))


#: The primary-key table of the pk_* cases: key ``id``, 4 fixed buckets, default options otherwise.
PK_KEYS = ("id",)
PK_OPTIONS = {"bucket": "4"}


def create_empty_pk_table(warehouse: str) -> None:
    create_empty_table(warehouse, primary_keys=PK_KEYS, options=PK_OPTIONS)


def build_pk_table(path: Path, input_files: Sequence[Path]) -> None:
    """A fresh primary-key table written by our writer: one commit per input file, in order."""
    wh = warehouse_of(path)
    create_empty_pk_table(wh)
    write_commits(wh, (pq.read_table(f) for f in input_files))


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


#: Paimon row kinds kept by a merged read (+I, +U); -U and -D retract the key.
_KEPT_KINDS = pa.array([0, 2], pa.int8())
_PK_SCHEMA = pa.schema([("_SEQUENCE_NUMBER", pa.int64()), ("_VALUE_KIND", pa.int8()), *datagen.SCHEMA])


def read_pk_files(files: Sequence[Path]) -> pa.Table:
    """Merged view of a primary-key table's data files with plain pyarrow (no Paimon reader).

    Deduplicate merge on ``id``: the row with the highest ``_SEQUENCE_NUMBER`` of each key wins,
    and a key whose winner is a retraction (``_VALUE_KIND`` -U/-D) is dropped. Vectorized: one
    sort by (id, sequence desc), then the first row of each run of equal ids.
    """
    if not files:
        return datagen.SCHEMA.empty_table()
    parts = [pq.read_table(f, columns=_PK_SCHEMA.names).cast(_PK_SCHEMA) for f in files]
    data = pa.concat_tables(parts).combine_chunks()
    order = pc.sort_indices(data, sort_keys=[("id", "ascending"), ("_SEQUENCE_NUMBER", "descending")])
    data = data.take(order)
    ids = data.column("id").to_numpy()
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    data = data.filter(pa.array(first))
    data = data.filter(pc.is_in(data.column("_VALUE_KIND"), value_set=_KEPT_KINDS))
    return data.select(datagen.SCHEMA.names)


def bucket_dirs(files: Iterable[Path]) -> set[str]:
    """Names of the bucket directories holding ``files`` (``bucket-0`` ...)."""
    return {f.parent.name for f in files}


#: The only files of a Paimon table a writer may rewrite in place (pypaimon-rust does, for LATEST).
MUTABLE_FILES = frozenset({"LATEST", "EARLIEST"})


def link_tree(src: Path, dst: Path) -> None:
    """Copy a table's directory tree by hard links (fast, same mtimes), the hint files by value.

    Every other file of a Paimon table is immutable once written (new snapshots, manifests and
    data files get new names), so nothing a side does in the copy can change the source's inodes;
    the ``LATEST`` / ``EARLIEST`` hints may be overwritten in place and are therefore real copies.
    Plain copies also where links fail (another file system).
    """
    def link(s: str, d: str) -> None:
        if os.path.basename(s) in MUTABLE_FILES:
            shutil.copy2(s, d)
            return
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=link)


def manifest_referenced(table: Path, snapshot: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(manifest lists + manifests, live data file names) one snapshot needs, read with fastavro.

    Independent of any Paimon reader: the snapshot JSON names its manifest lists, each list
    names manifests (``_FILE_NAME``), each manifest entry names a data file (``_FILE._FILE_NAME``)
    added (``_KIND`` 0) or deleted (1); live files are the adds minus the deletes.
    """
    from fastavro import reader

    def rows(name: str) -> list[dict[str, Any]]:
        with open(table / "manifest" / name, "rb") as f:
            return [r for r in reader(f) if isinstance(r, dict)]

    meta: set[str] = set()
    added: set[str] = set()
    deleted: set[str] = set()
    for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
        if not snapshot.get(key):
            continue
        meta.add(snapshot[key])
        for m in rows(snapshot[key]):
            meta.add(m["_FILE_NAME"])
            if key == "changelogManifestList":
                continue
            for e in rows(m["_FILE_NAME"]):
                (deleted if e["_KIND"] == 1 else added).add(e["_FILE"]["_FILE_NAME"])
    return meta, added - deleted


def live_data_files(table: Path, snapshot: dict[str, Any]) -> dict[str, tuple[bytes, int, int]]:
    """Live data files of one snapshot, name -> (partition bytes, bucket, level), read with fastavro.

    Like :func:`manifest_referenced` (base + delta manifest lists, adds minus deletes), but an
    entry is identified by (partition, bucket, level, name), as Paimon identifies it: a file
    upgraded to a higher level without a rewrite is deleted on its old level and added on the new.
    """
    from fastavro import reader

    def rows(name: str) -> list[dict[str, Any]]:
        with open(table / "manifest" / name, "rb") as f:
            return [r for r in reader(f) if isinstance(r, dict)]

    added: set[tuple[bytes, int, int, str]] = set()
    deleted: set[tuple[bytes, int, int, str]] = set()
    for key in ("baseManifestList", "deltaManifestList"):
        if not snapshot.get(key):
            continue
        for m in rows(snapshot[key]):
            for e in rows(m["_FILE_NAME"]):
                ident = (bytes(e["_PARTITION"]), int(e["_BUCKET"]), int(e["_FILE"]["_LEVEL"]), e["_FILE"]["_FILE_NAME"])
                (deleted if e["_KIND"] == 1 else added).add(ident)
    return {name: (part, bucket, level) for part, bucket, level, name in added - deleted}


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
