"""Key comparison for the LSM planner: Java's generated ``RecordComparator`` over the key row.

Java compares primary keys field by field with a code-generated comparator
(``CodeGenUtils.newRecordComparator`` / ``GenerateUtils.generateCompare``): nulls first,
strings and binaries as unsigned bytes, floats/doubles with ``Float.compare`` /
``Double.compare`` (``-0.0 < 0.0``, NaN largest), everything else by value. The planner works
on Python tuples instead: ``key_of(min_key_bytes)`` maps a serialized BinaryRow to a tuple that
sorts exactly like Java's comparator orders the rows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.schema.data_types import CharType, DataType, DoubleType, FloatType, VarCharType

__all__ = ["Key", "KeyOf", "binary_key_of"]

#: A comparable key: a tuple ordered like Java's key comparator orders the rows.
Key = tuple[Any, ...]
#: Maps a serialized (arity-prefixed) BinaryRow key to its comparable :data:`Key`.
KeyOf = Callable[[bytes], Key]

_NULL: tuple[int] = (0,)


def _float_key(value: float) -> tuple[int, float, float]:
    # Java's Double.compare: NaN is larger than everything (and equal to itself); -0.0 < 0.0.
    if math.isnan(value):
        return (1, 0.0, 0.0)
    return (0, value, math.copysign(1.0, value))


def _string_key(value: str) -> bytes:
    # Java compares BinaryString as unsigned UTF-8 bytes; the reader decodes with surrogateescape,
    # so encoding back gives the stored bytes even for invalid UTF-8.
    return value.encode("utf-8", errors="surrogateescape")


def _field_key(t: DataType) -> Callable[[Any], Any]:
    if isinstance(t, (FloatType, DoubleType)):
        return _float_key
    if isinstance(t, (CharType, VarCharType)):
        return _string_key
    return _identity


def _identity(value: Any) -> Any:
    return value


def binary_key_of(key_types: Sequence[DataType], *, cache_size: int = 65_536) -> KeyOf:
    """A :data:`KeyOf` for keys of ``key_types``; deserialisations are cached (LRU).

    Every field becomes ``(0,)`` when null (nulls sort first) or ``(1, value)`` otherwise, so
    tuples never compare ``None`` with a value.
    """
    types = tuple(key_types)
    converters = tuple(_field_key(t) for t in types)

    @functools.lru_cache(maxsize=cache_size)
    def key_of(data: bytes) -> Key:
        values = deserialize_binary_row(data, types)
        return tuple(
            _NULL if v is None else (1, convert(v)) for v, convert in zip(values, converters, strict=True)
        )

    return key_of
