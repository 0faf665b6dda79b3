"""Compacted tables across engines: we compact, pypaimon and pypaimon-rust read; a table pypaimon
wrote is compacted by us and read back by pypaimon (and keeps taking its writes)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                    ("v", pa.float64()), ("s", pa.string())])


def _rows(ids: list[int], v: float) -> pa.Table:
    return pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [v + i for i in ids],
                     "s": [f"s{i}-{v}" for i in ids]}, schema=SCHEMA)


def _pairs(t: pa.Table) -> list[tuple[int, float]]:
    t = t.sort_by("id")
    return list(zip(t["id"].to_pylist(), t["v"].to_pylist(), strict=True))


@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_we_compact_peers_read(peer: Peer, warehouse: str, strategy: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.pk", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                         options={"bucket": "2", "num-sorted-run.compaction-trigger": "3", "write-only": "true"})
    for k in range(6):
        t.write_arrow(_rows(list(range(k * 20, k * 20 + 60)), float(k)))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(_rows([3, 4, 70], 0).select(["id", "dt"]))
    b.new_commit().commit(w.prepare_commit())
    want = _pairs(t.to_arrow())
    result = t.maintenance.compact(compact_strategy=strategy)
    assert result.snapshot_id is not None and result.files_written > 0
    assert _pairs(peer.read(warehouse, "db.pk")) == want == _pairs(t.to_arrow())
    # the peer reads the snapshot before the compaction too (time travel over a COMPACT snapshot)
    t.write_arrow(_rows([1000, 3], 9.0))
    assert _pairs(peer.read(warehouse, "db.pk")) == sorted([*[p for p in want if p[0] != 3], (3, 12.0), (1000, 1009.0)])


def test_peer_writes_we_compact_peer_reads(pypaimon_peer: Peer, warehouse: str) -> None:
    pypaimon_peer.create_table(warehouse, "db.pk", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                               options={"bucket": "2"})
    for k in range(4):
        pypaimon_peer.write(warehouse, "db.pk", _rows(list(range(k * 10, k * 10 + 30)), float(k)))
    t = FileSystemCatalog(warehouse).get_table("db.pk")
    want = _pairs(t.to_arrow())
    assert _pairs(pypaimon_peer.read(warehouse, "db.pk")) == want
    result = t.maintenance.compact()
    assert result.tasks == 4 and result.files_read >= 8
    assert _pairs(pypaimon_peer.read(warehouse, "db.pk")) == want
    pypaimon_peer.write(warehouse, "db.pk", _rows([0, 500], 50.0))  # it keeps writing on top of our levels
    after = dict(_pairs(pypaimon_peer.read(warehouse, "db.pk")))
    assert after[0] == 50.0 and after[500] == 550.0 and len(after) == len(want) + 1
    assert dict(_pairs(FileSystemCatalog(warehouse).get_table("db.pk").to_arrow())) == after


def test_we_compact_append_tables_peers_read(peer: Peer, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.log", SCHEMA, partition_keys=["dt"], options={"source.split.open-file-cost": "1 b"})
    for k in range(8):
        t.write_arrow(_rows(list(range(k * 50, k * 50 + 50)), float(k)))
    want = _pairs(t.to_arrow())
    result = t.maintenance.compact()
    assert result.files_read == 16 and result.files_written == 2
    assert _pairs(peer.read(warehouse, "db.log")) == want
