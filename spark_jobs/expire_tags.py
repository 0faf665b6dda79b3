"""``expire_tags``: delete tags past their retention (Paimon's ``sys.expire_tags``).

::

    python -m spark_jobs expire_tags --warehouse W --table db.t [--older-than TIME] [--dry-run]
    python -m spark_jobs expire_tags --warehouse W --table db.t '2024-01-01T00:00:00'   # older_than

Arguments (Paimon's names and order): ``older_than`` (epoch millis or ISO time, UTC). A tag expires
when its ``time_retained`` has passed since its creation; with ``older_than`` also every tag created
before that time (a tag without a recorded creation time by its file's time, as Java does). The data
and manifest files only the expired tags held are deleted with them. ``--dry-run`` reports and
deletes nothing.

Calls ``table.maintenance.expire_tags(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line: expired_tags (Paimon's result rows),
now_millis, older_than_millis and the file deletion counts.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "expire_tags"
PARAMS = (
    Param(
        "older_than",
        "str",
        "also expire tags created before this time (millis or ISO)",
        aliases=("olderThan",),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Expire tags of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.expire_tags(older_than=args.get("older_than"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
