"""Paimon's fixed bucket as a Spark SQL expression (JVM, codegen), for integer-like bucket keys.

``paimon_core.bucket.compute_buckets`` is the reference: ``abs(murmur3(BinaryRow(key)) % n)``
with Paimon's ``hashBytesByWords`` (seed 42) over the key's BinaryRow. For keys made of
TINYINT/SMALLINT/INT/BIGINT/DATE columns (at most 56 of them, so the BinaryRow header is one
8-byte word) the BinaryRow is a fixed list of 32-bit words, and the hash can be written with
Spark's bitwise functions on BIGINTs without overflow (ANSI-safe): no Python round trip.
Other key types get None and the caller falls back to an Arrow UDF around
``compute_buckets``. ``tests/integration/test_spark_routing.py`` checks both agree.

Cost (it runs once per written row): words known on the driver (the header of a key whose
columns are NOT NULL, the high word of a narrow integer) are mixed in Python, so a BIGINT key
costs two mixing rounds; a 32-bit product modulo 2^32 is one BIGINT multiply by the constant
taken as a signed 32-bit value (``|a * c| < 2^63`` for ``a < 2^32``, ``|c| <= 2^31``) and a
mask; and each round is one projection, so the plan has about ten steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

from paimon_core.schema.data_types import BigIntType, DataField, DateType, IntType, SmallIntType, TinyIntType

__all__ = ["supports", "with_bucket_column"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_F1 = 0x85EBCA6B
_F2 = 0xC2B2AE35
_N = 0xE6546B64
_MASK32 = 0xFFFFFFFF
_SEED = 42
_MAX_ARITY = 56  # null bits (8 + arity) fit in the 8-byte header
_WIDTH_MASK = {TinyIntType: 0xFF, SmallIntType: 0xFFFF, IntType: _MASK32, DateType: _MASK32}

#: A 32-bit word of the key's BinaryRow: known on the driver (int) or computed per row.
Word = int | Column


def supports(fields: Sequence[DataField]) -> bool:
    """Whether :func:`with_bucket_column` can hash a key of these fields."""
    return 0 < len(fields) <= _MAX_ARITY and all(
        isinstance(f.type, (TinyIntType, SmallIntType, IntType, BigIntType, DateType)) for f in fields
    )


# -- Murmur3 on the driver, for the words that are constants ------------------------------------

def _rotl_py(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK32


def _round_py(h: int, k: int) -> int:
    k = _rotl_py((k * _C1) & _MASK32, 15)
    h = _rotl_py(h ^ ((k * _C2) & _MASK32), 13)
    return (h * 5 + _N) & _MASK32


# -- the same as Spark expressions over BIGINT columns holding unsigned 32-bit values -----------

def _lit(v: int) -> Column:
    return F.lit(v).cast("bigint")


def _mul32(a: Column, c: int) -> Column:
    """(a * c) mod 2^32 for 0 <= a < 2^32: one multiply by ``c`` as a signed 32-bit value."""
    signed = c - (1 << 32) if c >= 1 << 31 else c
    return (a * _lit(signed)).bitwiseAND(_MASK32)


def _rotl(x: Column, r: int) -> Column:
    return F.shiftleft(x, r).bitwiseOR(F.shiftright(x, 32 - r)).bitwiseAND(_MASK32)


def _key_words(fields: Sequence[DataField]) -> list[Word]:
    """The key's BinaryRow as 32-bit words: two header words, then (low, high) per field."""
    header: list[Word] = [0, 0]  # word 0: RowKind byte (0 = +I), null bits from bit 8
    for i, f in enumerate(fields):
        if not f.type.nullable:
            continue
        bit = 8 + i
        word, shift = (0, bit) if bit < 32 else (1, bit - 32)
        flag = F.when(F.col(f"`{f.name}`").isNull(), _lit(1 << shift)).otherwise(_lit(0))
        current = header[word]
        header[word] = flag if isinstance(current, int) else current.bitwiseOR(flag)
    words = header
    for f in fields:
        words.extend(_slot_words(f))
    return words


def _slot_words(f: DataField) -> tuple[Word, Word]:
    """The (low, high) 32-bit words of the field's 8-byte slot (0 for NULL)."""
    col = F.col(f"`{f.name}`")
    if isinstance(f.type, BigIntType):
        v = col.cast("bigint")
        lo, hi = v.bitwiseAND(_MASK32), F.shiftrightunsigned(v, 32)
        if f.type.nullable:
            return F.coalesce(lo, _lit(0)), F.coalesce(hi, _lit(0))
        return lo, hi
    if isinstance(f.type, DateType):
        v = F.unix_date(col.cast("date")).cast("bigint")
    else:
        spark_type = {TinyIntType: "tinyint", SmallIntType: "smallint", IntType: "int"}[type(f.type)]
        v = col.cast(spark_type).cast("bigint")
    lo = v.bitwiseAND(_WIDTH_MASK[type(f.type)])
    return (F.coalesce(lo, _lit(0)) if f.type.nullable else lo), 0


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
    words = _key_words(fields)
    length = 4 * len(words)
    h, k = f"{name}__h", f"{name}__k"
    seed = _SEED
    while words and isinstance(words[0], int):  # a constant prefix is mixed here
        first = words.pop(0)
        assert isinstance(first, int)
        seed = _round_py(seed, first)
    out = df.withColumn(h, _lit(seed))
    for w in words:
        if isinstance(w, int) and w == 0:  # k = 0: only the h half of the round
            x = F.col(h)
        else:
            word = _lit(w) if isinstance(w, int) else w
            out = out.withColumn(k, _rotl(_mul32(word, _C1), 15))
            x = F.col(h).bitwiseXOR(_mul32(F.col(k), _C2))
        out = out.withColumn(h, (_rotl(x, 13) * _lit(5) + _lit(_N)).bitwiseAND(_MASK32))
    # fmix(h, length): h ^= length; h ^= h >>> 16; h *= F1; h ^= h >>> 13; h *= F2; h ^= h >>> 16
    x = F.col(h).bitwiseXOR(_lit(length))
    out = out.withColumn(h, x.bitwiseXOR(F.shiftright(x, 16)))
    for c, r in ((_F1, 13), (_F2, 16)):
        x = _mul32(F.col(h), c)
        out = out.withColumn(h, x.bitwiseXOR(F.shiftright(x, r)))
    signed = F.col(h) - F.shiftright(F.col(h), 31) * _lit(1 << 32)  # as Java's int
    # A NULL in a NOT NULL key column goes to bucket 0; the writers then refuse the row.
    out = out.withColumn(name, F.coalesce(F.abs(signed % _lit(num_buckets)).cast("int"), F.lit(0)))
    return out.drop(h, k)
