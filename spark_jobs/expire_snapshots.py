"""``expire_snapshots``: expire old snapshots of a table (Paimon's ``sys.expire_snapshots``).

::

    python -m spark_jobs expire_snapshots --warehouse W --table db.t \\
        [--retain-max N] [--retain-min N] [--older-than TIME] [--max-deletes N] [--dry-run]
    python -m spark_jobs expire_snapshots --warehouse W --table db.t 5 2   # retain_max, retain_min

Arguments (Paimon's names and order; each also as ``--retain_max`` etc.): ``retain_max``,
``retain_min``, ``older_than`` (epoch millis or ISO time such as ``'2024-01-01 12:00:00'``, UTC),
``max_deletes``. Unset ones come from the table options ``snapshot.num-retained.max/min``,
``snapshot.time-retained`` and ``snapshot.expire.limit``. ``--dry-run`` reports and deletes nothing.

Calls ``table.maintenance.expire_snapshots(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line with the
``ExpireSnapshotsResult`` (expired_snapshot_ids, deleted_* counts, earliest/latest ids...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "expire_snapshots"
PARAMS = (
    Param("retain_max", "int", "maximum number of completed snapshots to retain", aliases=("retainMax",)),
    Param("retain_min", "int", "minimum number of completed snapshots to retain", aliases=("retainMin",)),
    Param(
        "older_than",
        "str",
        "expire snapshots committed before this time (millis or ISO)",
        aliases=("olderThan",),
    ),
    Param("max_deletes", "int", "maximum number of snapshots expired in this run", aliases=("maxDeletes",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Expire old snapshots of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = table.maintenance.expire_snapshots(
        retain_max=args.get("retain_max"),
        retain_min=args.get("retain_min"),
        older_than=args.get("older_than"),
        max_deletes=args.get("max_deletes"),
        dry_run=args.dry_run,
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
