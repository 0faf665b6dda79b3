"""``$partitions``: live files aggregated per partition (Java's ``PartitionsTable``).

As Java's file-system path (``listPartitionEntries``, no catalog partition metadata):
``record_count`` / ``file_size_in_bytes`` / ``file_count`` sum the live files of the snapshot the
handle reads, ``last_update_time`` is the newest file's creation time, ``total_buckets`` the
bucket count of the partition's files; ``created_at``, ``created_by``, ``updated_by`` and
``options`` are null and ``done`` is false. ``partition`` is ``k1=v1/k2=v2`` with each value
CAST to STRING (null -> ``partition.default-name``), ``''`` for an unpartitioned table; rows are
sorted by it. ``deleted_record_count`` sums the deletion-vector cardinalities of the partition
(null when one is unknown; 0 when the table has no deletion vectors).

``expire_time`` (not in Java's table, last column) is when the partition becomes old enough for
partition expiry (``partition.expiration-time`` after its values-time or update-time, local
wall-clock): rows with the earliest ``expire_time`` go next, those before now at the next
``expire_partitions`` (up to ``partition.expiration-max-num``). Null when expiry is off or the
partition's time cannot be extracted (it never expires).

The aggregation is an Arrow ``group_by`` over per-file columns.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.deletionvectors.deletion_file import DELETION_VECTORS_INDEX
from paimon_core.exceptions import PaimonError
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.table.system.files_table import live_entries
from paimon_core.table.system.time_travel import try_travel_or_latest

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "partition_string", "read"]

logger = logging.getLogger(__name__)

SCHEMA = pa.schema(
    [
        pa.field("partition", pa.string()),
        pa.field("record_count", pa.int64(), nullable=False),
        pa.field("file_size_in_bytes", pa.int64(), nullable=False),
        pa.field("file_count", pa.int64(), nullable=False),
        pa.field("last_update_time", pa.timestamp("ms")),
        pa.field("created_at", pa.timestamp("ms")),
        pa.field("created_by", pa.string()),
        pa.field("updated_by", pa.string()),
        pa.field("options", pa.string()),
        pa.field("total_buckets", pa.int32(), nullable=False),
        pa.field("done", pa.bool_(), nullable=False),
        pa.field("deleted_record_count", pa.int64()),
        pa.field("expire_time", pa.timestamp("ms")),
    ]
)


def partition_string(table: FileStoreTable, partition: bytes) -> str:
    """``dt=2024-01-01/hr=3`` as Java's ``PartitionsTable.toRow`` builds it."""
    from paimon_core.data.internal import partition_value_to_string

    values = table.partition_codec.decode(partition)
    default = table.options.partition_default_name
    return "/".join(
        f"{f.name}={default if v is None else partition_value_to_string(v, f.type, legacy_name=False)}"
        for f, v in zip(table.schema.partition_fields, values, strict=True)
    )


def _deleted_counts(table: FileStoreTable) -> dict[bytes, int | None]:
    """Deleted rows per partition from the snapshot's deletion-vector index files."""
    if not table.options.deletion_vectors_enabled:
        return {}
    snapshot = try_travel_or_latest(table)
    if snapshot is None or snapshot.index_manifest is None:
        return {}
    entries = read_index_manifest(table.file_io, table.paths.manifest_path(snapshot.index_manifest))
    live = {}
    for e in entries:
        if e.index_file.index_type != DELETION_VECTORS_INDEX:
            continue
        key = (e.partition, e.bucket, e.index_file.file_name)
        if e.kind == FileKind.ADD:
            live[key] = e
        else:
            live.pop(key, None)
    out: dict[bytes, int | None] = {}
    for e in live.values():
        ranges = e.index_file.dv_ranges
        if not ranges or (e.partition in out and out[e.partition] is None):
            continue
        count = out.get(e.partition, 0)
        for r in ranges:
            if r.cardinality is None or count is None:
                count = None
                break
            count += r.cardinality
        out[e.partition] = count
    return out


def _expire_times(table: FileStoreTable, entries: list[ManifestEntry]) -> dict[bytes, dt.datetime | None]:
    """When each partition expires (see the module docstring); {} when expiry is off."""
    from paimon_core.operation.partition_expire import PartitionExpire
    from paimon_core.partition.partition_expire_strategy import partition_entries

    try:
        expire = PartitionExpire.from_options(table.store)
    except PaimonError as e:
        logger.warning("%s: partition expiry options are invalid, expire_time left null: %s", table.name, e)
        return {}
    if expire is None:
        return {}
    return {p.partition: expire.expire_time(p) for p in partition_entries(table.store, entries)}


def read(table: FileStoreTable) -> pa.Table:
    """One row per partition with live files, sorted by the partition string."""
    entries = live_entries(table)
    if not entries:
        return SCHEMA.empty_table()
    index: dict[bytes, int] = {}
    part_ids = [index.setdefault(e.partition, len(index)) for e in entries]
    files = pa.table(
        {
            "p": pa.array(part_ids, pa.int64()),
            "rows": pa.array([e.file.row_count for e in entries], pa.int64()),
            "size": pa.array([e.file.file_size for e in entries], pa.int64()),
            "created": pa.array([e.file.creation_time for e in entries], pa.int64()),
            "buckets": pa.array([e.total_buckets for e in entries], pa.int32()),
        }
    )
    agg = files.group_by("p", use_threads=False).aggregate(
        [("rows", "sum"), ("size", "sum"), ("rows", "count"), ("created", "max"), ("buckets", "last")]
    )
    partitions = list(index)
    names = [partition_string(table, p) for p in partitions]
    deleted = _deleted_counts(table)
    expires = _expire_times(table, entries)
    pid = agg.column("p").to_pylist()
    part_col = [names[i] for i in pid]
    n = agg.num_rows
    out = pa.Table.from_arrays(
        [
            pa.array(part_col, pa.string()),
            agg.column("rows_sum").cast(pa.int64()),
            agg.column("size_sum").cast(pa.int64()),
            agg.column("rows_count").cast(pa.int64()),
            agg.column("created_max").cast(pa.timestamp("ms")),
            pa.nulls(n, pa.timestamp("ms")),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
            agg.column("buckets_last").cast(pa.int32()),
            pa.array([False] * n, pa.bool_()),
            pa.array([deleted.get(partitions[i], 0) for i in pid], pa.int64()),
            pa.array([expires.get(partitions[i]) for i in pid], pa.timestamp("ms")),
        ],
        schema=SCHEMA,
    )
    # Java sorts by String.compareTo (UTF-16 code units).
    return out.take(pa.array(sorted(range(n), key=lambda i: part_col[i].encode("utf-16-be")), pa.int64()))
