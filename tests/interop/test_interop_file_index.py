"""Data-file indexes against the official peers.

* pypaimon 2.1.0 and pypaimon-rust 0.4.0 read every row of tables we wrote with indexes (index
  files next to data files, and indexes embedded in manifests), and the same rows for equality
  filters. pypaimon-rust applies file indexes to filtered reads (a wrong bloom filter makes it
  drop rows: checked below), so its filtered reads also check our index bytes.
* pypaimon-rust writes file indexes too: each of its bloom filters, over a column of every type
  the index supports, is byte for byte the one we compute for the same rows.
* ``rewrite_file_index`` on tables pypaimon wrote: one COMPACT snapshot, every peer reads every
  row at every snapshot, our filtered reads skip files, pypaimon keeps writing.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.fileindex.data_file_index_writer import DataFileIndexWriter
from paimon_core.fileindex.file_index_format import FileIndexFormatReader
from paimon_core.fileindex.file_index_options import FileIndexOptions
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.predicate import Predicate
from paimon_core.predicate.builder import PredicateBuilder
from paimon_core.schema.schema_change import SetOption
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("dt", pa.string())])
FILES = 4


def _data(i: int, files: int = FILES, rows: int = 30) -> pa.Table:
    """File i: ids i, i+files, ... (every file spans the id range: min/max stats skip nothing)."""
    ids = list(range(i, files * rows, files))
    return pa.table({"id": ids, "s": [f"s-{x}" for x in ids], "dt": ["a" if x % 2 else "b" for x in ids]}, schema=SCHEMA)


def _sorted(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in SCHEMA.names) for r in t.select(SCHEMA.names).to_pylist())


FILTERS: list[dict[str, Any]] = [
    {"op": "=", "field": "id", "value": 13},
    {"op": "=", "field": "s", "value": "s-42"},
    {"op": "=", "field": "s", "value": "s-4x"},  # no such row, within every file's min/max
    {"op": "in", "field": "id", "values": [1, 6, 99]},
]


def _predicate(t: FileStoreTable, f: dict[str, Any]) -> Predicate:
    pb = PredicateBuilder(t.schema.fields)
    return pb.is_in(f["field"], f["values"]) if f["op"] == "in" else pb.equal(f["field"], f["value"])


def _check_reads(peer: Peer, warehouse: str, t: FileStoreTable, **options: str) -> None:
    ours = _sorted(t.copy(options).to_arrow() if options else t.to_arrow())
    assert _sorted(peer.read(warehouse, "db.t", options=options or None)) == ours
    for f in FILTERS:
        want = _sorted(t.to_arrow(predicate=_predicate(t, f)))
        assert _sorted(peer.read(warehouse, "db.t", filter=f)) == want, (peer.engine, f)


@pytest.mark.parametrize(
    ("pk", "options"),
    [
        (False, {"file-index.bloom-filter.columns": "id,s"}),  # index files next to the data files
        (True, {"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "200"}),  # embedded
        (False, {"file-index.bitmap.columns": "s,id", "file-index.in-manifest-threshold": "64 kb"}),  # embedded
    ],
)
def test_peers_read_tables_we_wrote_with_indexes(peer: Peer, warehouse: str, pk: bool, options: dict[str, str]) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"] if pk else (),
        options={"bucket": "2" if pk else "-1", **options},
    )  # fmt: skip
    for i in range(FILES):
        t.write_arrow(_data(i))
    t = catalog.get_table("db.t")
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    embedded = pk or "file-index.bitmap.columns" in options
    assert all((e.file.embedded_index is not None) == embedded and bool(e.file.extra_files) != embedded for e in entries)
    _check_reads(peer, warehouse, t)
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id,s")])
    t = catalog.get_table("db.t")
    before = t.latest_snapshot()
    assert before is not None
    unchanged = options.get("file-index.bloom-filter.columns") == "id,s"
    assert t.maintenance.rewrite_file_index().rewritten_files == (0 if unchanged else len(entries))
    _check_reads(peer, warehouse, t)
    _check_reads(peer, warehouse, t, **{"scan.snapshot-id": str(before.id)})


def test_rust_uses_file_indexes_in_filtered_reads(rust_peer: Peer, warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The premise of the filtered-read checks: a bloom filter that lacks a value makes
    pypaimon-rust skip the file (here a deliberately wrong one)."""
    import paimon_core.fileindex.bloomfilter.bloom_filter_file_index as bloom

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, options={"bucket": "-1", "file-index.bloom-filter.columns": "id"})
    real = bloom.hash_array
    monkeypatch.setattr(bloom, "hash_array", lambda values, data_type: real(values, data_type) + 1)
    t.write_arrow(_data(0, files=1, rows=10))
    monkeypatch.undo()
    assert rust_peer.read(warehouse, "db.t").num_rows == 10
    assert rust_peer.read(warehouse, "db.t", filter={"op": "=", "field": "id", "value": 3}).num_rows == 0


WIDE = pa.table(
    {
        "id": pa.array(range(60), pa.int64()),
        "i8": pa.array([i % 100 - 50 if i % 7 else None for i in range(60)], pa.int8()),
        "i16": pa.array([i * 3 - 100 for i in range(60)], pa.int16()),
        "i32": pa.array([i * 1000 - 7 for i in range(60)], pa.int32()),
        "f32": pa.array([i / 4 - 3 for i in range(60)], pa.float32()),
        "f64": pa.array([i / 3 - 5 for i in range(60)], pa.float64()),
        "s": pa.array([f"ü-{i}" if i % 5 else None for i in range(60)], pa.string()),
        "bin": pa.array([bytes([i % 256]) * (i % 5) for i in range(60)], pa.binary()),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(60)], pa.date32()),
        "ts3": pa.array([1_700_000_000_000 + i * 7 for i in range(60)], pa.timestamp("ms")),
        "ts6": pa.array([1_700_000_000_000_000 + i * 7 for i in range(60)], pa.timestamp("us")),
        "ltz": pa.array([1_700_000_000_000_000 + i * 9 for i in range(60)], pa.timestamp("us", tz="UTC")),
        "nul": pa.array([None] * 60, pa.int32()),
    }
)


def test_bloom_filters_equal_the_ones_pypaimon_rust_writes(rust_peer: Peer, warehouse: str) -> None:
    columns = WIDE.column_names
    options = {
        "bucket": "-1",
        "file-index.bloom-filter.columns": ",".join(columns),
        "file-index.in-manifest-threshold": "1 mb",
        **{f"file-index.bloom-filter.{c}.items": str(40 + 3 * i) for i, c in enumerate(columns)},
        "file-index.bloom-filter.s.fpp": "0.01",
    }
    rust_peer.create_table(warehouse, "db.t", WIDE.schema, options=options)
    rust_peer.write(warehouse, "db.t", WIDE)
    t = FileSystemCatalog(warehouse).get_table("db.t")
    (entry,) = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert entry.file.embedded_index is not None
    theirs = FileIndexFormatReader(entry.file.embedded_index).read_all()
    writer = DataFileIndexWriter(t.schema.fields, FileIndexOptions(t.options.options))
    writer.write(t.to_arrow())  # the rows as the file holds them (types as the table declares)
    ours = FileIndexFormatReader(writer.to_bytes()).read_all()
    assert sorted(theirs.keys()) == sorted(ours.keys()) == sorted(columns)
    for column in columns:
        mine, rust = ours.get(column), theirs.get(column)
        assert mine is not None and rust is not None
        assert mine.get("bloom-filter") == rust.get("bloom-filter"), column
    # and the other way round: our table, rust's filtered reads
    catalog = FileSystemCatalog(warehouse)
    ours_table = catalog.create_table("db.ours", WIDE.schema, options=options)
    ours_table.write_arrow(WIDE)
    for f in ({"op": "=", "field": "s", "value": "ü-7"}, {"op": "=", "field": "i32", "value": 993},
              {"op": "=", "field": "day", "value": dt.date(2024, 1, 11)}, {"op": "=", "field": "f64", "value": 5.0}):  # fmt: skip
        assert rust_peer.read(warehouse, "db.ours", filter=f).num_rows == 1, f


def test_rewrite_file_index_on_tables_pypaimon_wrote(
    pypaimon_peer: Peer, rust_peer: Peer, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pypaimon_peer.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options={"bucket": "-1"})
    for i in range(FILES):
        pypaimon_peer.write(warehouse, "db.t", _data(i))
    catalog = FileSystemCatalog(warehouse)
    t = catalog.get_table("db.t")
    written = t.latest_snapshot()
    assert written is not None
    entries = t.new_file_store_scan().live_entries(written)
    assert entries and all(not e.file.extra_files and e.file.embedded_index is None for e in entries)
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id,s")])
    t = catalog.get_table("db.t")
    result = t.maintenance.rewrite_file_index()
    assert result.rewritten_files == len(entries) and result.index_files_written == len(entries)
    assert result.written_partitions == 2
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind.name == "COMPACT" and snap.total_record_count == written.total_record_count
    seen: list[str] = []
    read = DataFileReader.read

    def spy(self: DataFileReader, bucket_path: str, f: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(f.file_name)
        return read(self, bucket_path, f, *args, **kwargs)

    monkeypatch.setattr(DataFileReader, "read", spy)
    pb = PredicateBuilder(t.schema.fields)
    assert _sorted(t.to_arrow(predicate=pb.equal("id", 13))) == [(13, "s-13", "a")] and len(seen) == 1
    monkeypatch.undo()
    for peer in (pypaimon_peer, rust_peer):
        _check_reads(peer, warehouse, t)
        _check_reads(peer, warehouse, t, **{"scan.snapshot-id": str(written.id)})
    # pypaimon keeps writing (no index on its files: still read right, by everyone)
    pypaimon_peer.write(warehouse, "db.t", _data(0, files=1, rows=3).set_column(0, "id", pa.array([1000, 1001, 1002])))
    t = catalog.get_table("db.t")
    assert len(t.to_arrow()) == FILES * 30 + 3
    for peer in (pypaimon_peer, rust_peer):
        _check_reads(peer, warehouse, t)


def test_rewrite_file_index_on_a_primary_key_table_pypaimon_wrote(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    pypaimon_peer.create_table(warehouse, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})
    for i in range(FILES):
        pypaimon_peer.write(warehouse, "db.t", _data(i))
    pypaimon_peer.write(warehouse, "db.t", _data(1).set_column(1, "s", pa.array(["upd"] * 30)))  # upserts
    catalog = FileSystemCatalog(warehouse)
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "s"), SetOption("file-index.bloom-filter.s.items", "100")])
    t = catalog.get_table("db.t")
    result = t.maintenance.rewrite_file_index()
    assert result.rewritten_files > 0 and result.embedded_indexes == result.rewritten_files
    assert len(t.to_arrow()) == FILES * 30 and _sorted(t.to_arrow(predicate=PredicateBuilder(t.schema.fields).equal("s", "s-1"))) == []
    for peer in (pypaimon_peer, rust_peer):
        _check_reads(peer, warehouse, t)
    assert Path(warehouse).exists()


BITMAP = pa.table(
    {
        "id": pa.array(range(300), pa.int64()),
        "i8": pa.array([i % 7 - 3 if i % 11 else None for i in range(300)], pa.int8()),
        "i16": pa.array([i % 50 for i in range(300)], pa.int16()),
        "i32": pa.array([i % 13 if i % 5 else None for i in range(300)], pa.int32()),
        "f64": pa.array([(i % 6) / 3 - 1 for i in range(300)], pa.float64()),
        "s": pa.array([f"k{i % 17}" if i % 3 else None for i in range(300)], pa.string()),
        "flag": pa.array([i % 3 == 0 for i in range(300)], pa.bool_()),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 10) for i in range(300)], pa.date32()),
        "ts6": pa.array([1_700_000_000_000_000 + (i % 20) * 7 for i in range(300)], pa.timestamp("us")),
        "uniq": pa.array([f"u{i}" for i in range(300)], pa.string()),
    }
)


def test_bitmap_indexes_against_pypaimon_rust(rust_peer: Peer, warehouse: str) -> None:
    """pypaimon-rust writes bitmap indexes too: every value's rows (and the nulls') are the same
    in its index and ours. (It orders the bitmaps in the body by value, where Java, and we, follow
    a HashMap: the bytes are equal where both orders agree, checked against the JVM's HashMap in
    the unit tests.) Its filtered reads of our table use our bitmaps."""
    from paimon_core.fileindex.bitmap.bitmap_file_index import BitmapFileIndex

    columns = [c for c in BITMAP.column_names if c != "id"]
    options = {"bucket": "-1", "file-index.bitmap.columns": ",".join(columns), "file-index.in-manifest-threshold": "10 mb"}
    rust_peer.create_table(warehouse, "db.t", BITMAP.schema, options=options)
    rust_peer.write(warehouse, "db.t", BITMAP)
    catalog = FileSystemCatalog(warehouse)
    t = catalog.get_table("db.t")
    (entry,) = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert entry.file.embedded_index is not None
    theirs = FileIndexFormatReader(entry.file.embedded_index).read_all()
    writer = DataFileIndexWriter(t.schema.fields, FileIndexOptions(t.options.options))
    writer.write(t.to_arrow())
    ours = FileIndexFormatReader(writer.to_bytes()).read_all()
    for column in columns:
        mine, rust = ours.get(column), theirs.get(column)
        assert mine is not None and rust is not None
        a, b = mine.get("bitmap"), rust.get("bitmap")
        assert a is not None and b is not None and len(a) == len(b), column
        index = BitmapFileIndex(t.schema.field(column).type, {})
        ra, rb = index.create_reader(a), index.create_reader(b)
        assert ra.row_count == rb.row_count == 300  # type: ignore[attr-defined]
        assert set(ra.entries) == set(rb.entries)  # type: ignore[attr-defined]
        for key in ra.entries:  # type: ignore[attr-defined]
            assert ra._bitmap(ra.entries[key]) == rb._bitmap(rb.entries[key]), (column, key)  # type: ignore[attr-defined]
        assert ra._bitmap(ra.null_entry) == rb._bitmap(rb.null_entry)  # type: ignore[attr-defined]
        if column in ("i16", "flag", "uniq"):  # Java's HashMap visits these in value order too
            assert a == b, column
    ours_table = catalog.create_table("db.ours", BITMAP.schema, options=options)
    ours_table.write_arrow(BITMAP)
    for f, rows in (({"op": "=", "field": "s", "value": "k5"}, 12), ({"op": "=", "field": "i32", "value": 3}, 19),
                    ({"op": "=", "field": "day", "value": dt.date(2024, 1, 4)}, 30), ({"op": "is_null", "field": "s"}, 100),
                    ({"op": "=", "field": "uniq", "value": "u7"}, 1)):  # fmt: skip
        assert rust_peer.read(warehouse, "db.ours", filter=f).num_rows == rows, f
        assert pa.Table.from_batches(ours_table.to_arrow().to_batches()).num_rows == 300
