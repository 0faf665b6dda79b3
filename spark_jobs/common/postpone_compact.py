"""``compact`` of a postpone-bucket table (``bucket = -2``) on Spark.

``spark_jobs compact`` hands such a table here (Java's ``CompactAction`` and Spark's
``SparkPostponeCompactProcedure`` take the same turn): the driver plans on the latest snapshot
(:class:`paimon_core.table.postpone_bucket_compact.PostponeBucketCompact`: the
partitions holding postpone files or real level-0 buckets, with their bucket counts), Spark map
tasks (one per postpone file) route the rows to their buckets, reduce tasks (one per partition and
bucket) replay them in order into the bucket and compact it, and the driver commits every task's
files and the removal of the postpone files as ONE COMPACT snapshot (strict mode from the planned
snapshot). ``--mode local`` runs one task per partition in threads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_core.postpone.postpone_utils import check_postpone_request
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.postpone_bucket_compact import (
    PostponeBucketCompact,
    PostponeExecutor,
    PostponePartitionTask,
    local_postpone_executor,
    route_postpone_file,
    run_postpone_bucket,
)
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import ProcedureArgs, result_dict

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["compact_postpone_table", "spark_postpone_executor"]


def spark_postpone_executor(spark: SparkSession) -> PostponeExecutor:
    """Distributed by (partition, bucket), as Java's Spark procedure shuffles by them: one map task
    per postpone file routes its rows to their buckets (Paimon's bucket hash, rows in file order);
    one reduce task per (partition, bucket) replays them in file order into the bucket and
    compacts it (a bucket with level-0 files and no rows: the marker's compaction); every task's
    compaction results come back to the driver, per partition."""

    def run(table: FileStoreTable, tasks: Sequence[PostponePartitionTask]) -> list[list[CommitMessage]]:
        if not tasks:
            return []
        from spark_jobs.common.ledger import worker_cpu

        sc = spark.sparkContext
        cpu = worker_cpu(spark)  # the workers' CPU, for the ledger row
        files = [(ti, fi) for ti, t in enumerate(tasks) for fi in range(len(t.files))]
        markers = [((ti, b), None) for ti, t in enumerate(tasks) for b in t.level0_buckets]
        routed = sc.parallelize(files, numSlices=max(1, len(files))).flatMap(
            cpu.partitions(
                lambda x: [((x[0], b), (x[1], blob)) for b, blob in route_postpone_file(table, tasks[x[0]], x[1])]
            )
        )
        keyed = routed.union(sc.parallelize(markers, numSlices=max(1, min(len(markers), 8)))) if markers else routed
        buckets = sum(t.num_buckets for t in tasks)
        grouped = keyed.groupByKey(numPartitions=max(1, min(buckets, sc.defaultParallelism * 4)))
        done = grouped.map(
            cpu.each(
                lambda kv: (
                    kv[0][0],
                    run_postpone_bucket(table, tasks[kv[0][0]], kv[0][1], [v for v in kv[1] if v is not None]),
                )
            )
        ).collect()
        out: list[list[CommitMessage]] = [[] for _ in tasks]
        for ti, messages in done:
            out[ti].extend(messages)
        return out

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
