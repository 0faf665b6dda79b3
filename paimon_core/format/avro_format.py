"""Avro data files, written and read with fastavro.

The Avro schema follows Java's ``AvroSchemaConverter``:

* the record is ``org.apache.paimon.avro.generated.record``; a nested row in field ``f`` is
  the record ``<parent>_f`` (array elements and map values reuse the field's name);
* nullable types are ``["null", T]`` and nullable record fields get ``"default": null``;
* TINYINT/SMALLINT/INT are ``int``, DECIMAL is ``bytes`` with the ``decimal`` logical type,
  DATE ``int``/``date``, TIME ``int``/``time-millis``;
* TIMESTAMP(p) is ``long`` with ``timestamp-millis`` (p <= 3) or ``timestamp-micros`` (p <= 6),
  TIMESTAMP_LTZ uses ``local-timestamp-millis``/``-micros`` (Java's choice, mirrored by pypaimon).
  Java refuses p > 6; we write nanoseconds with Avro 1.12's ``timestamp-nanos`` /
  ``local-timestamp-nanos`` so such columns still round-trip;
* maps with string keys are Avro maps; other keys become an array of ``{key, value}`` records
  tagged ``"logicalType": "map"``.

fastavro works record by record (the one place where rows are visited in Python); columns are
converted to and from Arrow in bulk (``to_pylist`` / ``pa.array``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import fastavro
import pyarrow as pa
import pyarrow.types as pt

from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.format.format_base import (
    BaseFormatWriter,
    check_columns,
    corrupt,
    filter_batch,
    guard_read,
    is_decode_error,
)
from paimon_core.format.format_options import AVRO_SYNC_INTERVAL, AvroSettings

if TYPE_CHECKING:
    import pyarrow.compute as pc

    from paimon_core.io.file_io import FileIO

RECORD_NAME = "org.apache.paimon.avro.generated.record"

AvroSchema = Any  # str | dict | list: fastavro's schema JSON
_Fixer = Callable[[Any], Any]


# --- Arrow -> Avro schema ------------------------------------------------------------------


def avro_schema(schema: pa.Schema) -> dict[str, Any]:
    """The Avro record schema Java's ``AvroSchemaConverter`` derives for these columns."""
    return _record(list(schema), RECORD_NAME)


def _record(fields: Sequence[pa.Field], row_name: str) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for f in fields:
        entry: dict[str, Any] = {
            "name": f.name,
            "type": _nullable(_avro_type(f.type, f"{row_name}_{f.name}"), f.nullable),
        }
        if f.nullable:
            entry["default"] = None
        out.append(entry)
    return {"type": "record", "name": row_name, "fields": out}


def _nullable(t: AvroSchema, nullable: bool) -> AvroSchema:
    return ["null", t] if nullable else t


def _timestamp(t: pa.TimestampType) -> dict[str, Any]:
    unit = {"s": "millis", "ms": "millis", "us": "micros", "ns": "nanos"}[t.unit]
    prefix = "timestamp" if t.tz is None else "local-timestamp"
    return {"type": "long", "logicalType": f"{prefix}-{unit}"}


def _avro_type(t: pa.DataType, row_name: str) -> AvroSchema:
    if pt.is_boolean(t):
        return "boolean"
    if pt.is_integer(t):
        return "long" if t.bit_width > 32 or (pt.is_unsigned_integer(t) and t.bit_width == 32) else "int"
    if pt.is_float16(t) or pt.is_float32(t):
        return "float"
    if pt.is_float64(t):
        return "double"
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return "string"
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_binary_view(t) or pt.is_fixed_size_binary(t):
        return "bytes"
    if pt.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pt.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pt.is_time(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pt.is_timestamp(t):
        return _timestamp(t)
    if pt.is_struct(t):
        return _record(list(t), row_name)
    if pt.is_map(t):
        value = _nullable(_avro_type(t.item_type, row_name), t.item_field.nullable)
        if _is_string(t.key_type):
            return {"type": "map", "values": value}
        entry = {
            "type": "record",
            "name": row_name,
            "fields": [
                {"name": "key", "type": _avro_type(t.key_type, f"{row_name}_key")},
                {
                    "name": "value",
                    "type": _nullable(_avro_type(t.item_type, f"{row_name}_value"), t.item_field.nullable),
                    **({"default": None} if t.item_field.nullable else {}),
                },
            ],
        }
        return {"type": "array", "items": entry, "logicalType": "map"}
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return {
            "type": "array",
            "items": _nullable(_avro_type(t.value_type, row_name), t.value_field.nullable),
        }
    raise SchemaMismatchError(f"Arrow type {t} has no Avro representation", arrow_type=str(t))


def _is_string(t: pa.DataType) -> bool:
    return bool(pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t))


# --- Arrow values -> Avro datum ------------------------------------------------------------


def _int_storage_type(t: pa.DataType) -> pa.DataType:
    """Type with temporal leaves normalized to the Avro unit (s -> ms, time64 -> time32 ms)."""
    if pt.is_timestamp(t) and t.unit == "s":
        return pa.timestamp("ms", tz=t.tz)
    if pt.is_time(t):
        return pa.time32("ms")
    return _map_children(t, _int_storage_type)


def _raw_type(t: pa.DataType) -> pa.DataType:
    """Type with temporal leaves replaced by their integer storage."""
    if pt.is_timestamp(t):
        return pa.int64()
    if pt.is_date32(t) or pt.is_time32(t):
        return pa.int32()
    return _map_children(t, _raw_type)


def _map_children(t: pa.DataType, fn: Callable[[pa.DataType], pa.DataType]) -> pa.DataType:
    if pt.is_struct(t):
        return pa.struct([f.with_type(fn(f.type)) for f in t])
    if pt.is_map(t):
        return pa.map_(t.key_field.with_type(fn(t.key_type)), t.item_field.with_type(fn(t.item_type)))
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(fn(t.value_type)))
    return t


def _has_map(t: pa.DataType) -> bool:
    if pt.is_map(t):
        return True
    if pt.is_struct(t):
        return any(_has_map(f.type) for f in t)
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return _has_map(t.value_type)
    return False


def _fixer(t: pa.DataType) -> _Fixer | None:
    """A converter from ``to_pylist`` output to fastavro datum, or None when none is needed."""
    if not _has_map(t):
        return None
    if pt.is_map(t):
        kf, vf = _fixer(t.key_type), _fixer(t.item_type)
        as_dict = _is_string(t.key_type)

        def fix_map(v: Any) -> Any:
            if v is None:
                return None
            pairs = [(kf(k) if kf else k, vf(x) if vf else x) for k, x in v]
            return dict(pairs) if as_dict else [{"key": k, "value": x} for k, x in pairs]

        return fix_map
    if pt.is_struct(t):
        fixers = [(f.name, _fixer(f.type)) for f in t]

        def fix_struct(v: Any) -> Any:
            if v is None:
                return None
            return {name: (fx(v[name]) if fx else v[name]) for name, fx in fixers}

        return fix_struct
    inner = _fixer(t.value_type)
    if inner is None:  # unreachable: _has_map(t) means the element holds a map
        return None

    def fix_list(v: Any) -> Any:
        return None if v is None else [inner(x) for x in v]

    return fix_list


def _column_values(arr: pa.Array) -> list[Any]:
    storage = _int_storage_type(arr.type)
    if storage != arr.type:
        arr = arr.cast(storage, safe=True)
    raw = _raw_type(arr.type)
    if raw != arr.type:
        arr = arr.cast(raw)
    values: list[Any] = arr.to_pylist()
    fix = _fixer(arr.type)
    if fix is not None:
        values = [fix(v) for v in values]
    return values


class AvroFormatWriter(BaseFormatWriter):
    """Streams records into a fastavro ``Writer`` (blocks of about 64 KB like Java)."""

    def __init__(self, file_io: FileIO, path: str, schema: pa.Schema, options: Mapping[str, str]) -> None:
        settings = AvroSettings.from_options(options)
        try:
            parsed = fastavro.parse_schema(avro_schema(schema))
        except fastavro.schema.SchemaParseException as e:
            raise InvalidArgumentError(f"Schema cannot be written as Avro: {e}") from e
        super().__init__(file_io, path, schema)
        self._names = schema.names
        try:
            self._writer = fastavro.write.Writer(
                self._sink,
                parsed,
                codec=settings.codec,
                sync_interval=AVRO_SYNC_INTERVAL,
                compression_level=settings.compression_level,
            )
        except BaseException:
            self.abort()
            raise

    def _write_batch(self, batch: pa.RecordBatch) -> None:
        names = self._names
        columns = [_column_values(batch.column(i)) for i in range(batch.num_columns)]
        write = self._writer.write
        for row in zip(*columns, strict=True):
            write(dict(zip(names, row, strict=True)))

    def bytes_written(self) -> int:
        """Bytes in the file (the block being filled, at most ~64 KB, is not counted)."""
        if self._closed:
            return self._final_size or 0
        return int(self._sink.tell())

    def _finish(self) -> None:
        self._writer.flush()

    def _abort_format(self) -> None:
        """Nothing to release: the pending block is dropped with the writer."""


# --- Avro -> Arrow -------------------------------------------------------------------------

_TIMESTAMP_UNITS = {"millis": "ms", "micros": "us", "nanos": "ns"}


def _arrow_field(name: str, schema: AvroSchema) -> pa.Field:
    nullable = False
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        if len(branches) != 1:
            raise SchemaMismatchError(f"Avro union {schema} of field '{name}' is not supported", column=name)
        nullable = len(branches) != len(schema)
        schema = branches[0]
    return pa.field(name, _arrow_type(name, schema), nullable=nullable)


def _arrow_type(name: str, schema: AvroSchema) -> pa.DataType:
    if isinstance(schema, str):
        primitive = {
            "boolean": pa.bool_(),
            "int": pa.int32(),
            "long": pa.int64(),
            "float": pa.float32(),
            "double": pa.float64(),
            "string": pa.string(),
            "bytes": pa.binary(),
            "null": pa.null(),
        }.get(schema)
        if primitive is None:
            raise SchemaMismatchError(f"Avro type {schema!r} of field '{name}' is not supported", column=name)
        return primitive
    if isinstance(schema, list):
        return _arrow_field(name, schema).type
    avro_type = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal" and avro_type in ("bytes", "fixed"):
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if logical == "date" and avro_type == "int":
        return pa.date32()
    if logical == "time-millis" and avro_type == "int":
        return pa.time32("ms")
    if logical == "time-micros" and avro_type == "long":
        return pa.time64("us")
    if isinstance(logical, str) and avro_type == "long" and "timestamp-" in logical:
        prefix, _, unit = logical.rpartition("-")
        if prefix in ("timestamp", "local-timestamp") and unit in _TIMESTAMP_UNITS:
            return pa.timestamp(_TIMESTAMP_UNITS[unit], tz=None if prefix == "timestamp" else "UTC")
    if avro_type == "record":
        return pa.struct([_arrow_field(f["name"], f["type"]) for f in schema["fields"]])
    if avro_type == "array":
        items = schema["items"]
        if logical == "map" and isinstance(items, dict) and items.get("type") == "record":
            kv = {f["name"]: f["type"] for f in items["fields"]}
            key, value = _arrow_field("key", kv["key"]), _arrow_field("value", kv["value"])
            return pa.map_(key.with_nullable(False), value)
        return pa.list_(_arrow_field("element", items))
    if avro_type == "map":
        return pa.map_(pa.field("key", pa.string(), nullable=False), _arrow_field("value", schema["values"]))
    if avro_type == "fixed":
        return pa.binary(int(schema["size"]))
    if avro_type == "enum":
        return pa.string()
    return _arrow_type(name, avro_type)


def arrow_schema_from_avro(schema: AvroSchema) -> pa.Schema:
    """The natural Arrow schema of an Avro record schema (a ``["null", record]`` top level too)."""
    if isinstance(schema, list):
        records = [b for b in schema if b != "null"]
        schema = records[0] if len(records) == 1 else schema
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise SchemaMismatchError(f"Avro data file schema must be a record, got {schema!r}")
    return pa.schema([_arrow_field(f["name"], f["type"]) for f in schema["fields"]])


def _open(file_io: FileIO, path: str) -> tuple[pa.NativeFile, Any, pa.Schema]:
    source = file_io.arrow_filesystem().open_input_file(file_io.arrow_path(path))
    try:
        reader = fastavro.reader(source)
        return source, reader, arrow_schema_from_avro(reader.writer_schema)
    except Exception as e:
        source.close()
        if is_decode_error(e):
            raise corrupt(path, e) from e
        raise


def read_avro_schema(file_io: FileIO, path: str) -> pa.Schema:
    """The natural Arrow schema of an Avro data file."""
    source, _, schema = _open(file_io, path)
    source.close()
    return schema


def read_avro(
    file_io: FileIO,
    path: str,
    *,
    columns: Sequence[str] | None,
    batch_size: int,
    arrow_filter: pc.Expression | None,
) -> Iterator[pa.RecordBatch]:
    """Stream an Avro file in order, ``batch_size`` records at a time."""
    source, reader, file_schema = _open(file_io, path)
    try:
        cols = check_columns(path, file_schema, columns)
    except BaseException:
        source.close()
        raise
    out_schema = pa.schema([file_schema.field(c) for c in cols])

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            while True:
                rows = list(itertools.islice(reader, batch_size))
                if not rows:
                    return
                arrays = [pa.array([r[f.name] for r in rows], type=f.type) for f in out_schema]
                batch = pa.RecordBatch.from_arrays(arrays, schema=out_schema)
                if arrow_filter is not None:
                    batch = filter_batch(batch, arrow_filter)
                if batch.num_rows:
                    yield batch
        finally:
            source.close()

    return guard_read(path, batches())
