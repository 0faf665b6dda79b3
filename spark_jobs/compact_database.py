"""``compact_database``: compact every matching table of a warehouse (Paimon's ``compact_database``).

::

    python -m spark_jobs compact_database --warehouse W [--including_databases 'db1|db2'] \\
        [--mode divided|combined] [--including_tables 'db1\\.t.*'] [--excluding_tables '.*_tmp'] \\
        [--table_options 'k=v,...'] [--partition_idle_time '1 d'] [--compact_strategy full|minor] \\
        [--dry-run] [--commit_user U --commit_identifier N] [--execution distributed|local]

Arguments take Paimon's names and order (``including_databases, mode, including_tables,
excluding_tables, table_options, partition_idle_time, compact_strategy``), as flags or
positionally. Databases match ``including_databases`` (a regex, default all); tables match
``including_tables`` on ``db.table`` and not ``excluding_tables`` (excluding wins, as in Paimon).
Tables are compacted one after another, each in its own COMPACT commit (``mode`` divided and
combined plan the same batch work here; Flink's difference is about streaming sinks). A table
that fails is reported in the result with its error and the others go on; the job then exits 3,
or 75 when every failure may pass on a retry (``retryable``), after printing the one JSON line
with every table's result. A table of a kind paimon_core refuses (a chain table, a BLOB column ...:
:class:`~paimon_core.exceptions.UnsupportedTableKindError`) is left alone, as Java's
``compact_database`` skips tables it cannot compact: listed in ``tables`` as ``skipped`` with the
reason (and in ``skipped_tables``), one ``skipped`` ledger row, and no failure of the job. With
``--commit_user`` each table commits as ``<user>:<db.table>``, so a retried job skips the tables
it already compacted.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_core import FileSystemCatalog, PaimonError
from paimon_core.operation.compact.table_compact import TableCompact, local_executor
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.postpone_bucket_compact import PostponeBucketCompact
from spark_jobs.common.args import UsageError, parse_options
from spark_jobs.common.ledger import job_catalog, job_recording
from spark_jobs.common.output import is_retryable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args
from spark_jobs.common.runner import JobContext, SkippedTable, open_or_skip, run_job
from spark_jobs.compact import request_of, spark_executor

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JOB", "PARAMS", "main", "matching_tables", "parse_args", "run"]

JOB = "compact_database"
PARAMS = (
    Param("including_databases", "str", "regex of the databases to compact (default: all)"),
    Param("mode", "str", "divided (default) or combined"),
    Param("including_tables", "str", "regex over db.table of the tables to compact (default: all)"),
    Param("excluding_tables", "str", "regex over db.table of tables to skip (wins over including)"),
    Param("table_options", "str", "dynamic table options for this run: 'k=v,k2=v2'"),
    Param("partition_idle_time", "str", "only partitions without new files for this long, e.g. '1 d'"),
    Param("compact_strategy", "str", "full (default) or minor"),
    Param("commit_user", "str", "commit user prefix (a retry skips the tables already committed)"),
    Param("commit_identifier", "int", "commit identifier of this run"),
    Param("execution", "str", "distributed (Spark tasks, default) or local (threads, no JVM)"),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(
        JOB, "Compact every matching table of a warehouse.", PARAMS, argv, dry_run=True, table=False
    )
    if (args.get("mode") or "divided") not in ("divided", "combined"):
        raise UsageError(f"--mode must be divided or combined, got {args.get('mode')!r}")
    if (args.get("execution") or "distributed") not in ("distributed", "local"):
        raise UsageError(f"--execution must be distributed or local, got {args.get('execution')!r}")
    parse_options(args.get("table_options"), name="table_options")  # refused before any table is opened
    for name in ("including_databases", "including_tables", "excluding_tables"):
        try:
            re.compile(args.get(name) or ".*")
        except re.error as e:
            raise UsageError(f"--{name} is not a valid regex: {e}") from None
    return args


def matching_tables(catalog: FileSystemCatalog, args: ProcedureArgs) -> list[str]:
    """``db.table`` names to compact, sorted."""
    dbs = re.compile(args.get("including_databases") or ".*")
    inc = re.compile(args.get("including_tables") or ".*")
    exc = re.compile(args.get("excluding_tables")) if args.get("excluding_tables") else None
    out = []
    for db in catalog.list_databases():
        if not dbs.fullmatch(db):
            continue
        for t in catalog.list_tables(db):
            name = f"{db}.{t}"
            if inc.fullmatch(name) and not (exc is not None and exc.fullmatch(name)):
                out.append(name)
    return sorted(out)


def run(args: ProcedureArgs, *, spark: SparkSession | None = None) -> dict[str, Any]:
    """Compact the matching tables; returns the JSON payload (``status`` ``error`` when a table
    failed). Each table is one row of the warehouse's maintenance ledger (action
    ``compact_database``); a table whose kind paimon_core refuses is skipped (see the module
    docstring)."""
    started = time.monotonic()
    catalog = job_catalog(args.config)
    names = matching_tables(catalog, args)
    request = request_of(args)  # validated once, before any table is touched
    options = parse_options(args.get("table_options"), name="table_options")
    executor = spark_executor(spark) if spark is not None else local_executor()
    user = args.get("commit_user")
    ident = args.get("commit_identifier")
    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []
    for name in names:
        try:
            with job_recording(args.config, name, JOB, catalog=catalog, dry_run=args.dry_run) as recording:
                table = open_or_skip(catalog, name, recording)
                if isinstance(table, SkippedTable):
                    results.append(table.to_dict())
                    continue
                if options:
                    table = table.copy(options)
                job_user = f"{user}:{name}" if user else None
                commit_identifier = BATCH_COMMIT_IDENTIFIER if ident is None else ident
                if table.options.bucket == POSTPONE_BUCKET:  # the compaction assigns the buckets (table-level)
                    postpone = PostponeBucketCompact.for_request(table, request, commit_user=job_user)
                    r = postpone.run(dry_run=args.dry_run, commit_identifier=commit_identifier).to_dict()
                else:
                    job = TableCompact(table.store, commit_user=job_user, executor=executor)
                    r = job.run(request, dry_run=args.dry_run, commit_identifier=commit_identifier).to_dict()
                recording.set_result(r)
            # a dry run shows its plan: the compaction units per (partition, bucket)
            results.append({"status": "ok", **{k: r[k] for k in _SUMMARY}, **({"plan": r["plan"]} if args.dry_run else {})})
        except (PaimonError, OSError) as e:
            errors.append(e)
            results.append({"table": name, "status": "error", "error_type": type(e).__name__, "error": str(e)})
    failed = [r["table"] for r in results if r["status"] == "error"]
    return {
        "status": "ok" if not failed else "error",
        "error": f"{len(failed)} of {len(names)} table(s) failed: {', '.join(failed)}" if failed else None,
        # a retry helps only when every failure may pass (a conflict, a timeout), not a lost file
        "retryable": bool(errors) and all(is_retryable(e) for e in errors),
        "dry_run": args.dry_run,
        "tables": results,
        "compacted_tables": sum(1 for r in results if r["status"] == "ok" and r.get("snapshot_id")),
        "failed_tables": failed,
        "skipped_tables": [r["table"] for r in results if r["status"] == "skipped"],
        "seconds": round(time.monotonic() - started, 3),
    }


_SUMMARY = (
    "table",
    "snapshot_id",
    "already_committed",
    "tasks",
    "files_read",
    "bytes_read",
    "files_written",
    "bytes_written",
    "conflict_rounds",
    "elapsed_ms",
)


def _body(ctx: JobContext[ProcedureArgs]) -> Mapping[str, Any]:
    args = ctx.args
    distributed = (args.get("execution") or "distributed") == "distributed" and not args.dry_run
    return run(args, spark=ctx.spark() if distributed else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 when every table succeeded or was skipped, 3 (75 when retryable) when one
    failed (all are still reported), 2 bad arguments."""
    return run_job(JOB, argv, parse_args, _body, needs_spark=True, ledger="tables")


if __name__ == "__main__":
    sys.exit(main())
