"""``repair_earliest_snapshot``: point the EARLIEST hint at the start of the contiguous snapshots
(Paimon's ``sys.repair_earliest_snapshot``).

::

    python -m spark_jobs repair_earliest_snapshot --warehouse W --table db.t --snapshot-id 7 [--dry-run]
    python -m spark_jobs repair_earliest_snapshot --warehouse W --table db.t 7

Arguments (Paimon's names and order): ``snapshot_id``. As Java's
``SnapshotManager.repairEarliestSnapshot``: it must lie between the current earliest and the
latest snapshot, every snapshot from it to the latest must exist, and it must follow a gap (or be
the current earliest); else the job fails (exit 3) naming the problem and nothing changes. Only the
hint file is written. ``--dry-run`` (ours) runs every check and writes nothing.

Calls ``table.maintenance.repair_earliest_snapshot(...)``: driver-only, no Spark session. Prints one JSON
line: previous_earliest_snapshot_id, current_earliest_snapshot_id (Java's row).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "repair_earliest_snapshot"
PARAMS = (
    Param("snapshot_id", "int", "the new earliest snapshot (after a gap)", required=True, aliases=("snapshotId",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Repair the EARLIEST snapshot hint of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.repair_earliest_snapshot(args.get("snapshot_id"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
