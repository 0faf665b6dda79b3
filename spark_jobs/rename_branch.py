"""``rename_branch``: rename a branch of a table (Paimon's ``sys.rename_branch``).

::

    python -m spark_jobs rename_branch --warehouse W --table db.t --from-branch b1 --to-branch b2 [--dry-run]
    python -m spark_jobs rename_branch --warehouse W --table db.t b1 b2          # from_branch, to_branch

Arguments (Paimon's names and order): ``from_branch``, ``to_branch``. As Java's
``renameBranch``: ``main`` cannot be renamed, the branch must exist, the new name must be free and
valid (not ``main``, not blank, not all digits); ours also refuses a branch a table option reads
(``scan.fallback-branch``). Any of these fails (exit 3) and changes nothing. ``--dry-run`` (ours)
checks and writes nothing.

Calls ``table.maintenance.rename_branch(...)`` (:mod:`paimon_core.branch.branch_rename`): driver-only, no Spark
session. Prints one JSON line: from_branch, to_branch, copied_files, result.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rename_branch"
PARAMS = (
    Param("from_branch", "str", "the branch to rename", required=True, aliases=("fromBranch",)),
    Param("to_branch", "str", "its new name", required=True, aliases=("toBranch",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Rename a branch of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.rename_branch(args.get("from_branch"), args.get("to_branch"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
