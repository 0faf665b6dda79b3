"""Tables written by Spark's own (JVM) Parquet writer, committed by paimon_core.

The ``paimon`` Python data source hands every row from the JVM to a Python worker as Arrow
(measured: ~0.5 us a row on ``local[2]``, more than Spark's whole Parquet write). A Paimon data
file is plain Parquet (an append table's: the table's columns; a primary-key table's: ``_KEY_``
columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then the table's columns, sorted by key, each
key once), so Spark can write it itself:

1. the DataFrame is shaped to the table (columns in schema order, cast to the table's Spark
   types, each column tagged with its Paimon field id, which Spark writes as the Parquet
   field id as Java does) and written with ``df.write.parquet`` into a staging directory
   ``<table>/_staging/<uuid>`` (the path factory's), one directory per partition
   (``partitionBy`` a hash of the partition columns, which stay in the files as Paimon wants)
   and, for primary-key tables, per bucket: rows are routed by bucket (one task per
   (partition, bucket), Paimon's bucket function as in :mod:`.routing`), sorted by key, and
   numbered from above the table's highest sequence number. An unpartitioned table's task
   holds one bucket: its file is written without a bucket directory and sorted by key alone
   (no sort by bucket first: for one integral key Spark's radix sort), and the driver tells
   its bucket from its keys;
2. the driver describes each file (:mod:`.native_files`: footers, plus the key columns of
   primary-key files) as the Python writer would. A primary-key file holding a key twice
   (the rows need the merge function) raises :class:`.native_files.DuplicateKeysError`
   before anything is committed: ``write_table`` then writes through the data source;
3. files are moved under their Paimon names into their bucket directories and committed in one
   snapshot with paimon_core's committer (idempotent per commit user + identifier, overwrite
   modes as in :mod:`.paimon_source`). Anything failing before the commit deletes the moved
   files; the staging directory is removed in every case.

Used for append tables (unaware or fixed buckets) and fixed-bucket ``deduplicate`` primary-key tables in
Parquet on a local or mounted file system, whose columns Spark writes exactly as Paimon does
(:func:`native_write_problem` says why a table is not eligible; the caller then uses the
data source).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.data.binary_row import EMPTY_ROW, serialize_binary_row
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.format.key_value import (
    KEY_FIELD_ID_START,
    KEY_FIELD_PREFIX,
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_FIELD_ID,
    VALUE_KIND,
    VALUE_KIND_FIELD_ID,
)
from paimon_core.io.file_io import strip_scheme
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.scan import ScanFilter
from paimon_core.paths import PathFactory
from paimon_core.results import CommitResult
from paimon_core.schema.data_types import (
    ArrayType,
    BinaryType,
    CharType,
    DataType,
    DoubleType,
    FloatType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
)
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import check_column_names
from paimon_core.table.table_write import ROWKIND_FIELD
from spark_jobs.datasource.native_files import StagedFile, data_file_meta, inspect_staged
from spark_jobs.datasource.routing import BUCKET_COLUMN, with_bucket_column
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


def _pk_problem(table: FileStoreTable) -> str | None:
    schema, opts = table.schema, table.options
    if opts.bucket <= 0:
        return f"primary-key table with bucket = {opts.bucket} (needs fixed buckets)"
    if opts.merge_engine != "deduplicate":
        return f"merge-engine = {opts.merge_engine}"
    for key, ok in (
        ("changelog-producer", "none"),
        ("deletion-vectors.enabled", "false"),
        ("data-file.thin-mode", "false"),
    ):
        if schema.options.get(key, ok).lower() != ok:
            return f"{key} = {schema.options[key]}"
    if schema.options.get(ROWKIND_FIELD):
        return f"{ROWKIND_FIELD} is set"
    for f in schema.fields_of(schema.trimmed_primary_keys):
        if isinstance(f.type, (FloatType, DoubleType)):
            return f"key column {f.name} is {f.type} (Spark orders floats differently)"
    return None


def native_write_problem(table: FileStoreTable) -> str | None:
    """Why Spark's Parquet writer cannot write ``table``'s files (None: it can)."""
    schema, opts = table.schema, table.options
    if schema.primary_keys:
        problem = _pk_problem(table)
        if problem:
            return problem
    elif opts.bucket != -1 and opts.bucket <= 0:
        return f"bucket = {opts.bucket} (append tables: unaware (-1) or fixed buckets only)"
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
    if any(k.startswith("file-index.") and k.endswith(".columns") for k in opts.options):
        return "file-index.<type>.columns is set (the Python writer writes each file's index)"
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


def _direct_buckets(table: FileStoreTable, num_partitions: int | None) -> bool:
    """Whether each task of a fixed-bucket write holds exactly one bucket and nothing else to
    split by: an unpartitioned table written by at least ``bucket`` tasks. Its files are then
    written without a bucket directory (primary-key files sorted by key alone: Spark's radix
    sort for one integral key, not a sort by bucket first), and their bucket is told from their
    bucket-key columns."""
    buckets = table.options.bucket
    return buckets > 0 and not table.schema.partition_keys and (num_partitions or buckets) >= buckets


def _shape(
    df: DataFrame, table: FileStoreTable, *, num_partitions: int | None = None, direct: bool = False
) -> DataFrame:
    """Columns in table order, cast to the table's Spark types, tagged with Paimon field ids;
    for primary-key tables routed by bucket, with the key and system columns, sorted by key
    (``direct``: see :func:`_direct_buckets`)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    schema = table.schema
    fields = list(schema.fields)
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
    route: list[str] = []
    if schema.partition_keys:
        shaped = shaped.withColumn(
            _PART_COLUMN, F.xxhash64(*[F.col(f"`{k}`") for k in schema.partition_keys])
        )
        route.append(_PART_COLUMN)
    if not schema.primary_keys and table.options.bucket <= 0:
        return shaped  # unaware buckets: no routing
    shaped = with_bucket_column(shaped, table)
    route.append(BUCKET_COLUMN)
    buckets = table.options.bucket
    if schema.partition_keys:
        n = num_partitions or int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or "200")
        shaped = shaped.repartition(n, *route)
    else:
        n = num_partitions or buckets  # the bucket is the task: a direct, collision-free assignment
        shaped = shaped.repartitionById(n, (F.col(BUCKET_COLUMN) % n).cast("int"))
    if direct:
        route = []  # one bucket per task: nothing to split the task's rows by
    if not schema.primary_keys:  # a fixed-bucket append table: rows as they come
        return shaped.select(*route, *[F.col(f"`{f.name}`") for f in fields])
    base = _next_sequence_number(table)
    key_fields = schema.fields_of(schema.trimmed_primary_keys)
    system = [
        F.col(f"`{f.name}`").alias(
            KEY_FIELD_PREFIX + f.name, metadata={_FIELD_ID_KEY: KEY_FIELD_ID_START + f.id}
        )
        for f in key_fields
    ]
    system += [
        (F.monotonically_increasing_id() + F.lit(base)).alias(
            SEQUENCE_NUMBER, metadata={_FIELD_ID_KEY: SEQUENCE_NUMBER_FIELD_ID}
        ),
        F.lit(0).cast("tinyint").alias(VALUE_KIND, metadata={_FIELD_ID_KEY: VALUE_KIND_FIELD_ID}),
    ]
    shaped = shaped.select(*route, *system, *[F.col(f"`{f.name}`") for f in fields])
    return shaped.sortWithinPartitions(*route, *[KEY_FIELD_PREFIX + f.name for f in key_fields])


def _next_append_sequences(table: FileStoreTable, staged: Sequence[StagedFile]) -> dict[tuple[bytes, int], int]:
    """Per (partition, bucket) of the partitions written: the next sequence number of a
    fixed-bucket append table's bucket (as ``TableWrite`` restores it from the latest snapshot)."""
    part_types = [f.type for f in table.schema.partition_fields]
    parts = frozenset(serialize_binary_row(f.partition, part_types) if part_types else EMPTY_ROW for f in staged)
    latest = table.snapshot_manager.latest_snapshot()
    seqs = table.new_file_store_scan().max_sequence_numbers(latest, ScanFilter(partitions=parts))
    return {key: seq + 1 for key, seq in seqs.items()}


def _next_sequence_number(table: FileStoreTable) -> int:
    """Above every sequence number in the table: each task's rows take ``this +
    monotonically_increasing_id()`` (distinct across tasks, one task per (partition, bucket))."""
    seqs = table.new_file_store_scan().max_sequence_numbers(table.snapshot_manager.latest_snapshot())
    return max(seqs.values(), default=-1) + 1


def _spark_write(df: DataFrame, table: FileStoreTable, staging: str, *, direct: bool) -> None:
    spark = df.sparkSession
    codec = table.schema.options.get("file.compression", "zstd").lower()
    writer = df.write.mode("errorifexists").option("compression", _CODECS[codec])
    level = table.schema.options.get("file.compression.zstd-level", "1")
    writer = writer.option("parquet.compression.codec.zstd.level", level)
    if table.schema.primary_keys and "parquet.enable.dictionary" not in table.schema.options:
        # Keys and sequence numbers never repeat within a file: a dictionary is only tried and dropped
        # (as paimon_core's writer decides from a sample, see format/parquet_format.py).
        keys = table.schema.trimmed_primary_keys
        unique = [KEY_FIELD_PREFIX + k for k in keys] + [SEQUENCE_NUMBER]
        if len(keys) == 1:  # a one-column key: its value column is as unique as its _KEY_ column
            unique.append(keys[0])
        for name in unique:
            writer = writer.option(f"parquet.enable.dictionary#{name}", "false")
    block = table.schema.options.get("parquet.block.size") or table.schema.options.get("file.block-size")
    if block:
        writer = writer.option("parquet.block.size", str(block))
    route = [_PART_COLUMN] if table.schema.partition_keys else []
    route += [BUCKET_COLUMN] if table.options.bucket > 0 and not direct else []
    if route:
        writer = writer.partitionBy(*route)
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
        dirs[:] = [
            x for x in dirs if x.startswith((f"{_PART_COLUMN}=", f"{BUCKET_COLUMN}="))
        ]  # not _temporary
        out += [os.path.join(d, n) for n in names if n.endswith(".parquet") and not n.startswith((".", "_"))]
    return sorted(out)


def _bucket_of(path: str) -> int:
    """The bucket of a staged file: its ``__paimon_bucket=N`` directory (0 for append tables)."""
    parent = os.path.basename(os.path.dirname(path))
    return int(parent.split("=", 1)[1]) if parent.startswith(f"{BUCKET_COLUMN}=") else 0


def write_native(
    df: DataFrame,
    table: FileStoreTable,
    *,
    commit: Callable[[Sequence[CommitMessage]], CommitResult],
    landed: Callable[[], bool] | None = None,
    num_partitions: int | None = None,
    threads: int = 8,
) -> NativeWriteResult:
    """Write ``df`` into ``table`` with Spark's Parquet writer; ``commit(messages)`` commits.

    ``commit`` receives paimon_core :class:`CommitMessage` objects (one per partition and
    bucket) and must commit them in one snapshot (the caller owns user, identifier and
    overwrite). ``landed()`` tells, after an error in ``commit``, whether the snapshot was
    published anyway (its files are then kept). ``num_partitions``: tasks of a fixed-bucket
    write (default: the number of buckets unpartitioned, else ``spark.sql.shuffle.partitions``).
    """
    problem = native_write_problem(table)
    if problem:
        raise InvalidArgumentError(f"Table {table.name} cannot be written by Spark's Parquet writer: {problem}")
    staging = strip_scheme(table.paths.new_staging_path())
    moved: list[str] = []
    try:
        direct = _direct_buckets(table, num_partitions)
        _spark_write(_shape(df, table, num_partitions=num_partitions, direct=direct), table, staging, direct=direct)
        files = _staged_files(staging)
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(files)))) as pool:
            staged = list(pool.map(lambda p: inspect_staged(p, table, bucket_from_keys=direct), files))
        opts = table.options
        paths = PathFactory(table.path, data_file_prefix=opts.data_file_prefix, file_format="parquet")
        part_types = [f.type for f in table.schema.partition_fields]
        by_bucket: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        fixed_append = not table.schema.primary_keys and opts.bucket > 0
        next_seq = _next_append_sequences(table, staged) if fixed_append else {}
        for f in staged:
            if f.rows == 0:
                continue
            bucket = f.bucket if f.bucket is not None else _bucket_of(f.path)
            partition = serialize_binary_row(f.partition, part_types) if part_types else EMPTY_ROW
            metas = by_bucket.setdefault((partition, bucket), [])
            # as the Python writer: unaware buckets start at 0, fixed buckets continue theirs
            first_seq = next_seq.get((partition, bucket), 0) + sum(m.row_count for m in metas)
            name = paths.new_data_file_name(extension="parquet")
            dest = strip_scheme(paths.data_file_path(table.partition_path(partition), bucket, name))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.link(f.path, dest)  # never replaces an existing file
            moved.append(dest)
            os.unlink(f.path)
            metas.append(data_file_meta(f, name, table, first_seq=first_seq))
        total = table.options.bucket if table.options.bucket > 0 else -1
        messages = [
            CommitMessage(partition=p, bucket=b, total_buckets=total, new_files=tuple(m))
            for (p, b), m in by_bucket.items()
        ]
        rows = sum(f.rows for f in staged)
        try:
            result = commit(messages)
        except BaseException:
            if landed is not None and _safe_landed(landed):
                moved.clear()  # the snapshot was published before the error: its files stay
            raise
        if not result.already_committed:  # (else a racing run committed first: ours are orphans, removed below)
            moved.clear()
        return NativeWriteResult(sum(len(m.new_files) for m in messages), rows, result)
    finally:
        for p in moved:  # failed before the commit: these files were never visible
            try:
                os.unlink(p)
            except OSError:
                logger.warning("Could not remove uncommitted file %s (orphan clean will)", p)
        _remove_tree(staging)


def _safe_landed(landed: Callable[[], bool]) -> bool:
    """Whether the commit landed; if even that cannot be told, keep the files (orphan clean
    removes them later if they were never committed): deleting is the only unsafe choice."""
    try:
        return landed()
    except Exception:  # noqa: BLE001
        logger.warning("Could not tell whether the commit landed; keeping its files for orphan clean")
        return True


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    parent = os.path.dirname(path)
    try:
        os.rmdir(parent)  # the staging root, when no other write is staging
    except OSError:
        pass
