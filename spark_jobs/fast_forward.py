"""``fast_forward``: make the table's main branch the given branch (Paimon's ``sys.fast_forward``).

::

    python -m spark_jobs fast_forward --warehouse W --table db.t --branch b1 [--dry-run]
    python -m spark_jobs fast_forward --warehouse W --table db.t b1

Arguments (Paimon's names and order): ``branch``. From the branch's earliest snapshot on, the
table's snapshots and tags are replaced by the branch's, and its schemas from that snapshot's
schema on (Java's ``fastForward``); older snapshots stay. Only metadata files change: data files
no snapshot references any more are left for ``remove_orphan_files``. An unknown branch, ``main``
or a branch without snapshots fails (exit 3) and changes nothing. ``--dry-run`` reports the plan.
``--table db.t$branch_x`` fast-forwards branch ``x`` instead of ``main``.

Calls ``table.maintenance.fast_forward(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line: the removed and copied snapshot
ids, schema ids and tags.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "fast_forward"
PARAMS = (
    Param(
        "branch",
        "str",
        "the branch to fast-forward to",
        required=True,
        aliases=("branch_name", "branch-name"),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Fast-forward a Paimon table to one of its branches.", PARAMS, argv, dry_run=True, dry_run_default=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.fast_forward(args.get("branch"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
