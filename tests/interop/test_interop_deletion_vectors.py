"""Deletion vectors written by the peers, read by paimon_core.

Both peers write deletion vectors for deletes on data-evolution append tables
(``row-tracking.enabled`` + ``data-evolution.enabled`` + ``deletion-vectors.enabled``): pypaimon
through ``new_update().delete_by_predicate``, pypaimon-rust through SQL ``DELETE``. The data files
stay; each delete commits a new ``DELETION_VECTORS`` index file (an OVERWRITE snapshot with an
index manifest). paimon_core must read exactly the rows the peers read, at every snapshot.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import Peer
from pyroaring import BitMap

from paimon_core import FileSystemCatalog
from paimon_core.deletionvectors import DeletionFile, read_deletion_vector
from paimon_core.exceptions import CorruptFileError
from paimon_core.format.file_format import read_file
from paimon_core.io.file_io import join
from paimon_core.manifest import read_index_manifest
from paimon_core.table.table import FileStoreTable

DV_OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"}
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
COLUMNS = ["id", "dt", "v"]
TABLE = "db.dv"


def _batch(ids: range, days: int = 2) -> pa.Table:
    return pa.table(
        {"id": list(ids), "dt": [f"d{i % days}" for i in ids], "v": [i * 0.5 for i in ids]}, schema=SCHEMA
    )


def _sorted(t: pa.Table) -> list[dict[str, Any]]:
    return t.select(COLUMNS).sort_by("id").to_pylist()


def _table(warehouse: str, name: str = TABLE) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table(name)


def _ours(warehouse: str, **options: str) -> list[dict[str, Any]]:
    return _sorted(_table(warehouse).copy(options).to_arrow())


def _theirs(peer: Peer, warehouse: str, **options: str) -> list[dict[str, Any]]:
    return _sorted(peer.read(warehouse, TABLE, options=options, projection=COLUMNS))


def _ids(rows: list[dict[str, Any]]) -> list[int]:
    return [r["id"] for r in rows]


def _deleted_by_dvs(table: FileStoreTable) -> dict[str, list[int]]:
    """{data file: ids at its deleted positions}, decoding every deletion vector of the latest plan."""
    out: dict[str, list[int]] = {}
    for split in table.new_read_builder().new_scan().plan().splits:
        for i, f in enumerate(split.files):
            df = split.deletion_file(i)
            if df is None:
                continue
            dv = read_deletion_vector(table.file_io, df)
            assert dv.cardinality == df.cardinality
            ids = pa.Table.from_batches(list(read_file(table.file_io, join(split.bucket_path, f.file_name), "parquet")))
            out[f.file_name] = ids.column("id").take(pa.array(dv.deleted_positions())).to_pylist()
    return out


@pytest.fixture
def dv_table(peer: Peer, warehouse: str) -> dict[str, Any]:
    """A partitioned DV table written and twice deleted from by ``peer``: snapshots 1-2 write
    ids 0..59, 3 deletes five rows (some in each file), 4 deletes two more."""
    peer.create_table(warehouse, TABLE, SCHEMA, partition_keys=["dt"], options=DV_OPTIONS)
    assert peer.write(warehouse, TABLE, _batch(range(30))) == 1
    assert peer.write(warehouse, TABLE, _batch(range(30, 60))) == 2
    first = {"op": "or", "children": [{"op": "in", "field": "id", "values": [1, 2, 31]},
                                      {"op": "between", "field": "id", "values": [40, 41]}]}  # fmt: skip
    assert peer.delete_where(warehouse, TABLE, first) == 3
    assert peer.delete_where(warehouse, TABLE, {"op": "in", "field": "id", "values": [0, 59]}) == 4
    return {"deleted": {3: {1, 2, 31, 40, 41}, 4: {0, 1, 2, 31, 40, 41, 59}}}


def test_peer_deletion_vectors_read_like_the_peers(
    peer: Peer, pypaimon_peer: Peer, rust_peer: Peer, warehouse: str, dv_table: dict[str, Any]
) -> None:
    snaps = peer.list_snapshots(warehouse, TABLE)
    assert [s["commit_kind"] for s in snaps] == ["APPEND", "APPEND", "OVERWRITE", "OVERWRITE"]
    for sid in (1, 2, 3, 4):
        ours = _ours(warehouse, **{"scan.snapshot-id": str(sid)})
        for reader in (pypaimon_peer, rust_peer):
            assert ours == _theirs(reader, warehouse, **{"scan.snapshot-id": str(sid)}), (reader.engine, sid)
        deleted = dv_table["deleted"].get(sid, set())
        last = 29 if sid == 1 else 59
        assert _ids(ours) == [i for i in range(last + 1) if i not in deleted]
    assert _ours(warehouse) == _theirs(peer, warehouse) == _ours(warehouse, **{"scan.snapshot-id": "4"})


def test_deletion_vectors_hit_the_right_rows(peer: Peer, warehouse: str, dv_table: dict[str, Any]) -> None:
    table = _table(warehouse)
    by_file = _deleted_by_dvs(table)
    assert sorted(i for ids in by_file.values() for i in ids) == sorted(dv_table["deleted"][4])
    assert len(by_file) >= 3  # deletes landed in files of both partitions and both writes
    snap = table.latest_snapshot()
    assert snap is not None and snap.index_manifest is not None
    entries = read_index_manifest(table.file_io, table.paths.manifest_path(snap.index_manifest))
    for e in entries:
        f = e.index_file
        assert f.index_type == "DELETION_VECTORS" and f.dv_ranges
        blob = table.file_io.read_bytes(join(table.paths.index_dir, f.file_name))
        assert blob[0] == 1 and len(blob) == f.file_size
        for r in f.dv_ranges:
            # 32-bit vectors: the range is (offset of the length field, L); magic 0x5E43F2D0.
            assert struct.unpack_from(">i", blob, r.offset)[0] == r.length
            assert blob[r.offset + 4 : r.offset + 8] == bytes.fromhex("5e43f2d0")


def test_tags_and_filters_on_a_dv_table(peer: Peer, warehouse: str, dv_table: dict[str, Any]) -> None:
    peer.create_tag(warehouse, TABLE, "before-delete", snapshot_id=2)
    tagged = _ours(warehouse, **{"scan.tag-name": "before-delete"})
    assert _ids(tagged) == list(range(60))
    assert tagged == _theirs(peer, warehouse, **{"scan.tag-name": "before-delete"})

    filt = {"op": "and", "children": [{"op": "<", "field": "id", "value": 45}, {"op": "=", "field": "dt", "value": "d1"}]}
    theirs = _sorted(peer.read(warehouse, TABLE, projection=COLUMNS, filter=filt))
    rb = _table(warehouse).new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.and_(pb.less_than("id", 45), pb.equal("dt", "d1"))).with_projection(COLUMNS)
    ours = _sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits))
    assert ours == theirs and _ids(ours) == [i for i in range(1, 45, 2) if i not in dv_table["deleted"][4]]


def test_large_deletes_bitmap_containers(peer: Peer, warehouse: str) -> None:
    """100,000 rows; 5,000 and 10,001 deleted within two 16-bit keys: bitmap containers."""
    peer.create_table(warehouse, TABLE, SCHEMA, options=DV_OPTIONS)
    peer.write(warehouse, TABLE, _batch(range(100_000), days=1))
    filt = {"op": "or", "children": [{"op": "<", "field": "id", "value": 5000},
                                     {"op": "in", "field": "id", "values": [70_000, 70_007, 99_999]},
                                     {"op": "between", "field": "id", "values": [80_000, 90_000]}]}  # fmt: skip
    peer.delete_where(warehouse, TABLE, filt)
    expected = set(range(5000)) | {70_000, 70_007, 99_999} | set(range(80_000, 90_001))
    table = _table(warehouse)
    (split,) = table.new_read_builder().new_scan().plan().splits
    df = split.deletion_file(0)
    assert df is not None and df.cardinality == len(expected)
    dv = read_deletion_vector(table.file_io, df)
    # The file was written in id order, so positions are ids; the bytes are CRoaring's
    # canonical (not run-optimized) serialization of those positions.
    assert dv.deleted_positions().tolist() == sorted(expected)
    blob = table.file_io.read_bytes(df.path)
    assert blob[df.offset + 8 : df.offset + 4 + df.length] == BitMap(sorted(expected), optimize=False).serialize()
    ours = table.to_arrow()
    assert ours.num_rows == 100_000 - len(expected)
    assert not set(ours.column("id").to_pylist()) & expected
    assert _ours(warehouse) == _theirs(peer, warehouse)


def test_corrupt_peer_dv_raises(peer: Peer, warehouse: str, dv_table: dict[str, Any]) -> None:
    table = _table(warehouse)
    copy_dir = Path(warehouse) / "db.db" / "dv_copy"
    shutil.copytree(Path(warehouse) / "db.db" / "dv", copy_dir)
    copy = _table(warehouse, "db.dv_copy")
    dfs: list[DeletionFile] = [
        df for s in copy.new_read_builder().new_scan().plan().splits for df in s.deletion_files if df is not None
    ]
    victim = dfs[0]
    data = bytearray(copy.file_io.read_bytes(victim.path))
    data[victim.offset + 4 + victim.length] ^= 0x5A  # the stored CRC
    copy.file_io.write_bytes(victim.path, bytes(data), overwrite=True)
    with pytest.raises(CorruptFileError, match=victim.path):
        copy.to_arrow()
    assert _ids(_sorted(table.to_arrow())) == [i for i in range(60) if i not in dv_table["deleted"][4]]


def test_incremental_delta_reads_ignore_deletion_vectors(rust_peer: Peer, warehouse: str) -> None:
    """Java reads ``incremental-between`` as snapshot deltas (streaming-style splits, no deletion
    files): a delete-only snapshot adds nothing, and earlier deltas still show the rows."""
    rust_peer.create_table(warehouse, TABLE, SCHEMA, options=DV_OPTIONS)
    rust_peer.write(warehouse, TABLE, _batch(range(10)))
    rust_peer.write(warehouse, TABLE, _batch(range(10, 20)))
    rust_peer.delete_where(warehouse, TABLE, {"op": "in", "field": "id", "values": [1, 12]})
    rust_peer.write(warehouse, TABLE, _batch(range(20, 25)))
    for between, ids in [("1,3", range(10, 20)), ("2,3", range(0)), ("1,4", range(10, 25)), ("3,4", range(20, 25))]:
        ours = _ours(warehouse, **{"incremental-between": between})
        assert ours == _theirs(rust_peer, warehouse, **{"incremental-between": between})
        assert _ids(ours) == list(ids)
    assert 12 not in _ids(_ours(warehouse))
