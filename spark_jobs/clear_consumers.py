"""``clear_consumers``: delete the consumers of a table whose ids match a pattern (Paimon's
``sys.clear_consumers``).

::

    python -m spark_jobs clear_consumers --warehouse W --table db.t [--dry-run]          # all of them
    python -m spark_jobs clear_consumers --warehouse W --table db.t 'job_.*' 'job_keep'  # including, excluding

Arguments (Paimon's names and order; also ``--includingConsumers`` etc.): ``including_consumers``
(a regular expression over consumer ids, full match; default ``.*``: all) and
``excluding_consumers`` (ids matching it are kept). An invalid regular expression fails (exit 3)
and deletes nothing. A deleted consumer no longer holds snapshots back from expiry; stop its
reader first. ``--dry-run`` (ours) reports and deletes nothing.

Calls ``table.maintenance.clear_consumers(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: cleared_consumers,
including, excluding, dry_run.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "clear_consumers"
PARAMS = (
    Param(
        "including_consumers",
        "str",
        "regex of the consumer ids to delete (default .*)",
        aliases=("includingConsumers",),
    ),
    Param(
        "excluding_consumers",
        "str",
        "regex of the consumer ids to keep",
        aliases=("excludingConsumers",),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Delete consumers of a Paimon table.", PARAMS, argv, dry_run=True, dry_run_default=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    including = args.get("including_consumers")
    result = table.maintenance.clear_consumers(
        ".*" if including is None else including, args.get("excluding_consumers"), dry_run=args.dry_run
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
