"""Data-file formats: round trips, streaming, options, corruption, and interop with the peers."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from paimon_core.exceptions import (
    CorruptFileError,
    InvalidArgumentError,
    InvalidOptionError,
    SchemaMismatchError,
)
from paimon_core.format.file_format import (
    conform_to_schema,
    file_format_from_name,
    format_extension,
    format_from_options,
    open_writer,
    read_file,
    read_file_schema,
)
from paimon_core.format.format_options import ParquetSettings, parse_memory_size
from paimon_core.io.file_io import FileIO
from paimon_core.io.fsspec_io import FsspecFileIO
from paimon_core.io.local_io import LocalFileIO
from tests.peer_python import require_peer_python

FORMATS = ["parquet", "orc", "avro"]


# --- fixtures and helpers --------------------------------------------------------------------


@pytest.fixture(params=["local", "memory"])
def fio(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FileIO, str]]:
    """A FileIO and a fresh base directory on it."""
    if request.param == "local":
        yield LocalFileIO(), str(tmp_path)
    else:
        base = f"memory://fmt-{uuid.uuid4().hex}"
        yield FsspecFileIO("memory"), base
        import fsspec

        fsspec.filesystem("memory").rm("/" + base.split("://", 1)[1], recursive=True)


def all_types_batch() -> pa.RecordBatch:
    """One column per Arrow type our Paimon types map to, with nulls and edge values."""
    d = decimal.Decimal
    cols: dict[str, pa.Array] = {
        "i8": pa.array([1, -128, None, 127, 0], pa.int8()),
        "i16": pa.array([1, -32768, None, 32767, 0], pa.int16()),
        "i32": pa.array([1, -(2**31), None, 2**31 - 1, 0], pa.int32()),
        "i64": pa.array([1, -(2**63), None, 2**63 - 1, 0], pa.int64()),
        "f32": pa.array([1.5, None, -0.0, float("inf"), 3.25], pa.float32()),
        "f64": pa.array([1.5, None, float("-inf"), 1e308, 2.5], pa.float64()),
        "b": pa.array([True, False, None, True, False]),
        "s": pa.array(["a", "ü漢字😀", None, "x" * 100_000, ""]),
        "bin": pa.array([b"\x00\x01", None, b"", b"\xff" * 1000, b"q"]),
        "fbin": pa.array([b"ab", b"cd", None, b"\x00\x00", b"gh"], pa.binary(2)),
        "d18": pa.array(
            [d("99999999999999.9999"), None, d("-1.0001"), d("0.0000"), d("-99999999999999.9999")],
            pa.decimal128(18, 4),
        ),
        "d38": pa.array(
            [d("9" * 28 + "." + "9" * 10), None, d("-1.0000000001"), d(0), d("-" + "9" * 28 + ".5")],
            pa.decimal128(38, 10),
        ),
        "date": pa.array(
            [dt.date(2024, 1, 1), None, dt.date(1900, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1)],
            pa.date32(),
        ),
        "time": pa.array([0, 1000, None, 86_399_999, 5], pa.time32("ms")),
        "ts_s": pa.array([0, 1, None, -1, 1_700_000_000], pa.timestamp("s")),
        "ts_ms": pa.array([0, 1, None, -1, 1_700_000_000_123], pa.timestamp("ms")),
        "ts_us": pa.array([0, 1, None, -1, 1_700_000_000_123_456], pa.timestamp("us")),
        "ts_ns": pa.array([0, 1, None, -1, 1_700_000_000_123_456_789], pa.timestamp("ns")),
        "tz_s": pa.array([0, 1, None, -1, 1_700_000_000], pa.timestamp("s", tz="UTC")),
        "tz_ms": pa.array([0, 1, None, -1, 1_700_000_000_123], pa.timestamp("ms", tz="UTC")),
        "tz_us": pa.array([0, 1, None, -1, 1_700_000_000_123_456], pa.timestamp("us", tz="UTC")),
        "tz_ns": pa.array([0, 1, None, -1, 1_700_000_000_123_456_789], pa.timestamp("ns", tz="UTC")),
        "lst": pa.array([[1, 2], None, [], [None, 3], [4]], pa.list_(pa.int32())),
        "lst_s": pa.array([["a"], None, [], [None, "ü"], ["x"]], pa.list_(pa.string())),
        "mp": pa.array(
            [[("a", 1)], None, [], [("b", None), ("c", 3)], [("d", 4)]], pa.map_(pa.string(), pa.int64())
        ),
        "mp_i": pa.array([[(1, "a")], None, [], [(2, None)], [(3, "x")]], pa.map_(pa.int32(), pa.string())),
        "st": pa.array(
            [{"x": 1, "y": "a"}, None, {"x": None, "y": None}, {"x": 3, "y": "c"}, {"x": 4, "y": "d"}],
            pa.struct([("x", pa.int64()), ("y", pa.string())]),
        ),
        "st_nested": pa.array(
            [{"l": [1], "t": 5}, None, {"l": None, "t": None}, {"l": [], "t": -1}, {"l": [2, 3], "t": 0}],
            pa.struct([("l", pa.list_(pa.int64())), ("t", pa.timestamp("us"))]),
        ),
        "all_null": pa.array([None] * 5, pa.string()),
        "nn": pa.array([1, 2, 3, 4, 5], pa.int64()),
    }
    schema = pa.schema([pa.field(k, v.type, nullable=(k != "nn")) for k, v in cols.items()])
    return pa.RecordBatch.from_arrays(list(cols.values()), schema=schema)


def write_file(
    file_io: FileIO,
    path: str,
    fmt: str,
    data: pa.RecordBatch | pa.Table,
    options: dict[str, str] | None = None,
) -> int:
    w = open_writer(file_io, path, data.schema, fmt, options or {})
    w.write(data)
    return w.close()


def read_all(file_io: FileIO, path: str, fmt: str, schema: pa.Schema, **kw: object) -> pa.Table:
    batches = [conform_to_schema(b, schema) for b in read_file(file_io, path, fmt, **kw)]  # type: ignore[arg-type]
    return pa.Table.from_batches(batches, schema=schema)


def sample_table(n: int, *, start: int = 0) -> pa.Table:
    """The benchmark shape: id int64, dt string of 4 values, v double, s string."""
    import numpy as np

    ids = np.arange(start, start + n, dtype=np.int64)
    days = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
    return pa.table(
        {
            "id": pa.array(ids),
            "dt": pa.array(days[ids % 4]),
            "v": pa.array(ids.astype(np.float64) * 0.5),
            "s": pc.binary_join_element_wise("s-", pc.cast(pa.array(ids), pa.string()), ""),
        }
    )


# --- names and options -----------------------------------------------------------------------


def test_format_names() -> None:
    assert file_format_from_name("data-1b2c-0.parquet") == "parquet"
    assert file_format_from_name("s3://b/t/bucket-0/changelog-x-0.ORC") == "orc"
    assert file_format_from_name("data-x-0.avro") == "avro"
    assert [format_extension(f) for f in ("Parquet", "orc", "AVRO")] == FORMATS
    assert format_from_options({}) == "parquet"
    assert format_from_options({"file.format": "avro"}) == "avro"
    for bad in ("data-x-0.csv", "manifest-x-0", "noext"):
        with pytest.raises(InvalidOptionError):
            file_format_from_name(bad)
    with pytest.raises(InvalidOptionError):
        format_extension("lance")


def test_unknown_format_and_codec(tmp_path: Path) -> None:
    io = LocalFileIO()
    schema = pa.schema([("a", pa.int64())])
    with pytest.raises(InvalidOptionError):
        open_writer(io, str(tmp_path / "x.csv"), schema, "csv", {})
    with pytest.raises(InvalidOptionError):
        read_file(io, str(tmp_path / "x.csv"), "csv")
    with pytest.raises(InvalidOptionError):
        open_writer(io, str(tmp_path / "x.parquet"), schema, "parquet", {"file.compression": "lzo"})
    with pytest.raises(InvalidOptionError):
        open_writer(io, str(tmp_path / "x.avro"), schema, "avro", {"file.compression": "lz4"})
    with pytest.raises(InvalidOptionError):
        open_writer(io, str(tmp_path / "x.parquet"), schema, "parquet", {"file.block-size": "12 parsecs"})
    assert not any(tmp_path.iterdir()), "a rejected writer must not leave a file behind"


def test_option_resolution() -> None:
    assert parse_memory_size("k", "128 mb") == 128 << 20
    assert parse_memory_size("k", "64kb") == 64 << 10
    assert parse_memory_size("k", "1024") == 1024
    default = ParquetSettings.from_options({})
    assert (default.compression, default.compression_level, default.row_group_bytes) == ("zstd", 1, 128 << 20)
    assert default.write_page_index and default.use_dictionary
    s = ParquetSettings.from_options(
        {"file.compression": "zstd", "file.compression.zstd-level": "9", "parquet.block.size": "1048576"}
    )
    assert (s.compression_level, s.row_group_bytes) == (9, 1 << 20)
    s = ParquetSettings.from_options({"file.block-size": "2 mb", "parquet.block.size": "1048576"})
    assert s.row_group_bytes == 2 << 20
    s = ParquetSettings.from_options({"file.compression": "zstd", "parquet.compression": "SNAPPY"})
    assert (s.compression, s.compression_level) == ("snappy", None)


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_all_types(fio: tuple[FileIO, str], fmt: str) -> None:
    io, base = fio
    batch = all_types_batch()
    path = f"{base}/bucket-0/data-{uuid.uuid4()}-0.{fmt}"
    w = open_writer(io, path, batch.schema, fmt, {})
    w.write(batch)
    w.write(pa.Table.from_batches([batch.slice(1, 3), batch.slice(0, 2)]))
    assert w.num_rows == 10
    size = w.close()
    assert size == io.get_file_size(path) > 0
    expected = pa.Table.from_batches([batch, batch.slice(1, 3), batch.slice(0, 2)])
    got = read_all(io, path, fmt, batch.schema, batch_size=4)
    for name in batch.schema.names:
        assert got.column(name).equals(expected.column(name)), (fmt, name)
    assert got.schema == batch.schema


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_file_round_trip(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    schema = all_types_batch().schema
    path = str(tmp_path / f"empty.{fmt}")
    w = open_writer(io, path, schema, fmt, {})
    assert w.close() == io.get_file_size(path)
    assert list(read_file(io, path, fmt)) == []
    assert read_file_schema(io, path, fmt).names == schema.names


@pytest.mark.parametrize("fmt", FORMATS)
def test_projection_and_missing_column(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    path = str(tmp_path / f"t.{fmt}")
    write_file(io, path, fmt, sample_table(1000))
    batches = list(read_file(io, path, fmt, columns=["s", "id"]))
    assert all(b.schema.names == ["s", "id"] for b in batches)
    assert sum(b.num_rows for b in batches) == 1000
    with pytest.raises(SchemaMismatchError, match=r"\['nope'\].*t\." + fmt):
        read_file(io, path, fmt, columns=["id", "nope"])  # raised eagerly, before iterating


@pytest.mark.parametrize("fmt", FORMATS)
def test_arrow_filter(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    path = str(tmp_path / f"t.{fmt}")
    table = sample_table(50_000)
    write_file(
        io, path, fmt, table, {"parquet.block.size": str(64 * 1024), "orc.stripe.size": str(64 * 1024)}
    )
    expr = (pc.field("id") >= 40_000) & (pc.field("dt") == "2024-01-02")
    got = read_all(io, path, fmt, table.schema, arrow_filter=expr)
    assert got.equals(table.filter(expr))


def test_parquet_filter_skips_row_groups(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "t.parquet")
    write_file(io, path, "parquet", sample_table(200_000), {"parquet.block.size": str(256 * 1024)})
    assert pq.ParquetFile(path).metadata.num_row_groups > 10
    scanned = 0
    # Rows of skipped row groups never reach the filter, so count what the reader decodes.
    from paimon_core.format import parquet_format

    fragment = parquet_format._fragment(io, path).subset(filter=pc.field("id") < 1000)
    scanned = sum(rg.num_rows for rg in fragment.row_groups)
    assert scanned < 50_000
    assert (
        read_all(io, path, "parquet", sample_table(0).schema, arrow_filter=pc.field("id") < 1000).num_rows
        == 1000
    )
    with pytest.raises(InvalidArgumentError):
        read_file(io, path, "parquet", arrow_filter=pc.field("no_such_column") > 1)


# --- streaming and memory --------------------------------------------------------------------


@pytest.mark.slow
def test_parquet_streams_in_bounded_batches(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "big.parquet")
    n = 2_000_000
    w = open_writer(io, path, sample_table(0).schema, "parquet", {"parquet.block.size": str(8 << 20)})
    for start in range(0, n, 100_000):
        w.write(sample_table(100_000, start=start))
    w.close()
    full_bytes = sample_table(n).nbytes
    assert pq.ParquetFile(path).metadata.num_row_groups >= 4

    baseline = pa.total_allocated_bytes()
    peak = 0
    sizes: list[int] = []
    next_id = 0
    for batch in read_file(io, path, "parquet", batch_size=65536):
        sizes.append(batch.num_rows)
        ids = batch.column("id")
        assert ids[0].as_py() == next_id, "batches must come in file order"
        next_id += batch.num_rows
        peak = max(peak, pa.total_allocated_bytes() - baseline)
        del batch, ids
    assert sum(sizes) == n
    assert max(sizes) <= 65536
    assert len(sizes) >= n // 65536
    assert peak < full_bytes / 2, f"reader held {peak} bytes of a {full_bytes}-byte table"


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_orc_avro_stream_in_batches(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    path = str(tmp_path / f"t.{fmt}")
    n = 200_000 if fmt == "orc" else 30_000  # ORC needs enough rows for several stripes
    table = sample_table(n)
    write_file(io, path, fmt, table, {"orc.stripe.size": str(64 * 1024)})
    if fmt == "orc":
        assert orc.ORCFile(path).nstripes > 1
    sizes = [b.num_rows for b in read_file(io, path, fmt, batch_size=4096)]
    assert sum(sizes) == n and max(sizes) <= 4096
    assert read_all(io, path, fmt, table.schema).equals(table)


# --- writer behaviour ------------------------------------------------------------------------


def test_parquet_row_groups_follow_block_size(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "t.parquet")
    w = open_writer(io, path, sample_table(0).schema, "parquet", {"file.block-size": "1 mb"})
    for start in range(0, 200_000, 1000):  # many small batches must not become many row groups
        w.write(sample_table(1000, start=start))
    w.close()
    md = pq.ParquetFile(path).metadata
    assert 2 <= md.num_row_groups <= 12
    one = str(tmp_path / "one.parquet")
    w = open_writer(io, one, sample_table(0).schema, "parquet", {})
    for start in range(0, 200_000, 1000):
        w.write(sample_table(1000, start=start))
    w.close()
    assert pq.ParquetFile(one).metadata.num_row_groups == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_bytes_written_estimate(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    path = str(tmp_path / f"t.{fmt}")
    opts = {"parquet.block.size": str(512 * 1024), "orc.stripe.size": str(512 * 1024)}
    w = open_writer(io, path, sample_table(0).schema, fmt, opts)
    estimates = []
    for start in range(0, 200_000, 10_000):
        w.write(sample_table(10_000, start=start))
        estimates.append(w.bytes_written())
    size = w.close()
    assert size == os.path.getsize(path)
    assert estimates[-1] > 0
    # Once data went out the estimate tracks the real size (rolling relies on it).
    assert size / 2 <= estimates[-1] <= size * 2, (estimates[-1], size)
    assert w.bytes_written() == size


def test_writer_rejects_bad_input_and_stays_usable(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "t.parquet")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string())])
    w = open_writer(io, path, schema, "parquet", {})
    with pytest.raises(SchemaMismatchError, match="NOT NULL"):
        w.write(pa.table({"id": pa.array([1, None], pa.int64()), "s": ["a", "b"]}))
    with pytest.raises(SchemaMismatchError, match="missing"):
        w.write(pa.table({"id": [1]}))
    # Compatible input is conformed: int32 -> int64, large_string -> string, extra column dropped.
    w.write(
        pa.table({"extra": [0], "s": pa.array(["x"], pa.large_string()), "id": pa.array([7], pa.int32())})
    )
    w.close()
    assert pq.read_table(path).to_pylist() == [{"id": 7, "s": "x"}]


def test_abort_deletes_partial_file(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "sub" / "t.parquet")
    w = open_writer(io, path, sample_table(0).schema, "parquet", {})
    w.write(sample_table(10))
    w.abort()
    assert not os.path.exists(path)
    with pytest.raises(Exception, match="closed"):
        w.write(sample_table(1))


# --- Parquet layout --------------------------------------------------------------------------


def test_parquet_layout_matches_java_and_pypaimon(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "t.parquet")
    batch = all_types_batch()
    write_file(io, path, "parquet", batch)
    pf = pq.ParquetFile(path)
    md = pf.metadata
    assert md.format_version == "2.6"
    assert list((md.metadata or {}).keys()) == [b"ARROW:schema"]
    rg = md.row_group(0)
    for i in range(rg.num_columns):
        col = rg.column(i)
        assert col.compression == "ZSTD"
        assert col.has_column_index and col.has_offset_index
    schema = pf.schema
    by_name = {schema.column(i).path: schema.column(i) for i in range(len(schema))}
    assert by_name["d18"].physical_type == "INT64"  # Java: precision <= 18 -> INT64
    assert by_name["d38"].physical_type == "FIXED_LEN_BYTE_ARRAY" and by_name["d38"].length == 16
    # Java: TIMESTAMP(p<=3) INT64 millis, (p<=6) micros; LTZ and TIME are adjusted to UTC.
    assert "isAdjustedToUTC=false, timeUnit=milliseconds" in str(by_name["ts_ms"].logical_type)
    assert "timeUnit=microseconds" in str(by_name["ts_us"].logical_type)
    assert "isAdjustedToUTC=true" in str(by_name["tz_us"].logical_type)
    assert "isAdjustedToUTC=true" in str(by_name["time"].logical_type)
    arrow_schema = pf.schema_arrow
    assert arrow_schema.field("nn").nullable is False and arrow_schema.field("i64").nullable is True
    assert by_name["nn"].max_definition_level == 0  # required
    assert by_name["i64"].max_definition_level == 1  # optional


def test_parquet_compression_options(tmp_path: Path) -> None:
    io = LocalFileIO()
    t = sample_table(10_000)
    cases = {
        "snappy": {"file.compression": "snappy"},
        "none": {"file.compression": "none"},
        "gzip": {"parquet.compression": "gzip"},
        "zstd9": {"file.compression.zstd-level": "9"},
    }
    sizes = {}
    for name, opts in cases.items():
        path = str(tmp_path / f"{name}.parquet")
        sizes[name] = write_file(io, path, "parquet", t, opts)
        codec = pq.ParquetFile(path).metadata.row_group(0).column(0).compression
        assert codec == {"snappy": "SNAPPY", "none": "UNCOMPRESSED", "gzip": "GZIP", "zstd9": "ZSTD"}[name]
    assert sizes["none"] > sizes["snappy"]
    orc_path = str(tmp_path / "t.orc")
    write_file(io, orc_path, "orc", t, {"file.compression": "snappy"})
    assert orc.ORCFile(orc_path).compression == "SNAPPY"
    write_file(io, orc_path, "orc", t, {})
    assert orc.ORCFile(orc_path).compression == "ZSTD"
    write_file(io, orc_path, "orc", t, {"file.compression": "snappy", "orc.compress": "ZLIB"})
    assert orc.ORCFile(orc_path).compression == "ZLIB"
    avro_path = str(tmp_path / "t.avro")
    for opts, codec in (
        ({}, "zstandard"),
        ({"avro.codec": "deflate"}, "deflate"),
        ({"file.compression": "none"}, "null"),
    ):
        write_file(io, avro_path, "avro", t, opts)
        with open(avro_path, "rb") as fh:
            assert fastavro.reader(fh).codec == codec


def test_avro_schema_like_java(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "t.avro")
    batch = all_types_batch()
    write_file(io, path, "avro", batch)
    with open(path, "rb") as fh:
        schema = fastavro.reader(fh).writer_schema
    assert schema["name"] == "org.apache.paimon.avro.generated.record"
    fields = {f["name"]: f for f in schema["fields"]}
    assert fields["nn"]["type"] == "long" and "default" not in fields["nn"]
    assert fields["i8"]["type"] == ["null", "int"] and fields["i8"]["default"] is None
    assert fields["d18"]["type"][1] == {
        "type": "bytes",
        "logicalType": "decimal",
        "precision": 18,
        "scale": 4,
    }
    assert fields["date"]["type"][1] == {"type": "int", "logicalType": "date"}
    assert fields["time"]["type"][1] == {"type": "int", "logicalType": "time-millis"}
    assert fields["ts_ms"]["type"][1] == {"type": "long", "logicalType": "timestamp-millis"}
    assert fields["ts_us"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["tz_ms"]["type"][1] == {"type": "long", "logicalType": "local-timestamp-millis"}
    assert fields["st"]["type"][1]["name"] == "org.apache.paimon.avro.generated.record_st"
    assert fields["mp"]["type"][1]["type"] == "map"
    assert fields["mp_i"]["type"][1]["logicalType"] == "map"  # non-string keys: array of {key, value}


# --- corruption ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "zeroed-middle"])
def test_corrupt_file(tmp_path: Path, fmt: str, damage: str) -> None:
    io = LocalFileIO()
    good = str(tmp_path / f"good.{fmt}")
    write_file(io, good, fmt, sample_table(20_000))
    data = Path(good).read_bytes()
    bad = {
        "garbage": b"not a data file at all" * 20,
        "empty": b"",
        "truncated": data[: len(data) // 2],
        "zeroed-middle": data[:200] + bytes(len(data) - 400) + data[-200:],
    }[damage]
    path = str(tmp_path / f"bad-{damage}.{fmt}")
    Path(path).write_bytes(bad)
    with pytest.raises(CorruptFileError) as info:
        for _ in read_file(io, path, fmt):
            pass
    assert path in str(info.value) and info.value.path == path  # type: ignore[attr-defined]
    if damage in ("garbage", "empty"):  # the others may keep a readable header/footer
        with pytest.raises(CorruptFileError):
            read_file_schema(io, path, fmt)


def test_missing_file_is_not_corrupt(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_file(LocalFileIO(), str(tmp_path / "nope.parquet"), "parquet")


# --- conforming foreign physical types -------------------------------------------------------


def test_conform_safe_casts() -> None:
    target = pa.schema(
        [
            pa.field("ts", pa.timestamp("us")),
            pa.field("ltz", pa.timestamp("ms", tz="UTC")),
            pa.field("dec", pa.decimal128(10, 2)),
            pa.field("s", pa.string()),
            pa.field("tiny", pa.int8()),
            pa.field("t", pa.time32("ms")),
            pa.field("dict", pa.string()),
            pa.field("nul", pa.float64()),
            pa.field("st", pa.struct([("a", pa.int64()), ("b", pa.string())])),
            pa.field("m", pa.map_(pa.string(), pa.int64())),
        ]
    )
    src = pa.RecordBatch.from_pydict(
        {
            "extra": [1, 2],
            "ts": pa.array([1_000, None], pa.timestamp("ns")),  # INT96 / ORC come back as ns
            "ltz": pa.array([5_000_000, 0], pa.timestamp("ns")),
            "dec": pa.array([decimal.Decimal("1.50"), None], pa.decimal128(5, 2)),
            "s": pa.array(["a", "b"], pa.large_string()),
            "tiny": pa.array([1, -128], pa.int32()),  # Avro int
            "t": pa.array([1000, None], pa.int32()),  # ORC TIME
            "dict": pa.array(["x", "y"]).dictionary_encode(),
            "nul": pa.nulls(2),
            "st": pa.array(
                [{"b": "q", "a": 1}, None], pa.struct([("b", pa.large_string()), ("a", pa.int32())])
            ),
            "m": pa.array([[("k", 1)], None], pa.map_(pa.large_string(), pa.int32())),
        }
    )
    out = conform_to_schema(src.slice(0, 2), target)
    assert out.schema == target
    assert out.column("ts").to_pylist() == [dt.datetime(1970, 1, 1, 0, 0, 0, 1), None]
    assert out.column("ltz")[0].value == 5
    assert out.column("tiny").to_pylist() == [1, -128]
    assert out.column("t").to_pylist() == [dt.time(0, 0, 1), None]
    assert out.column("st").to_pylist() == [{"a": 1, "b": "q"}, None]
    assert out.column("m").to_pylist() == [[("k", 1)], None]
    sliced = conform_to_schema(src.slice(1, 1), target)
    assert sliced.column("st").to_pylist() == [None] and sliced.column("m").to_pylist() == [None]


@pytest.mark.parametrize(
    ("array", "target"),
    [
        (pa.array([1_001], pa.timestamp("ns")), pa.timestamp("us")),  # would truncate
        (pa.array([300], pa.int32()), pa.int8()),  # overflow
        (pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)), pa.decimal128(5, 1)),  # rescale loss
        (pa.array(["1"]), pa.int64()),  # reinterpretation, not a physical form
        (pa.array([1.5], pa.float64()), pa.float32()),  # narrowing
        (pa.array([1]), pa.string()),
    ],
)
def test_conform_rejects_unsafe(array: pa.Array, target: pa.DataType) -> None:
    with pytest.raises(SchemaMismatchError):
        conform_to_schema(pa.RecordBatch.from_arrays([array], names=["c"]), pa.schema([("c", target)]))


def test_reads_java_style_parquet(tmp_path: Path) -> None:
    """Java writes field ids, required NOT NULL columns, INT96 for TIMESTAMP(9), int decimals."""
    io = LocalFileIO()
    path = str(tmp_path / "java.parquet")
    table = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "ts9": pa.array([1_700_000_000_123_456_789, None], pa.timestamp("ns")),
            "d9": pa.array([decimal.Decimal("1234567.89"), None], pa.decimal128(9, 2)),
        }
    )
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"0"}),
            pa.field("ts9", pa.timestamp("ns"), metadata={b"PARQUET:field_id": b"1"}),
            pa.field("d9", pa.decimal128(9, 2), metadata={b"PARQUET:field_id": b"2"}),
        ]
    )
    pq.write_table(
        table.cast(schema),
        path,
        use_deprecated_int96_timestamps=True,
        store_decimal_as_integer=True,
        store_schema=False,
    )
    assert pq.ParquetFile(path).schema.column(1).physical_type == "INT96"
    target = pa.schema([("d9", pa.decimal128(9, 2)), ("ts9", pa.timestamp("ns")), ("id", pa.int64())])
    assert read_all(io, path, "parquet", target).equals(table.select(["d9", "ts9", "id"]))


# --- interop with pypaimon / pypaimon-rust / pyarrow 19 (peer venv) --------------------------


def run_peer(script: str, *args: str) -> str:
    """Run ``script`` with the peer venv's Python (pypaimon 2.1, pyarrow 19); skip if absent."""
    python = str(require_peer_python())
    proc = subprocess.run(
        [python, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    if proc.returncode != 0:
        raise AssertionError(f"peer failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


_PEER_READ = """
import sys, json
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.orc as orc
path, fmt, schema_path, out_prefix = sys.argv[1:5]
schema = pa.ipc.read_schema(pa.OSFile(schema_path, "rb"))
def dump(name, table):
    with pa.OSFile(out_prefix + name + ".arrow", "wb") as f:
        with pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
report = {"pyarrow": pa.__version__}
if fmt == "parquet":
    dump("pyarrow", pq.read_table(path))
elif fmt == "orc":
    dump("pyarrow", orc.read_table(path))
from pypaimon.common.file_io import FileIO
from pypaimon.schema.data_types import PyarrowFieldParser
fields = PyarrowFieldParser.to_paimon_schema(schema)
file_io = FileIO.get(path)
if fmt == "avro":
    from pypaimon.read.reader.format_avro_reader import FormatAvroReader
    reader = FormatAvroReader(file_io, path, [f.name for f in fields], fields, None, batch_size=1000)
else:
    from pypaimon.read.reader.format_pyarrow_reader import FormatPyArrowReader
    reader = FormatPyArrowReader(file_io, fmt, path, fields, None, batch_size=1000)
batches = []
while (b := reader.read_arrow_batch()) is not None:
    batches.append(b)
reader.close()
dump("pypaimon", pa.Table.from_batches(batches))
print(json.dumps(report))
"""


@pytest.mark.interop
@pytest.mark.parametrize("fmt", FORMATS)
def test_peers_read_our_files(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    batch = all_types_batch()
    if fmt == "avro":  # pypaimon's Avro reader maps the Paimon schema itself; keep what it knows
        batch = batch.select(
            [n for n in batch.schema.names if n not in ("fbin", "mp", "mp_i", "tz_s", "ts_s")]
        )
    path = str(tmp_path / f"ours.{fmt}")
    write_file(io, path, fmt, batch)
    schema_path = tmp_path / "schema.bin"
    schema_path.write_bytes(batch.schema.serialize().to_pybytes())
    report = json.loads(run_peer(_PEER_READ, path, fmt, str(schema_path), str(tmp_path / "peer.")))
    assert report["pyarrow"].startswith("19.")
    readers = ["pypaimon"] + (["pyarrow"] if fmt != "avro" else [])
    for reader in readers:
        table = pa.ipc.open_file(str(tmp_path / f"peer.{reader}.arrow")).read_all()
        got = pa.Table.from_batches([conform_to_schema(b, batch.schema) for b in table.to_batches()])
        for name in batch.schema.names:
            assert got.column(name).equals(pa.chunked_array([batch.column(name)])), (reader, fmt, name)


@pytest.mark.interop
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("thin", [False, True])
def test_peers_read_our_primary_key_files(tmp_path: Path, fmt: str, thin: bool) -> None:
    """Our KeyValue layout (Java's field ids, required system columns) is readable by pypaimon."""
    from paimon_core.format.key_value import key_value_arrow_schema
    from paimon_core.schema.data_types import BigIntType, DataField, DoubleType, VarCharType

    fields = [
        DataField(0, "id", BigIntType(nullable=False)),
        DataField(1, "s", VarCharType(VarCharType.MAX_LENGTH)),
        DataField(2, "v", DoubleType()),
    ]
    schema = key_value_arrow_schema(fields[:1], fields, thin_mode=thin)
    data = {
        "_KEY_id": [1, 2],
        "_SEQUENCE_NUMBER": [5, 6],
        "_VALUE_KIND": [0, 3],
        "id": [1, 2],
        "s": ["ü", None],
        "v": [None, 2.5],
    }
    batch = pa.RecordBatch.from_pydict({n: data[n] for n in schema.names}, schema=schema)
    path = str(tmp_path / f"data-pk-0.{fmt}")
    write_file(LocalFileIO(), path, fmt, batch)
    schema_path = tmp_path / "schema.bin"
    schema_path.write_bytes(schema.serialize().to_pybytes())
    run_peer(_PEER_READ, path, fmt, str(schema_path), str(tmp_path / "peer."))
    for reader in ["pypaimon"] + (["pyarrow"] if fmt != "avro" else []):
        table = pa.ipc.open_file(str(tmp_path / f"peer.{reader}.arrow")).read_all()
        got = pa.Table.from_batches([conform_to_schema(b, schema) for b in table.to_batches()])
        assert got.to_pylist() == pa.Table.from_batches([batch]).to_pylist(), (reader, fmt)


_PEER_WRITE = """
import sys, os, shutil, json
import pyarrow as pa
from pypaimon import CatalogFactory, Schema
wh, engine = os.path.abspath(sys.argv[1]), sys.argv[2]
os.makedirs(wh, exist_ok=True)
cat = CatalogFactory.create({"warehouse": wh})
cat.create_database("db", True)
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.float64()),
                    ("s", pa.string()), ("ts", pa.timestamp("us")), ("d", pa.decimal128(20, 3))])
import decimal, datetime
data = pa.table({"id": [3, 1, 2], "dt": ["a", "b", "a"], "v": [1.5, None, 2.5], "s": ["x", "ü", None],
                 "ts": [datetime.datetime(2024, 1, 1, 1, 2, 3, 456789), None, datetime.datetime(1969, 12, 31)],
                 "d": [decimal.Decimal("1.234"), None, decimal.Decimal("-99999999999999999.999")]}, schema=schema)
out = {}
for fmt in ["parquet", "orc", "avro"]:
    for pk in [True, False]:
        opts = {"file.format": fmt, "bucket": "1" if pk else "-1"}
        if engine == "rust":
            opts.update({"write.native.enabled": "true", "commit.native.enabled": "true"})
        name = f"db.{engine}_{fmt}_{'pk' if pk else 'append'}"
        cat.create_table(name, Schema.from_pyarrow_schema(schema, primary_keys=["id"] if pk else None,
                                                          options=opts), False)
        t = cat.get_table(name)
        wb = t.new_batch_write_builder(); w = wb.new_write(); c = wb.new_commit()
        w.write_arrow(data); c.commit(w.prepare_commit()); w.close(); c.close()
        files = []
        for root, _, names in os.walk(os.path.join(wh, "db.db", name.split(".")[1])):
            files += [os.path.join(root, n) for n in names if n.startswith("data-")]
        out[f"{engine}/{fmt}/{'pk' if pk else 'append'}"] = files
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def peer_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Data files written by pypaimon (``_KEY_`` layout) and pypaimon-rust (thin mode)."""
    wh = tmp_path_factory.mktemp("peer-wh")
    out: dict[str, list[str]] = {}
    for engine in ("pypaimon", "rust"):
        out.update(json.loads(run_peer(_PEER_WRITE, str(wh), engine)))
    return out


_PEER_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("dt", pa.string()),
        ("v", pa.float64()),
        ("s", pa.string()),
        ("ts", pa.timestamp("us")),
        ("d", pa.decimal128(20, 3)),
    ]
)


@pytest.mark.interop
@pytest.mark.parametrize("engine", ["pypaimon", "rust"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["pk", "append"])
def test_read_peer_written_files(peer_files: dict[str, list[str]], engine: str, fmt: str, kind: str) -> None:
    from paimon_core.format.key_value import (
        KEY_FIELD_PREFIX,
        SEQUENCE_NUMBER,
        VALUE_KIND,
        detect_thin_mode,
    )

    files = peer_files[f"{engine}/{fmt}/{kind}"]
    assert len(files) == 1, files
    path = files[0]
    assert file_format_from_name(path) == fmt
    io = LocalFileIO()
    file_schema = read_file_schema(io, path, fmt)
    target = _PEER_SCHEMA
    if kind == "pk":
        thin = detect_thin_mode(file_schema, ["id"])
        # pypaimon-rust's native writer is Parquet only; it falls back to pypaimon for ORC/Avro.
        assert thin == (engine == "rust" and fmt == "parquet")
        system = [
            pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False),
            pa.field(VALUE_KIND, pa.int8(), nullable=False),
        ]
        key = [] if thin else [pa.field(KEY_FIELD_PREFIX + "id", pa.int64(), nullable=False)]
        target = pa.schema(key + system + list(_PEER_SCHEMA))
    got = read_all(io, path, fmt, target)
    assert got.num_rows == 3
    rows = sorted(got.to_pylist(), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == [1, 2, 3]
    assert rows[0]["s"] == "ü" and rows[0]["v"] is None
    assert rows[2]["ts"] == dt.datetime(2024, 1, 1, 1, 2, 3, 456789)
    assert rows[1]["d"] == decimal.Decimal("-99999999999999999.999")
    if kind == "pk":
        assert [r[VALUE_KIND] for r in rows] == [0, 0, 0]
        if not detect_thin_mode(file_schema, ["id"]):
            assert all(r[KEY_FIELD_PREFIX + "id"] == r["id"] for r in rows)
        assert got.column("id").to_pylist() == [1, 2, 3], "PK files are sorted by key"


@pytest.mark.interop
def test_parquet_properties_match_pypaimon(peer_files: dict[str, list[str]], tmp_path: Path) -> None:
    theirs = pq.ParquetFile(peer_files["pypaimon/parquet/append"][0]).metadata
    path = str(tmp_path / "ours.parquet")
    write_file(
        LocalFileIO(),
        path,
        "parquet",
        read_all(LocalFileIO(), peer_files["pypaimon/parquet/append"][0], "parquet", _PEER_SCHEMA),
    )
    ours = pq.ParquetFile(path).metadata
    assert ours.format_version == theirs.format_version == "2.6"
    assert set((ours.metadata or {}).keys()) == set((theirs.metadata or {}).keys()) == {b"ARROW:schema"}
    for md in (ours, theirs):
        rg = md.row_group(0)
        assert {rg.column(i).compression for i in range(rg.num_columns)} == {"ZSTD"}
        assert all(rg.column(i).has_column_index for i in range(rg.num_columns))
    assert ours.schema.to_arrow_schema().field("id").nullable is False
