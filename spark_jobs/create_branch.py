"""``create_branch``: a branch of a table, from a tag or empty (Paimon's ``sys.create_branch``).

::

    python -m spark_jobs create_branch --warehouse W --table db.t --branch b1 [--tag t1] [--ignore-if-exists]
    python -m spark_jobs create_branch --warehouse W --table db.t b1 t1          # branch, tag

Arguments (Paimon's names and order; each also as ``--ignoreIfExists`` etc.): ``branch``,
``tag`` (the branch starts at that tag's snapshot; without it the branch is empty, with the
table's latest schema), ``ignore_if_exists``. A bad name (``main``, all digits, ``/`` ...), an
existing branch or an unknown tag fails (exit 3) and changes nothing.

Calls ``table.maintenance.create_branch(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: branch, tag, snapshot_id,
schema_id, created.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "create_branch"
PARAMS = (
    Param("branch", "str", "name of the new branch", required=True, aliases=("branch_name", "branch-name")),
    Param(
        "tag",
        "str",
        "tag to start the branch from (default: an empty branch)",
        aliases=("tag_name", "tag-name"),
    ),
    Param("ignore_if_exists", "bool", "do nothing if the branch exists", aliases=("ignoreIfExists",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Create a branch of a Paimon table.", PARAMS, argv, dry_run=False)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = table.maintenance.create_branch(
        args.get("branch"), args.get("tag"), ignore_if_exists=bool(args.get("ignore_if_exists"))
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
