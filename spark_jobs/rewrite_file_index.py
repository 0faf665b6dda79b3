"""``rewrite_file_index``: rebuild the data-file indexes of a table (Paimon's ``sys.rewrite_file_index``).

::

    python -m spark_jobs rewrite_file_index --warehouse W --table db.t [--partitions 'dt=a;dt=b'] [--dry-run]

Arguments (Flink's names and order): ``partitions`` (default: every partition). The indexes are
the table's ``file-index.*`` options (``file-index.bloom-filter.columns``,
``file-index.bitmap.columns``, per column ``file-index.bloom-filter.<column>.items`` / ``.fpp``,
``file-index.in-manifest-threshold``; set them with ALTER TABLE first). Every live data file of
the partitions gets the index those options describe (embedded in its manifest entry, or a
``.index`` file next to it; an index no longer configured is dropped), committed as one COMPACT
snapshot; files whose index already matches are left alone (``--dry-run``: read and compute the
same, report what would be rewritten, write nothing)
(:mod:`paimon_core.operation.rewrite_file_index`). The result carries Java's
``written_partitions`` and ``written_indexes``. Refused (exit 3, nothing changed): partitions that
are not partition keys, ``file-index.*`` options Java refuses (an unknown type, a column not in
the table), index types paimon_core does not write (``bsi``, ``range-bitmap``: run Java's
procedure), data-evolution tables. A commit conflict exits 75 (retry).
Driver-only, no Spark session. Prints one JSON line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rewrite_file_index"
PARAMS = (Param("partitions", "str", "partitions to rewrite: 'k=v[,k2=v2][;k=v3...]' (default: all)"),)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Rewrite the data-file indexes of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.rewrite_file_index(args.get("partitions"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
