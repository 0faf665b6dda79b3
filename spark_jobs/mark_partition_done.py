"""``mark_partition_done``: mark partitions done (Paimon's ``sys.mark_partition_done``).

::

    python -m spark_jobs mark_partition_done --warehouse W --table db.t --partitions 'dt=20240101,hh=0;dt=20240102'
    python -m spark_jobs mark_partition_done --warehouse W --table db.t 'dt=20240101'

Arguments (Paimon's names and order): ``partitions``, ``;`` between partitions and ``,`` between a
partition's ``key=value`` pairs (leading partition keys; a prefix marks the parent directory).
The table's ``partition.mark-done-action`` decides what done means: ``success-file`` (default)
writes Java's ``_SUCCESS`` JSON file into each partition directory; ``done-partition`` and
``mark-event`` need a metastore and fail (exit 3) with nothing written, as in Java for a
file-system catalog.

Calls ``table.maintenance.mark_partition_done(...)``: driver-only, no Spark session. Prints one JSON line with
the partitions and the success files written.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "mark_partition_done"
PARAMS = (
    Param("partitions", "str", "partitions, e.g. 'dt=20240101,hh=0;dt=20240102'", required=True),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Mark partitions of a Paimon table done.", PARAMS, argv, dry_run=False)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.mark_partition_done(args.get("partitions")))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
