"""``merge_into``: Paimon's ``CALL sys.merge_into`` as a Spark job.

::

    python -m spark_jobs merge_into --warehouse W 'default.T' '' '' 'default.S' 'T.id=S.order_id' \\
        '' 'price=T.price+20' '' '*'
    python -m spark_jobs merge_into --warehouse W --table default.T --source_table default.S \\
        --merge_condition 'T.id=S.order_id' --matched_delete_condition 'S.deleted' [--dry-run] [--run-id R]

Arguments take Paimon's names and order (``target_table, target_alias, source_sqls, source_table,
merge_condition, matched_upsert_condition, matched_upsert_setting, not_matched_insert_condition,
not_matched_insert_values, matched_delete_condition``), positionally or as flags (``--name`` or
``--name-with-dashes``; ``--table`` is ``target_table``, and then the positional arguments start
at ``target_alias``). ``''`` means "not given". Six arguments in all are Java's short form
``(target_table, target_alias, source_sqls, source_table, merge_condition, matched_delete_condition)``.
The clause semantics are in :mod:`spark_jobs.common.merge_spec`.

``source_sqls`` (``;``-separated) run first in the Spark session (``CREATE TEMPORARY VIEW S AS
...``). ``source_table`` is a Spark table or view, else a table of the warehouse (``db.t``).
The target is read at its latest snapshot by paimon_core on the executors. Then:

* **primary-key tables**: upserts (+U), deletes (-D) and inserts (+I) are written by bucket on the
  executors and committed once on the driver (merge on read);
* **append tables** (copy-on-write): the data files holding upserted or deleted rows are
  rewritten (other rows kept) into new files, with the inserts, in one commit that removes the old
  files; a concurrent commit that removed one of them fails it (nothing changed, new files deleted).

A target row matched by two source rows is an error naming it (nothing written), as is a matched
upsert that changes a primary key. ``--dry-run`` counts the rows that would be updated, deleted and
inserted. ``--run-id`` makes a retry of a landed commit a no-op (commit user
``merge_into-<table>-<run id>``).

Prints one JSON line: the :class:`MergeIntoResult`.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_core import FileSystemCatalog
from spark_jobs.common.args import JobConfig, UsageError, base_parser, parse_job_args
from spark_jobs.common.merge_spec import ARG_NAMES, MergeIntoError, MergeIntoSpec
from spark_jobs.common.runner import JobContext, run_job

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_jobs.common.merge_run import MergeIntoResult

__all__ = ["JOB", "MergeIntoArgs", "committed_result", "main", "parse_args"]

logger = logging.getLogger(__name__)

JOB = "merge_into"
#: A run id commits under this identifier (one commit per run).
RUN_COMMIT_IDENTIFIER = 1
#: Flag aliases: Flink's action names and Java's camelCase procedure names.
_ALIASES = {
    "target_table": ("table",),
    "matched_upsert_setting": ("matched_upsert_set", "matchedUpsertSetting"),
    "source_sqls": ("source_sql", "sourceSqls"),
    "target_alias": ("targetAlias",),
    "source_table": ("sourceTable",),
    "merge_condition": ("on", "mergeCondition"),
    "matched_upsert_condition": ("matchedUpsertCondition",),
    "not_matched_insert_condition": ("notMatchedInsertCondition",),
    "not_matched_insert_values": ("notMatchedInsertValues",),
    "matched_delete_condition": ("matchedDeleteCondition",),
}


class MergeIntoArgs(argparse.Namespace):
    """The parsed command line (see :func:`parse_args`)."""

    config: JobConfig
    spec: MergeIntoSpec
    dry_run: bool
    run_id: str | None


def _flags(name: str) -> list[str]:
    names = [name, name.replace("_", "-"), *_ALIASES.get(name, ())]
    return [f"--{n}" for n in dict.fromkeys(names)]


def parse_args(argv: Sequence[str]) -> MergeIntoArgs:
    """Parse flags and positional arguments into the run's spec (raises :class:`UsageError`)."""
    p = base_parser(JOB, "MERGE INTO a Paimon table from a Spark source (Paimon's merge_into).", table=False)
    for name in ARG_NAMES:
        p.add_argument(*_flags(name), dest=name, metavar=name.upper())
    p.add_argument("positional", nargs="*", metavar="ARG", help=f"in Paimon's order: {', '.join(ARG_NAMES)}")
    p.add_argument("--dry-run", "--dry_run", dest="dry_run", action="store_true", help="count; change nothing")
    p.add_argument("--run-id", "--run_id", dest="run_id", help="idempotency key of this run")
    config, ns = parse_job_args(JOB, p, argv)
    positional: list[str] = list(ns.positional)
    names = list(ARG_NAMES)
    if ns.target_table is not None:
        names = names[1:]  # --table given: positional arguments start at target_alias
    if len(positional) + (len(ARG_NAMES) - len(names)) == 6:
        # Java's short form: (..., merge_condition, matched_delete_condition)
        names = [*names[: len(positional) - 1], "matched_delete_condition"]
    if len(positional) > len(names):
        raise UsageError(f"too many arguments ({len(positional)}); merge_into takes {', '.join(ARG_NAMES)}")
    values: dict[str, str | None] = {n: getattr(ns, n) for n in ARG_NAMES}
    for name, value in zip(names, positional, strict=False):
        if values[name] is not None:
            raise UsageError(f"{name} given twice: as --{name} and as an argument")
        values[name] = value
    try:
        spec = MergeIntoSpec.of(values)
    except MergeIntoError as e:
        raise UsageError(str(e)) from None
    if ns.run_id is not None and not ns.run_id.strip():
        raise UsageError("--run-id must not be empty")
    out = MergeIntoArgs()
    out.config = JobConfig(
        job=JOB,
        warehouse=config.warehouse,
        table=spec.target_table,
        master=config.master,
        driver_memory=config.driver_memory,
        app_name=config.app_name,
        conf=config.conf,
        storage_options=config.storage_options,
        ledger=config.ledger,
    )
    out.spec = spec
    out.dry_run = bool(ns.dry_run)
    out.run_id = ns.run_id.strip() if ns.run_id else None
    return out


def commit_user_for(table: str, run_id: str | None) -> str:
    """``merge_into-<table>-<run id>``; a fresh unique user without a run id."""
    return f"{JOB}-{table}-{run_id if run_id is not None else uuid.uuid4().hex}"


def run(spark: SparkSession, args: MergeIntoArgs) -> MergeIntoResult:
    """Merge with an existing session (see :func:`spark_jobs.common.merge_run.merge_into`)."""
    from spark_jobs.common.merge_run import merge_into

    catalog = FileSystemCatalog(args.config.warehouse, storage_options=dict(args.config.storage_options) or None)
    return merge_into(
        spark,
        catalog,
        args.spec,
        dry_run=args.dry_run,
        commit_user=commit_user_for(args.spec.target_table, args.run_id),
        commit_identifier=RUN_COMMIT_IDENTIFIER if args.run_id is not None else None,
        storage_options=args.config.storage_options,
    )


def committed_result(catalog: FileSystemCatalog, args: MergeIntoArgs) -> dict[str, Any] | None:
    """The job's result line for a ``--run-id`` run whose commit already landed, else None."""
    if args.run_id is None or args.dry_run:
        return None
    table = catalog.get_table(args.spec.target_table)
    user = commit_user_for(args.spec.target_table, args.run_id)
    snapshot = table.snapshot_manager.latest_snapshot_of_user(user)
    if snapshot is None or snapshot.commit_identifier < RUN_COMMIT_IDENTIFIER:
        return None
    return {
        "job": JOB,
        "status": "ok",
        "table": args.spec.target_table,
        "dry_run": False,
        "snapshot_id": snapshot.id,
        "commit_user": user,
        "commit_identifier": RUN_COMMIT_IDENTIFIER,
        "already_committed": True,
    }


def _body(ctx: JobContext[MergeIntoArgs]) -> Mapping[str, Any]:
    """The target opened first (a missing one fails before a JVM starts); a ``--run-id`` run
    whose commit landed is answered without Spark."""
    args = ctx.args
    ctx.table()
    done = committed_result(ctx.catalog, args)
    if done is not None:
        logger.info("merge_into run %s on %s already committed: nothing to do", args.run_id, args.config.table)
        return done
    # an error's line names the root cause (a Python worker's own exception, Spark's condition
    # line; positions are in the SQL built from the arguments, logged at DEBUG) and whether a
    # retry can help (CAST_INVALID_INPUT, a NULL key: no): spark_jobs.common.output
    return {**run(ctx.spark(), args).to_dict(), "seconds": ctx.elapsed()}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_job(JOB, argv, parse_args, _body, needs_spark=True)


if __name__ == "__main__":
    sys.exit(main())
