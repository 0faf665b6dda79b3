"""``compact`` of a postpone-bucket table (``bucket = -2``) on Spark.

``spark_jobs compact`` hands such a table here (Java's ``CompactAction`` and Spark's
``SparkPostponeCompactProcedure`` take the same turn): the driver plans on the latest snapshot
(:class:`paimon_core.operation.compact.postpone_bucket_compact.PostponeBucketCompact`: one task
per partition holding postpone files or real level-0 buckets, with the partition's bucket count),
each Spark task replays its partition's postpone files into the real buckets and compacts them,
and the driver commits every task's files and the removal of the postpone files as ONE COMPACT
snapshot (strict mode from the planned snapshot). ``--mode local`` runs the tasks in threads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_core.operation.compact.postpone_bucket_compact import (
    PostponeBucketCompact,
    PostponeExecutor,
    PostponePartitionTask,
    check_postpone_request,
    local_postpone_executor,
    run_postpone_partition,
)
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import ProcedureArgs, result_dict

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["compact_postpone_table", "spark_postpone_executor"]


def spark_postpone_executor(spark: SparkSession) -> PostponeExecutor:
    """One Spark task per partition; each returns its real buckets' compaction results."""

    def run(table: FileStoreTable, tasks: Sequence[PostponePartitionTask]) -> list[list[CommitMessage]]:
        if not tasks:
            return []
        from spark_jobs.common.ledger import worker_cpu

        cpu = worker_cpu(spark)  # the workers' CPU, for the ledger row
        rdd = spark.sparkContext.parallelize(list(enumerate(tasks)), numSlices=len(tasks))
        done = rdd.map(cpu.each(lambda it: (it[0], run_postpone_partition(table, it[1])))).collect()
        return [ms for _, ms in sorted(done, key=lambda x: x[0])]

    return run


def compact_postpone_table(table: FileStoreTable, args: ProcedureArgs, *, spark: SparkSession | None) -> Mapping[str, Any]:
    """The ``compact`` job on a postpone-bucket table (arguments Java refuses are refused)."""
    check_postpone_request(
        table.name,
        partitions=args.get("partitions"),
        where=args.get("where"),
        buckets=args.get("buckets"),
        partition_idle_time_ms=None if args.get("partition_idle_time") is None else 0,
        streaming=bool(args.get("streaming")),
        order_strategy=args.get("order_strategy"),
    )
    executor = spark_postpone_executor(spark) if spark is not None else local_postpone_executor(args.get("parallelism"))
    ident = args.get("commit_identifier")
    job = PostponeBucketCompact(table, commit_user=args.get("commit_user"), executor=executor)
    result = job.run(dry_run=args.dry_run, commit_identifier=BATCH_COMMIT_IDENTIFIER if ident is None else ident)
    return {**result_dict(result), "mode": "local" if spark is None else "distributed"}
