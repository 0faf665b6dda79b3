"""A ``bucket-function.type = mod`` table we write (floorMod buckets, as Java's ModBucketFunction):
pypaimon 2.1.0 and pypaimon-rust read every row, merged, with and without a key filter."""

from __future__ import annotations

import pyarrow as pa
from peers import Peer

from paimon_core import FileSystemCatalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])


def test_peers_read_our_mod_table(peer: Peer, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    opts = {"bucket": "4", "bucket-function.type": "mod"}
    t = cat.create_table("db.m", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)
    ids = list(range(-40, 40))
    t.write_arrow(pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": ids}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": ids[::5], "dt": [f"d{i % 2}" for i in ids[::5]], "v": [-1] * 16}, schema=SCHEMA))
    want = sorted((i, -1 if i in ids[::5] else i) for i in ids)
    got = peer.read(warehouse, "db.m")
    assert sorted(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == want
    for key in (-35, -3, 0, 7, 38):
        got = peer.read(warehouse, "db.m", filter={"op": "=", "field": "id", "value": key})
        assert [(i, v) for i, v in zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)] == [
            (key, -1 if key in ids[::5] else key)
        ], key
