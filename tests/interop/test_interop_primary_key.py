"""Primary-key tables across engines: we write, they read merged; they write, we read merged."""

from __future__ import annotations

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog


def _rows(ids: list[int], v: float) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "dt": pa.array([f"2024-01-0{1 + i % 2}" for i in ids]),
            "name": pa.array([f"n{i}-{v}" for i in ids]),
            "v": pa.array([v + i for i in ids], pa.float64()),
        }
    )


def _expected(n: int, upserted: set[int], deleted: set[int]) -> list[tuple[int, float]]:
    return [(i, (1000.0 + i) if i in upserted else float(i)) for i in range(n) if i not in deleted]


@pytest.mark.parametrize("options", [{"bucket": "4"}, {"bucket": "2", "file.format": "orc"}], ids=["parquet", "orc"])
def test_we_write_peers_read_merged(peer: Peer, warehouse: str, options: dict[str, str]) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.pk", _rows([0], 0).schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    t.write_arrow(_rows(list(range(200)), 0.0))
    t.write_arrow(_rows(list(range(0, 200, 7)), 1000.0))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(_rows([5, 6, 50], 0.0).select(["id", "dt"]))
    b.new_commit().commit(w.prepare_commit())
    got = peer.read(warehouse, "db.pk").sort_by("id")
    want = _expected(200, set(range(0, 200, 7)), {5, 6, 50})
    assert list(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == want
    ours = FileSystemCatalog(warehouse).get_table("db.pk").to_arrow().sort_by("id")
    assert list(zip(ours.column("id").to_pylist(), ours.column("v").to_pylist(), strict=True)) == want


def test_peers_write_we_read_merged(peer: Peer, warehouse: str) -> None:
    schema = _rows([0], 0).schema.append(pa.field("op", pa.string()))
    peer.create_table(warehouse, "db.pk", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                      options={"bucket": "3", "rowkind.field": "op"})
    base = _rows(list(range(100)), 0.0)
    peer.write(warehouse, "db.pk", base.append_column("op", pa.array(["+I"] * 100)))
    upd = _rows(list(range(0, 100, 3)), 1000.0)
    peer.write(warehouse, "db.pk", upd.append_column("op", pa.array(["+U"] * upd.num_rows)))
    dele = _rows([1, 2], 0.0)
    peer.write(warehouse, "db.pk", dele.append_column("op", pa.array(["-D", "-D"])))
    t = FileSystemCatalog(warehouse).get_table("db.pk")
    got = t.to_arrow().sort_by("id")
    want = _expected(100, set(range(0, 100, 3)), {1, 2})
    assert list(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == want
    # We keep upserting into their table; they read our files merged with theirs.
    more = _rows([4, 7], 5000.0)
    t.write_arrow(more.append_column("op", pa.array(["+U", "+U"])))
    theirs = peer.read(warehouse, "db.pk").sort_by("id")
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("v").to_pylist(), strict=True))[4] == 5004.0


def test_dynamic_bucket_both_ways(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "30"}
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    # Ours first, theirs on top (pypaimon must pick up our HASH index and keep keys in place).
    t = cat.create_table("db.ours", _rows([0], 0).schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)
    t.write_arrow(_rows(list(range(100)), 0.0))
    pypaimon_peer.write(warehouse, "db.ours", _rows(list(range(0, 120, 4)), 1000.0))
    t = cat.get_table("db.ours")
    t.write_arrow(_rows([1, 2], 5000.0))
    expect = {i: float(i) for i in range(100)}
    expect.update({i: 1000.0 + i for i in range(0, 120, 4)})
    expect.update({1: 5001.0, 2: 5002.0})
    for got in (t.to_arrow(), pypaimon_peer.read(warehouse, "db.ours"), rust_peer.read(warehouse, "db.ours")):
        assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == expect
    # Theirs first, ours on top.
    pypaimon_peer.create_table(warehouse, "db.theirs", _rows([0], 0).schema, primary_keys=["dt", "id"],
                               partition_keys=["dt"], options=opts)
    pypaimon_peer.write(warehouse, "db.theirs", _rows(list(range(100)), 0.0))
    t2 = cat.get_table("db.theirs")
    t2.write_arrow(_rows(list(range(0, 120, 4)), 1000.0))
    expect2 = {i: float(i) for i in range(100)}
    expect2.update({i: 1000.0 + i for i in range(0, 120, 4)})
    for got in (t2.to_arrow(), pypaimon_peer.read(warehouse, "db.theirs")):
        assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == expect2
