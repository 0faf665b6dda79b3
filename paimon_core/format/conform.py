"""Bring batches read from any writer's data files to the canonical Arrow types.

Different writers store the same Paimon type differently: Java writes TIMESTAMP(7..9) as
Parquet INT96 and DECIMAL as INT32/INT64/FIXED_LEN_BYTE_ARRAY, ORC has no TIME type (stored
as int millis) and reads timestamps as nanoseconds, Avro has only 32/64-bit ints, parquet-rs
may produce large/view types, and pyarrow may hand out dictionaries. :func:`conform_to_schema`
casts such columns, by name, to the Arrow types of the table schema -- but only with casts
that cannot lose or reinterpret data (pyarrow's ``safe=True`` checks overflow and truncation).
Anything else is a :class:`SchemaMismatchError`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pt

from paimon_core.exceptions import SchemaMismatchError

__all__ = ["conform_array", "conform_to_schema"]


def conform_to_schema(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """Select ``target``'s columns from ``batch`` by name and cast them to ``target``'s types.

    Extra columns of ``batch`` are dropped; a missing column, an unsafe cast or a null in a
    non-nullable target field raises :class:`SchemaMismatchError`. The result carries
    ``target`` as its schema (names, nullability, metadata).
    """
    names = batch.schema.names
    index = {n: i for i, n in enumerate(names)}
    if len(index) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise SchemaMismatchError(f"Duplicate column names {dup} in batch", columns=dup)
    missing = [f.name for f in target if f.name not in index]
    if missing:
        raise SchemaMismatchError(f"Columns {missing} are missing (available: {names})", missing=missing)
    arrays: list[pa.Array] = []
    for field in target:
        arr = batch.column(index[field.name])
        if arr.type != field.type:
            arr = conform_array(arr, field.type, name=field.name)
        if not field.nullable and arr.null_count:
            raise SchemaMismatchError(
                f"Column '{field.name}' is NOT NULL but has {arr.null_count} null value(s)",
                column=field.name,
            )
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def conform_array(arr: pa.Array, target: pa.DataType, *, name: str = "<value>") -> pa.Array:
    """Cast one array to ``target`` with the safe conversions of :func:`conform_to_schema`."""
    src = arr.type
    if src == target:
        return arr
    if pt.is_dictionary(src):
        return conform_array(arr.dictionary_decode(), target, name=name)
    if pt.is_null(src):
        return pa.nulls(len(arr), type=target)
    if pt.is_struct(target):
        return _conform_struct(arr, target, name)
    if pt.is_map(target):
        return _conform_map(arr, target, name)
    if pt.is_list(target) or pt.is_large_list(target):
        return _conform_list(arr, target, name)
    if not _is_safe_leaf(src, target):
        raise SchemaMismatchError(
            f"Column '{name}': cannot convert {src} to {target} without risk of changing values",
            column=name,
            source_type=str(src),
            target_type=str(target),
        )
    if pt.is_integer(src) and (pt.is_time32(target) or pt.is_time64(target)):
        # ORC has no TIME type: Java and pypaimon store milliseconds of the day as int.
        arr = arr.cast(pa.int32(), safe=True).cast(pa.time32("ms"))
        if arr.type == target:
            return arr
    try:
        return arr.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaMismatchError(
            f"Column '{name}': cannot convert {src} to {target} safely: {e}",
            column=name,
            source_type=str(src),
            target_type=str(target),
        ) from e


def _family(t: pa.DataType) -> str | None:
    if pt.is_integer(t):
        return "int"
    if pt.is_floating(t):
        return "float"
    if pt.is_boolean(t):
        return "bool"
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return "string"
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_binary_view(t) or pt.is_fixed_size_binary(t):
        return "binary"
    if pt.is_decimal(t):
        return "decimal"
    if pt.is_timestamp(t):
        return "timestamp"
    if pt.is_date(t):
        return "date"
    if pt.is_time(t):
        return "time"
    return None


def _is_safe_leaf(src: pa.DataType, target: pa.DataType) -> bool:
    fs, ft = _family(src), _family(target)
    if fs is None or ft is None:
        return False
    if fs == "int" and ft == "time":
        return src.bit_width <= 32
    if fs != ft:
        return False
    if fs == "float":
        return bool(target.bit_width >= src.bit_width)
    return True


def _normalized_offsets(arr: pa.Array) -> tuple[pa.Array, int, int]:
    """Offsets of a (possibly sliced) list/map array rebased to 0, and the child range."""
    offsets = arr.offsets
    start = offsets[0].as_py()
    end = offsets[-1].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, start, end


def _mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def _conform_list(arr: pa.Array, target: pa.DataType, name: str) -> pa.Array:
    src = arr.type
    if not (pt.is_list(src) or pt.is_large_list(src) or pt.is_fixed_size_list(src) or pt.is_list_view(src)):
        raise SchemaMismatchError(f"Column '{name}': cannot convert {src} to {target}", column=name)
    if pt.is_fixed_size_list(src) or pt.is_list_view(src):
        arr = arr.cast(pa.list_(src.value_field))
    offsets, start, end = _normalized_offsets(arr)
    values = conform_array(arr.values.slice(start, end - start), target.value_type, name=f"{name}.element")
    if pt.is_large_list(target):
        return pa.LargeListArray.from_arrays(offsets.cast(pa.int64()), values, type=target, mask=_mask(arr))
    return pa.ListArray.from_arrays(offsets.cast(pa.int32()), values, type=target, mask=_mask(arr))


def _conform_map(arr: pa.Array, target: pa.MapType, name: str) -> pa.Array:
    if not pt.is_map(arr.type):
        raise SchemaMismatchError(f"Column '{name}': cannot convert {arr.type} to {target}", column=name)
    offsets, start, end = _normalized_offsets(arr)
    keys = conform_array(arr.keys.slice(start, end - start), target.key_type, name=f"{name}.key")
    items = conform_array(arr.items.slice(start, end - start), target.item_type, name=f"{name}.value")
    return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_mask(arr))


def _conform_struct(arr: pa.Array, target: pa.StructType, name: str) -> pa.Array:
    src = arr.type
    if not pt.is_struct(src):
        raise SchemaMismatchError(f"Column '{name}': cannot convert {src} to {target}", column=name)
    index = {src.field(i).name: i for i in range(src.num_fields)}
    children: list[pa.Array] = []
    fields: list[pa.Field] = []
    for i in range(target.num_fields):
        tf = target.field(i)
        if tf.name not in index:
            raise SchemaMismatchError(
                f"Column '{name}': nested field '{tf.name}' is missing in {src}", column=name
            )
        child = pc.struct_field(arr, [index[tf.name]])
        children.append(conform_array(child, tf.type, name=f"{name}.{tf.name}"))
        fields.append(tf)
    return pa.StructArray.from_arrays(children, fields=fields, mask=_mask(arr))
