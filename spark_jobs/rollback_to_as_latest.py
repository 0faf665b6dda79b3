"""``rollback_to_as_latest``: commit a snapshot or tag's content as a new latest snapshot, keeping
all history (Paimon's ``sys.rollback_to_as_latest``).

::

    python -m spark_jobs rollback_to_as_latest --warehouse W --table db.t --tag release-1 [--dry-run]
    python -m spark_jobs rollback_to_as_latest --warehouse W --table db.t --snapshot-id 10
    python -m spark_jobs rollback_to_as_latest --warehouse W --table db.t release-1      # tag

Arguments (Paimon's names and order): exactly one of ``tag`` and ``snapshot_id``. Unlike
``rollback_to`` nothing is deleted: a new OVERWRITE snapshot gets the target's files, and later
snapshots and tags stay (so this rollback can itself be rolled back). A snapshot target is first
tagged ``rollback-to-as-latest-<id>-<uuid>`` so expiry cannot take its files meanwhile (Java keeps
that tag). A commit landing at the same moment fails it (``CommitConflictError``, exit 75: a retry may pass) with the
table unchanged. ``--dry-run`` (ours) reports and changes nothing.

Calls ``table.maintenance.rollback_to_as_latest(...)``: a driver-only metadata procedure, so no Spark session is
started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: previous_snapshot_id,
target_snapshot_id (Paimon's ``rolled_back_snapshot_id``), current_snapshot_id, created_tag...
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import UsageError
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args", "target"]

JOB = "rollback_to_as_latest"
PARAMS = (
    Param("tag", "str", "name of the tag to roll back to", aliases=("tag_name", "tag-name", "tagName")),
    Param(
        "snapshot_id",
        "int",
        "id of the snapshot to roll back to",
        aliases=("snapshot", "snapshotId"),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB,
        "Commit a snapshot or tag of a Paimon table as its new latest snapshot.",
        PARAMS,
        argv,
        dry_run=True,
    )


def target(args: ProcedureArgs) -> int | str:
    """The snapshot id (int) or tag name (str); exactly one of tag/snapshot_id."""
    tag, snapshot_id = args.get("tag"), args.get("snapshot_id")
    if (tag is None) == (snapshot_id is None):
        raise UsageError("give exactly one of --tag and --snapshot-id")
    return int(snapshot_id) if snapshot_id is not None else str(tag)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = result_dict(table.maintenance.rollback_to_as_latest(target(args), dry_run=args.dry_run))
    return {**result, "rolled_back_snapshot_id": result.get("target_snapshot_id")}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
