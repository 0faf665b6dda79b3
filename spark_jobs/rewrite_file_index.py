"""``rewrite_file_index``: rebuild the data-file indexes of a table (Paimon's ``sys.rewrite_file_index``).

::

    python -m spark_jobs rewrite_file_index --warehouse W --table db.t [--partitions 'dt=a;dt=b']

Arguments (Paimon's names and order): ``partitions``. The indexes are the table's ``file-index.*``
options (``file-index.bloom-filter.columns``, ``file-index.bitmap.columns``,
``file-index.bsi.columns``, ``file-index.range-bitmap.columns``, per column
``file-index.<type>.<column>.<option>``; set them with ALTER TABLE first). paimon_core cannot write
Paimon's file-index format yet: after checking the table, the partitions and those options, the job
refuses (exit 3) with an error naming the missing feature, and changes nothing
(:mod:`paimon_core.operation.rewrite_file_index`); run it in Flink or Spark meanwhile. Only when no
index is configured and no file has one (Java's rewrite would change nothing) it succeeds, saying so.
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
    return parse_procedure_args(JOB, "Rewrite the data-file indexes of a Paimon table.", PARAMS, argv, dry_run=False)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.rewrite_file_index(args.get("partitions")))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
