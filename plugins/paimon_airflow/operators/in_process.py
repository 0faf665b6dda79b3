"""What the Spark job operators settle in the task process, before (or instead of) a spark-submit.

A spark-submit starts a JVM (seconds; 10 s and more on a busy 2-core machine) even for a job that
then does nothing, so the operators first ask the table, in the task process, through
``paimon_core`` (the job's own parse of its arguments, the same table calls the job makes):

* :func:`committed_ingest_result`: a retry or re-run of an ``ingest`` whose commit landed (its
  commit user already committed its identifier: the snapshot scan of the commit path's
  ``is_committed``) returns the job's no-op result (``already_committed: true``) at once.
* :func:`small_compaction_result`: a ``compact`` that is already committed (a retry), has nothing
  to compact (empty plan), is a dry run, or whose plan rewrites at most ``max_bytes`` runs here,
  as the job's ``--mode local`` does (threads in this process; the same plan, commit user and
  identifier); a bigger one returns None and goes to Spark.

Both return None when they cannot decide (a bad argument, a missing table): the job then runs as
before and reports it. Results carry ``in_task_process: true``. A compaction settled here is its
one maintenance ledger row (recorded here; the job never runs); an ingest records none.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_airflow.hooks.paimon import PaimonHook

__all__ = ["DEFAULT_IN_PROCESS_MAX_BYTES", "committed_ingest_result", "small_compaction_result"]

#: A compaction rewriting at most this many bytes runs in the task process (no JVM): a few
#: seconds of Arrow work on one core, less than a JVM start.
DEFAULT_IN_PROCESS_MAX_BYTES = 64 * 1024 * 1024


def committed_ingest_result(hook: PaimonHook, argv: Sequence[str]) -> dict[str, Any] | None:
    """The ``ingest`` job's result for a run whose commit already landed, else None."""
    from spark_jobs.common.args import UsageError
    from spark_jobs.ingest import committed_result, parse_args

    started = time.monotonic()
    try:
        plan = parse_args(list(argv))
    except UsageError:
        return None  # the job reports it
    catalog = hook.get_catalog()
    if plan.run_id is None or not catalog.table_exists(plan.config.table):
        return None
    table = catalog.get_table(plan.config.table)
    if not table.new_file_store_commit(plan.commit_user).is_committed(plan.commit_identifier):
        return None
    return {**committed_result(plan, table, started=started), "in_task_process": True}


def small_compaction_result(hook: PaimonHook, argv: Sequence[str], *, max_bytes: int) -> dict[str, Any] | None:
    """The ``compact`` job's result, computed here when the compaction is small (see the module
    docstring), else None. ``max_bytes`` 0: only retries, empty plans and dry runs."""
    from spark_jobs import compact
    from spark_jobs.common.args import UsageError

    try:
        args = compact.parse_args(list(argv))
    except UsageError:
        return None
    catalog = hook.get_catalog()
    if not catalog.table_exists(args.config.table):
        return None
    table = catalog.get_table(args.config.table)
    if not args.dry_run:
        # the job's own dry run: already committed (retry), or the tasks and bytes it would rewrite
        dry = compact.call(table, dataclasses.replace(args, dry_run=True))
        planned = sum(int(t.get("rewrite_bytes") or 0) for t in dry.get("plan") or ())
        if not dry.get("already_committed") and dry.get("plan") and planned > max_bytes:
            return None
    from paimon_core.ledger import record_action
    from spark_jobs.common.ledger import job_action

    with record_action(  # the one ledger row of this compaction (the job never runs)
        table, job_action("compact", args), entry_point="airflow", catalog=catalog, dry_run=args.dry_run
    ) as recording:
        result = dict(compact.call(table, args))  # no Spark session: the job's --mode local
        recording.set_result(result)
    return {**result, "job": "compact", "status": "ok", "table": args.config.table, "in_task_process": True}
