"""Lookup / deletion-vector compaction of primary-key tables: engines that must not mark rows,
dynamic buckets, a compaction racing a writer's inline lookup, nested row-deduplicate, pruned
lookups and the clean-up of abandoned index files."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.deletionvectors.deletion_file import DELETION_VECTORS_INDEX
from paimon_core.exceptions import CommitConflictError, InvalidOptionError
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import (
    DataFileMeta,
    DeletionVectorMeta,
    FileKind,
    IndexFileMeta,
    IndexManifestEntry,
)
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.mergetree.lookup_levels import LookupLevels
from paimon_core.operation.commit.conflicts import check_index_conflicts
from paimon_core.operation.compact.compact_planner import CompactPlanner, CompactRequest
from paimon_core.operation.compact.compact_task import CompactTask, run_compact_task
from paimon_core.operation.compact.table_compact import TableCompact, local_executor
from paimon_core.schema.schema_change import SetOption
from paimon_core.store import FileStore
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead
from tests.unit.paimon_core.maintenance.expiry_helpers import list_all_files, unreferenced_files

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64())])


def _table(catalog: FileSystemCatalog, name: str = "db.t", **options: str) -> FileStoreTable:
    return catalog.create_table(name, SCHEMA, primary_keys=["k"], options={"bucket": "1", "write-only": "true", **options})


def _write(t: FileStoreTable, rows: Sequence[tuple[int, int]]) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.write_arrow(pa.table({"k": [r[0] for r in rows], "v": [r[1] for r in rows]}, schema=SCHEMA))
    b.new_commit().commit(w.prepare_commit())


def _rows(t: FileStoreTable) -> dict[int, list[int]]:
    got = t.to_arrow()
    out: dict[int, list[int]] = {}
    for k, v in zip(got["k"].to_pylist(), got["v"].to_pylist(), strict=True):
        out.setdefault(k, []).append(v)
    return out


def _vectors(t: FileStoreTable) -> list[IndexManifestEntry]:
    snap = t.latest_snapshot()
    if snap is None or snap.index_manifest is None:
        return []
    entries = read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest))
    return [e for e in entries if e.index_file.index_type == DELETION_VECTORS_INDEX]


# --- 1. first-row never marks rows; the option combination is refused ----------------------------


def test_first_row_with_deletion_vectors_is_refused_on_create_alter_and_write(catalog: FileSystemCatalog) -> None:
    both = r"merge-engine = 'first-row'.*deletion-vectors.enabled"
    with pytest.raises(InvalidOptionError, match=both):
        _table(catalog, "db.bad", **{"merge-engine": "first-row", "deletion-vectors.enabled": "true"})
    t = _table(catalog, **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    with pytest.raises(InvalidOptionError, match=both):
        catalog.alter_table("db.t", [SetOption("deletion-vectors.enabled", "true")])
    with pytest.raises(InvalidOptionError, match=both):
        _write(t.copy({"deletion-vectors.enabled": "true"}), [(1, 1)])
    assert t.latest_snapshot() is None


def test_first_row_lookup_never_marks_the_kept_row_deleted(catalog: FileSystemCatalog) -> None:
    """A first-row table compacted with deletion vectors anyway (options another engine set): the
    lookup finds the stored row and drops the new one, so nothing may be marked deleted."""
    t = _table(catalog, **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    dv = t.copy({"deletion-vectors.enabled": "true"})
    _write(t, [(k, k * 100) for k in range(100)])
    dv.maintenance.compact(compact_strategy="full")
    _write(t, [(1, 111), (500, 1)])
    dv.maintenance.compact(compact_strategy="minor")
    assert not _vectors(t)
    assert _rows(t) == {k: [k * 100] for k in range(100)} | {500: [1]}


# --- 2. dynamic-bucket primary-key tables keep their vectors per bucket ---------------------------


def test_dynamic_bucket_table_vectors_stay_in_their_bucket(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"bucket": "-1", "dynamic-bucket.target-row-num": "1000", "deletion-vectors.enabled": "true"})
    _write(t, [(k, k) for k in range(3000)])
    t.maintenance.compact(compact_strategy="full")
    bucket_of = {e.file.file_name: e.bucket for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    assert len(set(bucket_of.values())) == 3
    for rows in ([(k, -k) for k in (0, 1000, 2000)], [(1, 11)], [(2, 22), (1002, 22)]):
        _write(t, rows)
        t.maintenance.compact(compact_strategy="minor")
        got = _rows(t)
        assert len(got) == 3000 and all(len(v) == 1 for v in got.values())
        for e in _vectors(t):  # an index file names only data files of its own bucket
            assert {bucket_of.get(r.data_file_name, e.bucket) for r in e.index_file.dv_ranges or ()} == {e.bucket}
    assert got[1] == [11] and got[2] == [22] and got[1002] == [22] and got[0] == [0]


def test_index_conflicts_are_keyed_by_partition_and_data_file() -> None:
    """Two live index files with vectors of one data file conflict even under different buckets."""

    def entry(partition: bytes, bucket: int, name: str) -> IndexManifestEntry:
        meta = IndexFileMeta(DELETION_VECTORS_INDEX, name, 10, 1, (DeletionVectorMeta("data-1.parquet", 1, 8, 1),))
        return IndexManifestEntry(FileKind.ADD, partition, bucket, meta)

    with pytest.raises(CommitConflictError, match="data-1.parquet"):
        check_index_conflicts([entry(b"p", 0, "index-a")], [entry(b"p", 1, "index-b")], snapshot_id=3)
    check_index_conflicts([entry(b"p", 0, "index-a")], [entry(b"q", 0, "index-b")], snapshot_id=3)  # another partition


# --- 3. a dedicated compaction racing a writer's inline lookup compaction ------------------------


def _two_levels(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    t = _table(catalog, **{"deletion-vectors.enabled": "true", **options})
    _write(t, [(k, k) for k in range(5000)])
    t.maintenance.compact(compact_strategy="full")  # F on the max level
    _write(t, [(k, k) for k in range(5000, 5050)])
    t.maintenance.compact(compact_strategy="minor")  # H one level below
    return t


def test_a_compaction_whose_input_got_a_vector_meanwhile_is_refused(catalog: FileSystemCatalog) -> None:
    t = _two_levels(catalog)
    (task,) = CompactPlanner(t.store, clock=t.clock).plan(CompactRequest(strategy="full")).tasks
    message = run_compact_task(t.store, task)
    assert not message.compact_new_index_files and not message.compact_deleted_index_files
    _write(t.copy({"write-only": "false"}), [(7, -7)])  # a writer's inline lookup marks F's k=7 deleted
    assert _vectors(t)
    latest = t.latest_snapshot()
    with pytest.raises(CommitConflictError, match="Deletion vector conflicts"):
        t.new_file_store_commit("compactor").commit([message], 1)
    assert t.latest_snapshot() == latest and _rows(t)[7] == [-7]


def test_table_compact_replans_after_a_writer_marked_its_input(catalog: FileSystemCatalog) -> None:
    t = _two_levels(catalog)
    writer = t.copy({"write-only": "false"})
    base = local_executor(1)
    raced: list[int] = []

    def racing(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = base(store, tasks)
        if not raced:  # once: the writer updates k=7 while the first run is in flight
            raced.append(1)
            _write(writer, [(7, -7)])
        return out

    result = TableCompact(t.store, executor=racing).run(CompactRequest(strategy="full"))
    assert result.snapshot_id is not None and result.conflict_rounds == 1
    got = _rows(t)
    assert len(got) == 5050 and got[7] == [-7] and all(len(v) == 1 for v in got.values())
    assert not _vectors(t) and unreferenced_files(t) == set()


# --- 4. row-deduplicate compares nested columns -------------------------------------------------

NESTED = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.int64()),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int64())),
        ("s", pa.struct([("a", pa.int64()), ("b", pa.list_(pa.int64()))])),
    ]
)


def _changelog(t: FileStoreTable, snapshot_id: int) -> list[tuple[str, int]]:
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    units = scan.plan_delta(t.snapshot_manager.snapshot(snapshot_id))
    got = TableRead(t, row_kind=True).to_arrow(units or [])
    return list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), strict=True))


@pytest.mark.parametrize("producer", ["lookup", "full-compaction"])
def test_row_deduplicate_with_nested_columns(catalog: FileSystemCatalog, producer: str) -> None:
    t = catalog.create_table(
        "db.n", NESTED, primary_keys=["k"],
        options={"bucket": "1", "write-only": "true", "changelog-producer": producer, "changelog-producer.row-deduplicate": "true"},
    )

    def write(rows: list[dict[str, object]]) -> int:
        b = t.new_batch_write_builder()
        w = b.new_write()
        w.write_arrow(pa.Table.from_pylist(rows, schema=NESTED))
        b.new_commit().commit(w.prepare_commit())
        sid = t.maintenance.compact(compact_strategy="full").snapshot_id
        assert sid is not None
        return sid

    row: dict[str, object] = {"k": 1, "v": 1, "tags": ["a", None], "attrs": [("x", 1)], "s": {"a": 1, "b": [1, 2]}}
    other: dict[str, object] = {"k": 2, "v": 2, "tags": None, "attrs": None, "s": None}
    assert _changelog(t, write([row, other])) == [("+I", 1), ("+I", 2)]
    assert _changelog(t, write([row, other])) == []  # rewritten unchanged: nothing
    for change in ({"tags": ["a", "b"]}, {"attrs": [("x", 2)]}, {"s": {"a": 1, "b": [1, 3]}}, {"s": None}):
        row = {**row, **change}
        assert _changelog(t, write([row])) == [("-U", 1), ("+U", 1)], change


def test_unknown_row_deduplicate_ignore_field_is_named(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true",
                           "changelog-producer.row-deduplicate-ignore-fields": "v, nope"})
    _write(t, [(1, 1)])
    with pytest.raises(InvalidOptionError, match="nope"):
        t.maintenance.compact(compact_strategy="full")


# --- 5. a lookup reads only the files whose key range holds a looked-up key -----------------------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[int, int]:
    counts: dict[int, int] = {}
    original = DataFileReader.read

    def counting(self: DataFileReader, bucket_path: str, f: DataFileMeta, *args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        counts[f.level] = counts.get(f.level, 0) + 1
        return original(self, bucket_path, f, *args, **kwargs)

    monkeypatch.setattr(DataFileReader, "read", counting)
    return counts


@pytest.mark.parametrize("key_type", [pa.int64(), pa.string()])
def test_lookup_reads_only_overlapping_files(catalog: FileSystemCatalog, reads: dict[int, int], key_type: pa.DataType) -> None:
    """Five files of one level with disjoint key ranges: a lookup reads the files whose range
    holds a probe key, each once (later lookups hit the cache), and finds the right rows."""
    schema = pa.schema([pa.field("k", key_type, nullable=False), ("v", pa.int64())])
    t = catalog.create_table("db.r", schema, primary_keys=["k"], options={"bucket": "1", "write-only": "true"})

    def key(i: int) -> object:
        return i if key_type == pa.int64() else f"{i:06d}"

    for part in range(5):
        ks = range(part * 1000, part * 1000 + 1000)
        t.write_arrow(pa.table({"k": [key(k) for k in ks], "v": list(ks)}, schema=schema))
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    files = [e.file.copy(level=3) for e in entries]
    reader = DataFileReader(t.file_io, t.schema_manager_cached, table_name=t.name)
    levels = LookupLevels(reader, t.bucket_path(entries[0].partition, 0), files, t.schema.fields, ["k"], with_values=True)
    reads.clear()
    found = levels.lookup(pa.table({"k": [key(5), key(999), key(4999), key(7000)]}, schema=schema.remove(1)), 1)
    assert reads == {3: 2}  # the first and the last file
    assert found.key_index.tolist() == [0, 1, 2] and found.positions.tolist() == [5, 999, 999]
    assert found.rows is not None and found.rows["v"].to_pylist() == [5, 999, 4999]
    again = levels.lookup(pa.table({"k": [key(6), key(2500)]}, schema=schema.remove(1)), 1)
    assert reads == {3: 3} and again.key_index.tolist() == [0, 1]  # the middle file, once


# --- 6. abandoned compactions delete their index files where they wrote them ----------------------


@pytest.mark.parametrize("in_data_dir", ["true", "false"])
def test_abandoned_compaction_leaves_no_index_file(catalog: FileSystemCatalog, in_data_dir: str) -> None:
    t = _table(catalog, **{"deletion-vectors.enabled": "true", "index-file-in-data-file-dir": in_data_dir})
    _write(t, [(k, k) for k in range(5000)])
    t.maintenance.compact(compact_strategy="full")
    _write(t, [(7, -7)])
    base = local_executor(1)

    def racing(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        out = base(store, tasks)
        assert any(m.compact_new_index_files for m in out)
        t.maintenance.compact(compact_strategy="minor")  # another compaction of the same level-0 file lands first
        return out

    with pytest.raises(CommitConflictError):
        TableCompact(t.store, executor=racing, max_conflict_rounds=0).run(CompactRequest(strategy="minor"))
    live = {e.index_file.file_name for e in _vectors(t)}
    names = {posixpath.basename(f) for f in list_all_files(t.file_io, t.path)}
    on_disk = {f for f in names if f.startswith("index-") and not f.startswith("index-manifest")}
    assert on_disk == live and len(live) == 1
    assert _rows(t)[7] == [-7]
    if in_data_dir == "false":  # (the helper looks for index files under index/ only)
        assert unreferenced_files(t) == set()
