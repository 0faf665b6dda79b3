"""``reset_consumer``: move or delete a consumer's progress (Paimon's ``sys.reset_consumer``).

::

    python -m spark_jobs reset_consumer --warehouse W --table db.t --consumer-id myid --next-snapshot-id 10
    python -m spark_jobs reset_consumer --warehouse W --table db.t myid           # delete the consumer

Arguments (Paimon's names and order; also ``--consumer_id`` / ``--consumerId`` etc.):
``consumer_id``, ``next_snapshot_id`` (without it the consumer is deleted). Stop the reading job
first: a running reader overwrites its consumer file.

Calls ``table.maintenance.reset_consumer(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). The core call has no dry run. Prints one JSON line
with the core result (consumer_id, previous_next_snapshot_id, next_snapshot_id, deleted).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "reset_consumer"
PARAMS = (
    Param("consumer_id", "str", "id of the consumer", required=True, aliases=("consumerId",)),
    Param(
        "next_snapshot_id",
        "int",
        "the consumer's new next snapshot (omit to delete it)",
        aliases=("nextSnapshotId",),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Reset or delete a consumer of a Paimon table.", PARAMS, argv, dry_run=False
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    consumer_id = args.get("consumer_id")
    next_id = args.get("next_snapshot_id")
    return result_dict(table.maintenance.reset_consumer(consumer_id, next_id))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
