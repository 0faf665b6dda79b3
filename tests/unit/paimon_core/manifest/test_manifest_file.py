"""Manifest files: round trips, Java schema facts, corruption, speed, and peer interop."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
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
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    read_manifest_file,
    read_manifest_list,
    write_manifest_file,
    write_manifest_list,
)
from paimon_core.manifest.avro_schemas import (
    compile_decoder,
    read_avro_blocks,
    read_avro_records,
    write_avro_container,
)
from tests.peer_python import peer_venv_python, require_peer_python
from tests.peer_python import run_peer_script as _run_peer

IO = LocalFileIO()
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
NAMES = st.text(max_size=12)


# --- strategies ------------------------------------------------------------------------

stats_st = st.builds(
    SimpleStats,
    st.binary(max_size=24),
    st.binary(max_size=24),
    st.none() | st.lists(st.none() | INT64, max_size=4).map(tuple),
)

data_file_st = st.builds(
    DataFileMeta,
    file_name=NAMES,
    file_size=INT64,
    row_count=INT64,
    min_key=st.binary(max_size=24),
    max_key=st.binary(max_size=24),
    key_stats=stats_st,
    value_stats=stats_st | st.just(SimpleStats.empty()),
    min_sequence_number=INT64,
    max_sequence_number=INT64,
    schema_id=INT64,
    level=INT32,
    extra_files=st.lists(NAMES, max_size=3).map(tuple),
    creation_time=st.none() | INT64,
    delete_row_count=st.none() | INT64,
    embedded_index=st.none() | st.binary(max_size=16),
    file_source=st.none() | st.integers(-128, 127),
    value_stats_cols=st.none() | st.lists(NAMES, max_size=3).map(tuple),
    external_path=st.none() | NAMES,
    first_row_id=st.none() | INT64,
    write_cols=st.none() | st.lists(NAMES, max_size=3).map(tuple),
    write_cols_sequences=st.none() | st.lists(INT64, max_size=3).map(tuple),
)

entry_st = st.builds(
    ManifestEntry,
    kind=st.sampled_from(FileKind),
    partition=st.binary(max_size=24),
    bucket=INT32,
    total_buckets=INT32,
    file=data_file_st,
)


def _file(name: str = "data-1.parquet", **changes: Any) -> DataFileMeta:
    base = DataFileMeta(
        file_name=name,
        file_size=1024,
        row_count=10,
        min_key=EMPTY_ROW_BYTES,
        max_key=EMPTY_ROW_BYTES,
        key_stats=SimpleStats.empty(),
        value_stats=SimpleStats.empty(),
        min_sequence_number=0,
        max_sequence_number=9,
        schema_id=0,
        level=0,
        creation_time=1_700_000_000_123,
        delete_row_count=0,
        file_source=0,
    )
    return base.copy(**changes)


def _entry(
    name: str = "data-1.parquet", kind: FileKind = FileKind.ADD, bucket: int = 0, **file: Any
) -> ManifestEntry:
    return ManifestEntry(kind, EMPTY_ROW_BYTES, bucket, 2, _file(name, **file))


# --- round trips -----------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(entry_st, max_size=8))
def test_round_trip_every_field(tmp_path: Path, entries: list[ManifestEntry]) -> None:
    path = str(tmp_path / f"manifest-{uuid.uuid4()}-0")
    write_manifest_file(IO, path, entries, partition_stats=SimpleStats.empty(), schema_id=7)
    assert read_manifest_file(IO, path) == entries


@pytest.mark.parametrize("millis", [0, 1, -1, 1_700_000_000_123, 253_402_300_799_999, -(2**63), 2**63 - 1])
def test_creation_time_is_lossless(tmp_path: Path, millis: int) -> None:
    path = str(tmp_path / "manifest-ct-0")
    write_manifest_file(
        IO, path, [_entry(creation_time=millis)], partition_stats=SimpleStats.empty(), schema_id=0
    )
    [back] = read_manifest_file(IO, path)
    assert back.file.creation_time == millis
    assert isinstance(back.file.creation_time, int)


def test_manifest_file_meta_is_computed_like_java(tmp_path: Path) -> None:
    entries = [
        _entry("a", bucket=3, level=1, schema_id=0, first_row_id=100, row_count=10),
        _entry("b", FileKind.DELETE, bucket=1, level=4, schema_id=2, first_row_id=5, row_count=3),
        _entry("c", bucket=2, level=0, schema_id=1, first_row_id=50, row_count=200),
    ]
    pstats = SimpleStats(b"min", b"max", (0,))
    path = str(tmp_path / "manifest-meta-0")
    meta = write_manifest_file(IO, path, entries, partition_stats=pstats, schema_id=9)
    assert meta == ManifestFileMeta(
        file_name="manifest-meta-0",
        file_size=os.path.getsize(path),
        num_added_files=2,
        num_deleted_files=1,
        partition_stats=pstats,
        schema_id=2,  # max over the entries' files, as Java's ManifestAvroWriter does
        min_bucket=1,
        max_bucket=3,
        min_level=0,
        max_level=4,
        min_row_id=5,
        max_row_id=249,
    )
    # Row-id bounds only when every file has a first row id; empty: caller's schema id.
    meta2 = write_manifest_file(
        IO, str(tmp_path / "manifest-meta-1"), [_entry("d"), *entries], partition_stats=pstats, schema_id=9
    )
    assert (meta2.min_row_id, meta2.max_row_id) == (None, None)
    empty = write_manifest_file(
        IO, str(tmp_path / "manifest-meta-2"), [], partition_stats=pstats, schema_id=9
    )
    assert (empty.schema_id, empty.num_added_files, empty.min_bucket, empty.max_level) == (9, 0, None, None)
    assert read_manifest_file(IO, str(tmp_path / "manifest-meta-2")) == []


def test_write_never_overwrites(tmp_path: Path) -> None:
    path = str(tmp_path / "manifest-x-0")
    write_manifest_file(IO, path, [_entry()], partition_stats=SimpleStats.empty(), schema_id=0)
    with pytest.raises(FileExistsError):
        write_manifest_file(IO, path, [_entry()], partition_stats=SimpleStats.empty(), schema_id=0)


def test_identifier_matches_java_file_entry_identifier() -> None:
    e = _entry("f", bucket=1, level=3, extra_files=("x",), embedded_index=b"i", external_path="s3://b/f")
    assert e.identifier() == (EMPTY_ROW_BYTES, 1, 3, "f", ("x",), b"i", "s3://b/f")
    assert _entry("f").identifier() == _entry("f", FileKind.DELETE).identifier()
    assert _entry("f").identifier() != _entry("f", level=1).identifier()
    hash(e.identifier())


def test_empty_stats_are_javas_empty_stats() -> None:
    assert SimpleStats.empty() == SimpleStats(bytes.fromhex("00000000" + "00" * 8), bytes(12), ())


# --- schema facts ---------------------------------------------------------------------


def test_written_schema_is_javas(tmp_path: Path) -> None:
    path = str(tmp_path / "manifest-schema-0")
    write_manifest_file(IO, path, [_entry()], partition_stats=SimpleStats.empty(), schema_id=0)
    data = Path(path).read_bytes()
    schema, blocks = read_avro_blocks(data)
    assert data[:4] == b"Obj\x01" and b"\x14avro.codec\x12zstandard" in data
    assert schema["type"] == "record" and schema["name"] == "record"
    assert schema["namespace"] == "org.apache.paimon.avro.generated"
    names = [f["name"] for f in schema["fields"]]
    assert names == ["_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE"]
    file_schema = schema["fields"][5]["type"]
    assert file_schema["name"] == "record__FILE"  # a NOT NULL record, not a union
    fields = {f["name"]: f for f in file_schema["fields"]}
    assert list(fields) == [
        "_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS", "_VALUE_STATS",
        "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID", "_LEVEL", "_EXTRA_FILES",
        "_CREATION_TIME", "_DELETE_ROW_COUNT", "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_VALUE_STATS_COLS",
        "_EXTERNAL_PATH", "_FIRST_ROW_ID", "_WRITE_COLS", "_WRITE_COLS_SEQUENCES",
    ]  # fmt: skip
    assert fields["_KEY_STATS"]["type"]["name"] == "record__FILE__KEY_STATS"
    assert fields["_VALUE_STATS"]["type"]["name"] == "record__FILE__VALUE_STATS"
    assert fields["_CREATION_TIME"] == {
        "name": "_CREATION_TIME",
        "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}],
        "default": None,
    }
    assert fields["_EXTRA_FILES"]["type"] == {"type": "array", "items": "string"}
    assert fields["_FILE_SOURCE"]["type"] == ["null", "int"]
    assert [c for c, _ in blocks] == [1]
    assert read_avro_records(data, path)[0]["_VERSION"] == 2


def _old_java_manifest_schema() -> list[Any]:
    """The layout Java Paimon wrote before 0.9: nullable records everywhere and
    ``_FILE`` ending at ``_EMBEDDED_FILE_INDEX`` (snappy codec then)."""
    stats = [
        {"name": "_MIN_VALUES", "type": "bytes"},
        {"name": "_MAX_VALUES", "type": "bytes"},
        {
            "name": "_NULL_COUNTS",
            "type": ["null", {"type": "array", "items": ["null", "long"]}],
            "default": None,
        },
    ]
    file_fields = [
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": ["null", {"type": "record", "name": "record__FILE__KEY_STATS", "fields": stats}]},
        {"name": "_VALUE_STATS", "type": ["null", {"type": "record", "name": "record__FILE__VALUE_STATS", "fields": stats}]},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
        {"name": "_CREATION_TIME", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
        {"name": "_DELETE_ROW_COUNT", "type": ["null", "long"], "default": None},
        {"name": "_EMBEDDED_FILE_INDEX", "type": ["null", "bytes"], "default": None},
    ]  # fmt: skip
    top = {
        "type": "record",
        "name": "record",
        "namespace": "org.apache.paimon.avro.generated",
        "fields": [
            {"name": "_VERSION", "type": "int"},
            {"name": "_KIND", "type": "int"},
            {"name": "_PARTITION", "type": "bytes"},
            {"name": "_BUCKET", "type": "int"},
            {"name": "_TOTAL_BUCKETS", "type": "int"},
            {
                "name": "_FILE",
                "type": ["null", {"type": "record", "name": "record__FILE", "fields": file_fields}],
            },
        ],
    }
    return ["null", top]


def test_reads_the_old_java_layout_with_snappy(tmp_path: Path) -> None:
    key = bytes.fromhex("00000001" + "00" * 8 + "0100000000000000")
    stats = {"_MIN_VALUES": key, "_MAX_VALUES": key, "_NULL_COUNTS": [1, None]}
    file = {
        "_FILE_NAME": "f1.parquet", "_FILE_SIZE": 10, "_ROW_COUNT": 100, "_MIN_KEY": key, "_MAX_KEY": key,
        "_KEY_STATS": stats, "_VALUE_STATS": None, "_MIN_SEQUENCE_NUMBER": 1, "_MAX_SEQUENCE_NUMBER": 100,
        "_SCHEMA_ID": 0, "_LEVEL": 1, "_EXTRA_FILES": [], "_CREATION_TIME": 1725608755039,
        "_DELETE_ROW_COUNT": 1, "_EMBEDDED_FILE_INDEX": None,
    }  # fmt: skip
    record = {"_VERSION": 2, "_KIND": 1, "_PARTITION": key, "_BUCKET": 1, "_TOTAL_BUCKETS": 10, "_FILE": file}
    path = tmp_path / "manifest-old-0"
    path.write_bytes(write_avro_container(_old_java_manifest_schema(), [record], codec="snappy"))
    assert read_manifest_file(IO, str(path)) == [
        ManifestEntry(
            FileKind.DELETE,
            key,
            1,
            10,
            DataFileMeta(
                "f1.parquet",
                10,
                100,
                key,
                key,
                SimpleStats(key, key, (1, None)),
                SimpleStats.empty(),
                1,
                100,
                0,
                1,
                (),
                1725608755039,
                1,
            ),  # fmt: skip
        )
    ]
    if PEER_PYTHON.exists():  # an independent snappy + Avro implementation agrees
        out = _run_peer(
            "import sys, fastavro; r = list(fastavro.reader(open(sys.argv[1], 'rb')));"
            "print(r[0]['_FILE']['_FILE_NAME'], r[0]['_FILE']['_ROW_COUNT'], len(r))",
            str(path),
        )
        assert out.split() == ["f1.parquet", "100", "1"]


_RICH_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Rich",
    "namespace": "ns.one",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": ["null", "long"]},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "m", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "sub", "type": {"type": "record", "name": "Sub", "namespace": "ns.two", "fields": [
            {"name": "x", "type": {"type": "array", "items": {"type": "array", "items": "string"}}},
        ]}},
        {"name": "sub2", "type": ["null", "ns.two.Sub"]},
        {"name": "color2", "type": "Color"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}  # fmt: skip

_finite = st.floats(allow_nan=False, width=32)
_sub = st.fixed_dictionaries({"x": st.lists(st.lists(st.text(max_size=5), max_size=3), max_size=3)})
_rich_record = st.fixed_dictionaries(
    {
        "b": st.booleans(),
        "i": INT32,
        "l": st.none() | INT64,
        "f": _finite,
        "d": st.floats(allow_nan=False),
        "s": st.text(max_size=10),
        "by": st.binary(max_size=10),
        "e": st.sampled_from(["RED", "GREEN"]),
        "fx": st.binary(min_size=4, max_size=4),
        "m": st.dictionaries(st.text(max_size=4), st.none() | INT64, max_size=3),
        "sub": _sub,
        "sub2": st.none() | _sub,
        "color2": st.sampled_from(["RED", "GREEN"]),
        "ts": st.integers(-(2**40), 2**40),
    }
)


@settings(max_examples=40, deadline=None)
@given(records=st.lists(_rich_record, max_size=5))
def test_generated_decoder_agrees_with_fastavro(records: list[dict[str, Any]]) -> None:
    """The specialised decoder against fastavro, over every Avro type and named references."""
    import io as _io

    import fastavro

    buf = _io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(_RICH_SCHEMA), records, codec="deflate", sync_interval=64)
    data = buf.getvalue()
    expected = read_avro_records(data, "rich")  # fastavro, logical types stripped
    schema, blocks = read_avro_blocks(data)
    decode = compile_decoder(json.dumps(schema, sort_keys=True), None)
    got: list[Any] = []
    for count, raw in blocks:
        assert decode(raw, 0, count, got) == len(raw)
    assert got == expected
    assert [r["ts"] for r in got] == [r["ts"] for r in records]


# --- corruption ------------------------------------------------------------------------


@pytest.fixture
def good_manifest(tmp_path: Path) -> Path:
    path = tmp_path / "manifest-good-0"
    entries = [_entry(f"data-{i}.parquet", bucket=i % 3) for i in range(50)]
    write_manifest_file(IO, str(path), entries, partition_stats=SimpleStats.empty(), schema_id=0)
    return path


@pytest.mark.parametrize("cut", [0, 3, 10, 200, -30, -17, -1])
def test_truncated_manifest_raises_corrupt_file_error(tmp_path: Path, good_manifest: Path, cut: int) -> None:
    data = good_manifest.read_bytes()
    bad = tmp_path / "manifest-truncated-0"
    bad.write_bytes(data[:cut])
    with pytest.raises(CorruptFileError, match=str(bad)) as info:
        read_manifest_file(IO, str(bad))
    assert info.value.context["path"] == str(bad)


@pytest.mark.parametrize(
    "content",
    # fixed bytes: a test's parameters are the same in every process (random bytes made each
    # xdist worker collect a different test, and a failure could not be replayed)
    [b"", b"garbage garbage garbage", b"Obj\x01" + random.Random(64).randbytes(64), b"PAR1" + bytes(100)],
    ids=["empty", "text", "avro-magic-random", "parquet-magic-zeros"],
)
def test_garbage_manifest_raises_corrupt_file_error(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "manifest-garbage-0"
    bad.write_bytes(content)
    with pytest.raises(CorruptFileError, match=str(bad)):
        read_manifest_file(IO, str(bad))


def test_flipped_bytes_in_a_block_raise_corrupt_file_error(tmp_path: Path, good_manifest: Path) -> None:
    data = bytearray(good_manifest.read_bytes())
    data[-40:-20] = bytes(20)  # inside the compressed block, before the sync marker
    bad = tmp_path / "manifest-flipped-0"
    bad.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match=str(bad)):
        read_manifest_file(IO, str(bad))


def test_manifest_list_is_not_a_manifest(tmp_path: Path) -> None:
    path = tmp_path / "manifest-list-x-0"
    write_manifest_list(IO, str(path), [ManifestFileMeta("m", 1, 1, 0, SimpleStats.empty(), 0)])
    with pytest.raises(CorruptFileError, match="_KIND"):
        read_manifest_file(IO, str(path))


# --- speed -----------------------------------------------------------------------------


def test_reads_ten_thousand_entries_quickly(tmp_path: Path) -> None:
    key = bytes.fromhex("00000001" + "00" * 8 + "0200000000000000")
    stats = SimpleStats(key, key, (0,))
    entries = [
        _entry(
            f"data-{uuid.uuid4()}-0.parquet",
            bucket=i % 16,
            level=i % 5,
            min_key=key,
            max_key=key,
            key_stats=stats,
            file_size=1_000_000 + i,
            min_sequence_number=i * 100,
            max_sequence_number=i * 100 + 99,
        )
        for i in range(10_000)
    ]
    path = str(tmp_path / "manifest-big-0")
    write_manifest_file(IO, path, entries, partition_stats=SimpleStats.empty(), schema_id=0)
    best = min(_timed(lambda: read_manifest_file(IO, path)) for _ in range(3))
    assert read_manifest_file(IO, path) == entries
    print(f"read 10,000 manifest entries in {best * 1000:.1f} ms")
    assert best < 2.0  # ~0.1 s on a laptop; generous for slow CI machines


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


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

def write(name, rows, schema):
    t = cat.get_table(name)
    wb = t.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.Table.from_pylist(rows, schema=schema))
    c.commit(w.prepare_commit())
    w.close(); c.close()

app = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
cat.create_table("db.app", Schema.from_pyarrow_schema(
    app, partition_keys=["dt"], options={"metadata.stats-mode": "full"}), False)
write("db.app", [{"id": 1, "dt": "a", "v": 1.0}, {"id": 2, "dt": "b", "v": None}, {"id": 3, "dt": "a", "v": 3.0}], app)
write("db.app", [{"id": 4, "dt": "b", "v": 4.0}, {"id": 5, "dt": "c", "v": 5.0}], app)

pk = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
cat.create_table("db.pk", Schema.from_pyarrow_schema(pk, primary_keys=["id"], options={"bucket": "2"}), False)
write("db.pk", [{"id": i, "v": f"v{i}"} for i in range(1, 9)], pk)
write("db.pk", [{"id": 2, "v": "new"}, {"id": 20, "v": "x"}], pk)

ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
for sql in [
    "CREATE TABLE paimon.db.rapp (id BIGINT, dt STRING, v DOUBLE) PARTITIONED BY (dt)",
    "INSERT INTO paimon.db.rapp VALUES (1, 'a', 1.0), (2, 'b', NULL), (3, 'a', 3.0)",
    "INSERT INTO paimon.db.rapp VALUES (4, 'c', 4.0)",
    "CREATE TABLE paimon.db.rpk (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) WITH ('bucket' = '2')",
    "INSERT INTO paimon.db.rpk VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
    "INSERT INTO paimon.db.rpk VALUES (2, 'bb')",
]:
    ctx.sql(sql)
"""

_DUMP = r"""
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory, SQLContext
from pypaimon.manifest.manifest_file_manager import ManifestFileManager

wh, name = sys.argv[1], sys.argv[2]
manifests = sys.argv[3:]
table = CatalogFactory.create({"warehouse": wh}).get_table("db." + name)
rb = table.new_read_builder()
py_rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
ctx = SQLContext()
ctx.register_catalog("paimon", {"warehouse": wh})
batches = ctx.sql("SELECT * FROM paimon.db." + name)
rs_rows = pa.Table.from_batches(batches).to_pylist() if batches else []
mfm = ManifestFileManager(table)
entries = {}
for m in manifests:
    for e in mfm.read(m, drop_stats=False):
        f = e.file
        entries[f.file_name] = [e.kind, e.bucket, e.total_buckets, f.file_size, f.row_count, f.level,
                                f.min_sequence_number, f.max_sequence_number, f.schema_id,
                                f.creation_time.get_millisecond() if f.creation_time else None,
                                f.delete_row_count, f.file_source]
print(json.dumps({
    "pypaimon": sorted(json.dumps(r, sort_keys=True) for r in py_rows),
    "rust": sorted(json.dumps(r, sort_keys=True) for r in rs_rows),
    "entries": entries,
}))
"""


@pytest.fixture(scope="module")
def peer_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_peer_python()
    wh = tmp_path_factory.mktemp("peer_wh")
    _run_peer(_GENERATE, str(wh))
    yield wh


def _latest_snapshot(table_dir: Path) -> dict[str, Any]:
    latest = max(int(p.name.split("-")[1]) for p in (table_dir / "snapshot").glob("snapshot-*"))
    snapshot: dict[str, Any] = json.loads((table_dir / "snapshot" / f"snapshot-{latest}").read_text())
    return snapshot


def _manifest_entries(table_dir: Path, snapshot: dict[str, Any], key: str) -> list[ManifestEntry]:
    metas = read_manifest_list(IO, str(table_dir / "manifest" / snapshot[key]))
    return [e for m in metas for e in read_manifest_file(IO, str(table_dir / "manifest" / m.file_name))]


TABLES = ["app", "pk", "rapp", "rpk"]


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", TABLES)
def test_read_peer_manifests(peer_warehouse: Path, name: str) -> None:
    table_dir = peer_warehouse / "db.db" / name
    snapshot = _latest_snapshot(table_dir)
    base = _manifest_entries(table_dir, snapshot, "baseManifestList")
    delta = _manifest_entries(table_dir, snapshot, "deltaManifestList")
    all_entries = base + delta
    assert all(e.kind == FileKind.ADD for e in all_entries)  # no compaction by either writer
    assert sum(e.file.row_count for e in all_entries) == snapshot["totalRecordCount"]
    assert sum(e.file.row_count for e in delta) == snapshot["deltaRecordCount"]

    on_disk = {p.name: p for p in table_dir.rglob("data-*")}
    assert {e.file.file_name for e in all_entries} == set(on_disk)
    for e in all_entries:
        data_path = on_disk[e.file.file_name]
        assert e.file.file_size == data_path.stat().st_size
        assert data_path.parent.name == f"bucket-{e.bucket}"
        assert e.file.level == 0 and e.file.creation_time is not None and e.file.creation_time > 0
        if name.endswith("app"):  # partitioned by a short string: inline in the BinaryRow
            value = data_path.parent.parent.name.removeprefix("dt=").encode()
            assert e.partition[:4] == b"\x00\x00\x00\x01"
            assert e.partition[12 : 12 + len(value)] == value and e.partition[19] == 0x80 | len(value)
            assert e.total_buckets == -1 and e.file.min_key == EMPTY_ROW_BYTES
        else:
            assert e.total_buckets == 2 and e.file.key_stats.null_counts == (0,)
            assert e.file.min_key == e.file.key_stats.min_values


@needs_peers
@pytest.mark.interop
@pytest.mark.parametrize("name", TABLES)
def test_peers_read_our_rewritten_manifests(peer_warehouse: Path, name: str) -> None:
    src = peer_warehouse / "db.db" / name
    copy_name = f"{name}_ours"
    dst = peer_warehouse / "db.db" / copy_name
    shutil.copytree(src, dst)
    snapshot = _latest_snapshot(dst)
    manifest_dir = dst / "manifest"
    old_manifests: list[str] = []
    old_entries: list[ManifestEntry] = []
    new_manifests: list[str] = []
    for key in ("baseManifestList", "deltaManifestList"):
        new_metas = []
        for meta in read_manifest_list(IO, str(manifest_dir / snapshot[key])):
            entries = read_manifest_file(IO, str(manifest_dir / meta.file_name))
            old_manifests.append(meta.file_name)
            old_entries.extend(entries)
            new_name = f"manifest-{uuid.uuid4()}-0"
            new_meta = write_manifest_file(
                IO, str(manifest_dir / new_name), entries, partition_stats=meta.partition_stats, schema_id=0
            )
            assert read_manifest_file(IO, str(manifest_dir / new_name)) == entries
            assert new_meta.file_size == (manifest_dir / new_name).stat().st_size
            for field in ("num_added_files", "num_deleted_files", "schema_id", "min_bucket", "max_bucket",
                          "min_level", "max_level", "min_row_id", "max_row_id", "partition_stats"):  # fmt: skip
                assert getattr(new_meta, field) == getattr(meta, field), field
            new_metas.append(new_meta)
            new_manifests.append(new_name)
        list_name = f"manifest-list-{uuid.uuid4()}-0"
        size = write_manifest_list(IO, str(manifest_dir / list_name), new_metas)
        assert read_manifest_list(IO, str(manifest_dir / list_name)) == new_metas
        snapshot[key] = list_name
        snapshot[key + "Size"] = size
    snapshot_file = dst / "snapshot" / f"snapshot-{snapshot['id']}"
    snapshot_file.write_text(json.dumps(snapshot, indent=2))

    original = json.loads(_run_peer(_DUMP, str(peer_warehouse), name, *old_manifests))
    ours = json.loads(_run_peer(_DUMP, str(peer_warehouse), copy_name, *new_manifests))
    assert ours["pypaimon"] == original["pypaimon"] and ours["pypaimon"]
    assert ours["rust"] == original["rust"] and ours["rust"]
    assert ours["pypaimon"] == original["rust"]

    # pypaimon decodes the peer's files and ours to the very values we hold
    # (creation time included), so nothing is lost either way.
    expected = {e.file.file_name: _peer_view(e) for e in old_entries}
    assert original["entries"] == expected
    assert ours["entries"] == expected


def _peer_view(e: ManifestEntry) -> list[Any]:
    f = e.file
    return [
        int(e.kind), e.bucket, e.total_buckets, f.file_size, f.row_count, f.level, f.min_sequence_number,
        f.max_sequence_number, f.schema_id, f.creation_time, f.delete_row_count, f.file_source,
    ]  # fmt: skip
