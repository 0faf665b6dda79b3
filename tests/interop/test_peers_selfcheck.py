"""Self-check of the interop harness: both peers write and read through tests/interop/peers.py.

Nothing here touches paimon_core. If these fail, the peers (or the harness) are broken, and
every other interop test would be meaningless.

Findings (pypaimon 2.1.0 / pypaimon-rust 0.4.0), asserted below where practical:
* Every type of WIDE_SCHEMA round-trips exactly through both engines and across them, including
  nanosecond and pre-1970 timestamps, decimal(38,10), unicode/long strings, list/map/struct.
* pypaimon maps Arrow types with a few surprises (its own ``PyarrowFieldParser.to_paimon_type``,
  also used by the driver for the rust DDL): large_binary -> BLOB (needs data-evolution tables),
  every time32/time64 -> TIME(0) (sub-second precision lost), fixed_size_list -> VECTOR.
  Not part of WIDE_SCHEMA for that reason.
* pypaimon ignores ``incremental-between`` (snapshot ids) and returns a full read; the driver
  refuses it (PeerUnsupported). pypaimon-rust rejects ``incremental-between-timestamp``
  ("not supported by the Rust reader yet"), but has ``incremental-between`` via
  new_incremental_scan.
* pypaimon-rust cannot remove a table option (its SQL has no UNSET/RESET TBLPROPERTIES), its DDL
  cannot express TIME, BLOB or non-null nested fields, and CALL sys.delete_tag succeeds silently
  on a missing tag (the driver turns that into an error, like pypaimon's).
* Neither peer has a delete API for PK tables: deletes are '-D' rows through ``rowkind.field``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from peers import DRIVER, ENGINES, Peer, PeerError, PeerUnsupported

WIDE_SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("part", pa.string()),
    ("i8", pa.int8()),
    ("i16", pa.int16()),
    ("i32", pa.int32()),
    ("i64", pa.int64()),
    ("f32", pa.float32()),
    ("f64", pa.float64()),
    ("flag", pa.bool_()),
    ("s", pa.string()),
    ("bin", pa.binary()),
    ("d18", pa.decimal128(18, 4)),
    ("d38", pa.decimal128(38, 10)),
    ("day", pa.date32()),
    ("ts_ms", pa.timestamp("ms")),
    ("ts_us", pa.timestamp("us")),
    ("ts_ns", pa.timestamp("ns")),
    ("ts_tz", pa.timestamp("us", tz="UTC")),
    ("ts_tz_ns", pa.timestamp("ns", tz="UTC")),
    ("ints", pa.list_(pa.int32())),
    ("tags", pa.map_(pa.string(), pa.int32())),
    ("rec", pa.struct([("x", pa.int32()), ("y", pa.string())])),
])
PK_SCHEMA = pa.schema([f for f in WIDE_SCHEMA if f.name != "part"])

_UNICODE = ["", "ascii", "Grüße", "日本語テキスト", "emoji 🦀🐍", "tab\tnew\nline", "quote'\"\\"]
_NS_2024 = 1_704_067_200_000_000_000  # 2024-01-01T00:00:00Z in ns


def wide_rows(ids: range | list[int], version: int = 0, schema: pa.Schema = WIDE_SCHEMA) -> pa.Table:
    """Deterministic rows covering edge values; every 7th row is null in all value columns."""
    ids = list(ids)
    n = len(ids)

    def col(fn: Any) -> list[Any]:
        return [None if (i % 7 == 3) else fn(i) for i in ids]

    ns_values = [None if i % 7 == 3 else _NS_2024 + (i - 10) * 86_400_123_456_789 + version for i in ids]
    ns = pa.array(ns_values, pa.int64())
    data = {
        "id": pa.array(ids, pa.int64()),
        "part": pa.array([f"p{i % 2}" for i in ids], pa.string()),
        "i8": pa.array(col(lambda i: [-128, 127, 0, -1][i % 4] if i < 8 else (i * 3 + version) % 127), pa.int8()),
        "i16": pa.array(col(lambda i: -32768 if i == 0 else (i * 101 + version) % 32767), pa.int16()),
        "i32": pa.array(col(lambda i: 2**31 - 1 if i == 1 else -(i * 1009) - version), pa.int32()),
        "i64": pa.array(col(lambda i: -(2**63) if i == 2 else i * 10**12 + version), pa.int64()),
        "f32": pa.array(col(lambda i: i * 0.5 - 3.25 + version), pa.float32()),
        "f64": pa.array(col(lambda i: (i - 20) / 3.0 + version), pa.float64()),
        "flag": pa.array(col(lambda i: (i + version) % 2 == 0), pa.bool_()),
        "s": pa.array(col(lambda i: ("ü" * 5000 + str(i)) if i % 11 == 5
                          else f"{_UNICODE[i % len(_UNICODE)]}-{i}-v{version}"), pa.string()),
        "bin": pa.array(col(lambda i: bytes([0, 255, i % 256, version % 256]) * (1 + i % 3)), pa.binary()),
        "d18": pa.array(col(lambda i: Decimal(f"{(i - 20) * 12345678901}.{(i * 37 + version) % 10000:04d}")),
                        pa.decimal128(18, 4)),
        "d38": pa.array(col(lambda i: Decimal("-9999999999999999999999999999.9999999999") if i == 4
                            else Decimal(f"{i * 10**20 + version}.{i:010d}")), pa.decimal128(38, 10)),
        "day": pa.array(col(lambda i: dt.date(1960 + (i * 7) % 100, 1 + i % 12, 1 + i % 28)), pa.date32()),
        "ts_ms": pa.array(col(lambda i: dt.datetime(1969, 12, 31, 23, 59, 59, 999000)
                              + dt.timedelta(days=i * 37, milliseconds=version)), pa.timestamp("ms")),
        "ts_us": pa.array(col(lambda i: dt.datetime(2000, 2, 29, 12, 0, 0, 1)
                              + dt.timedelta(days=i * 3, microseconds=i * 7 + version)), pa.timestamp("us")),
        "ts_ns": ns.cast(pa.timestamp("ns")),
        "ts_tz": pa.array(col(lambda i: dt.datetime(2024, 3, 31, 1, 30, tzinfo=dt.UTC)
                              + dt.timedelta(hours=i, microseconds=version)), pa.timestamp("us", tz="UTC")),
        "ts_tz_ns": ns.cast(pa.timestamp("ns", tz="UTC")),
        "ints": pa.array(col(lambda i: [] if i % 5 == 0 else [i, None, -i, version][: 1 + i % 4]),
                         pa.list_(pa.int32())),
        "tags": pa.array(col(lambda i: [] if i % 5 == 1 else [("k", i), ("ключ", None), (f"v{version}", version)]),
                         pa.map_(pa.string(), pa.int32())),
        "rec": pa.array(col(lambda i: {"x": i + version, "y": None if i % 3 == 0 else f"y{i}"}),
                        pa.struct([("x", pa.int32()), ("y", pa.string())])),
    }
    assert all(len(v) == n for v in data.values())
    return pa.table({f.name: data[f.name] for f in schema}, schema=schema)


def assert_same_rows(actual: pa.Table, expected: pa.Table, keys: tuple[str, ...] = ("id",)) -> None:
    """Same columns (order), same Arrow types (nullability aside), same rows as a multiset by keys."""
    assert actual.column_names == expected.column_names
    for field in expected.schema:
        got = actual.schema.field(field.name).type
        assert got == field.type, f"column {field.name}: type {got} != {field.type}"
    assert actual.num_rows == expected.num_rows, f"{actual.num_rows} rows != {expected.num_rows}"
    order = [(k, "ascending") for k in keys]
    a, e = actual.sort_by(order), expected.sort_by(order)
    for name in expected.column_names:
        ac, ec = a.column(name), e.column(name)
        if not ac.equals(ec):
            for i in range(len(ec)):
                if not ac[i].equals(ec[i]):
                    key = {k: e.column(k)[i] for k in keys}
                    raise AssertionError(f"column {name} differs at {key}: {ac[i]!r} != {ec[i]!r}")
            raise AssertionError(f"column {name} differs")


def _merge_pk(*batches: pa.Table) -> pa.Table:
    """Deduplicate merge by id: later batches win."""
    latest: dict[int, tuple[int, int]] = {}
    for b_idx, batch in enumerate(batches):
        for r_idx, key in enumerate(batch.column("id").to_pylist()):
            latest[key] = (b_idx, r_idx)
    parts = [batches[b].take(pa.array([r for k, (bb, r) in latest.items() if bb == b], pa.int64()))
             for b in range(len(batches))]
    return pa.concat_tables(parts)


def as_merged_by(engine: str, expected: pa.Table) -> pa.Table:
    """What a merged PK read returns: pypaimon truncates TIMESTAMP(9) (naive and LTZ) to
    microseconds whenever it merges overlapping files (Python row-by-row merge); rust is exact.
    Single-file (non-merged) reads are exact in both, see test_pypaimon_pk_merge_truncates_nanos."""
    if engine != "pypaimon":
        return expected
    cols = []
    for field, column in zip(expected.schema, expected.columns, strict=False):
        if pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            column = column.cast(pa.timestamp("us", field.type.tz), safe=False).cast(field.type)
        cols.append(column)
    return pa.Table.from_arrays(cols, schema=expected.schema)


FILTERS: list[tuple[dict[str, Any], Any]] = [
    ({"op": "and", "children": [{"op": ">=", "field": "id", "value": 10}, {"op": "<", "field": "id", "value": 25}]},
     lambda t: pc.and_(pc.greater_equal(t["id"], 10), pc.less(t["id"], 25))),
    ({"op": "=", "field": "part", "value": "p1"}, lambda t: pc.equal(t["part"], "p1")),
    ({"op": "or", "children": [{"op": "=", "field": "day", "value": dt.date(1967, 2, 2)},
                               {"op": ">", "field": "d18", "value": Decimal("123456789010.0000")}]},
     lambda t: pc.or_kleene(pc.equal(t["day"], pa.scalar(dt.date(1967, 2, 2))),
                            pc.greater(t["d18"], pa.scalar(Decimal("123456789010.0000"), pa.decimal128(18, 4))))),
    ({"op": "<=", "field": "ts_us", "value": dt.datetime(2000, 4, 1)},
     lambda t: pc.less_equal(t["ts_us"], pa.scalar(dt.datetime(2000, 4, 1), pa.timestamp("us")))),
    ({"op": "in", "field": "i64", "values": [5 * 10**12, 7 * 10**12, 42]},
     lambda t: pc.is_in(t["i64"], pa.array([5 * 10**12, 7 * 10**12, 42], pa.int64()))),
    ({"op": "is_null", "field": "f64"}, lambda t: pc.is_null(t["f64"])),
    ({"op": "startswith", "field": "s", "value": "Grüße"}, lambda t: pc.starts_with(t["s"], "Grüße")),
    ({"op": "between", "field": "day", "values": [dt.date(1970, 1, 1), dt.date(2000, 1, 1)]},
     lambda t: pc.and_(pc.greater_equal(t["day"], pa.scalar(dt.date(1970, 1, 1))),
                       pc.less_equal(t["day"], pa.scalar(dt.date(2000, 1, 1))))),
    ({"op": ">=", "field": "ts_tz", "value": dt.datetime(2024, 4, 1, 20, tzinfo=dt.UTC)},
     lambda t: pc.greater_equal(t["ts_tz"], pa.scalar(dt.datetime(2024, 4, 1, 20, tzinfo=dt.UTC),
                                                      pa.timestamp("us", tz="UTC")))),
    ({"op": "!=", "field": "flag", "value": True}, lambda t: pc.not_equal(t["flag"], True)),
    ({"op": "not_in", "field": "i8", "values": [-128, 127, 0]},
     # SQL semantics: NULL NOT IN (...) is NULL, so null rows are not selected
     lambda t: pc.and_(pc.is_valid(t["i8"]), pc.invert(pc.is_in(t["i8"], pa.array([-128, 127, 0], pa.int8()))))),
]


def _expected_filter(table: pa.Table, fn: Any) -> pa.Table:
    return table.filter(pc.fill_null(fn(table), False))


# ---------------------------------------------------------------------------------------------
# per engine
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_append_table_roundtrip(peer: Peer, warehouse: str, partitioned: bool) -> None:
    t = "db.append"
    peer.create_table(warehouse, t, WIDE_SCHEMA, partition_keys=["part"] if partitioned else ())
    w1, w2 = wide_rows(range(40)), wide_rows(range(40, 70), version=1)
    assert peer.write(warehouse, t, w1) == 1
    assert peer.write(warehouse, t, w2) == 2
    everything = pa.concat_tables([w1, w2])

    assert_same_rows(peer.read(warehouse, t), everything)
    assert_same_rows(peer.read(warehouse, t, projection=["s", "id", "tags"]), everything.select(["s", "id", "tags"]))
    for flt, fn in FILTERS:
        assert_same_rows(peer.read(warehouse, t, filter=flt), _expected_filter(everything, fn))
    assert_same_rows(peer.read(warehouse, t, options={"scan.snapshot-id": 1}), w1)
    empty = peer.read(warehouse, t, filter={"op": ">", "field": "id", "value": 10**6}, projection=["id", "rec"])
    assert_same_rows(empty, everything.select(["id", "rec"]).slice(0, 0))

    snaps = peer.list_snapshots(warehouse, t)
    assert [(s["id"], s["commit_kind"], s["delta_record_count"]) for s in snaps] == [(1, "APPEND", 40), (2, "APPEND", 30)]
    assert_same_rows(peer.read(warehouse, t, options={"scan.timestamp-millis": snaps[0]["time_millis"]}), w1)

    peer.create_tag(warehouse, t, "v1", snapshot_id=1)
    peer.create_tag(warehouse, t, "latest")
    assert peer.list_tags(warehouse, t) == {"latest": 2, "v1": 1}
    assert_same_rows(peer.read(warehouse, t, options={"scan.tag-name": "v1"}), w1)
    peer.delete_tag(warehouse, t, "latest")
    assert peer.list_tags(warehouse, t) == {"v1": 1}
    with pytest.raises(PeerError, match="does not exist"):
        peer.delete_tag(warehouse, t, "latest")


def test_pk_table_roundtrip(peer: Peer, warehouse: str) -> None:
    t = "db.pk"
    peer.create_table(warehouse, t, PK_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    w1, w2 = wide_rows(range(40), schema=PK_SCHEMA), wide_rows(range(20, 60), version=1, schema=PK_SCHEMA)
    assert peer.write(warehouse, t, w1) == 1
    assert peer.write(warehouse, t, w2) == 2
    merged = as_merged_by(peer.engine, _merge_pk(w1, w2))
    assert merged.num_rows == 60

    out = peer.read(warehouse, t)
    assert not out.schema.field("id").nullable  # primary keys are NOT NULL in the table schema
    assert_same_rows(out, merged)
    assert_same_rows(peer.read(warehouse, t, projection=["d38", "id"]), merged.select(["d38", "id"]))
    flt, fn = FILTERS[0]
    assert_same_rows(peer.read(warehouse, t, filter=flt), _expected_filter(merged, fn))
    assert_same_rows(peer.read(warehouse, t, filter={"op": "=", "field": "id", "value": 30}),
                     merged.filter(pc.equal(merged["id"], 30)))
    assert_same_rows(peer.read(warehouse, t, options={"scan.snapshot-id": 1}), w1)

    peer.create_tag(warehouse, t, "first", snapshot_id=1)
    assert peer.list_tags(warehouse, t) == {"first": 1}
    assert_same_rows(peer.read(warehouse, t, options={"scan.tag-name": "first"}), w1)
    assert [s["id"] for s in peer.list_snapshots(warehouse, t)] == [1, 2]


def test_pk_delete_via_rowkind(peer: Peer, warehouse: str) -> None:
    t = "db.pk_rk"
    schema = pa.schema([("id", pa.int64()), ("part", pa.string()), ("v", pa.float64()), ("rk", pa.string())])
    peer.create_table(warehouse, t, schema, primary_keys=["id", "part"], partition_keys=["part"],
                      options={"bucket": "2", "rowkind.field": "rk"})
    rows = pa.table({"id": list(range(10)), "part": [f"p{i % 2}" for i in range(10)],
                     "v": [float(i) for i in range(10)], "rk": ["+I"] * 10}, schema=schema)
    assert peer.write(warehouse, t, rows) == 1
    assert peer.delete(warehouse, t, pa.table({"id": pa.array([1, 4], pa.int64()), "part": ["p1", "p0"]})) == 2
    kept = rows.filter(pc.invert(pc.is_in(rows["id"], pa.array([1, 4], pa.int64()))))
    assert_same_rows(peer.read(warehouse, t), kept, keys=("id",))
    assert_same_rows(peer.read(warehouse, t, options={"scan.snapshot-id": 1}), rows)

    peer.create_table(warehouse, "db.pk_plain", schema, primary_keys=["id"], options={"bucket": "1"})
    with pytest.raises(PeerUnsupported, match="rowkind.field"):
        peer.delete(warehouse, "db.pk_plain", pa.table({"id": pa.array([1], pa.int64())}))


def test_overwrite(peer: Peer, warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("part", pa.string()), ("v", pa.string())])
    rows = pa.table({"id": list(range(6)), "part": ["a", "b", "c"] * 2, "v": ["x"] * 6}, schema=schema)
    peer.create_table(warehouse, "db.parted", schema, partition_keys=["part"])
    peer.write(warehouse, "db.parted", rows)
    new_a = pa.table({"id": [100], "part": ["a"], "v": ["new"]}, schema=schema)
    assert peer.write(warehouse, "db.parted", new_a, overwrite_partition={"part": "a"}) == 2
    expected = pa.concat_tables([rows.filter(pc.not_equal(rows["part"], "a")), new_a])
    assert_same_rows(peer.read(warehouse, "db.parted"), expected)
    assert peer.list_snapshots(warehouse, "db.parted")[-1]["commit_kind"] == "OVERWRITE"

    peer.create_table(warehouse, "db.flat", schema)
    peer.write(warehouse, "db.flat", rows)
    peer.write(warehouse, "db.flat", new_a, overwrite=True)
    assert_same_rows(peer.read(warehouse, "db.flat"), new_a)


def test_rollback(peer: Peer, warehouse: str) -> None:
    t = "db.rb"
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    batches = [pa.table({"id": [i * 10 + j for j in range(3)], "v": [f"w{i}"] * 3}, schema=schema) for i in range(4)]
    peer.create_table(warehouse, t, schema)
    for b in batches:
        peer.write(warehouse, t, b)
    snaps = peer.list_snapshots(warehouse, t)
    assert [s["id"] for s in snaps] == [1, 2, 3, 4]
    peer.create_tag(warehouse, t, "two", snapshot_id=2)

    peer.rollback_to(warehouse, t, snapshot_id=3)
    assert [s["id"] for s in peer.list_snapshots(warehouse, t)] == [1, 2, 3]
    assert_same_rows(peer.read(warehouse, t), pa.concat_tables(batches[:3]))
    peer.rollback_to(warehouse, t, tag="two")
    assert_same_rows(peer.read(warehouse, t), pa.concat_tables(batches[:2]))
    peer.rollback_to(warehouse, t, timestamp_millis=snaps[0]["time_millis"])
    assert [s["id"] for s in peer.list_snapshots(warehouse, t)] == [1]
    assert_same_rows(peer.read(warehouse, t), batches[0])


def test_incremental(peer: Peer, warehouse: str) -> None:
    t = "db.inc"
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    batches = [pa.table({"id": [i * 10 + j for j in range(3)], "v": [f"w{i}"] * 3}, schema=schema) for i in range(3)]
    peer.create_table(warehouse, t, schema)
    for b in batches:
        peer.write(warehouse, t, b)
    snaps = peer.list_snapshots(warehouse, t)
    by_ts = {"incremental-between-timestamp": f"{snaps[0]['time_millis']},{snaps[2]['time_millis']}"}
    by_id = {"incremental-between": "1,3"}
    if peer.engine == "pypaimon":
        assert_same_rows(peer.read(warehouse, t, options=by_ts), pa.concat_tables(batches[1:]))
        with pytest.raises(PeerUnsupported, match="silently ignores"):
            peer.read(warehouse, t, options=by_id)
    else:
        assert_same_rows(peer.read(warehouse, t, options=by_id), pa.concat_tables(batches[1:]))
        with pytest.raises(PeerUnsupported, match="incremental-between-timestamp"):
            peer.read(warehouse, t, options=by_ts)


def test_alter_table(request: pytest.FixtureRequest, peer: Peer, warehouse: str) -> None:
    t = "db.evolve"
    peer.create_table(warehouse, t, pa.schema([("id", pa.int64()), ("a", pa.string())]))
    peer.write(warehouse, t, pa.table({"id": pa.array([1, 2], pa.int64()), "a": ["x", "y"]}))
    peer.alter_table(warehouse, t, [
        {"action": "add_column", "name": "b", "type": pa.int32()},
        {"action": "add_column", "name": "c", "type": "DECIMAL(10, 2)"},
        {"action": "rename_column", "name": "a", "new_name": "a2"},
        {"action": "set_option", "key": "snapshot.num-retained.max", "value": "10"},
    ])
    schema = peer.table_schema(warehouse, t)
    assert [f["name"] for f in schema["fields"]] == ["id", "a2", "b", "c"]
    assert schema["options"].get("snapshot.num-retained.max") == "10"
    new = pa.table({"id": pa.array([3], pa.int64()), "a2": ["z"], "b": pa.array([7], pa.int32()),
                    "c": pa.array([Decimal("1.25")], pa.decimal128(10, 2))})
    peer.write(warehouse, t, new)
    expected = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "a2": ["x", "y", "z"],
                         "b": pa.array([None, None, 7], pa.int32()),
                         "c": pa.array([None, None, Decimal("1.25")], pa.decimal128(10, 2))})
    assert_same_rows(peer.read(warehouse, t), expected)
    other: Peer = request.getfixturevalue("rust_peer" if peer.engine == "pypaimon" else "pypaimon_peer")
    assert_same_rows(other.read(warehouse, t), expected)

    peer.alter_table(warehouse, t, [{"action": "drop_column", "name": "b"}])
    assert_same_rows(peer.read(warehouse, t), expected.drop_columns(["b"]))
    if peer.engine == "pypaimon":
        peer.alter_table(warehouse, t, [{"action": "remove_option", "key": "snapshot.num-retained.max"}])
        assert "snapshot.num-retained.max" not in peer.table_schema(warehouse, t)["options"]
    else:
        with pytest.raises(PeerUnsupported, match="UNSET"):
            peer.alter_table(warehouse, t, [{"action": "remove_option", "key": "snapshot.num-retained.max"}])


def test_schema_json(peer: Peer, warehouse: str) -> None:
    """Paimon types with no Arrow twin (VARCHAR(n), CHAR(n)) via schema_json."""
    fields = [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "name", "type": "VARCHAR(10)"},
              {"name": "code", "type": "CHAR(3)"},
              {"name": "m", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"}},
              {"id": 9, "name": "r", "type": {"type": "ROW", "fields": [{"id": 10, "name": "x", "type": "TIMESTAMP"}]}}]
    peer.create_table(warehouse, "db.sj", fields, primary_keys=["id"], options={"bucket": "1"})
    schema = peer.table_schema(warehouse, "db.sj")
    assert schema["primary_keys"] == ["id"]
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["name"] == "VARCHAR(10)" and types["code"] == "CHAR(3)"
    data = pa.table({"id": pa.array([1], pa.int64()), "name": ["abc"], "code": ["xyz"],
                     "m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32())),
                     "r": pa.array([{"x": dt.datetime(2024, 1, 1, 0, 0, 0, 123456)}],
                                   pa.struct([("x", pa.timestamp("us"))]))})  # TIMESTAMP = TIMESTAMP(6)
    peer.write(warehouse, "db.sj", data)
    assert_same_rows(peer.read(warehouse, "db.sj"), data)


# ---------------------------------------------------------------------------------------------
# across engines
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("writer", "reader"), [("pypaimon", "rust"), ("rust", "pypaimon")])
def test_cross_engine(request: pytest.FixtureRequest, warehouse: str, writer: str, reader: str) -> None:
    w: Peer = request.getfixturevalue(f"{writer}_peer")
    r: Peer = request.getfixturevalue(f"{reader}_peer")

    w.create_table(warehouse, "db.append", WIDE_SCHEMA, partition_keys=["part"])
    a1, a2 = wide_rows(range(40)), wide_rows(range(40, 70), version=1)
    w.write(warehouse, "db.append", a1)
    w.write(warehouse, "db.append", a2)
    w.create_tag(warehouse, "db.append", "v1", snapshot_id=1)
    everything = pa.concat_tables([a1, a2])
    assert_same_rows(r.read(warehouse, "db.append"), everything)
    assert_same_rows(r.read(warehouse, "db.append", options={"scan.snapshot-id": 1}), a1)
    assert_same_rows(r.read(warehouse, "db.append", options={"scan.tag-name": "v1"}), a1)
    assert_same_rows(r.read(warehouse, "db.append", projection=["ts_ns", "id"]), everything.select(["ts_ns", "id"]))
    for flt, fn in FILTERS:
        assert_same_rows(r.read(warehouse, "db.append", filter=flt), _expected_filter(everything, fn))
    assert r.list_tags(warehouse, "db.append") == {"v1": 1}
    assert r.list_snapshots(warehouse, "db.append") == w.list_snapshots(warehouse, "db.append")

    w.create_table(warehouse, "db.pk", PK_SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    p1, p2 = wide_rows(range(40), schema=PK_SCHEMA), wide_rows(range(20, 60), version=1, schema=PK_SCHEMA)
    w.write(warehouse, "db.pk", p1)
    w.write(warehouse, "db.pk", p2)
    assert_same_rows(r.read(warehouse, "db.pk"), as_merged_by(reader, _merge_pk(p1, p2)))
    assert_same_rows(r.read(warehouse, "db.pk", options={"scan.snapshot-id": 1}), p1)
    # and the reader keeps writing to the writer's table
    p3 = wide_rows(range(50, 65), version=2, schema=PK_SCHEMA)
    assert r.write(warehouse, "db.pk", p3) == 3
    assert_same_rows(w.read(warehouse, "db.pk"), as_merged_by(writer, _merge_pk(p1, p2, p3)))


@pytest.mark.parametrize(("writer", "reader"), [("pypaimon", "rust"), ("rust", "pypaimon")])
def test_cross_engine_delete(request: pytest.FixtureRequest, warehouse: str, writer: str, reader: str) -> None:
    w: Peer = request.getfixturevalue(f"{writer}_peer")
    r: Peer = request.getfixturevalue(f"{reader}_peer")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("rk", pa.string())])
    w.create_table(warehouse, "db.t", schema, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "rk"})
    rows = pa.table({"id": pa.array(range(8), pa.int64()), "v": [str(i) for i in range(8)], "rk": ["+I"] * 8})
    w.write(warehouse, "db.t", rows)
    r.delete(warehouse, "db.t", pa.table({"id": pa.array([0, 7], pa.int64())}))
    assert_same_rows(w.read(warehouse, "db.t"), rows.slice(1, 6))


def test_pypaimon_pk_merge_truncates_nanos(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """Known pypaimon 2.1.0 bug: merged PK reads cut TIMESTAMP(9) to microseconds. The files are
    right (rust reads them exactly), and a single-file read is exact."""
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ns")), ("tz", pa.timestamp("ns", tz="UTC"))])

    def rows(ids: list[int], off: int) -> pa.Table:
        ns = pa.array([1_700_000_000_123_456_789 + i + off for i in ids], pa.int64())
        return pa.table({"id": pa.array(ids, pa.int64()), "ts": ns.cast(schema.field("ts").type),
                         "tz": ns.cast(schema.field("tz").type)}, schema=schema)

    pypaimon_peer.create_table(warehouse, "db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    first, second = rows([1, 2, 3], 0), rows([3, 4], 100)
    pypaimon_peer.write(warehouse, "db.t", first)
    assert_same_rows(pypaimon_peer.read(warehouse, "db.t"), first)  # one file: exact
    pypaimon_peer.write(warehouse, "db.t", second)
    merged = _merge_pk(first, second)
    assert_same_rows(rust_peer.read(warehouse, "db.t"), merged)
    got = pypaimon_peer.read(warehouse, "db.t")
    assert_same_rows(got, as_merged_by("pypaimon", merged))
    assert not got.column("ts").equals(merged.sort_by("id").column("ts"))


# ---------------------------------------------------------------------------------------------
# the harness itself
# ---------------------------------------------------------------------------------------------

def test_errors_carry_the_peer_traceback(peer: Peer, warehouse: str) -> None:
    with pytest.raises(PeerError) as info:
        peer.read(warehouse, "db.missing")
    assert not isinstance(info.value, PeerUnsupported)
    assert "peer traceback" in str(info.value) and "missing" in str(info.value)
    assert peer.ping()["ok"]  # the process survives failed commands


def test_versions_and_import_time(peer: Peer) -> None:
    info = peer.ping()
    assert info["versions"] == {"pyarrow": "19.0.1", "pypaimon": "2.1.0", "pypaimon-rust": "0.4.0"}
    module = "pypaimon" if peer.engine == "pypaimon" else "pypaimon_rust"
    assert module in info["import_ms"]


def test_restart_after_peer_process_dies(peer_python: str, warehouse: str) -> None:
    with Peer("rust", python=peer_python) as p:
        pid = p.ping()["pid"]
        with pytest.raises(PeerError, match=r"died \(exit code 70\)(.|\n)*_crash requested"):
            p._call("_crash", code=70)
        pid2 = p.ping()["pid"]  # next call starts a new process
        assert pid2 != pid
        os.kill(pid2, signal.SIGKILL)  # our own child, killed between calls
        assert p._proc._proc is not None
        p._proc._proc.wait(timeout=10)
        assert p.ping()["pid"] not in (pid, pid2)


@pytest.mark.parametrize("engine", ENGINES)
def test_one_shot_cli(peer_python: str, engine: str) -> None:
    res = subprocess.run([peer_python, str(DRIVER), json.dumps({"cmd": "ping", "preload": [engine]})],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["ok"]
    res = subprocess.run([peer_python, str(DRIVER)], input='{"cmd": "nope"}', capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 1 and json.loads(res.stdout)["error_type"] == "BadRequest"
