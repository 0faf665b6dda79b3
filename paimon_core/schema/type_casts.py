"""Which column type changes are safe (every old value fits the new type)."""

from __future__ import annotations

from paimon_core.schema.data_types import (
    BigIntType,
    BinaryType,
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
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

_INT_RANK: dict[type, int] = {TinyIntType: 1, SmallIntType: 2, IntType: 3, BigIntType: 4}
_INT_DIGITS = {1: 3, 2: 5, 3: 10, 4: 19}


def is_safe_widening(old: DataType, new: DataType) -> bool:
    """True when every value of ``old`` converts to ``new`` without loss."""
    if not old.nullable and new.nullable:
        return is_safe_widening(old.copy(nullable=True), new)
    if old.nullable and not new.nullable:
        return False
    if old == new:
        return True
    o, n = type(old), type(new)
    if o in _INT_RANK:
        if n in _INT_RANK:
            return _INT_RANK[n] >= _INT_RANK[o]
        if isinstance(new, DoubleType):
            return _INT_RANK[o] <= 3
        if isinstance(new, FloatType):
            return _INT_RANK[o] <= 2
        if isinstance(new, DecimalType):
            return new.precision - new.scale >= _INT_DIGITS[_INT_RANK[o]]
        return False
    if isinstance(old, FloatType):
        return isinstance(new, DoubleType)
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if isinstance(old, (CharType, VarCharType)) and isinstance(new, VarCharType):
        return new.length >= old.length
    if isinstance(old, (BinaryType, VarBinaryType)) and isinstance(new, VarBinaryType):
        return new.length >= old.length
    if isinstance(old, TimestampType) and isinstance(new, TimestampType):
        return new.precision >= old.precision
    if isinstance(old, LocalZonedTimestampType) and isinstance(new, LocalZonedTimestampType):
        return new.precision >= old.precision
    if isinstance(old, DateType) and isinstance(new, TimestampType):
        return True
    return False
