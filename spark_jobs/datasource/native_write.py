"""Append tables written by Spark's own (JVM) Parquet writer, committed by paimon_core.

The ``paimon`` Python data source hands every row from the JVM to a Python worker as Arrow
(measured: ~0.5 us a row on ``local[2]``, more than Spark's whole Parquet write). An append
table's data file is plain Parquet with the table's columns, so Spark can write it itself:

1. the DataFrame is shaped to the table (columns in schema order, cast to the table's Spark
   types, each column tagged with its Paimon field id, which Spark writes as the Parquet
   field id as Java does) and written with ``df.write.parquet`` into a staging directory
   ``<table>/_staging/<uuid>`` (the path factory's) (one directory per partition: ``partitionBy`` a hash of
   the partition columns, which stay in the files as Paimon wants);
2. the driver reads each file's footer (row count, min/max/null counts: no data read, except
   FLOAT/DOUBLE columns, for NaN, and types whose footer values are not exact) and builds
   the same :class:`DataFileMeta` the Python writer would, with the table's stats modes;
3. files are moved under their Paimon names into ``<partition>/bucket-0`` and committed in one
   snapshot with paimon_core's committer (idempotent per commit user + identifier, overwrite
   modes as in :mod:`.paimon_source`). Anything failing before the commit deletes the moved
   files; the staging directory is removed in every case.

Used for unaware-bucket (``bucket = -1``) append tables in Parquet on a local or mounted file
system, whose columns Spark writes exactly as Paimon does (:func:`native_write_problem` says
why a table is not eligible; the caller then uses the data source).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.exceptions import SchemaMismatchError
from paimon_core.io.file_io import strip_scheme
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import DataFileMeta, FileSource, SimpleStats
from paimon_core.operation.append_writer import local_creation_millis, stats_to_simple
from paimon_core.paths import PathFactory
from paimon_core.results import CommitResult
from paimon_core.schema.data_types import (
    ArrayType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
)
from paimon_core.stats.collector import ColumnStats, apply_modes, collect_raw_stats, stats_modes_for
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import check_column_names
from spark_jobs.datasource.types import spark_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table.table import FileStoreTable

__all__ = ["NativeWriteResult", "native_write_problem", "write_native"]

logger = logging.getLogger(__name__)

_PART_COLUMN = "__paimon_partition"
_FIELD_ID_KEY = "parquet.field.id"
#: Spark's codec names for Paimon's ``file.compression`` values.
_CODECS = {
    "zstd": "zstd",
    "snappy": "snappy",
    "gzip": "gzip",
    "none": "none",
    "uncompressed": "none",
    "lz4": "lz4_raw",
}
#: Arrow types whose Parquet footer min/max are the exact values (others are read back).
_FOOTER_EXACT = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_string,
    pa.types.is_binary,
    pa.types.is_date32,
)


def _type_problem(t: DataType) -> str | None:
    if isinstance(t, (ArrayType, MapType, RowType)):
        return f"nested type {t}"
    if isinstance(t, TimeType):
        return "TIME (Spark has no matching Parquet type)"
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and t.precision != 6:
        return f"{t} (Spark writes microseconds; Paimon stores precision {t.precision} differently)"
    if isinstance(t, (CharType, VarCharType)) and t.length != VarCharType.MAX_LENGTH:
        return f"{t} (declared length is checked by the Python writer)"
    if isinstance(t, (BinaryType, VarBinaryType)) and t.length != VarBinaryType.MAX_LENGTH:
        return f"{t} (declared length is checked by the Python writer)"
    return None


def native_write_problem(table: FileStoreTable) -> str | None:
    """Why Spark's Parquet writer cannot write ``table``'s files (None: it can)."""
    schema, opts = table.schema, table.options
    if schema.primary_keys:
        return "primary-key table (files hold keys, sequence numbers and merged rows)"
    if opts.bucket != -1:
        return f"bucket = {opts.bucket} (only unaware-bucket append tables)"
    if opts.file_format != "parquet":
        return f"file.format = {opts.file_format}"
    if not isinstance(table.file_io, LocalFileIO):
        return "warehouse on an object store (files would be copied twice; the data source writes in place)"
    codec = schema.options.get("file.compression", "zstd").lower()
    if codec not in _CODECS:
        return f"file.compression = {codec}"
    for key in ("row-tracking.enabled", "data-evolution.enabled"):
        if schema.options.get(key, "false").lower() == "true":
            return f"{key} = true"
    if schema.options.get("data-file.external-paths"):
        return "data-file.external-paths is set"
    for f in schema.fields:
        problem = _type_problem(f.type)
        if problem:
            return f"column {f.name}: {problem}"
    return None


@dataclass(frozen=True)
class NativeWriteResult:
    """What :func:`write_native` committed (``commit`` is None when nothing was written)."""

    files: int
    rows: int
    commit: CommitResult | None


def _shape(df: DataFrame, table: FileStoreTable) -> DataFrame:
    """Columns in table order, cast to the table's Spark types, tagged with Paimon field ids."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    fields = list(table.schema.fields)
    check_column_names(df.columns, [f.name for f in fields], what="DataFrame", table=table.name)
    target = spark_schema(fields)
    current = {f.name: f.dataType for f in df.schema.fields}
    cols = []
    for f, sf in zip(fields, target.fields, strict=True):
        col = F.col(f"`{f.name}`")
        if current[f.name] != sf.dataType:
            col = col.cast(sf.dataType)
        cols.append(col.alias(f.name, metadata={_FIELD_ID_KEY: f.id}))
    shaped = df.select(*cols)
    if table.schema.partition_keys:
        shaped = shaped.withColumn(
            _PART_COLUMN, F.xxhash64(*[F.col(f"`{k}`") for k in table.schema.partition_keys])
        )
    return shaped


def _spark_write(df: DataFrame, table: FileStoreTable, staging: str) -> None:
    spark = df.sparkSession
    codec = table.schema.options.get("file.compression", "zstd").lower()
    writer = df.write.mode("errorifexists").option("compression", _CODECS[codec])
    level = table.schema.options.get("file.compression.zstd-level", "1")
    writer = writer.option("parquet.compression.codec.zstd.level", level)
    block = table.schema.options.get("parquet.block.size") or table.schema.options.get("file.block-size")
    if block:
        writer = writer.option("parquet.block.size", str(block))
    if table.schema.partition_keys:
        writer = writer.partitionBy(_PART_COLUMN)
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "TIMESTAMP_MICROS")  # TIMESTAMP_LTZ(6): INT64 micros, as Paimon (not INT96)
    try:
        writer.parquet(staging)
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _staged_files(root: str) -> list[str]:
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x.startswith(f"{_PART_COLUMN}=")]  # not _temporary
        out += [os.path.join(d, n) for n in names if n.endswith(".parquet") and not n.startswith((".", "_"))]
    return sorted(out)


@dataclass(frozen=True)
class _StagedFile:
    path: str
    rows: int
    size: int
    partition: list[object | None]
    stats: list[ColumnStats]


def _footer_stats(md: pq.FileMetaData, index: int) -> tuple[list[object], int] | None:
    """(min and max values of every row group, null count) from the footer; None if incomplete."""
    values: list[object] = []
    nulls = 0
    for rg in range(md.num_row_groups):
        col = md.row_group(rg).column(index)
        st = col.statistics
        if st is None or not st.has_null_count:
            return None
        nulls += st.null_count
        if st.num_values > 0:  # non-null values in this row group
            if not st.has_min_max:
                return None
            values += [st.min, st.max]
    return values, nulls


def _inspect(
    path: str, fields: Sequence[DataField], arrow_schema: pa.Schema, table: FileStoreTable
) -> _StagedFile:
    modes = stats_modes_for(list(fields), table.schema.options)
    md = pq.read_metadata(path)
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    raw: dict[str, ColumnStats] = {}
    to_read: list[DataField] = []
    for f, af in zip(fields, arrow_schema, strict=True):
        exact = any(check(af.type) for check in _FOOTER_EXACT)
        footer = _footer_stats(md, names.index(f.name)) if exact and f.name in names else None
        if footer is None:
            to_read.append(f)
            continue
        values, nulls = footer
        if not values:
            raw[f.name] = ColumnStats(None, None, nulls)
            continue
        tiny = pa.table({f.name: pa.array(values, type=af.type)})
        got = collect_raw_stats(tiny, [f])[0]
        raw[f.name] = ColumnStats(got.min, got.max, nulls)
    if to_read:
        data = pq.read_table(path, columns=[f.name for f in to_read], schema=None)
        for f, st in zip(to_read, collect_raw_stats(data, to_read), strict=True):
            raw[f.name] = st
    stats = [raw[f.name] for f in fields]
    for f, st in zip(fields, stats, strict=True):
        if not f.type.nullable and st.null_count:
            raise SchemaMismatchError(
                f"Column '{f.name}' is NOT NULL but {st.null_count} row(s) are null", column=f.name
            )
    partition: list[object | None] = []
    for key in table.schema.partition_keys:
        st = raw[key]
        if st.null_count == md.num_rows:
            partition.append(None)
        elif st.null_count == 0 and st.min == st.max:
            partition.append(st.min)
        else:  # two partitions hashed alike (xxhash64 collision): refuse rather than misfile rows
            raise SchemaMismatchError(f"Staged file {path} holds several values of partition key '{key}'")
    return _StagedFile(path, md.num_rows, os.path.getsize(path), partition, apply_modes(stats, modes))


def _meta(f: _StagedFile, name: str, first_seq: int, table: FileStoreTable) -> DataFileMeta:
    disabled = all(m.kind == "none" for m in stats_modes_for(list(table.schema.fields), table.schema.options))
    value_stats = SimpleStats.empty() if disabled else stats_to_simple(f.stats, list(table.schema.fields))
    return DataFileMeta(
        file_name=name,
        file_size=f.size,
        row_count=f.rows,
        min_key=EMPTY_ROW,
        max_key=EMPTY_ROW,
        key_stats=SimpleStats.empty(),
        value_stats=value_stats,
        min_sequence_number=first_seq,
        max_sequence_number=first_seq + f.rows - 1,
        schema_id=table.schema.id,
        level=0,
        extra_files=(),
        creation_time=local_creation_millis(),
        delete_row_count=0,
        embedded_index=None,
        file_source=int(FileSource.APPEND),
        value_stats_cols=() if disabled else None,
        external_path=None,
    )


def write_native(
    df: DataFrame,
    table: FileStoreTable,
    *,
    commit: Callable[[Sequence[CommitMessage]], CommitResult],
    threads: int = 8,
) -> NativeWriteResult:
    """Write ``df`` into ``table`` with Spark's Parquet writer; ``commit(messages)`` commits.

    ``commit`` receives paimon_core :class:`CommitMessage` objects (one per partition) and
    must commit them in one snapshot (the caller owns user, identifier and overwrite).
    """
    problem = native_write_problem(table)
    if problem:
        raise ValueError(f"Table {table.name} cannot be written by Spark's Parquet writer: {problem}")
    staging = strip_scheme(table.paths.new_staging_path())
    moved: list[str] = []
    try:
        _spark_write(_shape(df, table), table, staging)
        fields = list(table.schema.fields)
        arrow_schema = table.arrow_schema
        files = _staged_files(staging)
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(files)))) as pool:
            staged = list(pool.map(lambda p: _inspect(p, fields, arrow_schema, table), files))
        opts = table.options
        paths = PathFactory(table.path, data_file_prefix=opts.data_file_prefix, file_format="parquet")
        part_types = [f.type for f in table.schema.partition_fields]
        by_partition: dict[bytes, list[DataFileMeta]] = {}
        for f in staged:
            if f.rows == 0:
                continue
            partition = serialize_binary_row(f.partition, part_types) if part_types else EMPTY_ROW
            metas = by_partition.setdefault(partition, [])
            first_seq = sum(m.row_count for m in metas)  # unaware buckets start at 0, as the Python writer
            name = paths.new_data_file_name(extension="parquet")
            dest = strip_scheme(paths.data_file_path(table.partition_path(partition), 0, name))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.link(f.path, dest)  # never replaces an existing file
            moved.append(dest)
            os.unlink(f.path)
            metas.append(_meta(f, name, first_seq, table))
        messages = [
            CommitMessage(partition=p, bucket=0, total_buckets=-1, new_files=tuple(m))
            for p, m in by_partition.items()
        ]
        rows = sum(f.rows for f in staged)
        result = commit(messages)
        moved.clear()  # committed (or already committed: then the commit said so and kept nothing)
        return NativeWriteResult(sum(len(m.new_files) for m in messages), rows, result)
    finally:
        for p in moved:  # failed before the commit: these files were never visible
            try:
                os.unlink(p)
            except OSError:
                logger.warning("Could not remove uncommitted file %s (orphan clean will)", p)
        _remove_tree(staging)


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    parent = os.path.dirname(path)
    try:
        os.rmdir(parent)  # the staging root, when no other write is staging
    except OSError:
        pass
