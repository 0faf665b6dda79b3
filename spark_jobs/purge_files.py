"""``purge_files``: delete every file of a table, keeping it empty (Paimon's ``sys.purge_files``).

::

    python -m spark_jobs purge_files --warehouse W --table db.t --dry-run     # what would go
    python -m spark_jobs purge_files --warehouse W --table db.t               # purge

Arguments (Paimon's): only the table. Java's ``FileStoreTable.purgeFiles`` steps: every branch,
tag and consumer is deleted, the table truncated (one OVERWRITE snapshot), its changelogs deleted,
every other snapshot expired and the orphan files removed; the schema stays. It cannot be undone:
``--dry-run`` (ours) lists the branches, tags, consumers, live files and rows, snapshots and
changelogs that would go, and changes nothing. A handle on a branch, or a table option naming a
fallback branch, is refused (exit 3, nothing changed).

Calls ``table.maintenance.purge_files(...)`` (:mod:`paimon_core.operation.purge_files`): driver-only, no Spark
session. Prints one JSON line: what was (or would be) removed and ``result`` "Success" (Java's row).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "purge_files"
PARAMS: tuple[Param, ...] = ()


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Purge every file of a Paimon table (it stays, empty).", PARAMS, argv, dry_run=True, dry_run_default=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.purge_files(dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
