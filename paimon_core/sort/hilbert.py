"""Hilbert keys, vectorized (Java ``HilbertIndexer``, paimon-common, over David Moten's
``HilbertCurve.bits(63)``).

Each order column becomes a long, as Java converts it:

* SMALLINT/INT/BIGINT, DATE, TIME: the signed value; TINYINT: its unsigned byte (``-1`` → 255,
  ``ConvertBinaryUtil.convertBytesToLong(new byte[] {b})``);
* BOOLEAN: 1 / 0; TIMESTAMP / TIMESTAMP_LTZ: epoch millis;
* FLOAT/DOUBLE: ``Double.doubleToLongBits``; DECIMAL: ``toBigDecimal().longValue()`` (integer
  part, low 64 bits);
* CHAR/VARCHAR (UTF-8) and BINARY/VARBINARY: the first 8 bytes, a shorter value right-aligned
  (left-padded with zeros) and read big-endian;
* null: ``Long.MAX_VALUE``.

The curve has 63 bits per dimension, so bit 63 (the sign) is ignored, as in Java. The index
(Skilling's transform, then the transposed bits interleaved high to low) is the key, as
``63 * n / 8 + 1`` big-endian bytes (Java pads ``BigInteger.toByteArray()`` on the left to that
width, so byte order equals index order). Hilbert needs at least two columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
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
from paimon_core.sort.byte_columns import (
    as_array,
    double_bits,
    epoch_millis,
    fixed_prefix,
    integer_values,
    valid_mask,
)

__all__ = ["BITS", "HilbertIndexer", "hilbert_column_longs", "hilbert_index_bytes"]

BITS = 63
NULL_LONG = np.int64(0x7FFFFFFFFFFFFFFF)
_SUPPORTED = (TinyIntType, SmallIntType, IntType, BigIntType, DateType, TimeType, BooleanType, TimestampType,
              LocalZonedTimestampType, FloatType, DoubleType, DecimalType, CharType, VarCharType, BinaryType,
              VarBinaryType)  # fmt: skip
_CHUNK_ROWS = 1 << 17


def hilbert_column_longs(column: pa.Array | pa.ChunkedArray, data_type: DataType) -> np.ndarray:
    """The long one column contributes per row (see the module docstring), int64."""
    arr = as_array(column)
    valid = valid_mask(arr)
    if isinstance(data_type, TinyIntType):
        out = integer_values(arr).astype(np.int8).view(np.uint8).astype(np.int64)
    elif isinstance(data_type, (SmallIntType, IntType, BigIntType, DateType, TimeType)):
        out = integer_values(arr)
    elif isinstance(data_type, BooleanType):
        out = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool).astype(np.int64)
    elif isinstance(data_type, (TimestampType, LocalZonedTimestampType)):
        out = epoch_millis(arr)
    elif isinstance(data_type, (FloatType, DoubleType)):
        out = double_bits(arr)
    elif isinstance(data_type, DecimalType):
        whole = pc.cast(arr, options=pc.CastOptions(pa.decimal128(38, 0), allow_decimal_truncate=True))
        filled = whole.fill_null(pa.scalar(0, whole.type)) if whole.null_count else whole
        raw = np.frombuffer(filled.buffers()[1], dtype=np.int64)
        out = raw[2 * filled.offset : 2 * (filled.offset + len(filled)) : 2].copy()  # low 64 bits (little-endian)
    elif isinstance(data_type, (CharType, VarCharType, BinaryType, VarBinaryType)):
        out = np.ascontiguousarray(fixed_prefix(arr, 8, align="right")).view(">u8").reshape(-1).astype(np.int64)
    else:
        raise InvalidArgumentError(f"Type {data_type} cannot be used in a hilbert sort")
    out = np.array(out, dtype=np.int64)
    out[~valid] = NULL_LONG
    return out


def _transpose(points: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Skilling's AxestoTranspose on uint64 columns (Moten's ``transposedIndex(63, ...)``),
    branch-free: ``m`` is all ones where bit q of ``x[i]`` is set (invert), else zero (exchange)."""
    x = [np.array(p, dtype=np.int64).view(np.uint64) for p in points]
    n = len(x)
    one = np.uint64(1)
    m = np.empty_like(x[0])
    t = np.empty_like(x[0])
    for b in range(BITS - 1, 0, -1):  # q = 1 << b, from 2**62 down to 2
        p = np.uint64((1 << b) - 1)
        shift = np.uint64(b)
        for i in range(n):
            np.right_shift(x[i], shift, out=m)
            np.bitwise_and(m, one, out=m)
            np.negative(m, out=m)
            if i == 0:
                x[0] ^= m & p
                continue
            np.bitwise_xor(x[0], x[i], out=t)
            t &= p
            t &= ~m
            x[0] ^= (m & p) | t
            x[i] ^= t
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t[:] = 0
    last = x[n - 1]
    for b in range(BITS - 1, 0, -1):
        np.right_shift(last, np.uint64(b), out=m)
        np.bitwise_and(m, one, out=m)
        np.negative(m, out=m)
        t ^= m & np.uint64((1 << b) - 1)
    return [xi ^ t for xi in x]


def hilbert_index_bytes(points: Sequence[np.ndarray]) -> np.ndarray:
    """The index of each row's point as (n, 63 * dims // 8 + 1) big-endian bytes.

    The index's bits are bits 62..0 of the transposed columns, interleaved column after column:
    the z-order interleave of the columns shifted left by one (bit 63 dropped) is the index
    followed by ``dims`` zero bits; shifting those bytes right by ``dims`` bits leaves the index."""
    from paimon_core.sort.byte_columns import big_endian_bytes
    from paimon_core.sort.zorder import interleave_bits

    dims = len(points)
    width = BITS * dims // 8 + 1
    n = len(points[0]) if dims else 0
    out = np.empty((n, width), dtype=np.uint8)
    whole, rest = divmod(dims, 8)
    for lo in range(0, n, _CHUNK_ROWS):
        hi = min(n, lo + _CHUNK_ROWS)
        x = _transpose([p[lo:hi] for p in points])
        z = interleave_bits([big_endian_bytes(xi << np.uint64(1)) for xi in x])  # (rows, 8 * dims)
        if whole:  # shift right by whole bytes
            z = np.concatenate([np.zeros((hi - lo, whole), dtype=np.uint8), z[:, :-whole]], axis=1)
        if rest:
            wide = z.astype(np.uint16)
            prev = np.concatenate([np.zeros((hi - lo, 1), dtype=np.uint16), wide[:, :-1]], axis=1)
            z = (((prev << (8 - rest)) | (wide >> rest)) & 0xFF).astype(np.uint8)
        out[lo:hi] = z[:, z.shape[1] - width :]
    return out


class HilbertIndexer:
    """Hilbert key of ``order_columns`` of rows of ``fields`` (Java ``HilbertIndexer``)."""

    def __init__(self, fields: Sequence[DataField], order_columns: Sequence[str]) -> None:
        if len(order_columns) < 2:
            raise InvalidArgumentError("Hilbert sort needs at least two columns.")
        by_name = {f.name: f for f in fields}
        missing = [c for c in order_columns if c not in by_name]
        if missing:
            raise InvalidArgumentError(f"Can't find column(s) {missing} in row type fields {list(by_name)}")
        self.fields = [by_name[c] for c in order_columns]
        for f in self.fields:
            if not isinstance(f.type, _SUPPORTED):
                raise InvalidArgumentError(f"Column {f.name} of type {f.type} cannot be used in a hilbert sort")
        self.size = BITS * len(self.fields) // 8 + 1

    def index(self, data: pa.Table) -> pa.FixedSizeBinaryArray:
        points = [hilbert_column_longs(data.column(f.name), f.type) for f in self.fields]
        keys = hilbert_index_bytes(points)
        return pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(self.size), data.num_rows, [None, pa.py_buffer(np.ascontiguousarray(keys).tobytes())]
        )
