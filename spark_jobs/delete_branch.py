"""``delete_branch``: delete branches of a table (Paimon's ``sys.delete_branch``).

::

    python -m spark_jobs delete_branch --warehouse W --table db.t --branch b1,b2 [--dry-run]
    python -m spark_jobs delete_branch --warehouse W --table db.t b1

Arguments (Paimon's names and order): ``branch``, one name or a comma-separated list. Every
branch must exist (else ``BranchNotFoundError``, exit 3, nothing deleted). Only the branches'
metadata goes: data files they share with the table stay, and files only they referenced are left
for ``remove_orphan_files``. ``--dry-run`` reports what would be deleted and deletes nothing.

Calls ``table.maintenance.delete_branch(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: deleted_branches and the
counts of their snapshot and tag files.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "delete_branch"
PARAMS = (
    Param(
        "branch",
        "str",
        "branch name, or comma-separated names",
        required=True,
        aliases=("branch_name", "branch-name"),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Delete branches of a Paimon table.", PARAMS, argv, dry_run=True, dry_run_default=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.delete_branch(args.get("branch"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
