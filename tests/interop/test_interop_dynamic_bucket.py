"""Dynamic-bucket and cross-partition tables across engines.

* Our cross-partition upsert tables (keys moving between partitions, -D in the old partition)
  read the same in pypaimon 2.1.0 and pypaimon-rust.
* Dynamic-bucket tables with ``dynamic-bucket.initial-buckets``: pypaimon continues our table
  and we continue its table; every key stays in one bucket (HASH index and data agree).
* INSERT OVERWRITE of a dynamic-bucket table: the overwritten partitions' HASH index is
  replaced, so pypaimon's later upserts (which refuse a bucket with data but no index) land
  where our index says, and the other way round.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.bucket import bucket_hashes
from paimon_core.index.hash_index import read_hash_index
from paimon_core.manifest import read_index_manifest
from paimon_core.schema.data_types import BigIntType

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])


def _rows(ids: list[int], dts: list[str], v: float) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": pa.array(dts), "v": pa.array([v + i for i in ids], pa.float64())})


def _state(t: pa.Table) -> dict[tuple[str, int], float]:
    return dict(zip(zip(t.column("dt").to_pylist(), t.column("id").to_pylist(), strict=True), t.column("v").to_pylist(), strict=True))


def _check_one_bucket_per_key(warehouse: str, name: str) -> None:
    """Per partition: HASH index == the key hashes of each bucket's data, each key in one bucket."""
    t = FileSystemCatalog(warehouse).get_table(name)
    snap = t.latest_snapshot()
    assert snap is not None and snap.index_manifest is not None
    index: dict[tuple[Any, ...], dict[int, set[int]]] = {}
    for e in read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest)):
        buckets = index.setdefault(t.partition_codec.decode(e.partition), {})
        assert e.bucket not in buckets
        buckets[e.bucket] = set(read_hash_index(t.file_io, t.paths.index_file_path(e.index_file.file_name)).tolist())
    data: dict[tuple[Any, ...], dict[int, set[int]]] = {}
    seen: set[tuple[Any, int]] = set()
    rb = t.new_read_builder()
    for split in rb.new_scan().plan().splits:
        part = t.partition_codec.decode(split.partition)
        ids = rb.new_read().to_arrow([split]).column("id").to_pylist()
        for k in ids:
            assert (part, k) not in seen, f"key {k} in two buckets of {part}"
            seen.add((part, k))
        hashes = bucket_hashes([pa.array(ids, pa.int64())], [BigIntType()]).tolist()
        data.setdefault(part, {})[split.bucket] = set(hashes)
    assert index == data  # no deletes in these tables: the index lists exactly the live keys


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update"])
def test_we_write_cross_partition_peers_read(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str, engine: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    opts = {"bucket": "-1", "merge-engine": engine, "dynamic-bucket.target-row-num": "5"}
    t = cat.create_table("db.cp", SCHEMA, primary_keys=["id"], partition_keys=["dt"], options=opts)
    t.write_arrow(_rows(list(range(30)), ["a", "b", "c"] * 10, 0.0))
    # Keys move (some twice within the batch: the last partition wins for deduplicate).
    t.write_arrow(_rows([0, 1, 2, 0, 31], ["b", "c", "a", "c", "a"], 100.0))
    t.write_arrow(_rows([3, 4], ["a", "a"], 200.0))
    ours = t.to_arrow()
    assert len(set(ours.column("id").to_pylist())) == ours.num_rows == 31
    want = _state(ours)
    if engine == "deduplicate":
        assert want[("c", 0)] == 100.0 and ("a", 0) not in want and want[("a", 3)] == 203.0
    else:  # partial-update keeps keys in their first partition
        assert want[("a", 0)] == 100.0 and want[("a", 3)] == 203.0 and want[("b", 1)] == 101.0
    assert _state(pypaimon_peer.read(warehouse, "db.cp")) == want
    assert _state(rust_peer.read(warehouse, "db.cp")) == want


def test_initial_buckets_both_ways(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "6", "dynamic-bucket.initial-buckets": "3"}
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.ours", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)
    batches = [
        _rows(list(range(40)), ["a", "b"] * 20, 0.0),
        _rows(list(range(0, 60, 3)), ["a", "b"] * 10, 1000.0),
        _rows(list(range(50, 70)), ["a", "b"] * 10, 2000.0),
    ]
    expect: dict[tuple[str, int], float] = {}
    for b in batches:
        expect.update(_state(b))
    t.write_arrow(batches[0])
    first = t.new_read_builder().new_scan().plan().splits
    assert {s.bucket for s in first if t.partition_codec.decode(s.partition) == ("a",)} >= {0, 1, 2}
    pypaimon_peer.write(warehouse, "db.ours", batches[1])
    _check_one_bucket_per_key(warehouse, "db.ours")
    t = cat.get_table("db.ours")
    t.write_arrow(batches[2])
    _check_one_bucket_per_key(warehouse, "db.ours")
    want = _state(t.to_arrow())
    assert want == expect and len(want) == 63
    assert _state(pypaimon_peer.read(warehouse, "db.ours")) == want
    assert _state(rust_peer.read(warehouse, "db.ours")) == want
    # Their table (written with one assigner), continued by ours with three.
    pypaimon_peer.create_table(warehouse, "db.theirs", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                               options={"bucket": "-1", "dynamic-bucket.target-row-num": "6"})
    pypaimon_peer.write(warehouse, "db.theirs", _rows(list(range(30)), ["a", "b"] * 15, 0.0))
    t2 = cat.get_table("db.theirs").copy({"dynamic-bucket.initial-buckets": "3"})
    t2.write_arrow(_rows(list(range(20, 45)), ["a", "b"] * 12 + ["a"], 500.0))
    _check_one_bucket_per_key(warehouse, "db.theirs")
    pypaimon_peer.write(warehouse, "db.theirs", _rows(list(range(40, 50)), ["a", "b"] * 5, 900.0))
    _check_one_bucket_per_key(warehouse, "db.theirs")
    assert _state(pypaimon_peer.read(warehouse, "db.theirs")) == _state(cat.get_table("db.theirs").to_arrow())


def test_overwrite_dynamic_bucket_then_peer_upserts(pypaimon_peer: Peer, warehouse: str) -> None:
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "4"}
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.o", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)
    t.write_arrow(_rows(list(range(20)), ["a", "b"] * 10, 0.0))
    t.write_arrow(_rows([100, 101, 102], ["a"] * 3, 10.0), overwrite={"dt": "a"})
    pypaimon_peer.write(warehouse, "db.o", _rows([100, 103, 1, 3], ["a", "a", "b", "b"], 50.0))
    _check_one_bucket_per_key(warehouse, "db.o")
    want = {("a", 100): 150.0, ("a", 101): 111.0, ("a", 102): 112.0, ("a", 103): 153.0}
    want.update({("b", i): float(i) for i in range(1, 20, 2)})
    want.update({("b", 1): 51.0, ("b", 3): 53.0})
    assert _state(t.to_arrow()) == want
    assert _state(pypaimon_peer.read(warehouse, "db.o")) == want
    # pypaimon overwrites partition b (dynamic partition overwrite); we upsert on its fresh index.
    pypaimon_peer.write(warehouse, "db.o", _rows([5, 6, 7], ["b", "b", "b"], 0.0), overwrite=True)
    t = cat.get_table("db.o")
    t.write_arrow(_rows([5, 8, 9, 10, 11], ["b"] * 5, 70.0))
    _check_one_bucket_per_key(warehouse, "db.o")
    want2 = {k: v for k, v in want.items() if k[0] == "a"}
    want2.update({("b", 5): 75.0, ("b", 6): 6.0, ("b", 7): 7.0, ("b", 8): 78.0, ("b", 9): 79.0, ("b", 10): 80.0})
    want2[("b", 11)] = 81.0
    assert _state(t.to_arrow()) == want2
    assert _state(pypaimon_peer.read(warehouse, "db.o")) == want2
