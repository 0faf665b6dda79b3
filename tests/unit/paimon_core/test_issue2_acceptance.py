"""Acceptance points of issue 2 that no other test pinned down.

File IO publish never overwrites (local hard link, fsspec exclusive create, after pickling),
``file://`` warehouses, every TIME / TIMESTAMP / TIMESTAMP_LTZ precision 0..9 and the bounded
string/binary/decimal types through every file format, values beyond a declared precision or
length refused in every stats mode, codec options checked at create time, Java's DELTA rule for
``incremental-between`` and one-line CLI usage errors (module and console script).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog, SchemaMismatchError
from paimon_core.exceptions import InvalidOptionError
from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.io.fsspec_io import FsspecFileIO
from paimon_core.io.local_io import LocalFileIO
from paimon_core.io.resolve import load_file_io
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    LocalZonedTimestampType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
    parse_data_type,
)
from paimon_core.schema.schema_change import SetOption
from paimon_core.utils.clock import ManualClock
from tests.fixtures.histories import INCREMENTAL_BETWEEN, overwrite_history
from tests.fixtures.tables import sample_rows

# --- file IO -----------------------------------------------------------------------------------


def test_publish_never_overwrites_local_and_fsspec(tmp_path: Path) -> None:
    memory_root = f"memory://issue2-{os.getpid()}-{id(tmp_path)}"
    for io, root in ((LocalFileIO(), str(tmp_path)), (FsspecFileIO("memory"), memory_root)):
        for fio in (io, pickle.loads(pickle.dumps(io))):  # executors carry an unpickled copy
            path = f"{root}/{type(fio).__name__}-{id(fio)}/snapshot-1"
            assert fio.try_write_atomic(path, b"first")
            assert not fio.try_write_atomic(path, b"second")
            with pytest.raises(FileExistsError):
                fio.write_bytes(path, b"third")
            assert fio.read_bytes(path) == b"first"
            assert [s.name for s in fio.list_files(path.rsplit("/", 1)[0])] == ["snapshot-1"]  # no temp files
    assert isinstance(load_file_io(f"file://{tmp_path}"), LocalFileIO)
    assert isinstance(load_file_io("memory://x"), FsspecFileIO)


def test_file_url_warehouse_is_the_plain_path_warehouse(tmp_path: Path) -> None:
    cat = FileSystemCatalog(f"file://{tmp_path}")
    cat.create_database("db")
    t = cat.create_table("db.u", sample_rows(1).schema, partition_keys=["dt"])
    t.write_arrow(sample_rows(8))
    t.write_arrow(sample_rows(8, start=8))
    assert sorted(os.listdir(tmp_path / "db.db" / "u" / "snapshot")) == ["EARLIEST", "LATEST", "snapshot-1", "snapshot-2"]
    same = FileSystemCatalog(str(tmp_path)).get_table("db.u")
    assert sorted(same.to_arrow().column("id").to_pylist()) == list(range(16))


# --- every precision and bounded type, every format ------------------------------------------------

_PRECISIONS = range(10)


def _precision_fields() -> list[DataField]:
    fields = [DataField(0, "id", BigIntType(nullable=False))]
    types: list[tuple[str, DataType]] = []
    for p in _PRECISIONS:
        types += [(f"tm{p}", TimeType(p)), (f"ts{p}", TimestampType(p)), (f"ltz{p}", LocalZonedTimestampType(p))]
    types += [
        ("c", CharType(4)),
        ("vc", VarCharType(6)),
        ("bn", BinaryType(3)),
        ("vb", VarBinaryType(5)),
        ("d5", DecimalType(5, 2)),
        ("d19", DecimalType(19, 0)),
    ]
    return fields + [DataField(i + 1, n, t) for i, (n, t) in enumerate(types)]


def _precision_rows(fields: list[DataField], n: int = 6) -> pa.Table:
    schema = to_arrow_schema(fields)
    cols: list[pa.Array] = []
    for f, af in zip(fields, schema, strict=True):
        t, at = f.type, af.type
        vals: list[object] = []
        for i in range(n):
            if i % 3 == 2 and f.name != "id":
                vals.append(None)
            elif f.name == "id":
                vals.append(i)
            elif isinstance(t, TimeType):
                vals.append(dt.time(i, 2, 3, (i * 123_000) % 1_000_000))
            elif isinstance(t, (TimestampType, LocalZonedTimestampType)):
                unit_digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit]
                frac = (123_456_789 * (i + 1)) % 10**9 // 10 ** (9 - t.precision)
                seconds = 1_700_000_000 + i - 86_400 * 20_000 * (i % 2)  # some before 1970
                vals.append(seconds * 10**unit_digits + frac * 10 ** (unit_digits - t.precision))
            elif isinstance(t, CharType):
                vals.append("ü" * (i % 5))
            elif isinstance(t, VarCharType):
                vals.append("漢" * (i % 7))
            elif isinstance(t, (BinaryType, VarBinaryType)):
                vals.append(bytes([i, 255 - i, 0, 7, 9])[: t.length])
            elif isinstance(t, DecimalType):
                vals.append(decimal.Decimal(-(i * 10_007) if i % 2 else i * 99).scaleb(-t.scale))
        cols.append(pa.array(vals, at))
    return pa.table(cols, schema=schema)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_every_time_and_timestamp_precision_round_trips(catalog: FileSystemCatalog, fmt: str) -> None:
    fields = _precision_fields()
    for f in fields:
        assert parse_data_type(f.type.to_json()) == f.type
    data = _precision_rows(fields)
    t = catalog.create_table("db.prec", fields, options={"file.format": fmt, "metadata.stats-mode": "full"})
    t.write_arrow(data)
    t.write_arrow(data.set_column(0, "id", pa.array(range(6, 12), pa.int64())))
    again = catalog.get_table("db.prec")
    assert [str(f.type) for f in again.schema.fields] == [str(f.type) for f in fields]
    out = again.to_arrow().sort_by("id")
    assert out.slice(0, 6).equals(data)
    # Min/max stats of every column are exact for these values: a point filter keeps its row.
    pb = again.new_read_builder().new_predicate_builder()
    for name in ("ts4", "ltz7", "tm9", "ts0", "ltz1", "c", "bn", "d5"):
        value = data.column(name)[1].as_py()
        got = again.to_arrow(predicate=pb.equal(name, value)).column("id").to_pylist()
        assert sorted(got) == [1, 7], name


@pytest.mark.parametrize("key", ["ts4", "ltz7", "tm9", "c", "bn", "d19"])
def test_partition_keys_of_bounded_types(catalog: FileSystemCatalog, key: str) -> None:
    fields = _precision_fields()
    data = _precision_rows(fields).select(["id", key])
    t = catalog.create_table("db.pk_" + key, [fields[0], next(f for f in fields if f.name == key)], partition_keys=[key])
    t.write_arrow(data)
    assert t.to_arrow().sort_by("id").equals(data)
    pb = t.new_read_builder().new_predicate_builder()
    rb = t.new_read_builder().with_filter(pb.equal(key, data.column(key)[0].as_py()))
    plan = rb.new_scan().plan()
    assert len({s.partition for s in plan.splits}) == 1
    assert rb.new_read().to_arrow(plan.splits).column("id").to_pylist() == [0]


@pytest.mark.parametrize("mode", ["full", "truncate(16)", "counts", "none"])
@pytest.mark.parametrize(
    ("name", "bad", "why"),
    [
        ("ts4", pa.array([1_700_000_000_123_456, None], pa.timestamp("us")), "more than 4 fractional second digits"),
        ("ltz1", pa.array([-1_001, None], pa.timestamp("ms", tz="UTC")), "more than 1 fractional second digits"),
        ("vc", pa.array(["1234567", None]), "more than 6 characters"),
        ("bn", pa.array([b"1234", None]), "more than 3 bytes"),
    ],
)
def test_values_beyond_the_declared_type_are_refused(
    catalog: FileSystemCatalog, mode: str, name: str, bad: pa.Array, why: str
) -> None:
    fields = [DataField(0, "id", BigIntType()), *[f for f in _precision_fields() if f.name == name]]
    t = catalog.create_table("db.bad", fields, options={"metadata.stats-mode": mode})
    with pytest.raises(SchemaMismatchError, match=f"Column '{name}' .* 1 value\\(s\\) have {why}"):
        t.write_arrow(pa.table({"id": pa.array([1, 2], pa.int64()), name: bad}))
    assert t.latest_snapshot() is None
    assert not any(n.startswith("bucket-") for n in [s.name for s in t.file_io.list_dirs(t.path)])


def test_codec_options_are_checked_when_the_table_is_created(catalog: FileSystemCatalog) -> None:
    schema = sample_rows(1).schema
    with pytest.raises(InvalidOptionError, match="Unsupported compression 'bogus' for parquet"):
        catalog.create_table("db.z", schema, options={"file.compression": "bogus"})
    with pytest.raises(InvalidOptionError, match="'brotli' for orc"):
        catalog.create_table("db.z", schema, options={"file.format": "orc", "file.compression": "brotli"})
    assert not catalog.table_exists("db.z")
    t = catalog.create_table("db.z", schema, options={"file.compression": "snappy"})
    with pytest.raises(InvalidOptionError, match="'lz4' for avro"):
        catalog.alter_table("db.z", [SetOption("file.format", "avro"), SetOption("file.compression", "lz4")])
    assert catalog.get_table("db.z").schema.id == t.schema.id


# --- incremental-between: Java's DELTA mode reads APPEND snapshots only -----------------------------


def test_incremental_between_skips_overwrite_snapshots_like_java(warehouse: str) -> None:
    clock = ManualClock(1_700_000_000_000)
    catalog = FileSystemCatalog(warehouse, clock=clock)
    catalog.create_database("db")
    t = overwrite_history(catalog, "db.inc", clock=clock)
    snaps = list(t.snapshot_manager.snapshots())
    assert [s.commit_kind.value for s in snaps] == ["APPEND", "APPEND", "OVERWRITE", "APPEND"]
    for between, want in INCREMENTAL_BETWEEN:
        assert sorted(t.copy({"incremental-between": between}).to_arrow().column("id").to_pylist()) == want, between
    between_ts = f"{snaps[0].time_millis},{snaps[3].time_millis}"
    got = t.copy({"incremental-between-timestamp": between_ts}).to_arrow()
    assert sorted(got.column("id").to_pylist()) == [3, 5]


# --- command line --------------------------------------------------------------------------------


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_cli_usage_errors_are_one_line_and_the_console_script_works(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    for argv in (
        ["read", wh, "db.t", "--bogus"],
        ["read", wh, "db.t", "--snapshot", "1", "--tag", "x"],
        ["read", wh, "db.t", "--snapshot", "one"],
        [],
    ):
        r = _run([sys.executable, "-m", "paimon_core", *argv])
        assert r.returncode == 2, argv
        assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    script = Path(sys.executable).parent / "paimon-py"
    assert script.exists(), "pip install -e . installs the console script"
    src = tmp_path / "in.parquet"
    pq.write_table(sample_rows(5), src)
    assert _run([str(script), "create-table", wh, "db.t", "--schema-from", str(src)]).returncode == 0
    assert _run([str(script), "write", wh, "db.t", str(src)]).returncode == 0
    r = _run([str(script), "files", wh, "db.t", "--snapshot", "1"])
    assert r.returncode == 0 and '"row_count": 5' in r.stdout
    r = _run([str(script), "schema", wh, "db.nope"])
    assert r.returncode == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1


def test_nanosecond_literals_keep_their_nanoseconds() -> None:
    """pyarrow hands back ``pandas.Timestamp`` for ns timestamps; its nanoseconds must count."""
    from paimon_core.data.internal import to_internal

    scalar = pa.scalar(1_700_000_000_123_456_789, pa.timestamp("ns", tz="UTC"))
    assert to_internal(scalar.as_py(), LocalZonedTimestampType(9)) == 1_700_000_000_123_456_789
    naive = pa.scalar(-27_999_999_753_086_500, pa.timestamp("ns"))
    assert to_internal(naive.as_py(), TimestampType(7)) == -27_999_999_753_086_500
