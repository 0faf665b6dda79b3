"""``reassign_row_id``: give each fragmented partition of a data-evolution table contiguous row ids
(Paimon's ``CALL sys.reassign_row_id(table => 'db.t', partitions => 'dt=a')``).

::

    python -m spark_jobs reassign_row_id --warehouse W --table db.t [--partitions 'dt=a;dt=b'] [--dry-run]
    python -m spark_jobs reassign_row_id --warehouse W --table db.t 'dt=a'

Arguments (Paimon's names and order): ``partitions`` (optional: ``'k=v[,k2=v2][;k=v3...]'``, the
partitions to consider; default: all). As Java's ``DataEvolutionRowIdReassigner``: metadata only,
each partition whose row-id ranges leave gaps gets its rows moved, range after range, to new
ids from the table's ``nextRowId``, in one OVERWRITE snapshot (see
:mod:`paimon_core.append.data_evolution_row_id_reassigner`); a table already contiguous, not
partitioned, or with no matching partition is skipped. ``--dry-run`` (ours) reports the plan and
changes nothing. Refused, changing nothing: a table without ``row-tracking.enabled`` or
``data-evolution.enabled``, an empty table, a spec naming a non-partition column (exit 3); an
empty or malformed spec (exit 2).

Calls ``table.maintenance.reassign_row_id(...)``: driver-only, no Spark session. Prints one JSON
line: ``result`` (Java's output line: "Success. ..." / "Skipped. ..."), previous and new
snapshot ids, files, rows, first assigned and next row id, partitions.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "reassign_row_id"
PARAMS = (Param("partitions", "str", "partitions to consider: 'k=v[,k2=v2][;k=v3...]' (default: all)"),)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Reassign the row ids of a data-evolution table, partition by partition.", PARAMS, argv, dry_run=True
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.reassign_row_id(args.get("partitions"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
