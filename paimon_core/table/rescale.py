"""Rescale: rewrite partitions of a fixed-bucket table into another bucket count (Java's ``RescaleAction``).

The sequence, as in Paimon: ``ALTER TABLE ... SET ('bucket' = 'N')``, then ``rescale`` of each
partition. New rows for a partition not rescaled yet are refused with a message naming it (at write
time, and at commit time for a writer that raced the rescale). ``rescale`` with a ``bucket_num``
other than the table's count does the ``ALTER`` first, so the table's schema history always tells
that partitions may differ (Java's rescale leaves the option alone; a later writer there would split
keys across bucket counts).

The rows of the selected partitions are read at the latest snapshot ``S`` (merged, for primary-key
tables), written by the table's own writer with ``N`` buckets, and committed as one OVERWRITE of
those partitions with ``commit.strict-mode.last-safe-snapshot = S``: if another writer committed to
the same partitions after ``S`` the commit fails (:class:`CommitConflictError`) instead of dropping
its rows, and the rescale's files are deleted again. A dry run reports what would be rewritten.

Postpone-bucket tables (``bucket = -2``), as Java's ``RescaleAction``: ``bucket_num`` is required,
the table keeps ``bucket = -2``, the real buckets of the partitions are rewritten into
``bucket_num`` and rows still in ``bucket-postpone`` stay there for the postpone compaction (which
then uses the new count).

Table-level (issue 26): the rows are read through the table's read builder and written by its
writer, so rescale takes the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError
from paimon_core.predicate import PredicateBuilder
from paimon_core.predicate.predicate import Predicate, and_all
from paimon_core.table.table import FileStoreTable

__all__ = ["RescaleResult", "rescale"]


@dataclass(frozen=True)
class RescaleResult:
    """What a rescale rewrote (or, with ``dry_run``, would rewrite)."""

    table: str
    snapshot_id: int | None
    read_snapshot_id: int
    partitions: list[str]
    from_buckets: list[int]
    to_buckets: int
    rows: int
    files_before: int
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _predicate(table: FileStoreTable, partition: Mapping[str, str] | None) -> Predicate | None:
    if not partition:
        return None
    keys = set(table.partition_keys)
    unknown = [k for k in partition if k not in keys]
    if unknown:
        raise InvalidArgumentError(
            f"{unknown} are not partition keys of {table.name} (partition keys: {table.partition_keys})"
        )
    from paimon_core.data.partition_spec import partition_spec_value

    pb = PredicateBuilder(table.schema.fields)
    types = {f.name: f.type for f in table.schema.partition_fields}
    default_name = table.options.partition_default_name
    parts = []
    for k, v in partition.items():
        value = partition_spec_value(v, types[k], column=k, default_partition_name=default_name)
        parts.append(pb.is_null(k) if value is None else pb.equal(k, value))
    return and_all(parts)


def rescale(
    table: FileStoreTable,
    *,
    bucket_num: int | None = None,
    partition: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> RescaleResult:
    """Rewrite ``partition`` (all partitions when None) with ``bucket_num`` buckets (default: the
    table's ``bucket`` option) in one strict-mode OVERWRITE commit."""
    current = table.options.bucket
    # Java's RescaleAction: a postpone-bucket table (bucket = -2) keeps its option; the partition's
    # real buckets are rewritten into bucket_num, its bucket-postpone rows stay for the compaction
    postpone = current == -2 and bool(table.schema.primary_keys)
    if (table.options.options.get("row-tracking.enabled") or "").strip().lower() == "true":
        # Java's SchemaValidation.validateRowTracking: row tracking only with bucket = -1
        raise InvalidArgumentError(
            f"rescale cannot run on {table.name}: it is a row-tracking table (row-tracking.enabled = true), "
            "which Paimon allows only with bucket = -1 (unaware buckets: no bucket count to rescale)"
        )
    if current <= 0 and not postpone:
        raise InvalidArgumentError(
            f"rescale needs a fixed-bucket table; {table.name} has bucket = {current} "
            "(dynamic and unaware-bucket tables place rows without a bucket count)"
        )
    if postpone and bucket_num is None:
        raise InvalidArgumentError(
            f"When rescaling postpone bucket tables, you must provide the resulting bucket number ({table.name})"
        )
    target = current if bucket_num is None else bucket_num
    if target <= 0:
        raise InvalidArgumentError(f"bucket_num must be a positive bucket count, got {target}")
    latest = table.latest_snapshot()
    if latest is None:
        raise InvalidArgumentError(f"Table {table.name} has no snapshot: nothing to rescale")
    source = table.copy({"scan.snapshot-id": str(latest.id)})
    rb = source.new_read_builder().with_filter(_predicate(table, partition))
    splits = rb.new_scan().plan().splits
    files = [f for s in splits for f in s.files]
    if not files:
        raise InvalidArgumentError(
            f"Partition {dict(partition or {})} of {table.name} has no data file at snapshot {latest.id}: nothing to rescale"
        )
    entries = table.new_file_store_scan().live_entries(latest)
    split_parts = {s.partition for s in splits}
    from_buckets = sorted({e.total_buckets for e in entries if e.partition in split_parts and e.bucket >= 0})
    names = sorted(table.partition_path(p) for p in split_parts)
    if dry_run:
        rows = sum(f.row_count for f in files)
        return RescaleResult(table.name, None, latest.id, names, from_buckets, target, rows, len(files), True)
    if target != current and not postpone:
        from paimon_core.schema.schema_change import SetOption

        schema = table.schema_manager.commit_changes([SetOption("bucket", str(target))])
        table = FileStoreTable(
            table.file_io,
            table.path,
            schema,
            name=table.name,
            dynamic_options=table.dynamic_options,
            clock=table.clock,
            commit_lock=table.commit_lock,
        )
    rescaled = _with_buckets(table, target, latest.id)
    builder = rescaled.new_batch_write_builder()
    if partition:
        builder.overwrite(dict(partition))
    else:
        builder.overwrite(None, dynamic=False)  # the whole table
    write = builder.new_write()
    rows = 0
    try:
        for batch in rb.new_read().to_batches(splits):
            rows += batch.num_rows
            write.write_arrow(batch)
        messages = write.prepare_commit()
    except BaseException:
        write.abort()
        raise
    finally:
        write.close()
    commit = builder.new_commit()
    try:
        result = commit.commit(messages)
    except CommitStateUnknownError:
        raise
    except BaseException:
        commit.abort_unless_landed(messages)
        raise
    return RescaleResult(table.name, result.snapshot_id, latest.id, names, from_buckets, target, rows, len(files), False)


def _with_buckets(table: FileStoreTable, buckets: int, last_safe: int) -> FileStoreTable:
    """The table writing ``buckets`` buckets, committing in strict mode from ``last_safe``."""
    schema = dataclasses.replace(table.schema, options={**table.schema.options, "bucket": str(buckets)})
    return FileStoreTable(
        table.file_io,
        table.path,
        schema,
        name=table.name,
        dynamic_options={
            **table.dynamic_options,
            "commit.strict-mode.last-safe-snapshot": str(last_safe),
            "write-only": "true",  # no compaction or expiry mixed into the rewrite
        },
        clock=table.clock,
        commit_lock=table.commit_lock,
    )
