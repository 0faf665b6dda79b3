"""Bulk manifest decoding on tables written by pypaimon and pypaimon-rust.

The vectorized decoder (``paimon_core.manifest.manifest_decode``) must give exactly what the
sequential decoder (``read_manifest_file``) gives for the peers' manifests, and a batch plan made
on those columns exactly the splits the per-entry planner (``TableScan._splits``) makes from the
sequentially decoded entries.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.manifest import read_manifest_file, read_manifest_list
from paimon_core.manifest.manifest_decode import decode_manifest_batches
from paimon_core.manifest.merger import merge_entries
from paimon_core.table.table import FileStoreTable

pytestmark = pytest.mark.usefixtures("vectorize_always")


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "dt": pa.array([f"2024-01-0{1 + i % 3}" for i in ids], pa.string()),
        "v": pa.array([i / 7 for i in ids], pa.float64()),
    })


def _data_manifests(table: FileStoreTable) -> list[str]:
    names: set[str] = set()
    for snap in table.snapshot_manager.snapshots():
        for lst in (snap.base_manifest_list, snap.delta_manifest_list):
            names.update(m.file_name for m in read_manifest_list(table.file_io, table.paths.manifest_path(lst)))
    return sorted(table.paths.manifest_path(n) for n in names)


def _check(table: FileStoreTable) -> None:
    paths = _data_manifests(table)
    assert paths
    batches = decode_manifest_batches([(p, table.file_io.read_bytes(p)) for p in paths])
    assert not any(b.is_eager for b in batches)  # the peers' manifests take the vectorized path
    for path, batch in zip(paths, batches, strict=True):
        want = read_manifest_file(table.file_io, path)
        got = batch.entries()
        assert got == want and want == got
        assert [batch.identifier(i) for i in range(batch.n)] == [e.identifier() for e in want]
        assert [hash(e.file) for e in got] == [hash(e.file) for e in want]

    snap = table.latest_snapshot()
    assert snap is not None
    scan = table.new_read_builder().new_scan()
    splits = scan.plan().splits
    old_entries = merge_entries(
        e
        for m in table.new_file_store_scan().data_manifests(snap)
        for e in read_manifest_file(table.file_io, table.paths.manifest_path(m.file_name))
    )
    assert splits == scan._splits(snap.id, old_entries, incremental=False)
    assert sum(len(s.files) for s in splits) == len(old_entries)


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_peer_manifests_decode_like_the_sequential_path(peer: Peer, warehouse: str, primary_key: bool) -> None:
    options = {"bucket": "2"} if primary_key else {}
    peer.create_table(warehouse, "db.t", _rows(0, 1).schema, partition_keys=["dt"],
                      primary_keys=["dt", "id"] if primary_key else [], options=options)
    for k in range(4):
        peer.write(warehouse, "db.t", _rows(k * 50 if not primary_key else k * 20, 60))
    table = FileSystemCatalog(warehouse).get_table("db.t")
    _check(table)
    # Our commits on top (our writer's manifests next to theirs), then the same checks.
    table.write_arrow(_rows(1000, 30))
    _check(FileSystemCatalog(warehouse).get_table("db.t"))
    got = FileSystemCatalog(warehouse).get_table("db.t").to_arrow()
    assert got.num_rows == (60 * 4 + 30 if not primary_key else 60 + 3 * 20 + 30)
