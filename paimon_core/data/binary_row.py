"""Java's ``BinaryRow``, byte for byte, for single rows of internal values.

Layout (``BinaryRowWriter`` / ``AbstractBinaryWriter``): a header of
``((arity + 63 + 8) // 64) * 8`` bytes (byte 0 = RowKind, then one null bit per field at bit
``i + 8``, LSB first), one little-endian 8-byte slot per field, then the variable part, each value
zero-padded to a multiple of 8 bytes:

* fixed-width values sit in their slot (BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/DATE/TIME 4,
  BIGINT 8, FLOAT/DOUBLE IEEE), as do DECIMAL(p<=18) (unscaled long) and TIMESTAMP(p<=3)
  (epoch millis);
* strings and binaries of up to 7 bytes are inlined (data, then ``0x80 | len`` in the last
  byte); longer ones go to the variable part with slot ``offset << 32 | len``;
* DECIMAL(p>18) reserves 16 bytes holding the minimal big-endian two's-complement unscaled
  value, slot ``offset << 32 | len``; TIMESTAMP(p>3) reserves 8 bytes holding epoch millis,
  slot ``offset << 32 | nanoOfMillisecond``. A *null* value of those two still reserves its
  bytes and gets slot ``offset << 32`` (Java's ``RowHelper``/codegen write it that way).

In manifests a row is prefixed with its arity as a 4-byte big-endian int
(``SerializationUtils.serializeBinaryRow``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from decimal import Context, Decimal

from paimon_core.data.internal import to_internal
from paimon_core.exceptions import CorruptFileError, InvalidArgumentError, SchemaError
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
    is_nested,
)

__all__ = [
    "EMPTY_ROW",
    "binary_row_arity",
    "binary_row_bytes",
    "deserialize_binary_row",
    "null_bits_width",
    "serialize_binary_row",
]

_HEADER_BITS = 8
_NANOS_PER_MILLI = 1_000_000
_DECIMAL_CONTEXT = Context(prec=100)
_FIXED_FORMATS: dict[type[DataType], str] = {
    TinyIntType: "<b",
    SmallIntType: "<h",
    IntType: "<i",
    DateType: "<i",
    TimeType: "<i",
    BigIntType: "<q",
    FloatType: "<f",
    DoubleType: "<d",
}


def null_bits_width(arity: int) -> int:
    """Bytes of header + null bits for a row of ``arity`` fields (Java ``calculateBitSetWidthInBytes``)."""
    return ((arity + 63 + _HEADER_BITS) // 64) * 8


def _round8(n: int) -> int:
    return (n + 7) & ~7


def _is_var_reserved(t: DataType) -> int:
    """Bytes a non-compact DECIMAL / TIMESTAMP always reserves in the variable part (else 0)."""
    if isinstance(t, DecimalType) and not t.is_compact:
        return 16
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and not t.is_compact:
        return 8
    return 0


def _encode_text(value: object, t: DataType) -> bytes:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError as e:
            raise InvalidArgumentError(f"String {value!r} of type {t} is not encodable as UTF-8") from e
    return bytes(value)  # type: ignore[call-overload]


def decimal_unscaled_bytes(unscaled: int) -> bytes:
    """Java ``BigInteger.toByteArray()``: minimal big-endian two's complement."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _unscaled(d: Decimal, scale: int) -> int:
    return int(d.scaleb(scale, context=_DECIMAL_CONTEXT))


def binary_row_bytes(values: Sequence[object | None], types: Sequence[DataType]) -> bytes:
    """The BinaryRow bytes (RowKind +I, no arity prefix) of internal ``values`` of ``types``.

    Values are validated/normalized with :func:`~paimon_core.data.internal.to_internal`.
    Non-null nested values raise :class:`SchemaError`.
    """
    if len(values) != len(types):
        raise InvalidArgumentError(f"{len(values)} values given for {len(types)} types")
    arity = len(types)
    header = null_bits_width(arity)
    fixed = bytearray(header + 8 * arity)
    var = bytearray()

    def var_offset() -> int:
        return len(fixed) + len(var)

    for i, (raw, t) in enumerate(zip(values, types, strict=True)):
        slot = header + 8 * i
        if raw is None:
            fixed[(i + _HEADER_BITS) // 8] |= 1 << ((i + _HEADER_BITS) % 8)
            reserved = _is_var_reserved(t)
            if reserved:
                struct.pack_into("<q", fixed, slot, var_offset() << 32)
                var.extend(bytes(reserved))
            continue
        if is_nested(t):
            raise SchemaError(f"Cannot write a non-null value of nested type {t} into a BinaryRow")
        value = to_internal(raw, t)
        fmt = _FIXED_FORMATS.get(type(t))
        if fmt is not None:
            struct.pack_into(fmt, fixed, slot, value)
        elif isinstance(t, BooleanType):
            fixed[slot] = 1 if value else 0
        elif isinstance(t, DecimalType):
            unscaled = _unscaled(value, t.scale)  # type: ignore[arg-type]
            if t.is_compact:
                struct.pack_into("<q", fixed, slot, unscaled)
            else:
                data = decimal_unscaled_bytes(unscaled)
                struct.pack_into("<Q", fixed, slot, (var_offset() << 32) | len(data))
                var.extend(data.ljust(16, b"\0"))
        elif isinstance(t, (TimestampType, LocalZonedTimestampType)):
            millis, nano_of_milli = divmod(value, _NANOS_PER_MILLI)  # type: ignore[operator]
            if t.is_compact:
                struct.pack_into("<q", fixed, slot, millis)
            else:
                struct.pack_into("<Q", fixed, slot, (var_offset() << 32) | nano_of_milli)
                var.extend(struct.pack("<q", millis))
        elif isinstance(t, (CharType, VarCharType, BinaryType, VarBinaryType)):
            data = _encode_text(value, t)
            if len(data) <= 7:
                fixed[slot : slot + len(data)] = data
                fixed[slot + 7] = 0x80 | len(data)
            else:
                struct.pack_into("<Q", fixed, slot, (var_offset() << 32) | len(data))
                var.extend(data.ljust(_round8(len(data)), b"\0"))
        else:
            raise SchemaError(f"Type {t} cannot be written into a BinaryRow")
    return bytes(fixed + var)


def serialize_binary_row(values: Sequence[object | None], types: Sequence[DataType]) -> bytes:
    """Manifest form of a row: 4-byte big-endian arity, then :func:`binary_row_bytes`."""
    return struct.pack(">i", len(types)) + binary_row_bytes(values, types)


#: The serialized arity-0 row (unpartitioned tables, empty keys/stats): ``00000000 00..00``.
EMPTY_ROW: bytes = serialize_binary_row((), ())


def binary_row_arity(data: bytes) -> int:
    """Arity stored in the 4-byte prefix of a serialized row."""
    if len(data) < 4:
        raise CorruptFileError(f"Serialized BinaryRow of {len(data)} bytes has no arity prefix")
    arity: int = struct.unpack_from(">i", data, 0)[0]
    return arity


def deserialize_binary_row(data: bytes, types: Sequence[DataType]) -> tuple[object | None, ...]:
    """Internal values of a serialized (arity-prefixed) row of ``types``.

    Tolerates pypaimon's variant that writes null non-compact DECIMAL/TIMESTAMP as a zero slot.
    Non-null nested fields raise :class:`SchemaError`.
    """
    arity = binary_row_arity(data)
    if arity != len(types):
        raise CorruptFileError(f"BinaryRow has arity {arity} but {len(types)} types were given")
    row = memoryview(data)[4:]
    header = null_bits_width(arity)
    if len(row) < header + 8 * arity:
        raise CorruptFileError(f"BinaryRow of arity {arity} is truncated ({len(row)} bytes)")
    out: list[object | None] = []
    try:
        for i, t in enumerate(types):
            bit = i + _HEADER_BITS
            if row[bit // 8] & (1 << (bit % 8)):
                out.append(None)
                continue
            out.append(_read_field(row, header + 8 * i, t))
    except (struct.error, IndexError, ValueError) as e:
        raise CorruptFileError(f"Corrupt BinaryRow: {e}") from e
    return tuple(out)


def _read_field(row: memoryview, slot: int, t: DataType) -> object:
    if is_nested(t):
        raise SchemaError(f"Cannot read a non-null value of nested type {t} from a BinaryRow")
    fmt = _FIXED_FORMATS.get(type(t))
    if fmt is not None:
        return struct.unpack_from(fmt, row, slot)[0]
    if isinstance(t, BooleanType):
        return row[slot] != 0
    word: int = struct.unpack_from("<Q", row, slot)[0]
    if isinstance(t, DecimalType):
        if t.is_compact:
            unscaled: int = struct.unpack_from("<q", row, slot)[0]
        else:
            offset, length = word >> 32, word & 0xFFFFFFFF
            unscaled = int.from_bytes(_var_bytes(row, offset, length), "big", signed=True)
        return Decimal(unscaled).scaleb(-t.scale, context=_DECIMAL_CONTEXT)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if t.is_compact:
            millis: int = struct.unpack_from("<q", row, slot)[0]
            return millis * _NANOS_PER_MILLI
        offset, nano_of_milli = word >> 32, word & 0xFFFFFFFF
        millis = struct.unpack_from("<q", row, offset)[0]
        return millis * _NANOS_PER_MILLI + nano_of_milli
    if isinstance(t, (CharType, VarCharType, BinaryType, VarBinaryType)):
        if word >> 63:
            length = (word >> 56) & 0x7F
            data = bytes(row[slot : slot + length])
        else:
            data = _var_bytes(row, word >> 32, word & 0xFFFFFFFF)
        if isinstance(t, (CharType, VarCharType)):
            return data.decode("utf-8", errors="surrogateescape")
        return data
    raise SchemaError(f"Type {t} cannot be read from a BinaryRow")


def _var_bytes(row: memoryview, offset: int, length: int) -> bytes:
    if offset + length > len(row):
        raise CorruptFileError(
            f"BinaryRow variable part [{offset}, {offset + length}) exceeds {len(row)} bytes"
        )
    return bytes(row[offset : offset + length])
