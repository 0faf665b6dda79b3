"""``remove_unexisting_manifests``: commit the latest snapshot without its lost manifests (Paimon's
Flink procedure ``sys.remove_unexisting_manifests``).

::

    python -m spark_jobs remove_unexisting_manifests --warehouse W --table db.t [--dry-run]

Arguments (Paimon's): only the table. As Java's ``RemoveUnexistingManifestsAction``: when manifests
the latest snapshot names are missing, one OVERWRITE snapshot is committed whose manifest list holds
the ones that exist (the rows of the lost ones are gone from the table); nothing missing: nothing
done. ``--dry-run`` (ours) lists the missing manifests and changes nothing.

Calls ``table.maintenance.remove_unexisting_manifests(...)``: driver-only, no Spark session. Prints one JSON
line: missing_manifests, lost_records, snapshot_id.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "remove_unexisting_manifests"
PARAMS: tuple[Param, ...] = ()


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Drop the missing manifests from the latest snapshot of a Paimon table.", PARAMS, argv, dry_run=True, dry_run_default=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.remove_unexisting_manifests(dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
