"""Fixed-bucket assignment, vectorized: Paimon's ``DefaultBucketFunction`` and ``ModBucketFunction``.

``bucket-function.type``: ``default`` is the hash below; ``mod`` (Paimon 1.2+) is
``Math.floorMod(key, num_buckets)`` of a single INT or BIGINT bucket key (a null key is 0, as
Java reads a null slot); ``hive`` is not supported (the table is refused where it is opened).

A row's bucket is ``abs(hash % num_buckets)`` (Java's truncating ``%``), where ``hash`` is
``MurmurHashUtils.hashBytesByWords`` (Murmur3-32 over 4-byte little-endian words, seed 42,
finalized with the byte length) of the BinaryRow (RowKind +I, no arity prefix) holding the
bucket-key values.

:func:`bucket_hashes` builds those BinaryRow bytes column by column with numpy, groups rows by
their total byte length, and runs Murmur3 over each group's 2-D ``uint32`` word matrix, so the
only Python loops are per column, per distinct row length and per word position.
:func:`scalar_bucket` is the one-row reference built on :func:`binary_row_bytes`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.data.binary_row import binary_row_bytes, null_bits_width
from paimon_core.exceptions import InvalidArgumentError, SchemaError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

__all__ = [
    "BUCKET_FUNCTIONS",
    "DEFAULT_SEED",
    "bucket_hashes",
    "check_bucket_function",
    "compute_buckets",
    "hash_bytes_by_words",
    "scalar_bucket",
]

#: The ``bucket-function.type`` values paimon_core assigns buckets by.
BUCKET_FUNCTIONS = ("default", "mod")

#: ``MurmurHashUtils.DEFAULT_SEED``.
DEFAULT_SEED = 42
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_CHUNK_ROWS = 1 << 16

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


# --------------------------------------------------------------------------------------------
# Murmur3
# --------------------------------------------------------------------------------------------


def hash_bytes_by_words(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """Pure-Python ``MurmurHashUtils.hashBytesByWords`` (signed int32); ``len(data) % 4 == 0``."""
    if len(data) % 4:
        raise InvalidArgumentError(f"hashBytesByWords needs a multiple of 4 bytes, got {len(data)}")
    h = seed & 0xFFFFFFFF
    for (k,) in struct.iter_unpack("<I", data):
        k = (k * _C1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * _C2) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    h = _fmix_int(h ^ len(data))
    return h - (1 << 32) if h >= 1 << 31 else h


def _fmix_int(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _murmur_words(words: U32, length: int) -> U32:
    """Murmur3 of each row of a (rows, length/4) word matrix; all rows are ``length`` bytes."""
    h = np.full(words.shape[0], DEFAULT_SEED, dtype=np.uint32)
    columns = np.ascontiguousarray(words.T)
    for k in columns:
        k = k * np.uint32(_C1)
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k = k * np.uint32(_C2)
        h ^= k
        h = (h << np.uint32(13)) | (h >> np.uint32(19))
        h = h * np.uint32(5) + np.uint32(0xE6546B64)
    h ^= np.uint32(length)
    h ^= h >> np.uint32(16)
    h = h * np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h = h * np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


# --------------------------------------------------------------------------------------------
# column encoding
# --------------------------------------------------------------------------------------------


@dataclass
class _Column:
    """One key column encoded for BinaryRow: slot words plus what goes to the variable part."""

    slots: U64  # slot value without the var-part offset
    nulls: Mask
    var_size: I64  # bytes reserved in the variable part (multiple of 8), per row
    needs_offset: Mask  # rows whose slot gets ``offset << 32`` added
    # variable-part content: either bytes copied out of a flat buffer ...
    var_data: U8 | None = None
    var_start: I64 | None = None
    var_len: I64 | None = None
    # ... or a fixed-width per-row matrix (DECIMAL > 18: 16 bytes, TIMESTAMP > 3: 8 bytes)
    var_matrix: U8 | None = None


def _flat(col: pa.Array | pa.ChunkedArray, t: DataType) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = pa.concat_arrays(col.chunks) if col.num_chunks else pa.array([], type=col.type)
    elif not isinstance(col, pa.Array):
        raise InvalidArgumentError(f"Bucket-key column of type {t} must be a pyarrow Array, got {type(col)}")
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def _cast(col: pa.Array, target: pa.DataType) -> pa.Array:
    if col.type.equals(target):
        return col
    try:
        return col.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise InvalidArgumentError(f"Cannot use a column of type {col.type} as {target}: {e}") from e


def _buffer_values(arr: pa.Array, dtype: type[np.generic]) -> npt.NDArray[np.generic]:
    """Zero-copy view of a fixed-width array's values (garbage where null)."""
    buf = arr.buffers()[1]
    if buf is None:
        return np.zeros(len(arr), dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + len(arr))[arr.offset :]


def _null_mask(arr: pa.Array) -> Mask:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=np.bool_)
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=np.bool_)


def _plain(slots: U64, nulls: Mask) -> _Column:
    n = len(slots)
    return _Column(
        slots=np.where(nulls, np.uint64(0), slots),
        nulls=nulls,
        var_size=np.zeros(n, dtype=np.int64),
        needs_offset=np.zeros(n, dtype=np.bool_),
    )


_FIXED_NUMPY: dict[type[DataType], tuple[type[np.generic], type[np.generic]]] = {
    TinyIntType: (np.int8, np.uint8),
    SmallIntType: (np.int16, np.uint16),
    IntType: (np.int32, np.uint32),
    DateType: (np.int32, np.uint32),
    TimeType: (np.int32, np.uint32),
    BigIntType: (np.int64, np.uint64),
    FloatType: (np.float32, np.uint32),
    DoubleType: (np.float64, np.uint64),
}


def _encode(col: pa.Array | pa.ChunkedArray, t: DataType) -> _Column:
    arr = _flat(col, t)
    if isinstance(t, (CharType, VarCharType, BinaryType, VarBinaryType)):
        return _encode_bytes(_cast(arr, pa.large_binary()))
    arr = _cast(arr, to_arrow_type(t))
    nulls = _null_mask(arr)
    fixed = _FIXED_NUMPY.get(type(t))
    if fixed is not None:
        values = _buffer_values(arr, fixed[0]).view(fixed[1]).astype(np.uint64)
        return _plain(values, nulls)
    if isinstance(t, BooleanType):
        values = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint64)
        return _plain(values, nulls)
    if isinstance(t, DecimalType):
        return _encode_decimal(arr, t, nulls)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return _encode_timestamp(arr, t, nulls)
    raise SchemaError(f"Type {t} cannot be a bucket key")


def _encode_decimal(arr: pa.Array, t: DecimalType, nulls: Mask) -> _Column:
    n = len(arr)
    buf = arr.buffers()[1]
    if n == 0 or buf is None:
        le = np.zeros((n, 16), dtype=np.uint8)
    else:  # 16-byte little-endian two's complement unscaled values
        le = np.frombuffer(buf, dtype=np.uint8, count=(arr.offset + n) * 16)[arr.offset * 16 :].reshape(n, 16)
    if t.is_compact:
        return _plain(np.ascontiguousarray(le[:, :8]).view(np.uint64).reshape(n), nulls)
    be = le[:, ::-1]
    sign_byte = np.where(be[:, 0] >= 0x80, np.uint8(0xFF), np.uint8(0))
    is_sign = be == sign_byte[:, None]
    leading = np.where(is_sign.all(axis=1), 16, np.argmin(is_sign, axis=1))
    leading = np.minimum(leading, 15)
    first = be[np.arange(n), leading]
    length = 16 - leading + ((first & 0x80) != (sign_byte & 0x80))
    src = (16 - length)[:, None] + np.arange(16)
    matrix = np.where(src < 16, np.take_along_axis(be, np.minimum(src, 15), axis=1), 0).astype(np.uint8)
    matrix[nulls] = 0
    slots = np.where(nulls, 0, length).astype(np.uint64)
    return _Column(
        slots=slots,
        nulls=nulls,
        var_size=np.full(n, 16, dtype=np.int64),
        needs_offset=np.ones(n, dtype=np.bool_),
        var_matrix=matrix,
    )


_UNIT_TO_MILLI = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}


def _encode_timestamp(arr: pa.Array, t: TimestampType | LocalZonedTimestampType, nulls: Mask) -> _Column:
    n = len(arr)
    values = np.where(nulls, 0, _buffer_values(arr, np.int64)).astype(np.int64)
    multiply, divide = _UNIT_TO_MILLI[arr.type.unit]
    millis = values * multiply if divide == 1 else np.floor_divide(values, divide)
    if t.is_compact:
        return _plain(millis.view(np.uint64), nulls)
    nano_of_milli = (values - millis * divide) * (1_000_000 // divide)
    matrix = np.ascontiguousarray(millis.astype("<i8")).view(np.uint8).reshape(n, 8).copy()
    matrix[nulls] = 0
    return _Column(
        slots=np.where(nulls, 0, nano_of_milli).astype(np.uint64),
        nulls=nulls,
        var_size=np.full(n, 8, dtype=np.int64),
        needs_offset=np.ones(n, dtype=np.bool_),
        var_matrix=matrix,
    )


def _ranges(starts: I64, lengths: I64) -> tuple[I64, I64]:
    """For ranges [start, start+len): (row of each element, position within its range)."""
    total = int(lengths.sum())
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths
    within = np.arange(total, dtype=np.int64) - np.repeat(first, lengths)
    return rows, within


def _encode_bytes(arr: pa.Array) -> _Column:
    n = len(arr)
    nulls = _null_mask(arr)
    offsets_buf, data_buf = arr.buffers()[1], arr.buffers()[2]
    if offsets_buf is None or n == 0:
        offsets = np.zeros(n + 1, dtype=np.int64)
    else:
        offsets = np.frombuffer(offsets_buf, dtype=np.int64, count=arr.offset + n + 1)[arr.offset :]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    starts = offsets[:-1].astype(np.int64)
    lengths = np.where(nulls, 0, offsets[1:] - offsets[:-1]).astype(np.int64)
    inline = (lengths <= 7) & ~nulls
    # inline values: bytes at the slot start, 0x80 | len in the slot's last byte
    inline_bytes = np.zeros((n, 8), dtype=np.uint8)
    inline_rows = np.nonzero(inline)[0]
    rows, within = _ranges(starts[inline_rows], lengths[inline_rows])
    target_rows = inline_rows[rows]
    inline_bytes[target_rows, within] = data[starts[target_rows] + within]
    inline_bytes[inline_rows, 7] = (0x80 | lengths[inline_rows]).astype(np.uint8)
    slots = inline_bytes.view(np.uint64).reshape(n)
    long_values = ~inline & ~nulls
    slots = np.where(long_values, lengths.astype(np.uint64), slots)
    var_len = np.where(long_values, lengths, 0)
    return _Column(
        slots=np.where(nulls, np.uint64(0), slots),
        nulls=nulls,
        var_size=(var_len + 7) & ~7,
        needs_offset=long_values,
        var_data=data,
        var_start=starts,
        var_len=var_len,
    )


# --------------------------------------------------------------------------------------------
# row assembly and hashing
# --------------------------------------------------------------------------------------------


def _hash_chunk(encoded: Sequence[_Column], n: int) -> npt.NDArray[np.int32]:
    arity = len(encoded)
    header = null_bits_width(arity)
    fixed_size = header + 8 * arity
    offsets = np.empty((arity, n), dtype=np.int64)  # var-part offset of each column, per row
    running = np.full(n, fixed_size, dtype=np.int64)
    slots = np.empty((n, arity), dtype=np.uint64)
    for j, c in enumerate(encoded):
        offsets[j] = running
        slots[:, j] = np.where(
            c.needs_offset, c.slots | (running.astype(np.uint64) << np.uint64(32)), c.slots
        )
        running = running + c.var_size
    row_length = running
    slot_bytes = slots.astype("<u8").view(np.uint8).reshape(n, arity * 8)
    out = np.empty(n, dtype=np.uint32)
    for length in np.unique(row_length):
        length = int(length)
        idx = np.nonzero(row_length == length)[0]
        m = len(idx)
        rows = np.zeros((m, length), dtype=np.uint8)
        rows[:, header:fixed_size] = slot_bytes[idx]
        flat = rows.reshape(m * length)
        base = np.arange(m, dtype=np.int64) * length
        for j, c in enumerate(encoded):
            bit = j + 8
            rows[:, bit // 8] |= (c.nulls[idx].astype(np.uint8) << np.uint8(bit % 8)).astype(np.uint8)
            dest = base + offsets[j][idx]
            if c.var_matrix is not None:
                width = c.var_matrix.shape[1]
                flat[dest[:, None] + np.arange(width)] = c.var_matrix[idx]
            elif c.var_data is not None and c.var_len is not None and c.var_start is not None:
                lens = c.var_len[idx]
                if not lens.any():
                    continue
                r, within = _ranges(c.var_start[idx], lens)
                flat[dest[r] + within] = c.var_data[c.var_start[idx][r] + within]
        out[idx] = _murmur_words(rows.view("<u4"), length)
    return out.view(np.int32)


def bucket_hashes(
    columns: Sequence[pa.Array | pa.ChunkedArray], types: Sequence[DataType]
) -> npt.NDArray[np.int32]:
    """Java's ``BinaryRow.hashCode()`` of the key row of every row (int32 array).

    ``columns`` are the key columns (any Arrow representation castable to the Paimon type;
    strings may be string/large_string/string_view, dictionaries are decoded).
    """
    if len(columns) != len(types):
        raise InvalidArgumentError(f"{len(columns)} columns given for {len(types)} types")
    if not types:
        raise InvalidArgumentError("At least one bucket-key column is required")
    flats = [_flat(c, t) for c, t in zip(columns, types, strict=True)]
    n = len(flats[0])
    if any(len(f) != n for f in flats):
        raise InvalidArgumentError(f"Key columns differ in length: {[len(f) for f in flats]}")
    out = np.empty(n, dtype=np.int32)
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        encoded = [_encode(f.slice(start, stop - start), t) for f, t in zip(flats, types, strict=True)]
        out[start:stop] = _hash_chunk(encoded, stop - start)
    return out


def _check_num_buckets(num_buckets: int) -> None:
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or num_buckets <= 0:
        raise InvalidArgumentError(f"num_buckets must be a positive int, got {num_buckets!r}")


def check_bucket_function(function: str, types: Sequence[DataType]) -> str:
    """``function`` normalised, after Java's checks of it against the bucket key's ``types``
    (``ModBucketFunction``: exactly one INT or BIGINT field); an error names the problem."""
    name = str(function).strip().lower()
    if name not in BUCKET_FUNCTIONS:
        raise InvalidArgumentError(
            f"bucket-function.type {function!r} is not supported; supported: {', '.join(BUCKET_FUNCTIONS)}",
            argument="bucket-function.type",
        )
    if name == "mod":
        if len(types) != 1:
            raise InvalidArgumentError(
                "bucket key must have exactly one field in mod bucket function",
                argument="bucket-key",
            )
        if not isinstance(types[0], IntType | BigIntType):
            raise InvalidArgumentError(
                f"bucket key type must be INT or BIGINT in mod bucket function, but got {types[0]}",
                argument="bucket-key",
            )
    return name


def _mod_buckets(column: pa.Array | pa.ChunkedArray, t: DataType, num_buckets: int) -> npt.NDArray[np.int32]:
    target = pa.int32() if isinstance(t, IntType) else pa.int64()
    arr = _cast(_flat(column, t), target).fill_null(0)  # a null slot reads as 0 in Java
    values = arr.to_numpy(zero_copy_only=False).astype(np.int64)
    return np.mod(values, num_buckets).astype(np.int32)  # numpy's % on ints is Math.floorMod


def compute_buckets(
    columns: Sequence[pa.Array | pa.ChunkedArray],
    types: Sequence[DataType],
    num_buckets: int,
    *,
    function: str = "default",
) -> npt.NDArray[np.int32]:
    """Bucket of every row: ``abs(hash % num_buckets)`` with Java's truncating ``%`` (``default``),
    or ``floorMod(key, num_buckets)`` (``mod``)."""
    _check_num_buckets(num_buckets)
    if check_bucket_function(function, types) == "mod":
        if len(columns) != 1:
            raise InvalidArgumentError(f"{len(columns)} columns given for {len(types)} types")
        return _mod_buckets(columns[0], types[0], num_buckets)
    hashes = bucket_hashes(columns, types).astype(np.int64)
    # abs(h % n) with Java's truncating % equals abs(h) mod n
    return (np.abs(hashes) % num_buckets).astype(np.int32)


def scalar_bucket(
    values: Sequence[object | None], types: Sequence[DataType], num_buckets: int, *, function: str = "default"
) -> int:
    """Reference bucket of one key row (internal values), via :func:`binary_row_bytes` + Murmur3
    (``default``) or ``floorMod`` (``mod``)."""
    _check_num_buckets(num_buckets)
    if check_bucket_function(function, types) == "mod":
        if len(values) != 1:
            raise InvalidArgumentError(f"{len(values)} values given for {len(types)} types")
        v = values[0]
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise InvalidArgumentError(f"mod bucket function needs an integer key, got {v!r}")
        return (0 if v is None else int(v)) % num_buckets  # Python's % on ints is Math.floorMod
    data = binary_row_bytes(values, types)
    try:
        import mmh3  # optional; BinaryRow bytes are 8-byte aligned, so plain Murmur3-32 agrees
    except ImportError:  # pragma: no cover - depends on the environment
        h = hash_bytes_by_words(data)
    else:
        h = int(mmh3.hash(data, DEFAULT_SEED, signed=True))
    return abs(h) % num_buckets
