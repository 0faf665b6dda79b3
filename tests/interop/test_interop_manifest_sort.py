"""Manifest sort across engines (Paimon 2.0 ``manifest-sort.*``): a table pypaimon 2.1.0 wrote is
given a full manifest sort by our ``compact_manifest``; pypaimon reads the same rows at every
retained snapshot (a partition filter too) and keeps writing; and a table we write with
``manifest-sort.enabled`` on every commit (sorted merges, DELETE entries from compactions), then
sort in full, reads the same in pypaimon and pypaimon-rust at every snapshot."""

from __future__ import annotations

import random

import pyarrow as pa
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.manifest.entries import FileKind
from paimon_core.manifest.sorter import ManifestSortKey, build_level_sorted_runs, manifests_per_value
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.int32(), nullable=False),
                    ("v", pa.int64())])  # fmt: skip
PARTS = 16
#: Small manifests, so a few commits make several overlapping ones.
SMALL_MANIFESTS = {"bucket": "1", "manifest.target-file-size": "2kb", "manifest.merge-min-count": "3"}


def _batch(rnd: random.Random, c: int) -> pa.Table:
    parts = rnd.sample(range(PARTS), 5)
    ids = [c % 4 * 10 + i for i in range(len(parts))]  # keys come back: upserts
    return pa.table({"id": ids, "p": pa.array(parts, pa.int32()), "v": [c] * len(parts)}, schema=SCHEMA)


def _rows(t: pa.Table) -> list[tuple[int, int, int]]:
    t = t.sort_by([("p", "ascending"), ("id", "ascending")])
    return list(zip(t["id"].to_pylist(), t["p"].to_pylist(), t["v"].to_pylist(), strict=True))


def _ours(t: FileStoreTable, snapshot_id: int | None = None) -> list[tuple[int, int, int]]:
    return _rows((t if snapshot_id is None else t.copy({"scan.snapshot-id": str(snapshot_id)})).to_arrow())


def _overlap(t: FileStoreTable, *, runs: bool = False) -> int:
    """The most manifests one partition falls in; ``runs``: the sorted runs they form instead."""
    scan = t.new_file_store_scan()
    metas = scan.data_manifests(t.latest_snapshot())  # type: ignore[arg-type]
    key = ManifestSortKey(scan.codec, 0)
    return len(build_level_sorted_runs(metas, key)) if runs else manifests_per_value(metas, key)


def _full_sort(t: FileStoreTable) -> int:
    before = _overlap(t)
    result = t.copy({"manifest-sort.enabled": "true"}).maintenance.compact_manifest()
    assert result.snapshot_id is not None and result.manifest_sort and result.sort_field == "p"
    assert result.max_manifests_per_partition_before == before
    assert result.max_manifests_per_partition_after == _overlap(t) < before
    assert _overlap(t, runs=True) == 1  # non-overlapping partition ranges (a partition may span adjacent files)
    snap = t.latest_snapshot()
    assert snap is not None
    entries = [e for m in t.new_file_store_scan().data_manifests(snap) for e in t.new_file_store_scan().read_manifest(m)]
    assert all(e.kind == FileKind.ADD for e in entries)
    return result.snapshot_id


def test_pypaimon_table_sorted_by_us_peer_reads_and_writes(pypaimon_peer: Peer, warehouse: str) -> None:
    pypaimon_peer.create_table(warehouse, "db.t", SCHEMA, primary_keys=["id", "p"], partition_keys=["p"],
                               options=SMALL_MANIFESTS)  # fmt: skip
    rnd = random.Random(11)
    for c in range(14):
        pypaimon_peer.write(warehouse, "db.t", _batch(rnd, c))
    t = FileSystemCatalog(warehouse).get_table("db.t")
    last = t.latest_snapshot()
    assert last is not None
    history = {i: _ours(t, i) for i in range(1, last.id + 1)}
    assert all(_rows(pypaimon_peer.read(warehouse, "db.t", options={"scan.snapshot-id": i})) == rows
               for i, rows in history.items())  # fmt: skip

    sid = _full_sort(t)
    assert sid == last.id + 1
    assert _rows(pypaimon_peer.read(warehouse, "db.t")) == history[last.id] == _ours(t)
    for i, rows in history.items():  # the older snapshots keep their own manifests
        assert _rows(pypaimon_peer.read(warehouse, "db.t", options={"scan.snapshot-id": i})) == rows, i
    one = pypaimon_peer.read(warehouse, "db.t", filter={"op": "=", "field": "p", "value": 3})
    assert _rows(one) == [r for r in history[last.id] if r[1] == 3]

    pypaimon_peer.write(warehouse, "db.t", pa.table({"id": [0, 999], "p": pa.array([3, 3], pa.int32()),
                                                     "v": [77, 77]}, schema=SCHEMA))  # fmt: skip
    t = FileSystemCatalog(warehouse).get_table("db.t")
    want = {(i, p): v for i, p, v in history[last.id]}
    want[(0, 3)] = want[(999, 3)] = 77
    got = _rows(pypaimon_peer.read(warehouse, "db.t"))
    assert got == sorted(((i, p, v) for (i, p), v in want.items()), key=lambda r: (r[1], r[0])) == _ours(t)


def test_sorted_on_commit_then_full_sort_peers_read(peer: Peer, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, primary_keys=["id", "p"], partition_keys=["p"],
                         options={**SMALL_MANIFESTS, "write-only": "true", "manifest-sort.enabled": "true"})  # fmt: skip
    rnd = random.Random(5)
    for c in range(16):
        t.write_arrow(_batch(rnd, c))
        if c % 6 == 5:
            t.maintenance.compact()  # DELETE entries for the sorted merge to cancel
    last = t.latest_snapshot()
    assert last is not None
    history = {i: _ours(t, i) for i in range(1, last.id + 1)}
    _full_sort(t)
    history[last.id + 1] = history[last.id]
    for i, rows in history.items():
        assert _rows(peer.read(warehouse, "db.t", options={"scan.snapshot-id": i})) == rows, i
    assert _rows(peer.read(warehouse, "db.t")) == _ours(t)
