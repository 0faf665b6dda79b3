"""Paimon's fixed bucket as a Spark SQL expression (JVM, codegen), for integer-like bucket keys.

``paimon_core.bucket.compute_buckets`` is the reference: ``abs(murmur3(BinaryRow(key)) % n)``
with Paimon's ``hashBytesByWords`` (seed 42) over the key's BinaryRow. For keys made of
TINYINT/SMALLINT/INT/BIGINT/DATE columns (at most 56 of them, so the BinaryRow header is one
8-byte word) the BinaryRow is a fixed list of 32-bit words, and the hash can be written with
Spark's bitwise functions on BIGINTs without overflow (ANSI-safe): no Python round trip.
Other key types get None and the caller falls back to an Arrow UDF around
``compute_buckets``. ``tests/integration/test_spark_routing.py`` checks both agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

from paimon_core.schema.data_types import BigIntType, DataField, DateType, IntType, SmallIntType, TinyIntType

__all__ = ["supports", "with_bucket_column"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK32 = 0xFFFFFFFF
_SEED = 42
_MAX_ARITY = 56  # null bits (8 + arity) fit in the 8-byte header
_WIDTH_MASK = {TinyIntType: 0xFF, SmallIntType: 0xFFFF, IntType: _MASK32, DateType: _MASK32}


def supports(fields: Sequence[DataField]) -> bool:
    """Whether :func:`bucket_expression` can hash a key of these fields."""
    return 0 < len(fields) <= _MAX_ARITY and all(
        isinstance(f.type, (TinyIntType, SmallIntType, IntType, BigIntType, DateType)) for f in fields
    )


def _lit(v: int) -> Column:
    return F.lit(v).cast("bigint")


def _mul32(a: Column, b: int) -> Column:
    """(a * b) mod 2^32 for 0 <= a, b < 2^32, with every intermediate below 2^49 (``a`` is a column ref)."""
    lo = (a.bitwiseAND(0xFFFF)) * _lit(b)
    hi = (F.shiftright(a, 16) * _lit(b)).bitwiseAND(0xFFFF) * _lit(65536)
    return (lo + hi).bitwiseAND(_MASK32)


def _rotl32(x: Column, r: int) -> Column:
    return F.shiftleft(x, r).bitwiseOR(F.shiftright(x, 32 - r)).bitwiseAND(_MASK32)


def _slot_words(f: DataField) -> tuple[Column, Column]:
    """The (low, high) 32-bit words of the field's 8-byte slot (0 for NULL)."""
    col = F.col(f"`{f.name}`")
    if isinstance(f.type, BigIntType):
        v = col.cast("bigint")
        lo = v.bitwiseAND(_MASK32)
        hi = F.shiftrightunsigned(v, 32).bitwiseAND(_MASK32)
        return F.coalesce(lo, _lit(0)), F.coalesce(hi, _lit(0))
    if isinstance(f.type, DateType):
        v = F.unix_date(col.cast("date")).cast("bigint")
    else:
        spark_type = {TinyIntType: "tinyint", SmallIntType: "smallint", IntType: "int"}[type(f.type)]
        v = col.cast(spark_type).cast("bigint")
    return F.coalesce(v.bitwiseAND(_WIDTH_MASK[type(f.type)]), _lit(0)), _lit(0)


def with_bucket_column(
    df: DataFrame, fields: Sequence[DataField], num_buckets: int, name: str
) -> DataFrame | None:
    """``df`` plus an INT column ``name`` with each row's Paimon bucket; None if the key types are
    not supported.

    Every intermediate value is its own column (each step refers to the previous one by name):
    Murmur3 reads values more than once, and nesting Column objects would copy them each time
    (an expression tree exponential in the number of steps).
    """
    if not supports(fields) or num_buckets <= 0:
        return None
    # Header word 0: RowKind byte (0 = +I) then null bits from bit 8; word 1: further null bits.
    header = [_lit(0), _lit(0)]
    for i, f in enumerate(fields):
        bit = 8 + i
        word, shift = (0, bit) if bit < 32 else (1, bit - 32)
        header[word] = header[word].bitwiseOR(
            F.when(F.col(f"`{f.name}`").isNull(), _lit(1 << shift)).otherwise(_lit(0))
        )
    words = list(header)
    for f in fields:
        words.extend(_slot_words(f))
    tmp = [f"{name}__w{i}" for i in range(len(words))]
    h, k = f"{name}__h", f"{name}__k"
    out = df.withColumns(dict(zip(tmp, words, strict=True))).withColumn(h, _lit(_SEED))
    for t in tmp:
        out = out.withColumn(k, _mul32(F.col(t), _C1))
        out = out.withColumn(k, _rotl32(F.col(k), 15))
        out = out.withColumn(k, _mul32(F.col(k), _C2))
        out = out.withColumn(h, F.col(h).bitwiseXOR(F.col(k)))
        out = out.withColumn(h, _rotl32(F.col(h), 13))
        out = out.withColumn(h, (F.col(h) * _lit(5) + _lit(0xE6546B64)).bitwiseAND(_MASK32))
    out = out.withColumn(h, F.col(h).bitwiseXOR(_lit(4 * len(words))))
    out = out.withColumn(h, F.col(h).bitwiseXOR(F.shiftright(F.col(h), 16)))
    out = out.withColumn(h, _mul32(F.col(h), 0x85EBCA6B))
    out = out.withColumn(h, F.col(h).bitwiseXOR(F.shiftright(F.col(h), 13)))
    out = out.withColumn(h, _mul32(F.col(h), 0xC2B2AE35))
    out = out.withColumn(h, F.col(h).bitwiseXOR(F.shiftright(F.col(h), 16)))
    signed = F.when(F.col(h) >= _lit(1 << 31), F.col(h) - _lit(1 << 32)).otherwise(F.col(h))
    out = out.withColumn(name, F.abs(signed % _lit(num_buckets)).cast("int"))
    return out.drop(*tmp, h, k)
