"""Checks a schema must pass before it is written (Paimon's SchemaValidation)."""

from __future__ import annotations

from paimon_core.exceptions import SchemaError
from paimon_core.format.format_options import AvroSettings, OrcSettings, ParquetSettings
from paimon_core.options import CoreOptions, validate_options
from paimon_core.options_support import check_file_index_options, check_supported_options
from paimon_core.options_validation import check_option_values
from paimon_core.schema.data_types import ArrayType, DataType, MapType, RowType
from paimon_core.schema.option_checks import check_field_names, check_options_against_schema
from paimon_core.schema.table_schema import TableSchema


def _is_nested(t: DataType) -> bool:
    return isinstance(t, (ArrayType, MapType, RowType))


def validate_table_schema(schema: TableSchema) -> None:
    """Raise SchemaError / InvalidOptionError naming the problem; return None if valid."""
    names = schema.field_names
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaError(f"Duplicate column names: {', '.join(dupes)}")
    if not names:
        raise SchemaError("A table needs at least one column")
    check_field_names(names)
    for key_kind, keys in (("partition key", schema.partition_keys), ("primary key", schema.primary_keys)):
        if len(set(keys)) != len(keys):
            raise SchemaError(f"Duplicate {key_kind} columns: {list(keys)}")
        for k in keys:
            if k not in names:
                raise SchemaError(f"{key_kind.capitalize()} column '{k}' is not a column of the table")
            t = schema.field(k).type
            if _is_nested(t):
                raise SchemaError(f"{key_kind.capitalize()} column '{k}' has type {t}; nested types cannot be keys")
    validate_options(schema.options)
    check_supported_options(schema.options, action="create or alter the table")
    check_file_index_options(schema.fields, schema.options, action="create or alter the table")
    opts = CoreOptions(schema.options)
    check_option_values(opts)  # bucket range, retention min <= max, dynamic-bucket.*
    bucket = opts.bucket
    if schema.primary_keys:
        if set(schema.partition_keys) - set(schema.primary_keys) and bucket != -1:
            raise SchemaError(
                f"Primary key {list(schema.primary_keys)} must contain all partition keys "
                f"{list(schema.partition_keys)} (cross-partition upsert needs bucket = -1)"
            )
        schema.trimmed_primary_keys  # noqa: B018 - raises if the PK is only partition keys
        for bk in opts.bucket_key:
            if bk not in schema.primary_keys:
                raise SchemaError(f"Bucket key '{bk}' must be part of the primary key {list(schema.primary_keys)}")
    else:
        if opts.bucket_key and bucket < 1:
            raise SchemaError("Option 'bucket-key' needs a fixed 'bucket' > 0 on an append table")
        if bucket > 0 and not opts.bucket_key:
            raise SchemaError("An append table with a fixed 'bucket' needs 'bucket-key'")
        if opts.merge_engine != "deduplicate" and "merge-engine" in schema.options:
            raise SchemaError("Option 'merge-engine' only applies to primary-key tables")
    for bk in opts.bucket_key:
        if bk not in names:
            raise SchemaError(f"Bucket key '{bk}' is not a column of the table")
        if bk in schema.partition_keys:
            raise SchemaError(f"Bucket key '{bk}' cannot be a partition key")
        if _is_nested(schema.field(bk).type):
            raise SchemaError(f"Bucket key '{bk}' has a nested type; not allowed")
    check_options_against_schema(schema, opts)
    fmt = opts.file_format
    if fmt not in ("parquet", "orc", "avro"):
        raise SchemaError(f"Option 'file.format' must be parquet, orc or avro; got {fmt!r}")
    # Codec and writer options of the table's format (file.compression, parquet.*, orc.*,
    # avro.codec): refused now, not at the first write (InvalidOptionError names the option).
    if fmt == "parquet":
        ParquetSettings.from_options(schema.options)
    elif fmt == "orc":
        OrcSettings.from_options(schema.options)
    else:
        AvroSettings.from_options(schema.options)
