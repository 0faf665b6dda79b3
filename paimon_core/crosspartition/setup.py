"""Build the :class:`GlobalIndexAssigner` of a cross-partition write (Java's
``GlobalDynamicBucketSink`` wiring: checks, bootstrap, overwrite scope)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.crosspartition.existing_processor import mode_for
from paimon_core.crosspartition.global_index_assigner import GlobalIndexAssigner
from paimon_core.crosspartition.index_bootstrap import (
    BOOTSTRAP_PARALLELISM,
    BOOTSTRAP_PARALLELISM_DEFAULT,
    INDEX_TTL,
    BootstrapKeys,
    BootstrapSplit,
)
from paimon_core.crosspartition.partitions import PartitionRegistry
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.index.bucket_assigner import DynamicBucketConfig
from paimon_core.options import CoreOptions, parse_duration_ms
from paimon_core.predicate import PredicateBuilder

if TYPE_CHECKING:
    from paimon_core.operation.commit.committer import OverwriteSpec
    from paimon_core.store.file_store import FileStore


def is_cross_partition(primary_keys: list[str], partition_keys: list[str]) -> bool:
    """Java's ``TableSchema.crossPartitionUpdate``: a primary key missing some partition key."""
    return bool(primary_keys) and bool(partition_keys) and not set(partition_keys) <= set(primary_keys)


def check_cross_partition_options(table_name: str, options: Mapping[str, str], primary_keys: list[str],
                                  partition_keys: list[str]) -> None:
    """InvalidArgumentError (naming the fix) for settings Java rejects on cross-partition tables."""
    bucket = CoreOptions(options).bucket
    if bucket != -1:
        raise InvalidArgumentError(
            f"Table {table_name}: primary key {primary_keys} does not contain all partition keys {partition_keys}, "
            f"so an upsert may move a key across partitions; that needs dynamic bucket mode: set 'bucket' = '-1' "
            f"(it is {bucket}), or add the partition keys to the primary key"
        )
    if options.get("sequence.field", "").strip():
        raise InvalidArgumentError(
            f"Table {table_name}: you can not use sequence.field in cross partition update case (primary key "
            f"{primary_keys} does not include all partition fields {partition_keys}); remove 'sequence.field'"
        )


def new_global_index_assigner(
    store: FileStore,
    *,
    options: Mapping[str, str],
    overwrite: OverwriteSpec | None,
    path_of: Callable[[list[object | None]], str],
    rowkind_field: str | None,
    bootstrap_keys: BootstrapKeys,
) -> GlobalIndexAssigner:
    """The assigner of one write; the key index is bootstrapped at its first batch, by
    ``bootstrap_keys`` (the table's reader of the live keys, :mod:`paimon_core.table.index_bootstrap`)."""
    schema = store.schema
    check_cross_partition_options(store.name, options, list(schema.primary_keys), list(schema.partition_keys))
    config = DynamicBucketConfig.from_options(options)
    part_schema = pa.schema([store.arrow_schema.field(f.name) for f in schema.partition_fields])
    registry = PartitionRegistry(schema.partition_fields, part_schema, path_of)
    in_scope: Callable[[bytes], bool] | None = None
    if overwrite is not None and overwrite.static_partition:
        builder = PredicateBuilder(schema.partition_fields)
        pred = builder.and_(
            *[builder.is_null(k) if v is None else builder.equal(k, v) for k, v in overwrite.static_partition.items()]
        )
        codec = store.partition_codec

        def in_scope(partition: bytes) -> bool:
            return pred.test_values(codec.decode(partition))

    elif overwrite is not None and overwrite.dynamic:
        raise InvalidArgumentError(
            f"Table {store.name}: dynamic partition overwrite of a cross-partition upsert table is not supported "
            "(an upsert may retract keys in partitions it does not overwrite); pass the partition to overwrite "
            "(overwrite({...})) or overwrite the whole table (overwrite(dynamic=False))"
        )
    whole_table = overwrite is not None and in_scope is None
    scope_hint = f"{store.name} partition {dict(overwrite.static_partition)}" if overwrite and overwrite.static_partition else ""
    ttl = options.get(INDEX_TTL)
    core = CoreOptions(options)
    key_names = list(schema.primary_keys)

    def bootstrap() -> list[BootstrapSplit]:
        if whole_table:  # every old row goes: nothing to look up
            return []
        from paimon_core.operation.stale_snapshot import read_from_latest

        # the latest snapshot may be expired while its files are read: start again from the new one
        return read_from_latest(
            store.snapshot_manager,
            lambda latest: bootstrap_keys(
                latest,
                key_names=key_names,
                skip_partition=in_scope,
                index_ttl_ms=parse_duration_ms(ttl, key=INDEX_TTL) if ttl else None,
                parallelism=int(options.get(BOOTSTRAP_PARALLELISM, str(BOOTSTRAP_PARALLELISM_DEFAULT))),
            ),
            table=store.name,
            what="Bootstrapping the cross-partition key index",
        )

    return GlobalIndexAssigner(
        key_fields=schema.fields_of(key_names),
        registry=registry,
        mode=mode_for(core.merge_engine),
        target_row_num=config.target_row_num,
        num_assigners=config.num_assigners,
        rowkind_field=rowkind_field,
        in_scope=in_scope,
        scope_hint=scope_hint,
        bootstrap=bootstrap,
    )
