"""``replace_tag``: point an existing tag at another snapshot (Paimon's ``sys.replace_tag``).

::

    python -m spark_jobs replace_tag --warehouse W --table db.t --tag t1 [--snapshot N] [--time-retained '7 d']
    python -m spark_jobs replace_tag --warehouse W --table db.t t1 12          # tag, snapshot

Arguments (Paimon's names and order; also ``--snapshot_id`` etc.): ``tag``, ``snapshot`` (default:
the latest), ``time_retained`` (without it the replaced tag has no retention, as in Java). A tag
that does not exist fails (``TagNotFoundError``, exit 3) and changes nothing; use ``create_tag``. ``--dry-run`` (ours)
checks the tag and the snapshot and reports the change, writing nothing.

Calls ``table.maintenance.replace_tag(...)``: a driver-only metadata procedure, so no Spark session is started
(see :mod:`spark_jobs.common.procedure`). Prints one JSON line: tag, snapshot_id, schema_id,
commit_time_millis, record_count and the tag's create time / retention.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "replace_tag"
PARAMS = (
    Param(
        "tag", "str", "name of the existing tag", required=True, aliases=("tag_name", "tag-name", "tagName")
    ),
    Param(
        "snapshot",
        "int",
        "id of the snapshot the tag moves to (default: latest)",
        aliases=("snapshot_id", "snapshot-id", "snapshotId"),
    ),
    Param("time_retained", "str", "how long the tag is kept, e.g. '1 d'", aliases=("timeRetained",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Point an existing tag of a Paimon table at another snapshot.", PARAMS, argv, dry_run=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    previous = table.tag_manager.get(args.get("tag")).id  # TagNotFoundError before anything changes
    tag = table.maintenance.replace_tag(
        args.get("tag"), args.get("snapshot"), time_retained=args.get("time_retained"), dry_run=args.dry_run
    )
    return {
        **result_dict(tag),
        "tag": args.get("tag"),
        "dry_run": args.dry_run,
        "previous_snapshot_id": previous,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
