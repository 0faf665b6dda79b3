"""64-bit hashes of column values (Java's ``FastHash``): strings and bytes by xxHash64 (seed 0,
``LongHashFunction.xx()``), numbers, dates and times by Thomas Wang's 64-bit integer hash on
their long value (a float or double by its IEEE bits, ``floatToIntBits`` / ``doubleToLongBits``;
a timestamp by its epoch millis when its precision is at most 3, else its epoch micros).

:func:`hash_array` hashes the distinct non-null values of an Arrow array at once (numpy, wrapping
64-bit arithmetic as Java's ``long``); :func:`hash_value` one internal value (a predicate literal).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from paimon_core.fileindex.java_compat import to_int64
from paimon_core.schema.data_types import DataType, LocalZonedTimestampType, TimestampType

__all__ = [
    "FLOAT_NAN_BITS",
    "DOUBLE_NAN_BITS",
    "hash_array",
    "hash_value",
    "long_hash",
    "long_hash_array",
    "xx_hash64",
]

#: Java's canonical NaN bits (``floatToIntBits`` / ``doubleToLongBits`` of any NaN)
FLOAT_NAN_BITS = 0x7FC00000
DOUBLE_NAN_BITS = 0x7FF8000000000000

_BYTES_ROOTS = frozenset(("CHAR", "VARCHAR", "BINARY", "VARBINARY"))
_INT_ROOTS = frozenset(("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME"))
_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def long_hash(key: int) -> int:
    """Thomas Wang's 64-bit integer hash, as Java's ``getLongHash`` (signed ``long`` result)."""
    key = to_int64((~key) + (key << 21))
    key = to_int64(key ^ (key >> 24))
    key = to_int64((key + (key << 3)) + (key << 8))
    key = to_int64(key ^ (key >> 14))
    key = to_int64((key + (key << 2)) + (key << 4))
    key = to_int64(key ^ (key >> 28))
    return to_int64(key + (key << 31))


def long_hash_array(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """:func:`long_hash` of every element (int64 arithmetic wraps as Java's does)."""
    key = keys.astype(np.int64, copy=True)
    with np.errstate(over="ignore"):
        key = (~key) + (key << 21)
        key = key ^ (key >> 24)
        key = (key + (key << 3)) + (key << 8)
        key = key ^ (key >> 14)
        key = (key + (key << 2)) + (key << 4)
        key = key ^ (key >> 28)
        key = key + (key << 31)
    return key


def xx_hash64(data: bytes) -> int:
    """xxHash64 with seed 0 as a signed long (Java's ``LongHashFunction.xx().hashBytes``)."""
    return to_int64(xxhash.xxh64_intdigest(data))


def _timestamp_precision(data_type: DataType) -> int | None:
    if isinstance(data_type, (TimestampType, LocalZonedTimestampType)):
        return data_type.precision
    return None


def hash_value(value: Any, data_type: DataType) -> int:
    """The hash of one internal value (see :mod:`paimon_core.data.internal`) of ``data_type``."""
    root = data_type.type_root
    if root in ("CHAR", "VARCHAR"):
        return xx_hash64(str(value).encode("utf-8", errors="surrogatepass"))
    if root in ("BINARY", "VARBINARY"):
        return xx_hash64(bytes(value))
    if root in _INT_ROOTS:
        return long_hash(int(value))
    if root == "FLOAT":
        bits = FLOAT_NAN_BITS if math.isnan(value) else struct.unpack(">i", struct.pack(">f", value))[0]
        return long_hash(bits)
    if root == "DOUBLE":
        bits = DOUBLE_NAN_BITS if math.isnan(value) else struct.unpack(">q", struct.pack(">d", value))[0]
        return long_hash(to_int64(bits))
    precision = _timestamp_precision(data_type)
    if precision is not None:  # internal: epoch nanos
        return long_hash(int(value) // 1_000_000 if precision <= 3 else int(value) // 1_000)
    raise TypeError(f"bloom filter index does not support type {data_type}")


def _plain(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def hash_array(values: pa.Array | pa.ChunkedArray, data_type: DataType) -> npt.NDArray[np.int64]:
    """The hashes of the distinct non-null values of ``values`` (a column of ``data_type``)."""
    arr = _plain(values)
    if arr.null_count:
        arr = pc.drop_null(arr)
    if len(arr) == 0:
        return np.empty(0, dtype=np.int64)
    root = data_type.type_root
    if root in _BYTES_ROOTS:
        distinct = pc.unique(arr)
        if root in ("CHAR", "VARCHAR"):
            distinct = (
                distinct.cast(pa.large_binary())
                if pa.types.is_large_string(distinct.type)
                else distinct.cast(pa.binary())
            )
        return np.fromiter((xx_hash64(v) for v in distinct.to_pylist()), dtype=np.int64, count=len(distinct))
    if root == "FLOAT":
        floats = arr.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        bits = floats.view(np.int32).astype(np.int64)
        bits[np.isnan(floats)] = FLOAT_NAN_BITS
        return long_hash_array(np.unique(bits))
    if root == "DOUBLE":
        doubles = arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        bits = doubles.view(np.int64).copy()
        bits[np.isnan(doubles)] = DOUBLE_NAN_BITS
        return long_hash_array(np.unique(bits))
    if root in _INT_ROOTS:
        if pa.types.is_date32(arr.type) or pa.types.is_time32(arr.type):
            arr = arr.cast(pa.int32())
        elif pa.types.is_time64(arr.type):  # never written by paimon_core: TIME is time32[ms]
            arr = pc.divide(arr.cast(pa.int64()), 1_000 if arr.type.unit == "us" else 1_000_000)
        return long_hash_array(np.unique(arr.to_numpy(zero_copy_only=False).astype(np.int64)))
    precision = _timestamp_precision(data_type)
    if precision is not None and pa.types.is_timestamp(arr.type):
        raw = arr.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.int64)
        per_second = _UNIT_PER_SECOND[arr.type.unit]
        target = 1_000 if precision <= 3 else 1_000_000
        scaled = raw * (target // per_second) if per_second <= target else raw // (per_second // target)
        return long_hash_array(np.unique(scaled))
    raise TypeError(f"bloom filter index does not support type {data_type} (Arrow {arr.type})")
