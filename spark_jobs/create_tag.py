"""``create_tag``: tag a snapshot of a table (Paimon's ``sys.create_tag``).

::

    python -m spark_jobs create_tag --warehouse W --table db.t --tag release-1 \\
        [--snapshot N] [--time-retained '7 d']
    python -m spark_jobs create_tag --warehouse W --table db.t release-1 12   # tag, snapshot

Arguments (Paimon's names and order; each also as ``--time_retained`` etc.): ``tag``,
``snapshot`` (default: the latest), ``time_retained`` (a Paimon duration such as ``1 d`` or
``12 h``; the tag expires that long after its creation). An existing tag name fails
(``TagAlreadyExistsError``, exit 3) and changes nothing.

Calls ``table.maintenance.create_tag(...)``: a driver-only metadata procedure, so no Spark session is started
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

JOB = "create_tag"
PARAMS = (
    Param("tag", "str", "name of the new tag", required=True, aliases=("tag_name", "tag-name", "tagName")),
    Param(
        "snapshot",
        "int",
        "id of the snapshot to tag (default: latest)",
        aliases=("snapshot_id", "snapshot-id", "snapshotId"),
    ),
    Param("time_retained", "str", "how long the tag is kept, e.g. '1 d'", aliases=("timeRetained",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Create a tag on a snapshot of a Paimon table.", PARAMS, argv, dry_run=False
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    tag = table.maintenance.create_tag(args.get("tag"), args.get("snapshot"), time_retained=args.get("time_retained"))
    return {**result_dict(tag), "tag": args.get("tag")}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
