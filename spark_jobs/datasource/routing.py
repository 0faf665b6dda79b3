"""Route a DataFrame so that one task writes each (partition, bucket) of a fixed-bucket table.

Spark's Python Data Source API cannot ask for a distribution, so the caller routes: the
bucket of every row is computed on the executors with paimon_core's own bucket function
(``paimon_core.bucket.compute_buckets``, Java-compatible; for integer-like keys the same
hash as a JVM expression, see :mod:`.bucket_expr`; ``bucket-function.type = mod``: Spark's
``pmod``), then the rows are shuffled by
(partition columns, bucket) and sorted by them within each task. One task per
(partition, bucket) keeps primary-key sequence numbers ordered; append tables with
``bucket = -1`` need no shuffle and are returned unchanged. The bucket column stays on the
routed DataFrame: the ``paimon`` writer hands it to paimon_core (``write_arrow(buckets=)``,
spot-checked there) so rows are hashed once, and drops it before writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.functions import arrow_udf
from pyspark.sql.types import IntegerType

from paimon_core.bucket import check_bucket_function, compute_buckets
from paimon_core.exceptions import SchemaMismatchError
from paimon_core.schema.data_types import DataField
from paimon_core.table.table import FileStoreTable
from spark_jobs.datasource.bucket_expr import with_bucket_column as jvm_bucket_column
from spark_jobs.datasource.task_write import BUCKET_COLUMN

__all__ = ["BUCKET_COLUMN", "bucket_udf", "distribute_for_table", "needs_routing", "with_bucket_column"]


def needs_routing(table: FileStoreTable) -> bool:
    """Fixed-bucket tables (every primary-key table written by paimon_core) need routing."""
    return table.schema.core_options.bucket > 0


def with_bucket_column(df: DataFrame, table: FileStoreTable) -> DataFrame:
    """``df`` plus an INT column :data:`BUCKET_COLUMN` with each row's Paimon bucket."""
    num_buckets = table.schema.core_options.bucket
    key_fields = table.schema.fields_of(table.schema.bucket_keys)
    missing = [f.name for f in key_fields if f.name not in df.columns]
    if missing:
        raise SchemaMismatchError(
            f"DataFrame lacks bucket-key column(s) {missing} of {table.name}", missing=missing
        )
    function = check_bucket_function(table.schema.core_options.bucket_function_type, [f.type for f in key_fields])
    if function == "mod":  # Java's ModBucketFunction: floorMod(key, n), a null key as 0
        from pyspark.sql import functions as F

        key = F.coalesce(F.col(f"`{key_fields[0].name}`").cast("long"), F.lit(0))
        return df.withColumn(BUCKET_COLUMN, F.pmod(key, F.lit(num_buckets)).cast("int"))
    routed = jvm_bucket_column(df, key_fields, num_buckets, BUCKET_COLUMN)
    if routed is not None:  # integer-like keys: Paimon's hash as JVM expressions
        return routed
    return df.withColumn(
        BUCKET_COLUMN, bucket_udf(key_fields, num_buckets, function=function)(*[f"`{f.name}`" for f in key_fields])
    )


def bucket_udf(key_fields: Sequence[DataField], num_buckets: int, *, function: str = "default") -> Any:
    """A scalar Arrow UDF over the bucket-key columns: ``paimon_core.bucket.compute_buckets`` with
    the bucket ``function``.

    Only the key columns travel to Python (not whole rows).
    """
    types = [f.type for f in key_fields]

    def bucket_of(*columns: pa.Array) -> pa.Array:
        return pa.array(compute_buckets(list(columns), types, num_buckets, function=function), pa.int32())

    return arrow_udf(bucket_of, IntegerType())  # type: ignore[call-overload]


def distribute_for_table(
    df: DataFrame,
    table: FileStoreTable,
    *,
    num_partitions: int | None = None,
    sort: bool = True,
    keep_bucket: bool = True,
) -> DataFrame:
    """``df`` routed for writing ``table``: each (partition, bucket) in exactly one task.

    ``num_partitions``: tasks of the write (default: the number of buckets for an
    unpartitioned table, else ``spark.sql.shuffle.partitions``). ``keep_bucket``: keep the
    INT column :data:`BUCKET_COLUMN` with each row's bucket; the ``paimon`` writer then uses
    it instead of hashing every row again, and does not write it. False: only ``df``'s columns.
    """
    if not needs_routing(table):
        return df
    partition_keys = list(table.schema.partition_keys)
    routed = with_bucket_column(df, table)
    if partition_keys:
        n = num_partitions or int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or "200")
        routed = routed.repartition(n, *partition_keys, BUCKET_COLUMN)
    else:
        # The bucket is the task: a direct, collision-free assignment.
        n = num_partitions or table.schema.core_options.bucket
        routed = routed.repartitionById(n, (routed[BUCKET_COLUMN] % n).cast("int"))
    if sort and partition_keys:
        # Group each task's rows by (partition, bucket). (Unpartitioned: a task holds whole buckets
        # already, and paimon_core groups rows by bucket itself, so a sort would only cost time.)
        routed = routed.sortWithinPartitions(*partition_keys, BUCKET_COLUMN)
    return routed if keep_bucket else routed.drop(BUCKET_COLUMN)
