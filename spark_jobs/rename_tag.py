"""``rename_tag``: rename a tag of a table (Paimon's ``sys.rename_tag``).

::

    python -m spark_jobs rename_tag --warehouse W --table db.t --tag old --target-tag new
    python -m spark_jobs rename_tag --warehouse W --table db.t old new          # tag, target_tag

Arguments (Paimon's names and order; Flink's ``tagName`` / ``targetTagName`` also work): ``tag``,
``target_tag``. An unknown tag (``TagNotFoundError``) or a taken target name
(``TagAlreadyExistsError``) fails (exit 3) and changes nothing. ``--dry-run`` (ours) checks both
names and writes nothing.

Calls ``table.maintenance.rename_tag(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line: tag, target_tag and the snapshot the
tag holds (snapshot_id, commit_time_millis, ...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rename_tag"
PARAMS = (
    Param(
        "tag", "str", "current name of the tag", required=True, aliases=("tag_name", "tag-name", "tagName")
    ),
    Param(
        "target_tag",
        "str",
        "new name of the tag",
        required=True,
        aliases=("target_tag_name", "target-tag-name", "targetTagName"),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Rename a tag of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    tag = table.maintenance.rename_tag(args.get("tag"), args.get("target_tag"), dry_run=args.dry_run)
    return {
        **result_dict(tag),
        "tag": args.get("tag"),
        "dry_run": args.dry_run,
        "target_tag": args.get("target_tag"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
