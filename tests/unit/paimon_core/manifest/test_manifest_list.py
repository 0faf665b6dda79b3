"""Manifest lists: round trips, Java schema facts, other writers' layouts, peer interop."""

from __future__ import annotations

import io
import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import (
    FileKind,
    ManifestFileMeta,
    SimpleStats,
    read_manifest_file,
    read_manifest_list,
    write_manifest_list,
)
from paimon_core.manifest.avro_schemas import read_avro_blocks
from tests.peer_python import peer_venv_python, require_peer_python
from tests.peer_python import run_peer_script as _run_peer

IO = LocalFileIO()
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)

stats_st = st.builds(
    SimpleStats,
    st.binary(max_size=24),
    st.binary(max_size=24),
    st.none() | st.lists(st.none() | INT64, max_size=4).map(tuple),
)

meta_st = st.builds(
    ManifestFileMeta,
    file_name=st.text(max_size=40),
    file_size=INT64,
    num_added_files=INT64,
    num_deleted_files=INT64,
    partition_stats=stats_st | st.just(SimpleStats.empty()),
    schema_id=INT64,
    min_bucket=st.none() | INT32,
    max_bucket=st.none() | INT32,
    min_level=st.none() | INT32,
    max_level=st.none() | INT32,
    min_row_id=st.none() | INT64,
    max_row_id=st.none() | INT64,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(metas=st.lists(meta_st, max_size=8))
def test_round_trip_every_field(tmp_path: Path, metas: list[ManifestFileMeta]) -> None:
    path = tmp_path / f"manifest-list-{uuid.uuid4()}-0"
    size = write_manifest_list(IO, str(path), metas)
    assert size == path.stat().st_size
    assert read_manifest_list(IO, str(path)) == metas


def test_written_schema_is_javas(tmp_path: Path) -> None:
    path = tmp_path / "manifest-list-schema-0"
    write_manifest_list(IO, str(path), [ManifestFileMeta("m", 1, 1, 0, SimpleStats.empty(), 0)])
    schema, _ = read_avro_blocks(path.read_bytes())
    assert (schema["type"], schema["name"], schema["namespace"]) == (
        "record",
        "record",
        "org.apache.paimon.avro.generated",
    )
    # Java master's ManifestFileMeta.SCHEMA; no _TOTAL_BUCKETS / _EXTRA_FILES (pypaimon-only).
    assert [f["name"] for f in schema["fields"]] == [
        "_VERSION", "_FILE_NAME", "_FILE_SIZE", "_NUM_ADDED_FILES", "_NUM_DELETED_FILES",
        "_PARTITION_STATS", "_SCHEMA_ID", "_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL", "_MAX_LEVEL",
        "_MIN_ROW_ID", "_MAX_ROW_ID",
    ]  # fmt: skip
    stats = schema["fields"][5]["type"]
    assert stats["name"] == "record__PARTITION_STATS"
    assert stats["fields"][2] == {
        "name": "_NULL_COUNTS",
        "type": ["null", {"type": "array", "items": ["null", "long"]}],
        "default": None,
    }
    assert schema["fields"][7] == {"name": "_MIN_BUCKET", "type": ["null", "int"], "default": None}


def _fastavro_file(schema: dict[str, Any], records: list[dict[str, Any]], codec: str = "deflate") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


def test_reads_other_layouts_by_field_name(tmp_path: Path) -> None:
    """A pypaimon-style file (own record names, extra fields, other codec) and an old
    layout (nullable stats record, no bucket/level/row-id fields)."""
    stats_fields = [
        {"name": "_MIN_VALUES", "type": "bytes"},
        {"name": "_MAX_VALUES", "type": "bytes"},
        {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]},
    ]
    pypaimon_like = {
        "type": "record",
        "name": "ManifestFileMeta",
        "fields": [
            {"name": "_TOTAL_BUCKETS", "type": ["null", "int"]},  # unknown, and out of order
            {"name": "_VERSION", "type": "int"},
            {"name": "_FILE_NAME", "type": "string"},
            {"name": "_FILE_SIZE", "type": "long"},
            {"name": "_NUM_ADDED_FILES", "type": "long"},
            {"name": "_NUM_DELETED_FILES", "type": "long"},
            {"name": "_PARTITION_STATS", "type": {"type": "record", "name": "S", "fields": stats_fields}},
            {"name": "_SCHEMA_ID", "type": "long"},
            {"name": "_MIN_BUCKET", "type": ["null", "int"]},
            {"name": "_EXTRA_FILES", "type": ["null", {"type": "array", "items": "string"}]},
        ],
    }
    rec = {
        "_TOTAL_BUCKETS": 4,
        "_VERSION": 2,
        "_FILE_NAME": "manifest-a-0",
        "_FILE_SIZE": 123,
        "_NUM_ADDED_FILES": 3,
        "_NUM_DELETED_FILES": 1,
        "_PARTITION_STATS": {"_MIN_VALUES": b"x", "_MAX_VALUES": b"y", "_NULL_COUNTS": [0, None]},
        "_SCHEMA_ID": 5,
        "_MIN_BUCKET": 2,
        "_EXTRA_FILES": ["e"],
    }
    path = tmp_path / "manifest-list-pypaimon-0"
    path.write_bytes(_fastavro_file(pypaimon_like, [rec]))
    assert read_manifest_list(IO, str(path)) == [
        ManifestFileMeta("manifest-a-0", 123, 3, 1, SimpleStats(b"x", b"y", (0, None)), 5, min_bucket=2)
    ]

    old = json.loads(json.dumps(pypaimon_like))
    old["fields"] = [
        f for f in old["fields"] if f["name"] not in ("_TOTAL_BUCKETS", "_MIN_BUCKET", "_EXTRA_FILES")
    ]
    old["fields"][5]["type"] = ["null", old["fields"][5]["type"]]
    old_recs = [
        {k: v for k, v in rec.items() if k not in ("_TOTAL_BUCKETS", "_MIN_BUCKET", "_EXTRA_FILES")},
        {**rec, "_FILE_NAME": "manifest-b-0", "_PARTITION_STATS": None},
    ]
    path_old = tmp_path / "manifest-list-old-0"
    path_old.write_bytes(_fastavro_file(old, old_recs, codec="null"))
    assert read_manifest_list(IO, str(path_old)) == [
        ManifestFileMeta("manifest-a-0", 123, 3, 1, SimpleStats(b"x", b"y", (0, None)), 5),
        ManifestFileMeta("manifest-b-0", 123, 3, 1, SimpleStats.empty(), 5),
    ]


def test_unsupported_version_and_missing_required_field(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"}],
    }
    path = tmp_path / "manifest-list-v1-0"
    path.write_bytes(_fastavro_file(schema, [{"_VERSION": 1, "_FILE_NAME": "m"}]))
    with pytest.raises(CorruptFileError, match="_FILE_SIZE") as info:
        read_manifest_list(IO, str(path))
    assert str(path) in str(info.value)

    good = tmp_path / "manifest-list-good-0"
    write_manifest_list(IO, str(good), [ManifestFileMeta("m", 1, 1, 0, SimpleStats.empty(), 0)])
    v1 = tmp_path / "manifest-list-v1-1"
    v1.write_bytes(_fastavro_file(_schema_of(good), [{**_record_of(good), "_VERSION": 1}], codec="null"))
    with pytest.raises(CorruptFileError, match="_VERSION 1"):
        read_manifest_list(IO, str(v1))


def _schema_of(path: Path) -> dict[str, Any]:
    schema, _ = read_avro_blocks(path.read_bytes())
    return dict(schema)


def _record_of(path: Path) -> dict[str, Any]:
    from paimon_core.manifest.avro_schemas import read_avro_records

    return read_avro_records(path.read_bytes(), str(path))[0]


@pytest.mark.parametrize("cut", [1, 20, 100, -25, -1])
def test_truncated_list_raises_corrupt_file_error(tmp_path: Path, cut: int) -> None:
    good = tmp_path / "manifest-list-good-0"
    metas = [
        ManifestFileMeta(f"manifest-{i}-0", 1000 + i, 3, 0, SimpleStats.empty(), 0, 0, 1, 0, 0)
        for i in range(20)
    ]
    write_manifest_list(IO, str(good), metas)
    bad = tmp_path / "manifest-list-bad-0"
    bad.write_bytes(good.read_bytes()[:cut])
    with pytest.raises(CorruptFileError, match=str(bad)):
        read_manifest_list(IO, str(bad))


def test_missing_file_is_not_corrupt(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_manifest_list(IO, str(tmp_path / "manifest-list-missing"))


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
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.float64())])
cat.create_table("db.pk", Schema.from_pyarrow_schema(
    schema, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}), False)
for rows in ([(1, "a", 1.0), (2, "b", 2.0), (3, "a", 3.0)], [(2, "b", 20.0), (4, "c", 4.0)], [(5, "a", 5.0)]):
    t = cat.get_table("db.pk")
    wb = t.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.Table.from_pylist([dict(zip(("id", "dt", "v"), r)) for r in rows], schema=schema))
    c.commit(w.prepare_commit())
    w.close(); c.close()

ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
for sql in [
    "CREATE TABLE paimon.db.rpk (id BIGINT NOT NULL, dt STRING NOT NULL, v DOUBLE, PRIMARY KEY (id, dt))"
    " PARTITIONED BY (dt) WITH ('bucket' = '2')",
    "INSERT INTO paimon.db.rpk VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'a', 3.0)",
    "INSERT INTO paimon.db.rpk VALUES (2, 'b', 20.0), (4, 'c', 4.0)",
]:
    ctx.sql(sql)
"""

_READ_ROWS = r"""
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory, SQLContext

wh, name = sys.argv[1], sys.argv[2]
table = CatalogFactory.create({"warehouse": wh}).get_table("db." + name)
rb = table.new_read_builder()
py_rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
batches = ctx.sql("SELECT * FROM paimon.db." + name)
rs_rows = pa.Table.from_batches(batches).to_pylist() if batches else []
print(json.dumps({
    "pypaimon": sorted(json.dumps(r, sort_keys=True) for r in py_rows),
    "rust": sorted(json.dumps(r, sort_keys=True) for r in rs_rows),
}))
"""


@pytest.fixture(scope="module")
def peer_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_peer_python()
    wh = tmp_path_factory.mktemp("peer_wh_lists")
    _run_peer(_GENERATE, str(wh))
    yield wh


def _snapshots(table_dir: Path) -> list[dict[str, Any]]:
    files = sorted((table_dir / "snapshot").glob("snapshot-*"), key=lambda p: int(p.name.split("-")[1]))
    return [json.loads(p.read_text()) for p in files]


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", ["pk", "rpk"])
def test_read_peer_manifest_lists(peer_warehouse: Path, name: str) -> None:
    table_dir = peer_warehouse / "db.db" / name
    manifest_dir = table_dir / "manifest"
    snapshots = _snapshots(table_dir)
    assert len(snapshots) >= 2
    for snap in snapshots:
        base = read_manifest_list(IO, str(manifest_dir / snap["baseManifestList"]))
        delta = read_manifest_list(IO, str(manifest_dir / snap["deltaManifestList"]))
        if "deltaManifestListSize" in snap:  # pypaimon records list sizes, pypaimon-rust does not
            assert (manifest_dir / snap["deltaManifestList"]).stat().st_size == snap["deltaManifestListSize"]
        assert len(delta) == 1
        total = 0
        for meta in base + delta:
            entries = read_manifest_file(IO, str(manifest_dir / meta.file_name))
            assert meta.file_size == (manifest_dir / meta.file_name).stat().st_size
            assert meta.num_added_files == sum(e.kind == FileKind.ADD for e in entries)
            assert meta.num_deleted_files == sum(e.kind == FileKind.DELETE for e in entries)
            assert meta.min_bucket == min(e.bucket for e in entries)
            assert meta.max_bucket == max(e.bucket for e in entries)
            assert meta.min_level == meta.max_level == 0
            assert meta.schema_id == 0
            # One string partition field: min/max partition rows bound every entry's partition.
            parts = sorted(e.partition[12 : 12 + (e.partition[19] & 0x7F)] for e in entries)
            stats = meta.partition_stats
            assert stats.null_counts == (0,)
            assert stats.min_values[12 : 12 + (stats.min_values[19] & 0x7F)] == parts[0]
            assert stats.max_values[12 : 12 + (stats.max_values[19] & 0x7F)] == parts[-1]
            total += sum(e.file.row_count for e in entries)
        assert total == snap["totalRecordCount"]


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", ["pk", "rpk"])
def test_peers_read_our_manifest_lists(peer_warehouse: Path, name: str) -> None:
    dst_name = f"{name}_ours"
    dst = peer_warehouse / "db.db" / dst_name
    shutil.copytree(peer_warehouse / "db.db" / name, dst)
    snap = _snapshots(dst)[-1]
    manifest_dir = dst / "manifest"
    for key in ("baseManifestList", "deltaManifestList"):
        metas = read_manifest_list(IO, str(manifest_dir / snap[key]))
        new_name = f"manifest-list-{uuid.uuid4()}-0"
        size = write_manifest_list(IO, str(manifest_dir / new_name), metas)
        assert read_manifest_list(IO, str(manifest_dir / new_name)) == metas
        snap[key], snap[key + "Size"] = new_name, size
    (dst / "snapshot" / f"snapshot-{snap['id']}").write_text(json.dumps(snap, indent=2))

    original = json.loads(_run_peer(_READ_ROWS, str(peer_warehouse), name))
    ours = json.loads(_run_peer(_READ_ROWS, str(peer_warehouse), dst_name))
    assert ours == original
    assert ours["pypaimon"] == ours["rust"] and len(ours["rust"]) == 4 + (name == "pk")
