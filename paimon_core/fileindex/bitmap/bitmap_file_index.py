"""The bitmap file index (Java's ``BitmapFileIndex``, ``BitmapFileIndexMeta`` (V1) and
``BitmapFileIndexMetaV2``, the default).

Per distinct value of the column, the bitmap of the rows holding it; nulls have their own. A value
on one row only is stored inline as ``-1 - row`` (no bitmap). V2 layout (big-endian)::

    version (1 byte) = 2 | row count (int) | non-null value count (int) | has null (1 byte)
    [null offset (int) | null bitmap length (int)]   when there are nulls
    block count (int) | per block: its first value, its offset (int) | body offset (int)
    per block: entry count (int) | per entry: value, offset (int), length (int)
    body: the null bitmap (when it has more than one row), then the values' bitmaps

Entries are sorted by value and cut into blocks of ``index-block-size`` (16 kb). The bitmaps are
in the body in the order Java's ``HashMap`` of values visits them (values hash as Java's
``Integer``, ``Long``, ``Float``, ``BinaryString`` ... do; each first met is linked at the head of
its bin by ``computeIfAbsent``), each serialized as Java's ``RoaringBitmap32`` (run-optimized).
Values: strings as UTF-8 (``int`` length + bytes), TINYINT/SMALLINT/INT/BIGINT/DATE/TIME as their
Java integers, FLOAT/DOUBLE as their IEEE bits, BOOLEAN as a byte, a timestamp as its epoch
millis (precision <= 3) or micros.

Readers answer ``=``, ``<>``, ``IN``, ``NOT IN``, ``IS NULL``, ``IS NOT NULL`` with row bitmaps.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_core.exceptions import CorruptFileError, InvalidOptionError
from paimon_core.fileindex.bitmap import roaring_bitmap32
from paimon_core.fileindex.bloomfilter.fast_hash import DOUBLE_NAN_BITS, FLOAT_NAN_BITS
from paimon_core.fileindex.file_index_result import REMAIN, BitmapIndexResult, FileIndexResult
from paimon_core.fileindex.file_indexer import FileIndexer, FileIndexReader, FileIndexWriter
from paimon_core.fileindex.java_compat import JavaHashMap, to_int32
from paimon_core.options import parse_memory_size
from paimon_core.schema.data_types import DataType, LocalZonedTimestampType, TimestampType

__all__ = ["BitmapFileIndex", "binary_string_hash"]

VERSION_1 = 1
VERSION_2 = 2
DEFAULT_BLOCK_SIZE = "16kb"
_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
M32 = 0xFFFFFFFF


# --- Java's hashCode of the keys ------------------------------------------------------------
def _rotl(x: int, n: int) -> int:
    return ((x << n) | (x >> (32 - n))) & M32


def _mix_k1(k: int) -> int:
    k = (k * 0xCC9E2D51) & M32
    return (_rotl(k, 15) * 0x1B873593) & M32


def _mix_h1(h: int, k: int) -> int:
    h = _rotl(h ^ k, 13)
    return (h * 5 + 0xE6546B64) & M32


def binary_string_hash(data: bytes) -> int:
    """``BinaryString.hashCode``: Paimon's ``MurmurHashUtils.hashBytes`` (seed 42; 4-byte words
    in the machine's little-endian order, then each remaining byte as a signed int)."""
    h = 42
    aligned = len(data) - len(data) % 4
    for (word,) in struct.iter_unpack("<I", data[:aligned]):
        h = _mix_h1(h, _mix_k1(word))
    for b in data[aligned:]:
        h = _mix_h1(h, _mix_k1((b - 256 if b > 127 else b) & M32))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return to_int32(h)


class _Kind:
    """How one column type's values are keyed, hashed, compared and written (Java's
    ``BitmapTypeVisitor`` mappers: ``getValueMapper``, ``hashCode``, ``getComparator``,
    ``getValueWriter`` / ``getValueReader``, ``getSerializeSizeMeasure``)."""

    def __init__(self, data_type: DataType) -> None:
        root = data_type.type_root
        self.root = root
        self.precision = (
            data_type.precision if isinstance(data_type, (TimestampType, LocalZonedTimestampType)) else None
        )
        if root in ("CHAR", "VARCHAR"):
            self.fmt = ""
        elif root == "BOOLEAN":
            self.fmt = ">?"
        elif root == "TINYINT":
            self.fmt = ">b"
        elif root == "SMALLINT":
            self.fmt = ">h"
        elif root in ("INT", "DATE", "TIME"):
            self.fmt = ">i"
        elif root in ("BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ"):
            self.fmt = ">q"
        elif root == "FLOAT":
            self.fmt = ">i"  # the key is floatToIntBits
        elif root == "DOUBLE":
            self.fmt = ">q"  # the key is doubleToLongBits
        else:
            raise InvalidOptionError(f"bitmap index does not support type {data_type}")

    # keys: str -> bytes, floats -> their Java bits, the rest -> int / bool
    def java_hash(self, key: Any) -> int:
        if self.root in ("CHAR", "VARCHAR"):
            return binary_string_hash(key)
        if self.root == "BOOLEAN":
            return 1231 if key else 1237
        if self.fmt == ">q":  # Long.hashCode / Double.hashCode (of the bits)
            return to_int32(key ^ ((key & 0xFFFFFFFFFFFFFFFF) >> 32))
        return to_int32(key)  # Byte, Short, Integer, Float (its bits)

    def sort_key(self, key: Any) -> Any:
        if self.root == "FLOAT":
            v = struct.unpack(">f", struct.pack(">i", key))[0]
            return (math.isnan(v), 0.0 if math.isnan(v) else v, key)  # Float.compare
        if self.root == "DOUBLE":
            v = struct.unpack(">d", struct.pack(">q", key))[0]
            return (math.isnan(v), 0.0 if math.isnan(v) else v, key)
        return key  # bytes compare unsigned as BinaryString does; ints and bools naturally

    def size(self, key: Any) -> int:
        return 4 + len(key) if not self.fmt else struct.calcsize(self.fmt)

    def write(self, key: Any) -> bytes:
        if not self.fmt:
            return struct.pack(">i", len(key)) + key
        return struct.pack(self.fmt, key)

    def read(self, data: bytes, pos: int) -> tuple[Any, int]:
        if not self.fmt:
            (n,) = struct.unpack_from(">i", data, pos)
            return bytes(data[pos + 4 : pos + 4 + n]), pos + 4 + n
        (key,) = struct.unpack_from(self.fmt, data, pos)
        return key, pos + struct.calcsize(self.fmt)

    def keys_of_literal(self, literal: Any) -> list[Any] | None:
        """The keys a literal (internal value) equals; None: undecidable (keep the file)."""
        if literal is None:
            return None
        root = self.root
        if root in ("CHAR", "VARCHAR"):
            return [str(literal).encode("utf-8", errors="surrogatepass")]
        if root == "BOOLEAN":
            return [bool(literal)]
        if root in ("FLOAT", "DOUBLE"):
            v = float(literal)
            if math.isnan(v):
                return None
            pack, unpack = (">f", ">i") if root == "FLOAT" else (">d", ">q")
            bits = [struct.unpack(unpack, struct.pack(pack, v))[0]]
            if v == 0.0:  # 0.0 and -0.0 are equal in comparisons, not in bits
                bits = [struct.unpack(unpack, struct.pack(pack, x))[0] for x in (0.0, -0.0)]
            return bits
        if self.precision is not None:
            return [int(literal) // (1_000_000 if self.precision <= 3 else 1_000)]
        return [int(literal)]

    def keys_of(self, values: pa.Array) -> pa.Array:
        """The column's values as keys (an Arrow array of the key type, nulls kept)."""
        root = self.root
        if root in ("CHAR", "VARCHAR"):
            return values.cast(pa.large_binary() if pa.types.is_large_string(values.type) else pa.binary())
        if root in ("FLOAT", "DOUBLE"):
            np_type, bits_type, nan = (
                (np.float32, np.int32, FLOAT_NAN_BITS)
                if root == "FLOAT"
                else (np.float64, np.int64, DOUBLE_NAN_BITS)
            )
            floats = values.fill_null(0).to_numpy(zero_copy_only=False).astype(np_type)
            bits = floats.view(bits_type).astype(np.int64)
            bits[np.isnan(floats)] = nan
            return pa.array(bits, pa.int64(), mask=values.is_null().to_numpy(zero_copy_only=False))
        if self.precision is not None and pa.types.is_timestamp(values.type):
            raw = values.cast(pa.int64())
            per_second = _UNIT_PER_SECOND[values.type.unit]
            target = 1_000 if self.precision <= 3 else 1_000_000
            if per_second <= target:
                return pc.multiply(raw, target // per_second)
            return pa.array(
                np.floor_divide(raw.fill_null(0).to_numpy(zero_copy_only=False), per_second // target),
                pa.int64(),
                mask=raw.is_null().to_numpy(zero_copy_only=False),
            )
        if pa.types.is_date32(values.type) or pa.types.is_time32(values.type):
            return values.cast(pa.int32())
        return values


class BitmapFileIndex(FileIndexer):
    """A bitmap index over one column's values in one data file."""

    def __init__(self, data_type: DataType, options: Mapping[str, str]) -> None:
        self.data_type = data_type
        self.kind = _Kind(data_type)
        raw = options.get("version", str(VERSION_2)).strip()
        if raw not in (str(VERSION_1), str(VERSION_2)):
            raise InvalidOptionError(
                f"Bitmap index option 'version' = '{raw}' is invalid: 1 or 2", key="version"
            )
        self.version = int(raw)
        self.block_size = parse_memory_size(
            options.get("index-block-size", DEFAULT_BLOCK_SIZE), key="index-block-size"
        )

    def create_writer(self) -> FileIndexWriter:
        return _Writer(self)

    def create_reader(self, data: bytes) -> FileIndexReader:
        return _Reader(self.kind, data)


class _Writer(FileIndexWriter):
    def __init__(self, index: BitmapFileIndex) -> None:
        super().__init__()
        self.index = index
        self.kind = index.kind
        self.rows = 0
        self.nulls: list[np.ndarray] = []
        self.by_key: JavaHashMap[Any, list[np.ndarray]] = JavaHashMap(self.kind.java_hash)

    def write(self, values: pa.Array | pa.ChunkedArray) -> None:
        arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        base = self.rows
        self.rows += len(arr)
        keys = self.kind.keys_of(arr)
        if keys.null_count:
            self.nulls.append(np.flatnonzero(keys.is_null().to_numpy(zero_copy_only=False)) + base)
        encoded = keys.dictionary_encode()  # the dictionary in first-met order, as Java meets them
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        valid = ~encoded.indices.is_null().to_numpy(zero_copy_only=False)
        positions = np.flatnonzero(valid)
        codes = indices[valid].astype(np.int64)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
        for j, key in enumerate(encoded.dictionary.to_pylist()):
            rows = positions[order[bounds[j] : bounds[j + 1]]] + base
            self.by_key.compute_if_absent(key, list).append(rows)

    def serialized_bytes(self) -> bytes:
        kind = self.kind
        null_rows = np.concatenate(self.nulls) if self.nulls else np.empty(0, np.int64)
        null_bytes = roaring_bitmap32.serialize(null_rows)
        offsets: list[tuple[Any, int]] = []
        bodies: list[bytes] = []
        offset = 0 if len(null_rows) <= 1 else len(null_bytes)
        for key, parts in self.by_key.items():
            rows = np.concatenate(parts)
            if len(rows) == 1:
                offsets.append((key, -1 - int(rows[0])))
            else:
                data = roaring_bitmap32.serialize(rows)
                offsets.append((key, offset))
                bodies.append(data)
                offset += len(data)
        null_offset = -1 - int(null_rows[0]) if len(null_rows) == 1 else 0
        out = bytearray(struct.pack(">b", self.index.version))
        out += struct.pack(">ii?", self.rows, len(offsets), len(null_rows) > 0)
        if self.index.version == VERSION_1:
            if len(null_rows):
                out += struct.pack(">i", null_offset)
            for key, off in offsets:
                out += kind.write(key) + struct.pack(">i", off)
        else:
            out += self._meta_v2(offsets, null_rows, null_offset, len(null_bytes), offset)
        if len(null_rows) > 1:
            out += null_bytes
        for data in bodies:
            out += data
        return bytes(out)

    def _meta_v2(
        self,
        offsets: Sequence[tuple[Any, int]],
        null_rows: np.ndarray,
        null_offset: int,
        null_length: int,
        final: int,
    ) -> bytes:
        kind = self.kind
        lengths: dict[Any, int] = {}
        last_key: Any = None
        last_offset = null_offset
        for key, off in offsets:
            if off >= 0:
                if last_offset >= 0:
                    lengths[last_key] = off - last_offset
                last_key, last_offset = key, off
        lengths[last_key] = final - last_offset
        out = bytearray()
        if len(null_rows):
            out += struct.pack(">ii", null_offset, null_length)
        entries = sorted(((k, o, lengths.get(k, -1)) for k, o in offsets), key=lambda e: kind.sort_key(e[0]))
        # Java's BitmapIndexBlock.tryAdd: [first key, offset, entries, bytes]; a block takes its
        # key from the first entry offered, even one that does not fit
        blocks: list[list[Any]] = [[None, 0, [], 4]] if entries else []

        def try_add(block: list[Any], entry: tuple[Any, int, int]) -> bool:
            if block[0] is None:
                block[0] = entry[0]
            entry_bytes = 8 + kind.size(entry[0])
            if block[3] + entry_bytes > self.index.block_size:
                return False
            block[2].append(entry)
            block[3] += entry_bytes
            return True

        for entry in entries:
            if not try_add(blocks[-1], entry):
                blocks.append([None, blocks[-1][1] + blocks[-1][3], [], 4])
                if not try_add(blocks[-1], entry):
                    raise InvalidOptionError(
                        "bitmap index-block-size is smaller than one of its entries (Java: index fail)",
                        key="index-block-size",
                    )
        out += struct.pack(">i", len(blocks))
        body_offset = 0
        for key, off, _, size in blocks:
            out += kind.write(key) + struct.pack(">i", off)
            body_offset += size
        out += struct.pack(">i", body_offset)
        for _, _, items, _ in blocks:
            out += struct.pack(">i", len(items))
            for key, off, length in items:
                out += kind.write(key) + struct.pack(">ii", off, length)
        return bytes(out)


class _Reader(FileIndexReader):
    """Reads the whole index (V1 or V2) and answers with row bitmaps."""

    def __init__(self, kind: _Kind, data: bytes) -> None:
        self.kind = kind
        self.data = data
        try:
            self._parse()
        except (struct.error, IndexError, ValueError) as e:
            raise CorruptFileError(f"Cannot read a bitmap index: {e}") from e

    def _parse(self) -> None:
        data, kind = self.data, self.kind
        version = data[0]
        if version not in (VERSION_1, VERSION_2):
            raise CorruptFileError(f"bitmap index version {version} is not supported (1, 2)")
        self.row_count, count, has_null = struct.unpack_from(">ii?", data, 1)
        pos = 10
        self.entries: dict[Any, tuple[int, int]] = {}  # key -> (offset, length or -1)
        self.null_entry: tuple[int, int] | None = None
        if version == VERSION_1:
            null_offset = 0
            if has_null:
                (null_offset,) = struct.unpack_from(">i", data, pos)
                pos += 4
            ordered: list[tuple[Any, int]] = []
            for _ in range(count):
                key, pos = kind.read(data, pos)
                (off,) = struct.unpack_from(">i", data, pos)
                pos += 4
                ordered.append((key, off))
            self.body = pos
            starts = sorted(
                [o for _, o in ordered if o >= 0] + ([null_offset] if has_null and null_offset >= 0 else [])
            )
            ends = dict(zip(starts, [*starts[1:], len(data) - pos], strict=True))
            self.entries = {k: (o, ends[o] - o if o >= 0 else -1) for k, o in ordered}
            if has_null:
                self.null_entry = (null_offset, ends[null_offset] - null_offset if null_offset >= 0 else -1)
            return
        if has_null:
            null_offset, null_length = struct.unpack_from(">ii", data, pos)
            pos += 8
            self.null_entry = (null_offset, null_length)
        (blocks,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(blocks):
            _, pos = kind.read(data, pos)
            pos += 4
        (body_offset,) = struct.unpack_from(">i", data, pos)
        pos += 4
        self.body = pos + body_offset
        for _ in range(blocks):
            (n,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(n):
                key, pos = kind.read(data, pos)
                off, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                self.entries[key] = (off, length)

    def _bitmap(self, entry: tuple[int, int] | None) -> BitMap:
        if entry is None:
            return BitMap()
        off, length = entry
        if off < 0:
            return BitMap([-1 - off])
        start = self.body + off
        end = start + length if length >= 0 else len(self.data)
        return roaring_bitmap32.deserialize(self.data[start:end])

    def _equal(self, literal: Any) -> BitMap | None:
        keys = self.kind.keys_of_literal(literal)
        if keys is None:
            return None
        out = BitMap()
        for key in keys:
            out |= self._bitmap(self.entries.get(key))
        return out

    def _all(self) -> BitMap:
        return BitMap(range(self.row_count))

    def visit(self, function: str, literals: Sequence[Any]) -> FileIndexResult:
        if function in ("equal", "in", "not_equal", "not_in"):
            found = BitMap()
            for literal in literals:
                one = self._equal(literal)
                if one is None:
                    return REMAIN
                found |= one
            if function in ("not_equal", "not_in"):  # Java flips over all rows (nulls included)
                found = self._all() - found
            return BitmapIndexResult(found)
        if function in ("is_null", "is_not_null"):
            nulls = self._bitmap(self.null_entry)
            return BitmapIndexResult(nulls if function == "is_null" else self._all() - nulls)
        return REMAIN
