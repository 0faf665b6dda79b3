"""Z-order keys, vectorized (Java ``ZIndexer`` + ``ZOrderByteUtils``, paimon-common).

Each order column contributes a fixed number of bytes whose unsigned big-endian order is the
order Paimon gives it: 8 bytes for primitives, ``zorder.var-length-contribution`` (default 8)
for CHAR/VARCHAR/BINARY/VARBINARY. Per type, as Java:

* TINYINT/SMALLINT/INT/BIGINT, DATE (days), TIME (millis of day): the value as a long with the
  sign bit flipped (``val ^ 0x8000000000000000``);
* TIMESTAMP / TIMESTAMP_LTZ: epoch millis (``Timestamp.getMillisecond``) likewise;
* FLOAT/DOUBLE: ``doubleToLongBits`` then ``l ^= (l >> 31) | Long.MIN_VALUE`` (Java shifts by
  ``Integer.SIZE - 1``; kept, because it decides which rows share a file);
* BOOLEAN: ``0x81`` in the first byte for true, zeros for false;
* CHAR/VARCHAR (UTF-8) and BINARY/VARBINARY: the first bytes, right-padded with zeros;
* DECIMAL: the unscaled ``BigInteger.toByteArray()`` truncated/right-padded to 8 bytes;
* null: all zeros.

The column bytes are then interleaved bit by bit, most significant first, column after column;
a column with no bits left is skipped (``ZOrderByteUtils.interleaveBits``). The key is a
``fixed_size_binary`` array compared as unsigned bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

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
    big_endian_bytes,
    decimal_unscaled_bytes,
    double_bits,
    epoch_millis,
    fixed_prefix,
    integer_values,
    valid_mask,
)

__all__ = ["PRIMITIVE_BUFFER_SIZE", "ZIndexer", "interleave_bits", "zorder_column_bytes"]

PRIMITIVE_BUFFER_SIZE = 8
_SIGN = np.uint64(0x8000000000000000)
#: Rows interleaved at once (the bit matrix is rows x 8 x key bytes of uint8).
_CHUNK_ROWS = 1 << 17

_INTEGERS = (TinyIntType, SmallIntType, IntType, BigIntType, DateType, TimeType)
_VAR = (CharType, VarCharType, BinaryType, VarBinaryType)


def is_var_type(t: DataType) -> bool:
    return isinstance(t, _VAR)


def zorder_column_bytes(column: pa.Array | pa.ChunkedArray, data_type: DataType, *, var_length: int) -> np.ndarray:
    """The ordered bytes one column contributes, (n, width) uint8 (see the module docstring)."""
    arr = as_array(column)
    valid = valid_mask(arr)
    if isinstance(data_type, _VAR):
        return fixed_prefix(arr, var_length, align="left")
    if isinstance(data_type, _INTEGERS):
        out = big_endian_bytes(integer_values(arr).view(np.uint64) ^ _SIGN)
    elif isinstance(data_type, (TimestampType, LocalZonedTimestampType)):
        out = big_endian_bytes(epoch_millis(arr).view(np.uint64) ^ _SIGN)
    elif isinstance(data_type, (FloatType, DoubleType)):
        bits = double_bits(arr)
        bits = bits ^ ((bits >> np.int64(31)) | np.int64(-0x8000000000000000))
        out = big_endian_bytes(bits.view(np.uint64))
    elif isinstance(data_type, BooleanType):
        out = np.zeros((len(arr), PRIMITIVE_BUFFER_SIZE), dtype=np.uint8)
        flags = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        out[flags, 0] = 0x81
    elif isinstance(data_type, DecimalType):
        out = decimal_unscaled_bytes(arr)[:, :PRIMITIVE_BUFFER_SIZE].copy()
    else:
        raise InvalidArgumentError(f"Type {data_type} cannot be used in a z-order sort")
    out = np.ascontiguousarray(out)
    out[~valid] = 0
    return out


def _interleave_order(widths: Sequence[int]) -> np.ndarray:
    """Positions in the concatenated column bits, in output order: bit p (0 = most significant)
    of every column still having a bit p, column after column, for p = 0, 1, ..."""
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]]) * 8
    order = []
    for p in range(max(widths, default=0) * 8):
        for c, w in enumerate(widths):
            if p < w * 8:
                order.append(starts[c] + p)
    return np.asarray(order, dtype=np.int64)


def _spread_table(n: int) -> np.ndarray:
    """byte value → its 8 bits spread n apart, most significant first, in the top of 8n bits."""
    values = np.arange(256, dtype=np.uint64)
    out = np.zeros(256, dtype=np.uint64)
    for k in range(8):  # bit k of the byte (0 = most significant)
        bit = (values >> np.uint64(7 - k)) & np.uint64(1)
        out |= bit << np.uint64(8 * n - 1 - k * n)
    return out


def _interleave_equal(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Same-width columns, at most 8 of them: byte j of every column makes output bytes
    ``[j * n, (j + 1) * n)``, via a 256-entry spread table (no bit matrix)."""
    n, width = len(columns), columns[0].shape[1]
    rows = columns[0].shape[0]
    table = _spread_table(n)
    out = np.empty((rows, width * n), dtype=np.uint8)
    acc = np.empty(rows, dtype=np.uint64)
    for j in range(width):
        acc[:] = 0
        for c, col in enumerate(columns):
            acc |= table[col[:, j]] >> np.uint64(c)
        out[:, j * n : (j + 1) * n] = acc.astype(">u8").view(np.uint8).reshape(rows, 8)[:, 8 - n :]
    return out


def interleave_bits(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Java ``interleaveBits`` over (n, width_c) uint8 matrices → (n, sum width_c) uint8."""
    widths = [c.shape[1] for c in columns]
    if columns and len(columns) <= 8 and len(set(widths)) == 1:
        return _interleave_equal(columns)
    n = columns[0].shape[0] if columns else 0
    total = sum(widths)
    out = np.empty((n, total), dtype=np.uint8)
    order = _interleave_order(widths)
    for lo in range(0, n, _CHUNK_ROWS):
        hi = min(n, lo + _CHUNK_ROWS)
        joined = np.concatenate([c[lo:hi] for c in columns], axis=1)
        bits = np.unpackbits(joined, axis=1)
        out[lo:hi] = np.packbits(bits[:, order], axis=1)
    return out


class ZIndexer:
    """Z-order key of ``order_columns`` of rows of ``fields`` (Java ``ZIndexer``)."""

    def __init__(self, fields: Sequence[DataField], order_columns: Sequence[str], *, var_length: int = 8) -> None:
        if var_length <= 0:
            raise InvalidArgumentError(f"zorder.var-length-contribution must be positive, got {var_length}")
        by_name = {f.name: f for f in fields}
        missing = [c for c in order_columns if c not in by_name]
        if missing:
            raise InvalidArgumentError(f"Can't find column(s) {missing} in row type fields {list(by_name)}")
        self.fields = [by_name[c] for c in order_columns]
        self.var_length = var_length
        for f in self.fields:  # fail on an unsupported type before reading any data
            if not isinstance(f.type, (*_INTEGERS, *_VAR, TimestampType, LocalZonedTimestampType, FloatType,
                                       DoubleType, BooleanType, DecimalType)):  # fmt: skip
                raise InvalidArgumentError(f"Column {f.name} of type {f.type} cannot be used in a z-order sort")
        self.size = sum(var_length if is_var_type(f.type) else PRIMITIVE_BUFFER_SIZE for f in self.fields)

    def index(self, data: pa.Table) -> pa.FixedSizeBinaryArray:
        """One key per row of ``data`` (which has the order columns)."""
        cols = [zorder_column_bytes(data.column(f.name), f.type, var_length=self.var_length) for f in self.fields]
        keys = interleave_bits(cols)
        return pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(self.size), data.num_rows, [None, pa.py_buffer(np.ascontiguousarray(keys).tobytes())]
        )
