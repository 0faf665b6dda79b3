"""``create_tag_from_timestamp``: tag the first snapshot committed at or after a time (Paimon's
``sys.create_tag_from_timestamp``).

::

    python -m spark_jobs create_tag_from_timestamp --warehouse W --table db.t --tag t1 \\
        --timestamp 1700000000000 [--time-retained '7 d']
    python -m spark_jobs create_tag_from_timestamp --warehouse W --table db.t t1 '2024-01-01T00:00:00'

Arguments (Paimon's names and order): ``tag``, ``timestamp`` (epoch millis, as Paimon takes it, or
an ISO time, UTC), ``time_retained`` (a Paimon duration such as ``1 d``). The tagged snapshot is the
earliest live one committed at or after ``timestamp``, or an earlier-expired one a tag still holds
(as Java does). No such snapshot, or an existing tag name, fails (exit 3) and changes nothing.
``--dry-run`` (ours) checks all of that and reports the snapshot it would tag, writing nothing.

Calls ``table.maintenance.create_tag_from_timestamp(...)``: a driver-only metadata procedure, so no Spark
session is started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: tag,
snapshot_id, commit_time_millis (Paimon's ``commit_time``), watermark and the tag's retention.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "create_tag_from_timestamp"
PARAMS = (
    Param("tag", "str", "name of the new tag", required=True, aliases=("tag_name", "tag-name", "tagName")),
    Param(
        "timestamp",
        "str",
        "epoch millis (or ISO time, UTC); tags the first snapshot at or after it",
        required=True,
    ),
    Param("time_retained", "str", "how long the tag is kept, e.g. '1 d'", aliases=("timeRetained",)),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB,
        "Tag the first snapshot of a Paimon table committed at or after a time.",
        PARAMS,
        argv,
        dry_run=True,
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    tag = table.maintenance.create_tag_from_timestamp(
        args.get("tag"), args.get("timestamp"), time_retained=args.get("time_retained"), dry_run=args.dry_run
    )
    return {**result_dict(tag), "tag": args.get("tag"), "dry_run": args.dry_run, "watermark": tag.watermark}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
