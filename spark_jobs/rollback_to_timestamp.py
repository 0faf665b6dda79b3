"""``rollback_to_timestamp``: roll a table back to its state at a time (Paimon's
``sys.rollback_to_timestamp``).

::

    python -m spark_jobs rollback_to_timestamp --warehouse W --table db.t --timestamp 1700000000000 [--dry-run]
    python -m spark_jobs rollback_to_timestamp --warehouse W --table db.t '2024-01-01T12:00:00'

Arguments (Paimon's names and order): ``timestamp`` (epoch millis, as Paimon takes it, or an ISO
time, UTC). The target is the newest snapshot committed at or before it; the snapshots, tags and
changelogs after it are removed as ``rollback_to`` does (metadata only; data files are left to
``remove_orphan_files``). No snapshot that old fails (exit 3) and changes nothing. ``--dry-run``
(ours) reports and changes nothing.

Calls ``table.maintenance.rollback_to_timestamp(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line with the core result
(previous_snapshot_id, target_snapshot_id, deleted_snapshot_ids, deleted_tags...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rollback_to_timestamp"
PARAMS = (
    Param(
        "timestamp",
        "str",
        "roll back to the newest snapshot at or before this time (millis or ISO)",
        required=True,
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Roll a Paimon table back to its state at a time.", PARAMS, argv, dry_run=True, dry_run_default=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.rollback_to_timestamp(args.get("timestamp"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
