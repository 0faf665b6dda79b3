"""Append compaction with deletion vectors: deleted rows are not rewritten, the DV index files
of rewritten files are deleted, and vectors of files not rewritten are carried over intact."""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Sequence

import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_core import FileSystemCatalog
from paimon_core.append import DeletionIndex, plan_unaware_bucket_compaction, rewrite_append_files
from paimon_core.deletionvectors import BITMAP32_MAGIC, read_deletion_vector
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import DataFileMeta, DeletionVectorMeta, IndexFileMeta, ManifestEntry
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable

_ids = itertools.count(1)


def dv32(positions: Sequence[int]) -> bytes:
    """Java ``BitmapDeletionVector.serializeTo``: BE length, BE magic + portable bitmap, BE CRC."""
    bm = BitMap(positions)
    bm.run_optimize()
    data = struct.pack(">I", BITMAP32_MAGIC) + bm.serialize()
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def commit_index(t: FileStoreTable, entry: ManifestEntry, deletes: dict[str, Sequence[int]]) -> IndexFileMeta:
    """Commit one DV index file holding a vector per data file (as Java writes them)."""
    out = bytearray(b"\x01")
    ranges = []
    for name, given in deletes.items():
        positions = sorted(set(given))
        blob = dv32(positions)
        ranges.append(DeletionVectorMeta(name, len(out), len(blob) - 8, len(positions)))
        out += blob
    name = f"index-dvtest-{next(_ids)}"
    t.file_io.write_bytes(join(t.paths.index_dir, name), bytes(out))
    meta = IndexFileMeta("DELETION_VECTORS", name, len(out), len(ranges), tuple(ranges))
    message = CommitMessage(entry.partition, entry.bucket, entry.total_buckets, new_index_files=(meta,))
    t.new_file_store_commit("dv-test").commit([message], next(_ids))
    return meta


def live(t: FileStoreTable) -> list[ManifestEntry]:
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return sorted(entries, key=lambda e: e.file.file_name)


def ids(t: FileStoreTable) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("bucket", [-1, 2], ids=["unaware", "fixed2"])
def test_rewrite_applies_and_replaces_deletion_vectors(catalog: FileSystemCatalog, bucket: int) -> None:
    opts = {"deletion-vectors.enabled": "true", "bucket": str(bucket)}
    if bucket > 0:
        opts["bucket-key"] = "id"
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = catalog.create_table("db.dv", schema, options=opts)
    for i in range(3):  # bucket-key id: all rows of the fixed table land in bucket 1 or 0
        t.write_arrow(pa.table({"id": pa.array([10 * i + k for k in range(10)], pa.int64()), "v": ["x"] * 10}))
    entries = [e for e in live(t) if e.bucket == live(t)[0].bucket]
    a, b, c = sorted(entries, key=lambda e: (e.file.min_sequence_number, e.file.file_name))[:3]
    deleted_from_a = sorted({0, a.file.row_count - 1})
    old_index = commit_index(t, a, {a.file.file_name: deleted_from_a, b.file.file_name: [0]})
    before = ids(t)
    index = DeletionIndex.load(t.store, a.partition, a.bucket)
    assert index.index_file_of(a.file.file_name) == old_index

    unit = [a.file, c.file]  # b is not rewritten: its vector must survive
    m = rewrite_append_files(t.store, a.partition, a.bucket, unit)
    assert sum(f.row_count for f in m.compact_after) == a.file.row_count - len(deleted_from_a) + c.file.row_count
    assert m.compact_deleted_index_files == (old_index,)
    (carried,) = m.compact_new_index_files
    assert [r.data_file_name for r in carried.dv_ranges or ()] == [b.file.file_name]
    new_index = DeletionIndex(a.partition, a.bucket, (carried,), {carried.file_name: t.paths.index_file_path(carried.file_name)})
    (r,) = carried.dv_ranges or ()
    from paimon_core.deletionvectors import DeletionFile

    dv = read_deletion_vector(t.file_io, DeletionFile(new_index.paths[carried.file_name], r.offset, r.length, r.cardinality))
    assert dv.deleted_positions().tolist() == [0]

    result = t.new_file_store_commit("compact-test").commit([m], 1)
    # one COMPACT snapshot carries the data files and the rewritten vectors (no intermediate
    # snapshot in which the deleted rows would come back)
    assert len(result.snapshot_ids) == 1 and result.commit_kind == "COMPACT"
    assert ids(t) == before  # rows deleted from a and b stay deleted, nothing else changed
    after = DeletionIndex.load(t.store, a.partition, a.bucket)
    assert set(after.deletion_files) == {b.file.file_name}
    assert t.file_io.exists(t.paths.index_file_path(old_index.file_name))  # never deleted by the rewrite


def test_planner_takes_files_with_many_deletes(catalog: FileSystemCatalog) -> None:
    """A big file with more than 20% rows deleted is a candidate (Java's delete ratio)."""
    t = catalog.create_table(
        "db.dv2", pa.schema([("id", pa.int64())]), options={"deletion-vectors.enabled": "true", "target-file-size": "1 b"}
    )
    t.write_arrow(pa.table({"id": pa.array(range(10), pa.int64())}))
    t.write_arrow(pa.table({"id": pa.array(range(10, 20), pa.int64())}))
    x, y = live(t)
    commit_index(t, x, {x.file.file_name: [0, 1, 2]})
    index = DeletionIndex.load(t.store, x.partition, 0)
    files: dict[bytes, list[DataFileMeta]] = {x.partition: [x.file, y.file]}
    (task,) = plan_unaware_bucket_compaction(
        files, target_file_size=1, compaction_file_size=0, deletion_files={x.partition: index.deletion_files}
    )
    assert task.files == (x.file,)
    before = ids(t)
    m = rewrite_append_files(t.store, task.partition, 0, task.files, deletion_index=index)
    assert not m.compact_new_index_files and len(m.compact_deleted_index_files) == 1
    t.new_file_store_commit("compact-test").commit([m], 1)
    assert ids(t) == before
    assert len(before) == 17 and len(m.compact_after) == 1 and m.compact_after[0].row_count == 7
