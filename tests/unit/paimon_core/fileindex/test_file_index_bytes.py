"""The data-file index bytes are Java's.

Three independent references:

* Java's algorithm, re-derived here from its description (Paimon's ``BloomFilter64``, Thomas
  Wang's hash, the ``FileIndexFormat`` layout) with plain Python integers: the bloom bits and
  the container of a fixed input, byte for byte;
* published xxHash64 test vectors (Java hashes strings with ``LongHashFunction.xx()``);
* the JVM itself: ``JavaFileIndexReference.java`` (Java's code for numeric columns, JDK classes
  only) run by ``java``, whose ``HashMap`` order, ``writeUTF`` and int/long arithmetic decide the
  container; column names that share a ``HashMap`` bin check the tie order too.

(The interop tests also compare every index with the ones pypaimon-rust writes.)
"""

from __future__ import annotations

import math
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.fileindex.bloomfilter.bloom_filter64 import BloomFilter64
from paimon_core.fileindex.bloomfilter.fast_hash import hash_value, long_hash, long_hash_array, xx_hash64
from paimon_core.fileindex.data_file_index_writer import DataFileIndexWriter
from paimon_core.fileindex.file_index_format import MAGIC, FileIndexFormatReader, write_column_indexes
from paimon_core.fileindex.file_index_options import FileIndexOptions
from paimon_core.fileindex.java_compat import java_string_hash, write_modified_utf8
from paimon_core.schema.data_types import (
    BigIntType,
    BooleanType,
    DataField,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
    VarCharType,
)

JAVA_SOURCE = Path(__file__).with_name("JavaFileIndexReference.java")
U64 = (1 << 64) - 1


# --- references, from Java's description --------------------------------------------------
def _signed64(x: int) -> int:
    x &= U64
    return x - (1 << 64) if x >> 63 else x


def _sar(x: int, n: int) -> int:
    """Java's ``>>`` on a long: an arithmetic shift of the two's complement bits."""
    return _signed64(x) >> n


def wang_hash(key: int) -> int:
    """Thomas Wang's 64-bit hash as written in Java, on unsigned 64-bit words."""
    k = key & U64
    k = (~k + (k << 21)) & U64
    k ^= _sar(k, 24) & U64
    k = (k + (k << 3) + (k << 8)) & U64
    k ^= _sar(k, 14) & U64
    k = (k + (k << 2) + (k << 4)) & U64
    k ^= _sar(k, 28) & U64
    k = (k + (k << 31)) & U64
    return _signed64(k)


def reference_bloom(hashes: list[int], items: int, fpp: float) -> bytes:
    """Java's ``BloomFilterFileIndex.Writer.serializedBytes`` for these 64-bit hashes."""
    nb = int(-items * math.log(fpp) / (math.log(2) ** 2))
    num_bits = nb + (8 - nb % 8)
    k = max(1, math.floor(num_bits / items * math.log(2) + 0.5))
    bits = bytearray(num_bits // 8)
    for h in hashes:
        h1 = struct.unpack(">i", struct.pack(">I", h & 0xFFFFFFFF))[0]
        h2 = struct.unpack(">i", struct.pack(">I", (h >> 32) & 0xFFFFFFFF))[0]
        for i in range(1, k + 1):
            c = struct.unpack(">i", struct.pack(">I", (h1 + i * h2) & 0xFFFFFFFF))[0]
            if c < 0:
                c = ~c
            pos = c % num_bits
            bits[pos // 8] |= 1 << (pos % 8)
    return struct.pack(">i", k) + bytes(bits)


def reference_container(columns: list[tuple[str, list[tuple[str, bytes]]]]) -> bytes:
    """``FileIndexFormat`` as its Javadoc draws it (magic, version, head length, columns ...)."""
    def utf(s: str) -> bytes:
        b = s.encode("utf-8")
        return struct.pack(">H", len(b)) + b

    head_len = 8 + 4 + 4 + 4 + 4
    for name, idx in columns:
        head_len += len(utf(name)) + 4 + sum(len(utf(t)) + 8 for t, _ in idx)
    head = struct.pack(">qii", 1493475289347502, 1, head_len) + struct.pack(">i", len(columns))
    body = b""
    for name, idx in columns:
        head += utf(name) + struct.pack(">i", len(idx))
        for t, data in idx:
            head += utf(t) + struct.pack(">ii", head_len + len(body), len(data))
            body += data
    return head + struct.pack(">i", 0) + body


# --- hashes ---------------------------------------------------------------------------------
EDGE_LONGS = [0, 1, -1, 2, 42, -42, 2**31 - 1, -(2**31), 2**32, 2**63 - 1, -(2**63), 0x5555555555555555, -0x123456789ABCDEF]


def test_thomas_wang_hash_as_java_computes_it() -> None:
    rng = np.random.default_rng(7)
    keys = EDGE_LONGS + [int(x) for x in rng.integers(-(2**63), 2**63 - 1, size=500, dtype=np.int64)]
    expected = [wang_hash(k) for k in keys]
    assert [long_hash(k) for k in keys] == expected
    assert long_hash_array(np.array(keys, dtype=np.int64)).tolist() == expected
    assert long_hash(0) != long_hash(1) and len(set(expected)) == len(set(keys))


def test_xxhash64_published_vectors() -> None:
    # xxHash64, seed 0 (Cyan4973/xxHash test vectors), as Java's signed long
    assert xx_hash64(b"") == _signed64(0xEF46DB3751D8E999)
    assert xx_hash64(b"a") == _signed64(0xD24EC4F1A98C6E5B)
    assert xx_hash64(b"abc") == _signed64(0x44BC2CF5AD770999)
    assert hash_value("abc", VarCharType(10)) == xx_hash64(b"abc")
    assert hash_value("ü", VarCharType(10)) == xx_hash64("ü".encode())  # BinaryString.toBytes: UTF-8


def test_values_hash_as_java_maps_them() -> None:
    assert hash_value(-5, TinyIntType()) == wang_hash(-5)  # (long) (byte) o: sign-extended
    assert hash_value(19_000, DateType()) == wang_hash(19_000)
    assert hash_value(1.5, FloatType()) == wang_hash(struct.unpack(">i", struct.pack(">f", 1.5))[0])
    assert hash_value(-2.25, DoubleType()) == wang_hash(struct.unpack(">q", struct.pack(">d", -2.25))[0])
    assert hash_value(float("nan"), DoubleType()) == wang_hash(0x7FF8000000000000)  # canonical NaN


# --- the bloom filter -----------------------------------------------------------------------
def test_bloom_sizes_follow_java() -> None:
    assert (BloomFilter64.for_items(1_000_000, 0.1).num_bits, BloomFilter64.for_items(1_000_000, 0.1).num_hash_functions) == (4_792_536, 3)
    assert BloomFilter64.for_items(100, 0.1).num_bits == 480
    assert BloomFilter64.for_items(64, 0.01).num_hash_functions == 7


@pytest.mark.parametrize(
    ("data_type", "arrow", "values"),
    [
        (BigIntType(), pa.int64(), [1, -1, 7, 2**40, None, 7, -(2**63)]),
        (IntType(), pa.int32(), [0, 5, -100_000, None, 2**31 - 1]),
        (SmallIntType(), pa.int16(), [-3, 300, 300]),
        (DoubleType(), pa.float64(), [0.5, -0.0, 0.0, 1e300, float("nan")]),
        (FloatType(), pa.float32(), [0.25, -3.5, float("nan")]),
        (VarCharType(100), pa.string(), ["", "a", "abc", "ü-1", None, "x" * 300]),
    ],
)
def test_bloom_bytes_equal_the_reference(data_type: DataType, arrow: pa.DataType, values: list[object]) -> None:
    for items, fpp in ((100, 0.1), (1000, 0.01), (1_000_000, 0.1)):
        options = FileIndexOptions(
            {"file-index.bloom-filter.columns": "c", "file-index.bloom-filter.c.items": str(items),
             "file-index.bloom-filter.c.fpp": str(fpp)}
        )  # fmt: skip
        writer = DataFileIndexWriter([DataField(0, "c", data_type)], options)
        half = len(values) // 2  # two batches, as a rolling writer hands them over
        writer.write(pa.table({"c": pa.array(values[:half], arrow)}))
        writer.write(pa.table({"c": pa.array(values[half:], arrow)}))
        expected = reference_bloom([hash_value(v, data_type) for v in values if v is not None], items, fpp)
        assert writer.to_bytes() == reference_container([("c", [("bloom-filter", expected)])])
        reader = FileIndexFormatReader(writer.to_bytes()).column_readers("c", data_type)[0]
        for v in values:  # no false negative
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                assert reader.visit("equal", [v]).remain(), v


def test_container_layout_matches_the_javadoc() -> None:
    data = write_column_indexes([("s", [("bloom-filter", b"\x01\x02\x03")]), ("naïve", [("bloom-filter", b"\x09"), ("bitmap", None)])])
    assert data[:8] == struct.pack(">q", MAGIC)
    assert write_modified_utf8("a\x00\U0001f600") == b"\x00\x09a\xc0\x80\xed\xa0\xbd\xed\xb8\x80"  # Java's modified UTF-8
    reader = FileIndexFormatReader(data)
    assert sorted(reader.metas()) == [("naïve", "bitmap", 0, True), ("naïve", "bloom-filter", 1, False), ("s", "bloom-filter", 3, False)]


# --- the JVM ----------------------------------------------------------------------------------
def _bin(name: str) -> int:
    h = java_string_hash(name) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15


def _colliding_names() -> list[str]:
    """13 column names, several sharing a HashMap bin (16 bins): their order is the tie rule; 13
    keys make a ``put`` map double to 32 bins while a ``computeIfAbsent`` one stays at 16."""
    names = [f"c{i}" for i in range(40)]
    by_bin: dict[int, list[str]] = {}
    for n in names:
        by_bin.setdefault(_bin(n), []).append(n)
    crowded = max(by_bin.values(), key=len)[:3]
    assert len(crowded) >= 2
    return [*crowded, "id", "naïve_ü", "v", *(f"x{i}" for i in range(13 - len(crowded) - 3))]


def test_container_bytes_equal_what_the_jvm_writes(tmp_path: Path) -> None:
    java = shutil.which("java")
    assert java is not None, "the JDK is part of the test environment (Spark needs it)"
    types: list[tuple[DataType, str, pa.DataType]] = [
        (BigIntType(), "BIGINT", pa.int64()),
        (IntType(), "INT", pa.int32()),
        (DoubleType(), "DOUBLE", pa.float64()),
        (FloatType(), "FLOAT", pa.float32()),
        (TinyIntType(), "TINYINT", pa.int8()),
        (DateType(), "DATE", pa.date32()),
    ]
    rng = np.random.default_rng(11)
    names = _colliding_names()
    fields, columns, lines = [], {}, []
    for i, name in enumerate(names):
        data_type, java_type, arrow = types[i % len(types)]
        if java_type == "TINYINT":
            raw = rng.integers(-128, 127, 40).tolist()
        elif java_type in ("FLOAT", "DOUBLE"):
            raw = [float(x) for x in np.round(rng.normal(0, 1000, 40), 3)]
        else:
            raw = rng.integers(-(2**31), 2**31 - 1, 40).tolist()
        values: list[object] = [None if j % 9 == 4 else v for j, v in enumerate(raw)]
        fields.append(DataField(i, name, data_type))
        columns[name] = pa.array(values, arrow) if java_type != "DATE" else pa.array(values, pa.int32()).cast(pa.date32())
        text = ",".join("null" if v is None else (repr(float(v)) if isinstance(v, float) else str(v)) for v in values)
        lines.append(f"COL {name}\t{java_type}\t{text}")
    options = {
        "bucket": "-1",
        "file-index.bloom-filter.columns": ",".join(reversed(names)),
        "file-index.in-manifest-threshold": "1 mb",
        **{f"file-index.bloom-filter.{n}.items": str(50 + 10 * i) for i, n in enumerate(names)},
        "file-index.bloom-filter.v.fpp": "0.03",
    }
    lines = [f"OPT {k}\t{v}" for k, v in options.items()] + lines
    ours = DataFileIndexWriter(fields, FileIndexOptions(options))
    ours.write(pa.table(columns))
    run = subprocess.run(
        [java, str(JAVA_SOURCE)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert ours.to_bytes().hex() == run.stdout.strip()


# --- the bitmap index ---------------------------------------------------------------------------
def test_roaring_bitmaps_serialize_as_java_runoptimize_then_serialize() -> None:
    from pyroaring import BitMap

    from paimon_core.fileindex.bitmap.roaring_bitmap32 import serialize

    # RoaringBitmap's portable format, drawn by hand: cookie, keys/cardinalities, offsets, containers
    assert serialize(np.array([1, 2, 3])) == struct.pack("<iiHHi3H", 12346, 1, 0, 2, 16, 1, 2, 3)  # 2*3 > 2+4*1 is false: array
    assert serialize(np.array([1, 2, 3, 4])) == struct.pack("<iBHHHHH", 12347, 1, 0, 3, 1, 1, 3)  # a run (no offsets: < 4 containers)
    assert serialize(np.array([], dtype=np.int64)) == struct.pack("<ii", 12346, 0)
    rng = np.random.default_rng(3)
    for rows in (rng.choice(200_000, 9000, replace=False), np.arange(70_000), np.arange(0, 300_000, 2), np.array([5, 65_536, 131_072, 196_608, 262_144])):
        data = serialize(rows)
        assert sorted(BitMap.deserialize(data)) == sorted(set(rows.tolist()))


def test_bitmap_values_are_visited_in_java_hash_map_order(tmp_path: Path) -> None:
    """id2bitmap's order (which orders the bitmaps in the body) against the JVM's HashMap."""
    from paimon_core.fileindex.bitmap.bitmap_file_index import BitmapFileIndex

    java = shutil.which("java")
    assert java is not None, "the JDK is part of the test environment (Spark needs it)"
    rng = np.random.default_rng(5)
    cases: list[tuple[DataType, pa.Array, str]] = [
        (TinyIntType(), pa.array(rng.integers(-128, 127, 300), pa.int8()), "TINYINT"),
        (SmallIntType(), pa.array(rng.integers(-3000, 3000, 300), pa.int16()), "SMALLINT"),
        (IntType(), pa.array([None if i % 7 == 0 else int(x) for i, x in enumerate(rng.integers(-(2**31), 2**31 - 1, 300))], pa.int32()), "INT"),
        (DateType(), pa.array(rng.integers(19_000, 19_040, 300), pa.int32()).cast(pa.date32()), "INT"),
        (BigIntType(), pa.array(rng.integers(-(2**62), 2**62, 300), pa.int64()), "BIGINT"),
        (FloatType(), pa.array([-0.0, 0.0, float("nan"), *np.round(rng.normal(0, 50, 100), 1)], pa.float32()), "FLOAT"),
        (DoubleType(), pa.array([-0.0, 0.0, float("nan"), *rng.normal(0, 50, 100)], pa.float64()), "DOUBLE"),
        (VarCharType(100), pa.array([None, "", "ü", *(f"key-{int(x)}" * (1 + int(x) % 3) for x in rng.integers(0, 80, 300))]), "STRING"),
        (BooleanType(), pa.array([True, None, False, True]), "BOOLEAN"),
    ]
    lines, ours = [], []
    for data_type, values, java_type in cases:
        writer = BitmapFileIndex(data_type, {}).create_writer()
        half = len(values) // 2
        writer.write_array(values[:half])
        writer.write_array(values[half:])
        keys = writer.by_key.keys()  # type: ignore[attr-defined]
        kind = writer.kind  # type: ignore[attr-defined]
        ours.append(",".join(k.hex() if isinstance(k, bytes) else str(k).lower() for k in keys))
        as_keys = kind.keys_of(values).to_pylist()
        lines.append(java_type + "\t" + ",".join("null" if k is None else k.hex() if isinstance(k, bytes) else str(k).lower() for k in as_keys))
    run = subprocess.run(
        [java, str(JAVA_SOURCE.with_name("JavaBitmapKeyOrder.java"))],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ours


@pytest.mark.parametrize("version", ["1", "2"])
def test_bitmap_index_answers_exactly(version: str) -> None:
    from paimon_core.fileindex.bitmap.bitmap_file_index import BitmapFileIndex

    values = [None, "a", "b", "a", None, "c", "ü", "a", None, "d" * 300] * 40 + ["solo"]
    index = BitmapFileIndex(VarCharType(400), {"version": version, "index-block-size": "1kb"})
    writer = index.create_writer()
    writer.write_array(pa.array(values[:123]))
    writer.write_array(pa.array(values[123:]))
    data = writer.serialized_bytes()
    assert data[0] == int(version)
    reader = index.create_reader(data)
    rows = lambda pred: {i for i, v in enumerate(values) if pred(v)}  # noqa: E731
    for literal in ("a", "ü", "d" * 300, "solo", "zzz"):
        result = reader.visit("equal", [literal])
        assert set(result.bitmap) == rows(lambda v, x=literal: v == x)  # type: ignore[attr-defined]
        assert set(reader.visit("not_equal", [literal]).bitmap) == rows(lambda v, x=literal: v != x)  # type: ignore[attr-defined]
    assert set(reader.visit("in", ["b", "c"]).bitmap) == rows(lambda v: v in ("b", "c"))  # type: ignore[attr-defined]
    assert set(reader.visit("is_null", []).bitmap) == rows(lambda v: v is None)  # type: ignore[attr-defined]
    assert not reader.visit("equal", ["zzz"]).remain() and reader.visit("greater_than", ["a"]).remain()
