"""Paimon <-> Spark schemas, and Arrow batches shaped exactly as Spark expects them.

Spark checks every Arrow batch a Python data source yields against the Arrow form of the
declared schema (``pyspark.sql.pandas.types.to_arrow_schema(schema, timezone="UTC")``):
same names in order, same types (``timestamp[us]``, not ``[ms]``) and the same
nullability. :func:`spark_arrow_schema` builds that target and :func:`to_spark_batch`
casts our batches to it.

Type mapping (Paimon -> Spark): TINYINT/SMALLINT/INT/BIGINT -> Byte/Short/Integer/Long,
FLOAT/DOUBLE, DECIMAL(p, s), CHAR/VARCHAR/STRING -> String, BINARY/VARBINARY -> Binary,
DATE, TIME -> Time, TIMESTAMP(p) -> TimestampNTZ, TIMESTAMP_LTZ(p) -> Timestamp,
ARRAY/MAP/ROW -> Array/Map/Struct. NOT NULL columns become non-nullable Spark fields.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.pandas.types import to_arrow_schema as spark_to_arrow_schema
from pyspark.sql.types import StructType

from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.schema.data_types import DataField

__all__ = ["paimon_arrow_schema", "spark_arrow_schema", "spark_schema", "to_spark_batch"]

#: Spark hands timestamps to and from Python workers in this zone (its Arrow form of TimestampType).
SPARK_ARROW_TIMEZONE = "UTC"


def _spark_friendly(t: pa.DataType) -> pa.DataType:
    """Arrow types Spark's ``from_arrow_type`` accepts (TIME is ``time32[ms]`` in Paimon)."""
    if pa.types.is_time32(t):
        return pa.time64("ns")
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(f.with_type(_spark_friendly(f.type)))
    if pa.types.is_map(t):
        k, v = t.key_field, t.item_field
        return pa.map_(k.with_type(_spark_friendly(k.type)), v.with_type(_spark_friendly(v.type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_spark_friendly(f.type)) for f in t])
    return t


def paimon_arrow_schema(fields: Sequence[DataField]) -> pa.Schema:
    """The Arrow schema paimon_core reads and writes for ``fields`` (no field-id metadata)."""
    return to_arrow_schema(list(fields), field_ids=False)


def spark_schema(fields: Sequence[DataField]) -> StructType:
    """The Spark schema of a Paimon table (or of a projection of its fields)."""
    arrow = paimon_arrow_schema(fields)
    friendly = pa.schema([f.with_type(_spark_friendly(f.type)) for f in arrow])
    return from_arrow_schema(friendly, prefer_timestamp_ntz=True)


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """The exact Arrow schema Spark expects from a data source that declared ``schema``."""
    return spark_to_arrow_schema(schema, timezone=SPARK_ARROW_TIMEZONE)


def to_spark_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """Cast ``batch`` (paimon_core's Arrow form) to ``target`` (Spark's); columns matched by position."""
    if batch.schema.equals(target):
        return batch
    arrays = [
        col if col.type.equals(field.type) else col.cast(field.type)
        for col, field in zip(batch.columns, target, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=target)
