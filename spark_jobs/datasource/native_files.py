"""What a data file staged by Spark's Parquet writer holds, as paimon_core's writers describe it.

:func:`inspect_staged` reads one file's footer (row count, per-row-group min/max/null counts)
and, only where the footer is not enough, columns of the file:

* value stats: :mod:`paimon_core.stats.footer_stats` (FLOAT/DOUBLE, DECIMAL, TIMESTAMP read back);
* primary-key files: the ``_KEY_`` columns (min/max key are the first and last rows, key stats,
  the check that keys strictly increase: Spark sorted the rows but did not merge them, and,
  for files written without a bucket directory, the bucket of the keys).

The stats then go through paimon_core's own collector with the table's stats modes, so the
:class:`DataFileMeta` is the one the Python writer would produce for the same rows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from paimon_core.bucket import compute_buckets
from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal
from paimon_core.exceptions import PaimonError, SchemaMismatchError
from paimon_core.format.key_value import KEY_FIELD_PREFIX, SEQUENCE_NUMBER
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.segments import in_key_order, key_changes
from paimon_core.operation.append_writer import stats_to_simple
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import ColumnStats, apply_modes, collect_raw_stats, stats_modes_for
from paimon_core.stats.footer_stats import footer_column_stats, raw_file_stats
from paimon_core.table.table import FileStoreTable

__all__ = ["DuplicateKeysError", "StagedFile", "data_file_meta", "inspect_staged"]

class DuplicateKeysError(PaimonError):
    """A staged primary-key file holds a key twice (the rows need the merge function)."""


@dataclass(frozen=True)
class StagedFile:
    """One staged file, described (``min_key`` etc. only for primary-key files)."""

    path: str
    rows: int
    size: int
    partition: list[object | None]
    value_stats: list[ColumnStats]
    min_key: bytes = EMPTY_ROW
    max_key: bytes = EMPTY_ROW
    key_stats: list[ColumnStats] | None = None
    min_seq: int = 0
    max_seq: int = -1
    bucket: int | None = None


def _raw_stats(path: str, md: pq.FileMetaData, fields: Sequence[DataField]) -> dict[str, ColumnStats]:
    return raw_file_stats(md, fields, lambda names: pq.read_table(path, columns=names))


def _partition_values(
    table: FileStoreTable, raw: dict[str, ColumnStats], rows: int, path: str
) -> list[object | None]:
    out: list[object | None] = []
    for key in table.schema.partition_keys:
        st = raw[key]
        if st.null_count == rows:
            out.append(None)
        elif st.null_count == 0 and st.min == st.max:
            out.append(st.min)
        else:  # two partitions hashed alike (xxhash64 collision): refuse rather than misfile rows
            raise SchemaMismatchError(f"Staged file {path} holds several values of partition key '{key}'")
    return out


def _check_key_order(path: str, keys: pa.Table) -> None:
    """Keys strictly increase from row to row: DuplicateKeysError if one repeats (the rows need
    the merge function); PaimonError otherwise (the file is not sorted: never committed)."""
    if in_key_order(keys, keys.column_names, strict=True):
        return
    if not key_changes(keys, keys.column_names)[1:].all():
        raise DuplicateKeysError(f"Staged file {path} holds a primary key more than once")
    raise PaimonError(f"Staged file {path} is not sorted by its primary key (refusing to commit it)")


def _bucket_of_keys(path: str, keys: pa.Table, table: FileStoreTable) -> int:
    """The bucket of a file written by a task that held one bucket: its keys' bucket, checked
    on 17 rows spread over the file (the routing put every row of a task in one bucket)."""
    bucket_fields = table.schema.fields_of(table.schema.bucket_keys)
    n = keys.num_rows
    rows = pa.array(sorted({round(i * (n - 1) / 16) for i in range(17)}), pa.int64())
    sample = [pc.take(keys.column(f.name), rows) for f in bucket_fields]
    buckets = set(
        compute_buckets(
            sample, [f.type for f in bucket_fields], table.options.bucket, function=table.options.bucket_function_type
        ).tolist()
    )
    if len(buckets) != 1:
        raise PaimonError(f"Staged file {path} holds rows of buckets {sorted(buckets)} (refusing to commit it)")
    return int(buckets.pop())


def _key_part(
    path: str, table: FileStoreTable, *, bucket_from_keys: bool
) -> tuple[bytes, bytes, list[ColumnStats], int | None]:
    """(min key, max key, raw key stats, bucket if ``bucket_from_keys``) of a key-sorted file."""
    key_fields = table.schema.fields_of(table.schema.trimmed_primary_keys)
    keys = pq.read_table(path, columns=[KEY_FIELD_PREFIX + f.name for f in key_fields])
    keys = keys.rename_columns([f.name for f in key_fields])
    n = keys.num_rows
    _check_key_order(path, keys)
    types = [f.type for f in key_fields]
    first = [arrow_scalar_to_internal(keys.column(f.name)[0], f.type) for f in key_fields]
    last = [arrow_scalar_to_internal(keys.column(f.name)[n - 1], f.type) for f in key_fields]
    return (
        serialize_binary_row(first, types),
        serialize_binary_row(last, types),
        collect_raw_stats(keys, key_fields),
        _bucket_of_keys(path, keys, table) if bucket_from_keys else None,
    )


def inspect_staged(path: str, table: FileStoreTable, *, bucket_from_keys: bool = False) -> StagedFile:
    """Describe one staged file of ``table`` (raises on NULL in a NOT NULL column).

    ``bucket_from_keys``: the file of a primary-key table was written by a task holding one
    bucket, not under a bucket directory: its bucket is told from its keys (``StagedFile.bucket``).
    """
    fields = list(table.schema.fields)
    md = pq.read_metadata(path)
    raw = _raw_stats(path, md, fields)
    for f in fields:
        if not f.type.nullable and raw[f.name].null_count:
            raise SchemaMismatchError(
                f"Column '{f.name}' is NOT NULL but {raw[f.name].null_count} row(s) are null", column=f.name
            )
    modes = stats_modes_for(fields, table.schema.options)
    value_stats = apply_modes([raw[f.name] for f in fields], modes)
    partition = _partition_values(table, raw, md.num_rows, path)
    size = os.path.getsize(path)
    if md.num_rows == 0:
        return StagedFile(path, md.num_rows, size, partition, value_stats)
    if not table.schema.primary_keys:
        bucket = None
        if bucket_from_keys:  # a fixed-bucket append file: its bucket-key columns tell
            keys = pq.read_table(path, columns=list(table.schema.bucket_keys))
            bucket = _bucket_of_keys(path, keys, table)
        return StagedFile(path, md.num_rows, size, partition, value_stats, bucket=bucket)
    min_key, max_key, key_raw, bucket = _key_part(path, table, bucket_from_keys=bucket_from_keys)
    key_fields = table.schema.fields_of(table.schema.trimmed_primary_keys)
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    seq = footer_column_stats(md, names.index(SEQUENCE_NUMBER))
    if seq is None or not seq[0]:
        raise SchemaMismatchError(f"Staged file {path} has no {SEQUENCE_NUMBER} statistics")
    seqs = [int(v) for v in seq[0]]  # type: ignore[call-overload]
    key_stats = apply_modes(key_raw, stats_modes_for(key_fields, table.schema.options))
    return StagedFile(
        path, md.num_rows, size, partition, value_stats, min_key, max_key, key_stats, min(seqs), max(seqs), bucket
    )


def data_file_meta(f: StagedFile, name: str, table: FileStoreTable, *, first_seq: int = 0) -> DataFileMeta:
    """The :class:`DataFileMeta` of a staged file moved in as ``name`` (append files take
    sequence numbers from ``first_seq``, as the Python append writer does)."""
    fields = list(table.schema.fields)
    disabled = all(m.kind == "none" for m in stats_modes_for(fields, table.schema.options))
    pk = f.key_stats is not None
    key_fields = table.schema.fields_of(table.schema.trimmed_primary_keys) if pk else []
    return DataFileMeta.new_level0(
        name,
        f.size,
        f.rows,
        value_stats=None if disabled else stats_to_simple(f.value_stats, fields),
        min_sequence_number=f.min_seq if pk else first_seq,
        max_sequence_number=f.max_seq if pk else first_seq + f.rows - 1,
        schema_id=table.schema.id,
        min_key=f.min_key,
        max_key=f.max_key,
        key_stats=stats_to_simple(f.key_stats, key_fields) if f.key_stats is not None else None,
    )
