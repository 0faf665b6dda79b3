"""Index manifests: round trips, Java schema facts, corruption, peer interop."""

from __future__ import annotations

import json
import shutil
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import (
    EMPTY_ROW_BYTES,
    DeletionVectorMeta,
    FileKind,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    read_index_manifest,
    read_manifest_file,
    read_manifest_list,
    write_index_manifest,
)
from paimon_core.manifest.avro_schemas import read_avro_blocks
from tests.peer_python import peer_venv_python, require_peer_python
from tests.peer_python import run_peer_script as _run_peer

IO = LocalFileIO()
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
NAMES = st.text(max_size=16)

dv_st = st.builds(DeletionVectorMeta, NAMES, INT32, INT32, st.none() | INT64)
global_st = st.builds(
    GlobalIndexMeta,
    INT64,
    INT64,
    INT32,
    st.none() | st.lists(INT32, max_size=3).map(tuple),
    st.none() | st.binary(max_size=8),
    st.none() | st.binary(max_size=8),
)
index_entry_st = st.builds(
    IndexManifestEntry,
    kind=st.sampled_from(FileKind),
    partition=st.binary(max_size=24),
    bucket=INT32,
    index_file=st.builds(
        IndexFileMeta,
        index_type=st.sampled_from(["HASH", "DELETION_VECTORS", "btree"]),
        file_name=NAMES,
        file_size=INT64,
        row_count=INT64,
        dv_ranges=st.none() | st.lists(dv_st, max_size=3).map(tuple),
        external_path=st.none() | NAMES,
        global_index=st.none() | global_st,
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(index_entry_st, max_size=6))
def test_round_trip_every_field(tmp_path: Path, entries: list[IndexManifestEntry]) -> None:
    path = tmp_path / f"index-manifest-{uuid.uuid4()}-0"
    assert write_index_manifest(IO, str(path), entries) == path.stat().st_size
    assert read_index_manifest(IO, str(path)) == entries


def _hash_entry(name: str = "index-1", rows: int = 3) -> IndexManifestEntry:
    return IndexManifestEntry(FileKind.ADD, EMPTY_ROW_BYTES, 0, IndexFileMeta("HASH", name, rows * 4, rows))


def test_written_schema_is_javas(tmp_path: Path) -> None:
    path = tmp_path / "index-manifest-schema-0"
    write_index_manifest(IO, str(path), [_hash_entry()])
    schema, _ = read_avro_blocks(path.read_bytes())
    assert (schema["name"], schema["namespace"]) == ("record", "org.apache.paimon.avro.generated")
    fields = {f["name"]: f for f in schema["fields"]}
    assert list(fields) == [
        "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_INDEX_TYPE", "_FILE_NAME", "_FILE_SIZE",
        "_ROW_COUNT", "_DELETIONS_VECTORS_RANGES", "_EXTERNAL_PATH", "_GLOBAL_INDEX",
    ]  # fmt: skip
    # Java: a nullable ARRAY of nullable DeletionVectorMeta rows; GlobalIndexMeta is a nullable row.
    dv = fields["_DELETIONS_VECTORS_RANGES"]
    assert dv["type"][0] == "null" and dv["default"] is None
    items = dv["type"][1]["items"]
    assert items[0] == "null" and items[1]["name"] == "record__DELETIONS_VECTORS_RANGES"
    assert [f["name"] for f in items[1]["fields"]] == ["f0", "f1", "f2", "_CARDINALITY"]
    gi = fields["_GLOBAL_INDEX"]
    assert gi["type"][0] == "null" and gi["type"][1]["name"] == "record__GLOBAL_INDEX"
    assert read_index_manifest(IO, str(path)) == [_hash_entry()]


@pytest.mark.parametrize("cut", [2, 40, -20, -1])
def test_truncated_index_manifest_raises_corrupt_file_error(tmp_path: Path, cut: int) -> None:
    good = tmp_path / "index-manifest-good-0"
    write_index_manifest(IO, str(good), [_hash_entry(f"index-{i}") for i in range(30)])
    bad = tmp_path / "index-manifest-bad-0"
    bad.write_bytes(good.read_bytes()[:cut])
    with pytest.raises(CorruptFileError, match=str(bad)):
        read_index_manifest(IO, str(bad))


def test_garbage_index_manifest_raises_corrupt_file_error(tmp_path: Path) -> None:
    bad = tmp_path / "index-manifest-garbage"
    bad.write_bytes(b'{"json": "is not avro"}')
    with pytest.raises(CorruptFileError, match=str(bad)):
        read_index_manifest(IO, str(bad))


# --- interop with pypaimon 2.1.0 and pypaimon-rust 0.4.0 ---------------------------------

PEER_PYTHON = Path(peer_venv_python() or "/nonexistent/peers-python")
# Interop tests fail (not skip) without the peer venv: see tests/peer_python.py.
needs_peers = pytest.mark.usefixtures("require_peers")

_GENERATE = r"""
import sys
import pyarrow as pa
from pypaimon import CatalogFactory, Schema, SQLContext

wh = sys.argv[1]
cat = CatalogFactory.create({"warehouse": wh})
cat.create_database("db", True)
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
cat.create_table("db.dyn", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options={"bucket": "-1"}), False)
for rows in ([(1, 1.0), (2, 2.0), (3, 3.0)], [(3, 30.0), (4, 4.0)]):
    t = cat.get_table("db.dyn")
    wb = t.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.Table.from_pylist([dict(zip(("id", "v"), r)) for r in rows], schema=schema))
    c.commit(w.prepare_commit())
    w.close(); c.close()

ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
for sql in [
    "CREATE TABLE paimon.db.rdyn (id BIGINT NOT NULL, v DOUBLE, PRIMARY KEY (id)) WITH ('bucket' = '-1')",
    "INSERT INTO paimon.db.rdyn VALUES (1, 1.0), (2, 2.0)",
    "INSERT INTO paimon.db.rdyn VALUES (2, 20.0), (5, 5.0)",
    "CREATE TABLE paimon.db.rdv (id BIGINT, v DOUBLE) WITH ('row-tracking.enabled' = 'true',"
    " 'data-evolution.enabled' = 'true', 'deletion-vectors.enabled' = 'true')",
    "INSERT INTO paimon.db.rdv (id, v) VALUES (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0)",
    "DELETE FROM paimon.db.rdv WHERE id = 2 OR id = 4",
]:
    ctx.sql(sql)
"""

_READ_ROWS = r"""
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory, SQLContext

wh, name = sys.argv[1], sys.argv[2]
table = CatalogFactory.create({"warehouse": wh}).get_table("db." + name)
rb = table.new_read_builder().with_projection(["id", "v"])
py_rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
batches = ctx.sql("SELECT id, v FROM paimon.db." + name)
rs_rows = pa.Table.from_batches(batches).to_pylist() if batches else []
print(json.dumps({
    "pypaimon": sorted(json.dumps(r, sort_keys=True) for r in py_rows),
    "rust": sorted(json.dumps(r, sort_keys=True) for r in rs_rows),
}))
"""


@pytest.fixture(scope="module")
def peer_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_peer_python()
    wh = tmp_path_factory.mktemp("peer_wh_index")
    _run_peer(_GENERATE, str(wh))
    yield wh


def _snapshots(table_dir: Path) -> list[dict[str, Any]]:
    files = sorted((table_dir / "snapshot").glob("snapshot-*"), key=lambda p: int(p.name.split("-")[1]))
    return [json.loads(p.read_text()) for p in files]


def _live_data_files(table_dir: Path, snap: dict[str, Any]) -> dict[str, int]:
    manifest_dir = table_dir / "manifest"
    live: dict[str, int] = {}
    for key in ("baseManifestList", "deltaManifestList"):
        for meta in read_manifest_list(IO, str(manifest_dir / snap[key])):
            for e in read_manifest_file(IO, str(manifest_dir / meta.file_name)):
                if e.kind == FileKind.ADD:
                    live[e.file.file_name] = e.file.row_count
                else:
                    live.pop(e.file.file_name, None)
    return live


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", ["dyn", "rdyn", "rdv"])
def test_read_peer_index_manifests(peer_warehouse: Path, name: str) -> None:
    table_dir = peer_warehouse / "db.db" / name
    snapshots = [s for s in _snapshots(table_dir) if s.get("indexManifest")]
    assert snapshots
    for snap in snapshots:
        entries = read_index_manifest(IO, str(table_dir / "manifest" / snap["indexManifest"]))
        assert entries and all(e.kind == FileKind.ADD for e in entries)
        for e in entries:
            f = e.index_file
            index_path = table_dir / "index" / f.file_name
            assert index_path.stat().st_size == f.file_size
            assert e.partition == EMPTY_ROW_BYTES and e.bucket == 0
            assert f.external_path is None and f.global_index is None
            if f.index_type == "HASH":
                # Raw 4-byte key hashes, one per key of the bucket.
                assert f.dv_ranges is None and f.file_size == 4 * f.row_count
            else:
                assert f.index_type == "DELETION_VECTORS" and f.dv_ranges
                live = _live_data_files(table_dir, snap)
                blob = index_path.read_bytes()
                assert blob[0] == 1  # DV file version
                assert f.row_count == len(f.dv_ranges)
                for dv in f.dv_ranges:
                    assert dv.data_file_name in live
                    (length,) = struct.unpack_from(">i", blob, dv.offset)
                    assert length == dv.length and dv.offset + 4 + dv.length + 4 <= len(blob)
                    assert blob[dv.offset + 4 : dv.offset + 8] == bytes.fromhex("5e43f2d0")
                    assert dv.cardinality == 2  # ids 2 and 4 were deleted
    # The index manifest of the last snapshot covers every key written so far.
    last = read_index_manifest(IO, str(table_dir / "manifest" / snapshots[-1]["indexManifest"]))
    if last[0].index_file.index_type == "HASH":
        assert sum(e.index_file.row_count for e in last) == {"dyn": 4, "rdyn": 3}[name]


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", ["dyn", "rdyn", "rdv"])
def test_peers_read_our_index_manifest(peer_warehouse: Path, name: str) -> None:
    dst_name = f"{name}_ours"
    dst = peer_warehouse / "db.db" / dst_name
    shutil.copytree(peer_warehouse / "db.db" / name, dst)
    snap = _snapshots(dst)[-1]
    entries = read_index_manifest(IO, str(dst / "manifest" / snap["indexManifest"]))
    new_name = f"index-manifest-{uuid.uuid4()}-0"
    write_index_manifest(IO, str(dst / "manifest" / new_name), entries)
    assert read_index_manifest(IO, str(dst / "manifest" / new_name)) == entries
    snap["indexManifest"] = new_name
    (dst / "snapshot" / f"snapshot-{snap['id']}").write_text(json.dumps(snap, indent=2))

    original = json.loads(_run_peer(_READ_ROWS, str(peer_warehouse), name))
    ours = json.loads(_run_peer(_READ_ROWS, str(peer_warehouse), dst_name))
    assert ours == original
    assert ours["pypaimon"] == ours["rust"]
    expected_ids = {"dyn": [1, 2, 3, 4], "rdyn": [1, 2, 5], "rdv": [1, 3]}[name]
    assert sorted(json.loads(r)["id"] for r in ours["rust"]) == expected_ids
