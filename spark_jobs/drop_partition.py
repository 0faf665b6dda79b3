"""``drop_partition``: drop partitions of a table (Paimon's Flink procedure ``sys.drop_partition``).

::

    python -m spark_jobs drop_partition --warehouse W --table db.t --partitions 'dt=2024-01-01;dt=2024-01-02,hh=3' [--dry-run]
    python -m spark_jobs drop_partition --warehouse W --table db.t 'dt=2024-01-01'

Arguments: ``partitions`` (Paimon's ``'k=v,k2=v2;k=v3'``; Flink takes them as separate strings; a
spec may name some of the partition keys). As Java's ``truncatePartitions``: one OVERWRITE commit
deletes every live file of those partitions (older snapshots and tags keep the rows). A key that is
not a partition key, or a spec that matches no partition, fails (exit 1) and changes nothing.
``--dry-run`` (ours) lists the partitions with their rows and files.

Calls ``table.drop_partition(...)``: driver-only, no Spark session. Prints one JSON line:
partitions, snapshot_id, deleted_files, deleted_rows.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "drop_partition"
PARAMS = (
    Param("partitions", "str", "partitions to drop: 'k=v[,k2=v2][;k=v3...]'", required=True, aliases=("partition",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Drop partitions of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.drop_partition(args.get("partitions"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 failed, 2 bad arguments)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
