"""``rollback_to_watermark``: roll a table back to the newest snapshot at or before a watermark
(Paimon's ``sys.rollback_to_watermark``).

::

    python -m spark_jobs rollback_to_watermark --warehouse W --table db.t --watermark 1700000000000 [--dry-run]
    python -m spark_jobs rollback_to_watermark --warehouse W --table db.t 1700000000000

Arguments (Paimon's names and order): ``watermark`` (a Java long, epoch millis). As Java's
``RollbackToWatermarkProcedure``: the target is the newest snapshot whose watermark is <=
``watermark`` (``earlierOrEqualWatermark``; snapshots without a watermark are skipped); the
snapshots, tags and changelogs after it are removed as ``rollback_to`` removes them. An empty table
or no such snapshot fails (exit 3), a watermark that is not an integer exits 2; nothing changes.
``--dry-run`` (ours) reports and changes nothing.

Calls ``table.maintenance.rollback_to_watermark(...)``: driver-only, no Spark session. Prints one JSON line:
previous_snapshot_id, current_snapshot_id (Java's row), target_snapshot_id, deleted_snapshot_ids...
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure
from spark_jobs.create_tag_from_watermark import checked_watermark

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rollback_to_watermark"
PARAMS = (
    Param("watermark", "int", "roll back to the newest snapshot whose watermark is <= this", required=True),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return checked_watermark(
        parse_procedure_args(
            JOB, "Roll a Paimon table back to the newest snapshot at or before a watermark.", PARAMS, argv,
            dry_run=True, dry_run_default=True,
        )
    )  # fmt: skip


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.rollback_to_watermark(args.get("watermark"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
