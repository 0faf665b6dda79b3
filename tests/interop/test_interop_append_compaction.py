"""Append tables compacted by paimon_core, read by pypaimon 2.1.0 and pypaimon-rust 0.4.0.

We write an append table in several commits (a column is added half way, so the compaction
reads files of two schemas), rewrite every (partition, bucket) with the append compaction
rewriter and commit the COMPACT snapshot. The peers must read exactly the rows they read before
the compaction, from the compacted files, and still read the snapshot before it (the old files
stay until expiry).
"""

from __future__ import annotations

import struct
import zlib

import pyarrow as pa
import pytest
from peers import Peer
from pyroaring import BitMap

from paimon_core import FileSystemCatalog
from paimon_core.append import (
    AppendCompactConfig,
    order_by_sequence,
    plan_unaware_bucket_compaction,
    rewrite_append_files,
)
from paimon_core.deletionvectors import BITMAP32_MAGIC
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import DataFileMeta, DeletionVectorMeta, FileSource, IndexFileMeta
from paimon_core.schema.data_types import VarCharType
from paimon_core.schema.schema_change import AddColumn
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable

COMMITS, ROWS = 6, 300


def batch(start: int, *, extra: bool) -> pa.Table:
    ids = list(range(start, start + ROWS))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "dt": pa.array([f"2024-01-0{1 + i % 3}" for i in ids], pa.string()),
        "v": pa.array([None if i % 13 == 0 else i / 4 for i in ids], pa.float64()),
        "s": pa.array([None if i % 7 == 0 else f"ü-{i}-" + "x" * (i % 30) for i in ids], pa.string()),
    }
    if extra:
        cols["extra"] = pa.array([None if i % 5 == 0 else f"e{i}" for i in ids], pa.string())
    return pa.table(cols)


def norm(t: pa.Table) -> pa.Table:
    t = t.replace_schema_metadata(None).select(["id", "dt", "v", "s", "extra"]).sort_by("id")
    return t.cast(pa.schema([f.with_metadata(None).with_nullable(True) for f in t.schema]))


def compact(t: FileStoreTable) -> list[CommitMessage]:
    """Unaware buckets: the planner's tasks; fixed buckets: every bucket, oldest file first."""
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    if t.options.bucket > 0:
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        return [rewrite_append_files(t.store, p, b, order_by_sequence(fs)) for (p, b), fs in groups.items()]
    config = AppendCompactConfig.from_options(t.schema.options)
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    for e in entries:
        by_partition.setdefault(e.partition, []).append(e.file)
    tasks = plan_unaware_bucket_compaction(
        by_partition,
        target_file_size=config.target_file_size,
        compaction_file_size=config.compaction_file_size,
        open_file_cost=config.open_file_cost,
        min_file_num=config.min_file_num,
    )
    return [rewrite_append_files(t.store, task.partition, 0, task.files) for task in tasks]


@pytest.mark.parametrize(
    ("options", "partitions"),
    [
        pytest.param({}, [], id="unaware"),
        pytest.param({}, ["dt"], id="unaware-partitioned"),
        pytest.param({"bucket": "2", "bucket-key": "id"}, ["dt"], id="fixed-bucket"),
        pytest.param({"bucket": "2", "bucket-key": "id", "file.format": "orc"}, [], id="fixed-bucket-orc"),
    ],
)
def test_peers_read_what_we_compacted(
    pypaimon_peer: Peer, rust_peer: Peer, warehouse: str, options: dict[str, str], partitions: list[str]
) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", batch(0, extra=False).schema, partition_keys=partitions, options=options)
    written = []
    for i in range(COMMITS):
        if i == COMMITS // 2:
            t = cat.alter_table("db.t", [AddColumn("extra", VarCharType(VarCharType.MAX_LENGTH))])
        rows = batch(i * ROWS, extra=i >= COMMITS // 2)
        t.write_arrow(rows)
        written.append(rows)
    want = norm(pa.concat_tables(written, promote_options="default"))
    before = t.latest_snapshot()
    assert before is not None
    for peer in (pypaimon_peer, rust_peer):
        assert norm(peer.read(warehouse, "db.t")).equals(want), peer.engine

    messages = compact(t)
    files_before = sum(len(m.compact_before) for m in messages)
    assert messages and files_before == len(t.new_file_store_scan().live_entries(before))
    assert all(f.file_source == FileSource.COMPACT for m in messages for f in m.compact_after)
    t.new_file_store_commit("compact").commit(messages, 1)
    latest = t.latest_snapshot()
    assert latest is not None and latest.commit_kind == CommitKind.COMPACT
    live = t.new_file_store_scan().live_entries(latest)
    assert {e.file.file_name for e in live} == {f.file_name for m in messages for f in m.compact_after}
    assert len(live) < files_before

    assert norm(t.to_arrow()).equals(want)
    for peer in (pypaimon_peer, rust_peer):
        assert norm(peer.read(warehouse, "db.t")).equals(want), peer.engine
        old = peer.read(warehouse, "db.t", options={"scan.snapshot-id": before.id})
        assert norm(old).equals(want), f"{peer.engine} at snapshot {before.id}"


def commit_deletion_vectors(t: FileStoreTable, deletes: dict[str, list[int]]) -> None:
    """One DV index file (Java's layout: version byte, then per vector BE length, BE magic +
    portable bitmap, BE CRC) holding a vector per data file, committed to the table."""
    out = bytearray(b"\x01")
    ranges = []
    for name, positions in deletes.items():
        data = struct.pack(">I", BITMAP32_MAGIC) + BitMap(positions).serialize()
        ranges.append(DeletionVectorMeta(name, len(out), len(data), len(positions)))
        out += struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    t.file_io.write_bytes(join(t.paths.index_dir, "index-interop-0"), bytes(out))
    meta = IndexFileMeta("DELETION_VECTORS", "index-interop-0", len(out), len(ranges), tuple(ranges))
    t.new_file_store_commit("dv").commit([CommitMessage(b"\x00" * 12, 0, -1, new_index_files=(meta,))], 1)


def test_peers_read_compaction_with_deletion_vectors(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """Rows deleted by a vector are not rewritten; the vector of a file not rewritten is carried
    over into a new index file, which the peers apply."""
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.dv", batch(0, extra=False).schema, options={"deletion-vectors.enabled": "true"})
    for i in range(3):
        t.write_arrow(batch(i * ROWS, extra=False))
    a, b, c = sorted(t.new_file_store_scan().live_entries(t.latest_snapshot()), key=lambda e: e.file.file_name)
    commit_deletion_vectors(t, {a.file.file_name: [0, 5, ROWS - 1], b.file.file_name: [7, 8]})
    want = t.to_arrow().sort_by("id")
    assert want.num_rows == 3 * ROWS - 5
    for peer in (pypaimon_peer, rust_peer):
        assert peer.read(warehouse, "db.dv").sort_by("id").column("id").equals(want.column("id")), peer.engine

    m = rewrite_append_files(t.store, a.partition, 0, [a.file, c.file])  # b keeps its vector
    assert len(m.compact_deleted_index_files) == 1 and len(m.compact_new_index_files) == 1
    assert sum(f.row_count for f in m.compact_after) == 2 * ROWS - 3
    t.new_file_store_commit("compact").commit([m], 2)
    assert t.to_arrow().sort_by("id").column("id").equals(want.column("id"))
    for peer in (pypaimon_peer, rust_peer):
        got = peer.read(warehouse, "db.dv").sort_by("id")
        assert got.column("id").equals(want.column("id")), peer.engine
        assert got.column("s").equals(want.column("s")), peer.engine
