"""``compact``: dedicated compaction of a table (Paimon's ``CALL sys.compact``).

::

    python -m spark_jobs compact --warehouse W --table db.t \\
        [--partitions 'dt=a,hh=1;dt=b' | --where "dt >= '2024-01-01'"] [--compact_strategy full|minor] \\
        [--options 'k=v,...'] [--partition_idle_time '1 d'] [--buckets '0,3,5-7'] [--dry-run] \\
        [--commit_user U --commit_identifier N] [--mode distributed|local] [--parallelism N]
    python -m spark_jobs compact --warehouse W --table db.t --streaming [--discovery_interval '10 s'] \\
        [--commit_user U] [--max_rounds N] [--idle_timeout '5 min'] [other arguments as above]

Arguments take Paimon's names and order (``table, partitions, compact_strategy, order_strategy,
order_by, where, options, partition_idle_time, buckets``), as flags or positionally. The plan is
made on the driver from metadata (:class:`paimon_core.operation.compact.compact_planner.CompactPlanner`);
``--mode distributed`` (default) runs one Spark task per (partition, bucket) or append bin on the
executors, each returning its before/after files; the driver commits them once (a COMPACT
snapshot), re-planning the buckets a concurrent commit changed. ``--mode local`` runs the tasks
in threads in this process and starts no JVM. ``--commit_user``/``--commit_identifier`` make a
retry of a job whose commit landed a no-op (Airflow passes them from the task instance).
``--order_strategy order|zorder|hilbert --order_by a,b`` is a sort compaction of unaware-bucket
append tables (:mod:`paimon_core.operation.compact.sort_compact`; sampled range shuffle on Spark,
:mod:`spark_jobs.sort_compact`), committed as a COMPACT of exactly the files it read, so rows a
concurrent writer appends meanwhile stay (Paimon's overwrite commit can drop them).

Prints one JSON line: the ``CompactResult`` (tasks, files/bytes/rows read and written, sorted runs
per bucket before and after, snapshot id, conflict rounds; with ``--dry-run`` the plan).

``--streaming`` (Flink's streaming dedicated compaction): keeps compacting as new snapshots arrive
(:class:`paimon_core.operation.compact.streaming_compact.StreamingCompaction`): polls every
``--discovery_interval`` (default: the table's ``continuous.discovery-interval``, else 10 s), each
round compacts the buckets new APPEND snapshots wrote (``minor`` unless ``--compact_strategy``
says otherwise) and commits as ``--commit_user`` (give it to resume: identifiers continue after
the user's last commit, so a restart never commits one twice). SIGTERM/SIGINT stop it after the
current round (a second signal abandons the round: its files are deleted, nothing committed);
``--max_rounds`` / ``--idle_timeout`` bound it. It prints one JSON line when it stops: the
``StreamingCompactResult`` (rounds, commits, snapshot ids, identifiers, files read/written).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import PaimonError
from paimon_core.operation.compact.compact_planner import CompactRequest, parse_partitions
from paimon_core.operation.compact.compact_task import CompactTask, run_compact_task
from paimon_core.operation.compact.table_compact import TableCompact, TaskExecutor, local_executor
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.store.file_store import FileStore
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.time_util import to_duration_millis
from spark_jobs.common.args import UsageError, parse_bucket_list, parse_options
from spark_jobs.common.ledger import job_action
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict
from spark_jobs.common.runner import JobContext, run_job

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args", "spark_executor"]

JOB = "compact"
PARAMS = (
    Param("partitions", "str", "partitions to compact: 'k=v,k2=v2;k=v3' (exclusive with where)"),
    Param("compact_strategy", "str", "full (default) or minor"),
    Param("order_strategy", "str", "none (default), or sort compaction: order, zorder or hilbert"),
    Param("order_by", "str", "columns of the sort compaction, e.g. 'a,b'"),
    Param("where", "str", "a condition over partition columns, e.g. \"dt >= '2024-01-01'\""),
    Param("options", "str", "dynamic table options for this run: 'k=v,k2=v2'"),
    Param("partition_idle_time", "str", "only partitions without new files for this long, e.g. '1 d'"),
    Param("buckets", "str", "fixed-bucket tables: the buckets to compact, e.g. '0,3', '0-999' or '0,3,5-7'"),
    Param("commit_user", "str", "commit user (with commit_identifier: a retry commits nothing twice)"),
    Param("commit_identifier", "int", "commit identifier of this run"),
    Param("mode", "str", "distributed (Spark tasks, default) or local (threads, no JVM)"),
    Param("parallelism", "int", "local mode: threads (default: CPU count)"),
    Param("streaming", "flag", "keep compacting as new snapshots arrive, until SIGTERM/SIGINT"),
    Param("discovery_interval", "str", "streaming: how often to look for new snapshots, e.g. '10 s'"),
    Param("max_rounds", "int", "streaming: stop after this many rounds (one poll each, compacting or idle)"),
    Param("idle_timeout", "str", "streaming: stop after no new snapshot for this long, e.g. '5 min'"),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(JOB, "Compact a Paimon table (one COMPACT commit).", PARAMS, argv, dry_run=True)
    strategy = args.get("compact_strategy")
    if strategy is not None and strategy.strip().lower() not in ("full", "minor"):  # Java's CompactProcedure
        raise UsageError(f"--compact_strategy must be 'full' or 'minor', got {strategy!r}")
    order = (args.get("order_strategy") or "none").strip().lower()
    if order == "none" and (args.get("order_by") or "").strip():
        raise UsageError('order_strategy "none" cannot work with order_by columns.')
    if order not in ("none", "order", "zorder", "hilbert"):
        raise UsageError(f"order_strategy must be none, order, zorder or hilbert, got {order!r}")
    if order != "none":
        if not (args.get("order_by") or "").strip():
            raise UsageError(f"order_strategy {order!r} needs --order_by columns")
        if args.get("partition_idle_time") is not None:
            raise UsageError("sort compact do not support 'partition_idle_time'.")
        if args.get("buckets") is not None:
            raise UsageError("Specifying buckets is not supported for sort compact.")
        if args.get("streaming"):
            raise UsageError("sort compaction runs in batch only; drop --streaming")
    parse_options(args.get("options"))  # refused before any table is opened
    if (args.get("mode") or "distributed") not in ("distributed", "local"):
        raise UsageError(f"--mode must be distributed or local, got {args.get('mode')!r}")
    if args.get("commit_identifier") is not None and not args.get("commit_user"):
        raise UsageError("--commit_identifier needs --commit_user")
    streaming_only = [n for n in ("discovery_interval", "max_rounds", "idle_timeout") if args.get(n) is not None]
    if args.get("streaming"):
        if args.dry_run or args.get("commit_identifier") is not None:
            raise UsageError("--streaming takes no --dry-run or --commit_identifier (each round takes the next identifier)")
        if args.get("max_rounds") is not None and args.get("max_rounds") < 1:
            raise UsageError(f"--max_rounds must be at least 1, got {args.get('max_rounds')}")
        for name in ("discovery_interval", "idle_timeout"):
            if args.get(name) is not None:
                try:
                    to_duration_millis(args.get(name), name=name)
                except PaimonError as e:
                    raise UsageError(f"--{name}: {e}") from None
    elif streaming_only:
        raise UsageError(f"{', '.join('--' + n for n in streaming_only)}: only with --streaming")
    return args


def request_of(args: ProcedureArgs) -> CompactRequest:
    """The core request of the parsed arguments (InvalidArgumentError for bad values); a streaming
    compaction is ``minor`` unless ``compact_strategy`` says otherwise (Flink's streaming mode)."""
    buckets = args.get("buckets")
    bucket_set = None if buckets is None else parse_bucket_list(buckets)
    idle = args.get("partition_idle_time")
    partitions = args.get("partitions")
    return CompactRequest(
        strategy=(args.get("compact_strategy") or ("minor" if args.get("streaming") else "full")).strip().lower(),  # type: ignore[arg-type]  # validated by CompactRequest
        partitions=parse_partitions(partitions) if partitions else None,
        where=args.get("where"),
        buckets=bucket_set,
        partition_idle_time_ms=None if idle is None else to_duration_millis(idle, name="partition_idle_time"),
    )


def _check_buckets(table: FileStoreTable, buckets: frozenset[int] | None) -> None:
    """UsageError for ``--buckets`` the table does not have: from 0 to ``bucket - 1``, or a
    bucket some live file of a partition written with more buckets still holds (before a rescale)."""
    count = table.options.bucket
    beyond = frozenset(b for b in buckets or () if b >= count)
    if not beyond or count <= 0:  # bucket <= 0: the planner refuses --buckets itself
        return
    from paimon_core.operation.scan import ScanFilter

    latest = table.latest_snapshot()
    held = set()
    if latest is not None:
        held = {e.bucket for e in table.new_file_store_scan().live_entries(latest, ScanFilter(buckets=beyond))}
    missing = sorted(beyond - held)
    if missing:
        raise UsageError(
            f"--buckets {_ranges(missing)}: table {table.name} has buckets 0 to {count - 1} (bucket = {count})"
        )


def _ranges(buckets: Sequence[int]) -> str:
    """Sorted buckets as ``'4-999'`` / ``'4, 7-9'`` (a refused ``'0-999'`` is not listed one by one)."""
    out: list[str] = []
    for b in buckets:
        if out and b == int(out[-1].rsplit("-", 1)[-1]) + 1:
            out[-1] = f"{out[-1].split('-', 1)[0]}-{b}"
        else:
            out.append(str(b))
    return ", ".join(out)


def spark_executor(spark: SparkSession) -> TaskExecutor:
    """One Spark task per compaction task; the messages come back to the driver, in task order
    (and the tasks' Python CPU goes to the ledger row being recorded)."""

    def run(store: FileStore, tasks: Sequence[CompactTask]) -> list[CommitMessage]:
        if not tasks:
            return []
        from spark_jobs.common.ledger import worker_cpu

        cpu = worker_cpu(spark)  # the workers' CPU, for the ledger row
        rdd = spark.sparkContext.parallelize(list(enumerate(tasks)), numSlices=len(tasks))
        done = rdd.map(cpu.each(lambda it: (it[0], run_compact_task(store, it[1])))).collect()
        return [m for _, m in sorted(done, key=lambda x: x[0])]

    return run


def call(table: FileStoreTable, args: ProcedureArgs, *, spark: SparkSession | None = None) -> Mapping[str, Any]:
    options = parse_options(args.get("options"))
    if options:
        table = table.copy(options)
    if table.options.bucket == -2:  # postpone buckets: the compaction assigns them (Java's CompactAction)
        from spark_jobs.common.postpone_compact import compact_postpone_table

        return compact_postpone_table(table, args, spark=spark)
    if args.get("buckets") is not None:
        _check_buckets(table, parse_bucket_list(args.get("buckets")))
    executor = spark_executor(spark) if spark is not None else local_executor(args.get("parallelism"))
    if args.get("streaming"):
        from spark_jobs.compact_streaming import run_streaming

        return {**run_streaming(table, args, request_of(args), executor), "mode": "local" if spark is None else "distributed"}
    ident = args.get("commit_identifier")
    order = (args.get("order_strategy") or "none").strip().lower()
    clustering = (table.options.get("clustering.incremental") or "false").lower() == "true"
    if order != "none" or (clustering and not table.schema.primary_keys and table.options.bucket == -1):
        return {**_sort(table, args, order, spark, BATCH_COMMIT_IDENTIFIER if ident is None else ident),
                "mode": "local" if spark is None else "distributed"}  # fmt: skip
    job = TableCompact(table.store, commit_user=args.get("commit_user"), executor=executor)
    result = job.run(
        request_of(args),
        dry_run=args.dry_run,
        commit_identifier=BATCH_COMMIT_IDENTIFIER if ident is None else ident,
    )
    return {**result_dict(result), "mode": "local" if spark is None else "distributed"}


def _sort(table: FileStoreTable, args: ProcedureArgs, order: str, spark: SparkSession | None, ident: int) -> Mapping[str, Any]:
    """Sort compaction (``order_strategy`` order/zorder/hilbert), or incremental clustering of a
    table with ``clustering.incremental`` (``order_strategy`` none; ``compact_strategy`` minor by
    default, as Paimon): planned on the driver, sorted on the executors (sample + range shuffle,
    :mod:`spark_jobs.sort_compact`) or in this process, committed once as a COMPACT of exactly
    the files read."""
    from paimon_core.operation.compact.sort_compact import SortCompaction, local_sort_executor
    from paimon_core.sort.table_sorter import SortSpec

    if spark is not None:
        from spark_jobs.sort_compact import spark_sort_executor

        executor = spark_sort_executor(spark)
    else:
        executor = local_sort_executor()
    user = args.get("commit_user")
    if order == "none":  # incremental clustering
        full = (args.get("compact_strategy") or "minor").strip().lower() == "full"
        job = SortCompaction.incremental_clustering(table.store, full=full, commit_user=user, executor=executor)
    else:
        spec = SortSpec.of(order, args.get("order_by") or "", table.options.options)
        job = SortCompaction(table.store, spec, commit_user=user, executor=executor)
    result = job.run(request_of(args), dry_run=args.dry_run, commit_identifier=ident)
    return {**result_dict(result), "order_strategy": job.spec.strategy, "order_by": list(job.spec.columns),
            "incremental_clustering": job.clustering is not None}  # fmt: skip


def _body(ctx: JobContext[ProcedureArgs]) -> Mapping[str, Any]:
    """The table opened first (a missing or refused table fails before a JVM starts); Spark for
    a distributed run that changes something."""
    args = ctx.args
    table = ctx.table()
    if (args.get("mode") or "distributed") == "local" or args.dry_run:
        return call(table, args)
    if args.get("buckets") is not None:  # refused before a JVM starts
        _check_buckets(table, parse_bucket_list(args.get("buckets")))
    return call(table, args, spark=ctx.spark())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_job(JOB, argv, parse_args, _body, needs_spark=True, action=lambda a: job_action(JOB, a))


if __name__ == "__main__":
    sys.exit(main())
