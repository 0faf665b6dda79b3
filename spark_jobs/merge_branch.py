"""``merge_branch``: commit a branch's new files into another branch (Paimon's ``sys.merge_branch``).

::

    python -m spark_jobs merge_branch --warehouse W --table db.t --source-branch b1 [--target-branch main] [--dry-run]
    python -m spark_jobs merge_branch --warehouse W --table db.t b1            # source_branch, target_branch

Arguments (Paimon's names and order): ``source_branch``, ``target_branch`` (default ``main``). As
Java's ``FileSystemBranchManager.mergeBranch``: the data files in the source's latest snapshot that
the target lacks are committed to the target as one APPEND snapshot. Refused as Java refuses them
(exit 3, nothing changed): a branch into itself, a missing branch or one without snapshot, a history
that is not complete and append-only from snapshot 1, primary-key or data-evolution tables,
different row-tracking settings or fields (:mod:`paimon_core.branch.branch_merge`). ``--dry-run``
(ours) counts the files it would merge and commits nothing.

Driver-only, no Spark session. Prints one JSON line: merged_files, merged_rows, snapshot_id, result.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "merge_branch"
PARAMS = (
    Param("source_branch", "str", "the branch whose new files are merged", required=True, aliases=("sourceBranch",)),
    Param("target_branch", "str", "the branch they are merged into (default main)", aliases=("targetBranch",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Merge a branch of a Paimon table into another.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(
        table.maintenance.merge_branch(args.get("source_branch"), args.get("target_branch"), dry_run=args.dry_run)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
