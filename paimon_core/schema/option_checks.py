"""Checks of table options against the columns and keys of the schema (Paimon's SchemaValidation).

Called by :func:`~paimon_core.schema.schema_validation.validate_table_schema` when a table
is created or altered, after the options passed their per-key checks. Each check refuses,
with the option's name and value, a combination Java refuses too; the merge function of a
primary-key table is built once (Java's ``validateMergeFunction``), so every merge-engine
option (``sequence.field``, ``fields.*.aggregate-function``, sequence groups ...) is checked
at create/alter rather than at the first write or read.
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_core.exceptions import InvalidOptionError, SchemaError
from paimon_core.options import CoreOptions
from paimon_core.schema.startup_mode_checks import check_startup_mode
from paimon_core.schema.table_schema import TableSchema

__all__ = ["KEY_FIELD_PREFIX", "SYSTEM_FIELD_NAMES", "check_field_names", "check_options_against_schema"]

#: Column names Paimon uses for its own columns in data files and system tables (Java's SpecialFields).
SYSTEM_FIELD_NAMES = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"})
KEY_FIELD_PREFIX = "_KEY_"
_DEFAULT_AGG_FUNCTION = "default-aggregate-function"


def check_field_names(names: Sequence[str]) -> None:
    """SchemaError for a column named like a system column or with the ``_KEY_`` prefix."""
    for name in names:
        if name in SYSTEM_FIELD_NAMES:
            raise SchemaError(
                f"Column name '{name}' is reserved for Paimon's system columns {sorted(SYSTEM_FIELD_NAMES)}",
                column=name,
            )
        if name.startswith(KEY_FIELD_PREFIX):
            raise SchemaError(
                f"Column name '{name}' cannot start with '{KEY_FIELD_PREFIX}' (Paimon's key columns in data files)",
                column=name,
            )


def _refuse(key: str, value: str, why: str) -> InvalidOptionError:
    return InvalidOptionError(f"Option '{key}' = '{value}' {why}", key=key, value=value)


def check_options_against_schema(schema: TableSchema, opts: CoreOptions) -> None:
    """InvalidOptionError naming the option for a value that does not fit the schema."""
    options = opts.options
    names = schema.field_names
    has_pk = bool(schema.primary_keys)
    _check_fields_prefix(options, names)
    check_startup_mode(options)
    rowkind = options.get("rowkind.field")
    if rowkind is not None and rowkind not in names:
        raise _refuse("rowkind.field", rowkind, f"names no column of the table (columns: {names})")
    producer = options.get("changelog-producer")
    if not has_pk and producer is not None and producer.strip().lower() != "none":
        raise _refuse(
            "changelog-producer", producer, "needs a primary key: an append table has no changelog to produce"
        )
    expiration = options.get("partition.expiration-time")
    if expiration is not None and not schema.partition_keys:
        raise _refuse("partition.expiration-time", expiration, "cannot be set on a table without partition keys")
    bucket = opts.bucket
    bucket_key = options.get("bucket-key")
    if bucket == -1 and bucket_key is not None:
        raise _refuse(
            "bucket-key", bucket_key, "cannot be used with bucket = -1: remove 'bucket-key' or set a number of buckets"
        )
    if bucket == -2 and not has_pk:
        raise _refuse("bucket", "-2", "(postpone bucket) needs a primary key; use -1 or a number of buckets")
    delta_commits = options.get("full-compaction.delta-commits")
    if delta_commits is not None:
        if not has_pk and bucket == -1:
            raise _refuse(
                "full-compaction.delta-commits", delta_commits,
                "is not supported by append tables with bucket = -1 (unaware bucket)",
            )
        if (producer or "").strip().lower() == "lookup":
            raise _refuse(
                "full-compaction.delta-commits", delta_commits,
                "is incompatible with changelog-producer = 'lookup'; use changelog-producer = 'full-compaction' "
                "for periodic full compaction with changelog, or remove the option",
            )
    overwrite = (options.get("streaming-read-overwrite") or "false").strip().lower() == "true"
    if overwrite and not has_pk:
        raise _refuse("streaming-read-overwrite", "true", "needs a primary key")
    if overwrite and (producer or "").strip().lower() in ("full-compaction", "lookup"):
        raise _refuse(
            "streaming-read-overwrite", "true",
            f"cannot be used with changelog-producer = '{producer}': the changes would be read twice",
        )
    _check_sequence_fields(schema, opts)
    _check_manifest_sort(schema, opts)


def _check_manifest_sort(schema: TableSchema, opts: CoreOptions) -> None:
    """Java's ``SchemaValidation.validateManifestSort``."""
    if (opts.get("manifest-sort.enabled") or "false").strip().lower() != "true":
        return
    data_evolution = (opts.get("data-evolution.enabled") or "false").strip().lower() == "true"
    from paimon_core.manifest.sorter import sort_field_index

    if data_evolution and not schema.partition_keys:
        return  # Java sorts such manifests by row id
    sort_field_index(schema.partition_keys, (opts.get("manifest-sort.partition-field") or "").strip() or None)


def _check_fields_prefix(options: dict[str, str], names: Sequence[str]) -> None:
    """``fields.<name>[,<name>].<suffix>`` must name columns (Java's validateFieldsPrefix)."""
    for key in options:
        if not key.startswith("fields."):
            continue
        for name in key.split(".")[1].split(","):
            if name != _DEFAULT_AGG_FUNCTION and name not in names:
                raise InvalidOptionError(
                    f"Option '{key}' names column '{name}', which is not a column of the table (columns: {list(names)})",
                    key=key,
                )


def _check_sequence_fields(schema: TableSchema, opts: CoreOptions) -> None:
    from paimon_core.crosspartition.setup import is_cross_partition
    from paimon_core.mergetree.merge_options import SEQUENCE_FIELD, sequence_fields

    names = schema.field_names
    seq = sequence_fields(opts.options, names)  # columns exist, no aggregate on them, no repeats
    pks, parts = list(schema.primary_keys), list(schema.partition_keys)
    if seq and is_cross_partition(pks, parts):
        raise _refuse(
            SEQUENCE_FIELD, opts.options[SEQUENCE_FIELD],
            f"cannot be used when the primary key {pks} does not contain all partition keys {parts} "
            "(cross-partition update)",
        )
    if pks:
        from paimon_core.mergetree.merge_function import create_merge_function

        key_fields = schema.fields_of(schema.trimmed_primary_keys)
        create_merge_function(key_fields, list(schema.fields), opts.options)  # Java's validateMergeFunction
