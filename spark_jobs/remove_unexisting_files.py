"""``remove_unexisting_files``: drop the table's entries of data files that are gone (Paimon's
``sys.remove_unexisting_files``), for a table damaged outside our control.

::

    python -m spark_jobs remove_unexisting_files --warehouse W --table db.t                   # look first
    python -m spark_jobs remove_unexisting_files --warehouse W --table db.t --dry-run false   # apply
    python -m spark_jobs remove_unexisting_files --warehouse W --table db.t true 8        # dry_run, parallelism

Arguments (Paimon's names and order): ``dry_run`` (BOOLEAN: ``--dry-run``, ``--dry-run true`` or
positional ``true``/``false``; default **true**, unlike Paimon's false: ``--dry-run false`` applies) and ``parallelism`` (existence checks at once). The latest snapshot's
data files are checked (one listing per bucket directory); the missing ones are removed from the
table's state in one OVERWRITE commit, so the table reads again; their rows were already lost.
Nothing on the file system is deleted. Use it only for what Paimon documents (a file deleted by hand
or by a too short orphan-cleanup age; a file a restarted writer committed again after its
expiry). A concurrent commit that removed one of those files fails it (exit 75, table unchanged).
Deletion-vector tables whose missing files still have vectors are refused.

Calls ``table.maintenance.remove_unexisting_files(...)``: a driver-only metadata procedure (the checks run on a
thread pool), so no Spark session is started (see :mod:`spark_jobs.common.procedure`). Prints one
JSON line: snapshot_id, checked_files, removed_files, removed_rows, partitions (each with the paths
of its missing files: Paimon's result rows), committed_snapshot_id.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "remove_unexisting_files"
PARAMS = (
    Param(
        "dry_run",
        "bool",
        "only list the missing files (true/false); unlike Paimon's procedure, which applies unless "
        "told: pass --dry-run false to apply",
        aliases=("dryRun",),
        default=True,
    ),
    Param("parallelism", "int", "existence checks run at once (default 8)"),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Remove entries of missing data files from a Paimon table.", PARAMS, argv, dry_run=False
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = table.maintenance.remove_unexisting_files(
        dry_run=bool(args.get("dry_run")), parallelism=args.get("parallelism")
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
