"""Interop for what test_interop_append's wide table leaves out: TIME, TIMESTAMP(0),
TIMESTAMP_LTZ 3/9, CHAR/VARCHAR/BINARY with a declared length, a small DECIMAL; and
``incremental-between`` over an OVERWRITE snapshot (Java's DELTA mode skips it).
"""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    CharType,
    DataField,
    DecimalType,
    LocalZonedTimestampType,
    TimestampType,
    TimeType,
    VarCharType,
)
from tests.fixtures.histories import INCREMENTAL_BETWEEN, overwrite_history

FIELDS = [
    DataField(0, "id", BigIntType()),
    DataField(1, "tm3", TimeType(3)),
    DataField(2, "tm0", TimeType(0)),
    DataField(3, "ltz3", LocalZonedTimestampType(3)),
    DataField(4, "ltz9", LocalZonedTimestampType(9)),
    DataField(5, "ts0", TimestampType(0)),
    DataField(6, "c", CharType(4)),
    DataField(7, "vc", VarCharType(8)),
    DataField(8, "bn", BinaryType(2)),
    DataField(9, "d5", DecimalType(5, 2)),
]


def _data() -> pa.Table:
    return pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "tm3": pa.array([dt.time(1, 2, 3, 456000), None, dt.time(23, 59, 59, 999000)], pa.time32("ms")),
            "tm0": pa.array([dt.time(1, 2, 3), None, dt.time(0, 0, 0)], pa.time32("ms")),
            "ltz3": pa.array([1_700_000_000_123, None, -1], pa.timestamp("ms", tz="UTC")),
            "ltz9": pa.array([1_700_000_000_123_456_789, None, 5], pa.timestamp("ns", tz="UTC")),
            "ts0": pa.array([1_700_000_000, None, -5], pa.timestamp("s")),
            "c": ["ab", None, "abcd"],
            "vc": ["ü", None, "12345678"],
            "bn": pa.array([b"ab", None, b"\x00\x01"]),
            "d5": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-999.99")], pa.decimal128(5, 2)),
        }
    )


def _same(got: pa.Table, want: pa.Table) -> None:
    got = got.sort_by("id")
    for name in want.column_names:
        col = got.column(name).cast(want.schema.field(name).type)
        assert col.equals(want.column(name)), (name, col.to_pylist(), want.column(name).to_pylist())


def test_peers_read_our_extra_types(peer: Peer, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", FIELDS)
    t.write_arrow(_data())
    ours = t.to_arrow()
    _same(ours, _data())
    _same(peer.read(warehouse, "db.t"), ours.sort_by("id"))


def test_we_read_pypaimons_extra_types(pypaimon_peer: Peer, warehouse: str) -> None:
    # pypaimon-rust 0.4.0's DDL has no TIME type, so only pypaimon writes this table.
    data = _data()
    pypaimon_peer.create_table(warehouse, "db.p", data.schema)
    pypaimon_peer.write(warehouse, "db.p", data)
    _same(FileSystemCatalog(warehouse).get_table("db.p").to_arrow(), data)


def test_incremental_between_over_an_overwrite_matches_rust(rust_peer: Peer, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = overwrite_history(cat, "db.i")
    for between, want in INCREMENTAL_BETWEEN:
        ours = sorted(t.copy({"incremental-between": between}).to_arrow().column("id").to_pylist())
        theirs = sorted(rust_peer.read(warehouse, "db.i", options={"incremental-between": between}).column("id").to_pylist())
        assert ours == theirs == want, between
