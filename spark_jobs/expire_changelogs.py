"""``expire_changelogs``: expire the long-lived changelogs of a table (Paimon's
``sys.expire_changelogs``).

::

    python -m spark_jobs expire_changelogs --warehouse W --table db.t \\
        [--retain-max N] [--retain-min N] [--older-than TIME] [--max-deletes N] [--delete-all] [--dry-run]
    python -m spark_jobs expire_changelogs --warehouse W --table db.t 5 2      # retain_max, retain_min

Arguments (Paimon's names and order): ``retain_max``, ``retain_min``, ``older_than`` (epoch millis
or ISO time, UTC), ``max_deletes``, ``delete_all`` (BOOLEAN: ``--delete-all``, ``--delete-all
true`` or positional ``true``). Unset ones come from ``changelog.num-retained.max/min`` and
``changelog.time-retained``. These changelogs exist only with a decoupled changelog lifecycle
(``changelog.num-retained.*`` / ``changelog.time-retained`` beyond the snapshots'); counts are over
changelogs and snapshots together, consumers hold theirs, and a changelog is deleted with the files
only it uses. ``delete_all`` removes every changelog older than the earliest snapshot. ``--dry-run``
(ours) reports and deletes nothing.

Calls ``table.maintenance.expire_changelogs(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line with the
``ExpireChangelogsResult`` (expired_changelog_ids, deleted_* counts, earliest_changelog_id...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "expire_changelogs"
PARAMS = (
    Param("retain_max", "int", "maximum number of changelogs to retain", aliases=("retainMax",)),
    Param("retain_min", "int", "minimum number of changelogs to retain", aliases=("retainMin",)),
    Param(
        "older_than",
        "str",
        "expire changelogs committed before this time (millis or ISO)",
        aliases=("olderThan",),
    ),
    Param("max_deletes", "int", "maximum number of changelogs expired in this run", aliases=("maxDeletes",)),
    Param("delete_all", "bool", "delete every changelog (true/false)", aliases=("deleteAll",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Expire long-lived changelogs of a Paimon table.", PARAMS, argv, dry_run=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = table.maintenance.expire_changelogs(
        retain_max=args.get("retain_max"),
        retain_min=args.get("retain_min"),
        older_than=args.get("older_than"),
        max_deletes=args.get("max_deletes"),
        delete_all=bool(args.get("delete_all")),
        dry_run=args.dry_run,
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
