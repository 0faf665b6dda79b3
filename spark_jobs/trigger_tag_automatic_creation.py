"""``trigger_tag_automatic_creation``: create the automatic tags the table asks for (Paimon's
``sys.trigger_tag_automatic_creation``).

::

    python -m spark_jobs trigger_tag_automatic_creation --warehouse W --table db.t [--now TIME]

Paimon's procedure takes only the table. It creates the period tags of
``tag.automatic-creation`` (``process-time``, ``watermark`` or ``batch``) that are due, then
retires automatic tags beyond ``tag.num-retained-max`` (and, with ``tag.time-expire-enabled``,
those past their retention). Running it twice creates nothing the second time. ``--now`` (ours,
not Paimon's: epoch millis or ISO time, UTC; default the current time) runs it as of that time,
so a scheduler can pass its logical date. A table without ``tag.automatic-creation`` creates
nothing.

Calls ``table.maintenance.trigger_tag_automatic_creation(...)``: a driver-only metadata procedure, so no Spark
session is started (see :mod:`spark_jobs.common.procedure`). Prints one JSON line: mode, now_millis,
created_tags, expired_tags, created_snapshot_ids and skipped periods.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "trigger_tag_automatic_creation"
PARAMS = (Param("now", "str", "run as of this time (millis or ISO; default: now)"),)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Create the automatic tags of a Paimon table that are due.", PARAMS, argv, dry_run=False
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.trigger_tag_automatic_creation(now=args.get("now")))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
