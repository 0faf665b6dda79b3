"""Conversion between Paimon types and pyarrow types, both ways.

Paimon -> Arrow follows Java's ``ArrowFieldTypeConversion`` and pypaimon (they agree):
CHAR/VARCHAR/STRING -> ``string``; BINARY/VARBINARY/BYTES -> ``binary``; DATE -> ``date32``;
TIME(p) -> ``time32[ms]`` (Paimon keeps millis of day); TIMESTAMP(p) -> ``timestamp`` with unit
``s`` (p=0), ``ms`` (1..3), ``us`` (4..6), ``ns`` (7..9); TIMESTAMP_LTZ the same with ``tz=UTC``;
DECIMAL -> ``decimal128``; ARRAY -> ``list`` (element field ``item``); MAP -> ``map`` (non-null
key); ROW -> ``struct``.

:func:`to_arrow_field` tags fields with ``PARQUET:field_id`` metadata (the Paimon field id), as
Java's ``ArrowUtils.toArrowField`` and pypaimon-rust do; readers never require it.

Arrow -> Paimon accepts more than Paimon writes: large/view strings and binaries, large lists,
any timestamp unit, decimal32/64/256 up to precision 38, unsigned integers widened to the next
signed type (uint64 is refused), float16, date64 and dictionary-encoded values.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from paimon_core.exceptions import SchemaError
from paimon_core.schema.data_types import (
    ArrayType,
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
    MapType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

__all__ = [
    "FIELD_ID_KEY",
    "fields_from_arrow_schema",
    "from_arrow_schema",
    "from_arrow_type",
    "timestamp_unit",
    "to_arrow_field",
    "to_arrow_schema",
    "to_arrow_type",
]

#: Arrow field-metadata key carrying the Paimon field id (written into Parquet as its field id).
FIELD_ID_KEY = b"PARQUET:field_id"
_DESCRIPTION_KEY = b"description"

# Java SpecialFields: ids of the synthetic list-element / map key / map value fields.
_STRUCTURED_TYPE_FIELD_ID_BASE = (2**31 - 1) // 4
_STRUCTURED_TYPE_FIELD_DEPTH_LIMIT = 1 << 10

_UNIT_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def timestamp_unit(precision: int) -> str:
    """Arrow time unit for a TIMESTAMP precision: ``s``, ``ms``, ``us`` or ``ns``."""
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


def to_arrow_type(t: DataType) -> pa.DataType:
    """The pyarrow type that holds values of Paimon type ``t``."""
    simple = _SIMPLE_TO_ARROW.get(type(t))
    if simple is not None:
        return simple
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, TimestampType):
        return pa.timestamp(timestamp_unit(t.precision))
    if isinstance(t, LocalZonedTimestampType):
        return pa.timestamp(timestamp_unit(t.precision), tz="UTC")
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("item", to_arrow_type(t.element), nullable=t.element.nullable))
    if isinstance(t, MapType):
        return pa.map_(
            pa.field("key", to_arrow_type(t.key), nullable=False),
            pa.field("value", to_arrow_type(t.value), nullable=t.value.nullable),
        )
    if isinstance(t, RowType):
        return pa.struct([to_arrow_field(f, field_ids=False) for f in t.fields])
    raise SchemaError(f"Type {t} has no Arrow equivalent")


_SIMPLE_TO_ARROW: dict[type[DataType], pa.DataType] = {
    BooleanType: pa.bool_(),
    TinyIntType: pa.int8(),
    SmallIntType: pa.int16(),
    IntType: pa.int32(),
    BigIntType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    CharType: pa.string(),
    VarCharType: pa.string(),
    BinaryType: pa.binary(),
    VarBinaryType: pa.binary(),
    DateType: pa.date32(),
    TimeType: pa.time32("ms"),
}


def _id_meta(field_id: int) -> dict[bytes, bytes]:
    return {FIELD_ID_KEY: str(field_id).encode()}


def _arrow_type_with_ids(t: DataType, field_id: int, depth: int) -> pa.DataType:
    """Like :func:`to_arrow_type`, with Java's field ids on every nested Arrow field."""
    if isinstance(t, ArrayType):
        element_id = (
            _STRUCTURED_TYPE_FIELD_ID_BASE + field_id * _STRUCTURED_TYPE_FIELD_DEPTH_LIMIT + depth + 1
        )
        element = pa.field(
            "item",
            _arrow_type_with_ids(t.element, field_id, depth + 1),
            nullable=t.element.nullable,
            metadata=_id_meta(element_id),
        )
        return pa.list_(element)
    if isinstance(t, MapType):
        key_id = _STRUCTURED_TYPE_FIELD_ID_BASE - field_id * _STRUCTURED_TYPE_FIELD_DEPTH_LIMIT - depth - 1
        value_id = _STRUCTURED_TYPE_FIELD_ID_BASE + field_id * _STRUCTURED_TYPE_FIELD_DEPTH_LIMIT + depth + 1
        return pa.map_(
            pa.field(
                "key",
                _arrow_type_with_ids(t.key, field_id, depth + 1),
                nullable=False,
                metadata=_id_meta(key_id),
            ),
            pa.field(
                "value",
                _arrow_type_with_ids(t.value, field_id, depth + 1),
                nullable=t.value.nullable,
                metadata=_id_meta(value_id),
            ),
        )
    if isinstance(t, RowType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    return to_arrow_type(t)


def to_arrow_field(f: DataField, *, field_ids: bool = True) -> pa.Field:
    """Arrow field for a Paimon field; nullability from its type.

    With ``field_ids`` (the default) the field, and every nested field, carries its Paimon id
    under ``PARQUET:field_id`` (list elements and map keys/values get Java's synthetic ids), so
    that Parquet files written from it have field ids as Java and pypaimon-rust write them.
    The description, if any, goes under ``description`` (pypaimon's key).
    """
    metadata: dict[bytes, bytes] = {}
    if field_ids:
        metadata.update(_id_meta(f.id))
        arrow_type = _arrow_type_with_ids(f.type, f.id, 0)
    else:
        arrow_type = to_arrow_type(f.type)
    if f.description:
        metadata[_DESCRIPTION_KEY] = f.description.encode()
    return pa.field(f.name, arrow_type, nullable=f.type.nullable, metadata=metadata or None)


def to_arrow_schema(fields: Sequence[DataField], *, field_ids: bool = True) -> pa.Schema:
    """Arrow schema of the given Paimon fields, in order (see :func:`to_arrow_field`)."""
    return pa.schema([to_arrow_field(f, field_ids=field_ids) for f in fields])


# --------------------------------------------------------------------------------------------
# Arrow -> Paimon
# --------------------------------------------------------------------------------------------


def from_arrow_type(t: pa.DataType, nullable: bool = True) -> DataType:
    """The Paimon type for an Arrow type. Nested ROW fields get ids 0..n-1 (see
    :func:`fields_from_arrow_schema` for globally unique ids)."""
    return _from_arrow(t, nullable)


def _from_arrow(t: pa.DataType, nullable: bool) -> DataType:
    types = pa.types
    if types.is_boolean(t):
        return BooleanType(nullable=nullable)
    if types.is_int8(t):
        return TinyIntType(nullable=nullable)
    if types.is_int16(t) or types.is_uint8(t):
        return SmallIntType(nullable=nullable)
    if types.is_int32(t) or types.is_uint16(t):
        return IntType(nullable=nullable)
    if types.is_int64(t) or types.is_uint32(t):
        return BigIntType(nullable=nullable)
    if types.is_uint64(t):
        raise SchemaError("Arrow type uint64 does not fit any Paimon type (BIGINT is signed 64-bit)")
    if types.is_float16(t) or types.is_float32(t):
        return FloatType(nullable=nullable)
    if types.is_float64(t):
        return DoubleType(nullable=nullable)
    if types.is_string(t) or types.is_large_string(t) or _is_view(t, "string_view"):
        return VarCharType(VarCharType.MAX_LENGTH, nullable=nullable)
    if types.is_fixed_size_binary(t):
        return BinaryType(t.byte_width, nullable=nullable)
    if types.is_binary(t) or types.is_large_binary(t) or _is_view(t, "binary_view"):
        return VarBinaryType(VarBinaryType.MAX_LENGTH, nullable=nullable)
    if types.is_decimal(t):
        if t.precision > DecimalType.MAX_PRECISION:
            raise SchemaError(f"Arrow type {t} exceeds Paimon's maximum DECIMAL precision 38")
        if t.scale < 0:
            raise SchemaError(f"Arrow type {t} has a negative scale, which Paimon does not support")
        return DecimalType(t.precision, t.scale, nullable=nullable)
    if types.is_timestamp(t):
        precision = _UNIT_PRECISION[t.unit]
        if t.tz is None:
            return TimestampType(precision, nullable=nullable)
        return LocalZonedTimestampType(precision, nullable=nullable)
    if types.is_date32(t) or types.is_date64(t):
        return DateType(nullable=nullable)
    if types.is_time(t):
        return TimeType(_UNIT_PRECISION[t.unit], nullable=nullable)
    if types.is_dictionary(t):
        return _from_arrow(t.value_type, nullable)
    if types.is_list(t) or types.is_large_list(t) or _is_view(t, "list_view", "large_list_view"):
        value_field = t.value_field
        return ArrayType(_from_arrow(value_field.type, value_field.nullable), nullable=nullable)
    if types.is_map(t):
        key = _from_arrow(t.key_field.type, False)
        value = _from_arrow(t.item_field.type, t.item_field.nullable)
        return MapType(key, value, nullable=nullable)
    if types.is_struct(t):
        fields = tuple(
            DataField(i, sub.name, _from_arrow(sub.type, sub.nullable), _description(sub))
            for i, sub in enumerate(t.field(j) for j in range(t.num_fields))
        )
        return RowType(fields, nullable=nullable)
    raise SchemaError(f"Arrow type {t} has no Paimon equivalent")


def _is_view(t: pa.DataType, *names: str) -> bool:
    return any(getattr(pa.types, f"is_{n}", lambda _t: False)(t) for n in names)


def _description(f: pa.Field) -> str | None:
    if f.metadata and _DESCRIPTION_KEY in f.metadata:
        return bytes(f.metadata[_DESCRIPTION_KEY]).decode()
    return None


def from_arrow_schema(schema: pa.Schema) -> list[tuple[str, DataType]]:
    """(name, Paimon type) for each top-level Arrow field, nullability from the field."""
    return [(f.name, from_arrow_type(f.type, f.nullable)) for f in schema]


def _reassign_ids(t: DataType, counter: list[int]) -> DataType:
    """Java's ``ReassignFieldId``: nested ROW fields draw from the running counter, each
    field's nested type before the field itself."""
    if isinstance(t, RowType):
        new_fields = []
        for f in t.fields:
            new_type = _reassign_ids(f.type, counter)
            counter[0] += 1
            new_fields.append(DataField(counter[0], f.name, new_type, f.description, f.default_value))
        return RowType(tuple(new_fields), nullable=t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_reassign_ids(t.element, counter), nullable=t.nullable)
    if isinstance(t, MapType):
        return MapType(_reassign_ids(t.key, counter), _reassign_ids(t.value, counter), nullable=t.nullable)
    return t


def fields_from_arrow_schema(schema: pa.Schema, *, first_id: int = 0) -> tuple[list[DataField], int]:
    """Paimon fields for an Arrow schema, with ids assigned as Java's ``Schema.Builder`` does.

    Each top-level column takes the next id from a running counter, then the ROW fields nested
    in its type take ids from the same counter (children of a nested field before the field).
    For ``a INT, b ROW<x INT, y INT>, c INT`` that is a=0, b=1, x=2, y=3, c=4.
    Returns the fields and the highest id assigned (``first_id - 1`` for an empty schema).
    """
    counter = [first_id - 1]
    fields: list[DataField] = []
    for f in schema:
        counter[0] += 1
        top_id = counter[0]
        t = _reassign_ids(from_arrow_type(f.type, f.nullable), counter)
        fields.append(DataField(top_id, f.name, t, _description(f)))
    return fields, counter[0]
