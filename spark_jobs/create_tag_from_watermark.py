"""``create_tag_from_watermark``: tag the first snapshot at or after a watermark (Paimon's Flink
procedure ``sys.create_tag_from_watermark``).

::

    python -m spark_jobs create_tag_from_watermark --warehouse W --table db.t --tag t1 --watermark 1700000000000 \\
        [--time-retained '1 d'] [--dry-run]
    python -m spark_jobs create_tag_from_watermark --warehouse W --table db.t t1 1700000000000   # tag, watermark

Arguments (Paimon's names and order): ``tag``, ``watermark`` (a Java long, epoch millis),
``time_retained``. As Java's ``CreateTagFromWatermarkProcedure``: the oldest live snapshot whose
watermark is >= ``watermark`` (``laterOrEqualWatermark``), or an earlier tagged snapshot whose
watermark also qualifies. No such snapshot, a taken tag name or a bad watermark fails (exit 3; a
watermark that is not an integer: exit 2) and changes nothing. ``--dry-run`` (ours) checks and
writes nothing.

Calls ``table.maintenance.create_tag_from_watermark(...)``: driver-only, no Spark session. Prints one JSON line:
tag, snapshot_id, commit_time and watermark of the tagged snapshot (Java's row: tagName, snapshot,
commit_time, watermark).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core import PaimonError
from paimon_core.table.table import FileStoreTable
from paimon_core.tag.watermark_procedures import check_watermark
from spark_jobs.common.args import UsageError
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "checked_watermark", "main", "parse_args"]

JOB = "create_tag_from_watermark"
PARAMS = (
    Param("tag", "str", "name of the new tag", required=True, aliases=("tag_name", "tag-name", "tagName")),
    Param("watermark", "int", "tag the first snapshot whose watermark is >= this (epoch millis)", required=True),
    Param("time_retained", "str", "how long the tag is kept, e.g. '1 d' (default: forever)", aliases=("timeRetained",)),
)


def checked_watermark(args: ProcedureArgs) -> ProcedureArgs:
    """``args`` once its ``watermark`` is a Java long (else :class:`UsageError`, exit 2)."""
    try:
        check_watermark(args.get("watermark"))
    except PaimonError as e:
        raise UsageError(f"--watermark: {e}") from None
    return args


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return checked_watermark(
        parse_procedure_args(
            JOB, "Tag the first snapshot of a Paimon table at or after a watermark.", PARAMS, argv, dry_run=True
        )
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    tag = table.maintenance.create_tag_from_watermark(
        args.get("tag"), args.get("watermark"), time_retained=args.get("time_retained"), dry_run=args.dry_run
    )
    return {
        **result_dict(tag),
        "tag": args.get("tag"),
        "snapshot": tag.snapshot_id,
        "commit_time": tag.commit_time_millis,
        "watermark": tag.watermark,
        "dry_run": args.dry_run,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
