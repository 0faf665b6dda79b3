"""Column → fixed-width byte/long matrices, vectorized: the per-type conversions shared by the
z-order and Hilbert indexers (Java ``ZOrderByteUtils`` and ``ConvertBinaryUtil``).

Every function takes one Arrow column (any chunking) and returns a numpy array with one row per
value; nulls are left to the caller (``valid`` masks).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgumentError

__all__ = [
    "as_array",
    "big_endian_bytes",
    "decimal_unscaled_bytes",
    "double_bits",
    "epoch_millis",
    "fixed_prefix",
    "integer_values",
    "valid_mask",
]

_CANONICAL_NAN = np.int64(0x7FF8000000000000)


def as_array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array (chunks concatenated)."""
    if isinstance(column, pa.ChunkedArray):
        return pa.concat_arrays(column.chunks) if column.num_chunks != 1 else column.chunk(0)
    return column


def valid_mask(column: pa.Array) -> np.ndarray:
    """True where the value is not null."""
    if column.null_count == 0:
        return np.ones(len(column), dtype=bool)
    return np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=bool)


def integer_values(column: pa.Array) -> np.ndarray:
    """The values of an integer/date/time column as int64 (nulls as 0)."""
    t = column.type
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        column = column.view(pa.int32())
    elif pa.types.is_date64(t) or pa.types.is_time64(t):
        column = column.view(pa.int64())
    return np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False)).astype(np.int64)


def epoch_millis(column: pa.Array) -> np.ndarray:
    """Java ``Timestamp.getMillisecond()``: epoch millis, floored (nulls as 0)."""
    unit = column.type.unit
    raw = np.asarray(column.view(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)).astype(np.int64)
    if unit == "s":
        return raw * 1000
    if unit == "ms":
        return raw
    if unit == "us":
        return np.floor_divide(raw, 1000)
    return np.floor_divide(raw, 1_000_000)


def double_bits(column: pa.Array) -> np.ndarray:
    """Java ``Double.doubleToLongBits((double) v)`` (NaN canonical; nulls as the bits of 0.0)."""
    values = np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False)).astype(np.float64)
    bits = values.view(np.int64).copy()
    bits[np.isnan(values)] = _CANONICAL_NAN
    return bits


def big_endian_bytes(values: np.ndarray) -> np.ndarray:
    """int64/uint64 values → (n, 8) uint8, big-endian (Java ``ByteBuffer.putLong``)."""
    return values.astype(">u8").view(np.uint8).reshape(-1, 8)


def fixed_prefix(column: pa.Array, length: int, *, align: str) -> np.ndarray:
    """The first ``length`` bytes of each string/binary value as (n, length) uint8; shorter values
    are padded with zeros on the right (``align='left'``, Java ``byteTruncateOrFill``) or on the
    left (``align='right'``, Java ``ConvertBinaryUtil.paddingToNByte``). Nulls: zeros."""
    n = len(column)
    out = np.zeros((n, length), dtype=np.uint8)
    if n == 0 or length == 0:
        return out
    t = column.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)):  # fmt: skip
        raise InvalidArgumentError(f"expected a string or binary column, got {t}")
    binary = column.cast(pa.large_binary())
    offsets_buf, data_buf = binary.buffers()[1], binary.buffers()[2]
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[binary.offset : binary.offset + n + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    lengths = np.minimum(offsets[1:] - starts, length)
    lengths[~valid_mask(binary)] = 0
    cols = np.arange(length, dtype=np.int64)
    take = cols[None, :] < lengths[:, None]
    if align == "left":
        src = starts[:, None] + cols[None, :]
        dst_mask = take
    else:  # right-aligned: value bytes end at the last column
        shift = (length - lengths)[:, None]
        src = starts[:, None] + cols[None, :] - shift
        dst_mask = cols[None, :] >= shift
    if len(data):
        src = np.clip(src, 0, len(data) - 1)
        out[dst_mask] = data[src[dst_mask]]
    return out


def decimal_unscaled_bytes(column: pa.Array) -> np.ndarray:
    """Java ``Decimal.toUnscaledBytes()`` (``BigInteger.toByteArray``: big-endian two's complement,
    minimal length): a (n, 17) uint8 array, the bytes left-aligned in columns 0..15 (zeros after
    them) and their count (1..16) in column 16. Nulls: the bytes of 0."""
    n = len(column)
    if not pa.types.is_decimal128(column.type):
        raise InvalidArgumentError(f"expected a DECIMAL column (decimal128), got {column.type}")
    filled = column.fill_null(pa.scalar(0, column.type)) if column.null_count else column
    buf = filled.buffers()[1]
    le = np.frombuffer(buf, dtype=np.uint8)[filled.offset * 16 : (filled.offset + n) * 16].reshape(n, 16)
    be = le[:, ::-1]
    negative = be[:, 0] >= 0x80
    sign = np.where(negative, 0xFF, 0x00).astype(np.uint8)
    # byte i (0..14) can be dropped while it and every byte before it is a sign byte and the next
    # byte's top bit agrees with the sign
    is_sign = be[:, :15] == sign[:, None]
    next_top = (be[:, 1:16] >= 0x80) == negative[:, None]
    droppable = np.cumprod(is_sign & next_top, axis=1).astype(bool)
    drop = droppable.sum(axis=1)
    out = np.zeros((n, 17), dtype=np.uint8)
    cols = np.arange(16)
    src = np.clip(drop[:, None] + cols[None, :], 0, 15)
    keep = cols[None, :] < (16 - drop)[:, None]
    gathered = np.take_along_axis(be, src, axis=1)
    out[:, :16] = np.where(keep, gathered, 0)
    out[:, 16] = (16 - drop).astype(np.uint8)
    return out
