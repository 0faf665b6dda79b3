"""``delete_tag``: delete tags of a table and the files only they kept (Paimon's ``sys.delete_tag``).

::

    python -m spark_jobs delete_tag --warehouse W --table db.t --tag t1,t2 [--dry-run]
    python -m spark_jobs delete_tag --warehouse W --table db.t t1,t2

Arguments (Paimon's names and order): ``tag``, one name or a comma-separated list. An unknown tag
fails (``TagNotFoundError``, exit 3). ``--dry-run`` reports what would be deleted and deletes nothing.

Calls ``table.maintenance.delete_tag(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line with the core result (deleted_tags,
deleted_* file counts).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import UsageError
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args", "tag_names"]

JOB = "delete_tag"
PARAMS = (
    Param(
        "tag",
        "str",
        "tag name, or comma-separated names",
        required=True,
        aliases=("tag_name", "tag-name", "tagName"),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Delete tags of a Paimon table.", PARAMS, argv, dry_run=True, dry_run_default=True)


def tag_names(text: str) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]``; an empty name is a usage error."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"--tag has an empty tag name: {text!r}")
    return list(dict.fromkeys(names))


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    names = tag_names(args.get("tag"))
    return result_dict(table.maintenance.delete_tag(names, dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
