"""``rollback_to``: make a snapshot or tag the table's latest state (Paimon's ``sys.rollback_to``).

::

    python -m spark_jobs rollback_to --warehouse W --table db.t --snapshot 10 [--dry-run]
    python -m spark_jobs rollback_to --warehouse W --table db.t --tag release-1
    python -m spark_jobs rollback_to --warehouse W --table db.t 10          # snapshot id or tag

Arguments: exactly one of ``snapshot`` (an id), ``tag`` (a name) or ``version`` (Spark's: digits
are a snapshot id, anything else a tag name; this is also the one positional argument, as in
``CALL sys.rollback_to('db.t', 10)`` / ``('db.t', 'tag')``). Snapshots after the target are
removed (metadata only). ``--dry-run`` reports and changes nothing.

Calls ``table.maintenance.rollback_to(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line with the core result
(previous_snapshot_id, target_snapshot_id, target_tag, deleted_snapshot_ids...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import UsageError
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args", "target"]

JOB = "rollback_to"
PARAMS = (
    Param("version", "str", "snapshot id (digits) or tag name"),
    Param(
        "snapshot",
        "int",
        "id of the snapshot to roll back to",
        aliases=("snapshot_id", "snapshot-id", "snapshotId"),
    ),
    Param("tag", "str", "name of the tag to roll back to", aliases=("tag_name", "tag-name", "tagName")),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Roll a Paimon table back to a snapshot or tag.", PARAMS, argv, dry_run=True, dry_run_default=True
    )


def target(args: ProcedureArgs) -> int | str:
    """The snapshot id (int) or tag name (str); exactly one of version/snapshot/tag."""
    given = [n for n in ("version", "snapshot", "tag") if args.get(n) is not None]
    if len(given) != 1:
        raise UsageError(f"give exactly one of --snapshot, --tag or --version (got {given or 'none'})")
    value = args.get(given[0])
    if given[0] == "version":
        return int(value) if str(value).isdigit() else str(value)
    return int(value) if given[0] == "snapshot" else str(value)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.rollback_to(target(args), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
