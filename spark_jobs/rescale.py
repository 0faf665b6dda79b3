"""``rescale``: rewrite partitions of a fixed-bucket table into another bucket count (Paimon's ``sys.rescale``).

::

    python -m spark_jobs rescale --warehouse W --table db.t --bucket-num 16 --partition dt=2024-01-01
    python -m spark_jobs rescale --warehouse W --table db.t 16 'dt=2024-01-01' --dry-run

Arguments (Paimon's names and order): ``bucket_num`` (default: the table's ``bucket`` option,
after an ``ALTER TABLE ... SET ('bucket' = ...)``), ``partition`` (``k=v,k2=v2``: one partition;
default: the whole table). ``source.parallelism`` / ``sink.parallelism`` are accepted and ignored
(the rewrite runs in this process).

The partition's rows are read at the latest snapshot and rewritten with the new bucket count in one
OVERWRITE commit in strict mode: a concurrent commit to the partition fails the rescale cleanly
(exit 75, nothing lost, its files deleted). See :mod:`paimon_core.table.rescale`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import UsageError
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "rescale"
PARAMS = (
    Param("bucket_num", "int", "the new bucket count (default: the table's bucket option)", aliases=("bucketNum",)),
    Param("partition", "str", "the partition to rescale, 'k=v,k2=v2' (default: every partition)"),
    Param("source.parallelism", "int", "accepted for Paimon compatibility; ignored"),
    Param("sink.parallelism", "int", "accepted for Paimon compatibility; ignored"),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Rewrite partitions of a fixed-bucket table with another bucket count.", PARAMS, argv, dry_run=True
    )


def _partition(text: str | None) -> dict[str, str] | None:
    if not text or not text.strip():
        return None
    first = text.split(";")[0]
    spec: dict[str, str] = {}
    for item in first.split(","):
        if "=" not in item:
            raise UsageError(f"partition must be 'k=v[,k2=v2]', got {text!r}")
        key, value = item.split("=", 1)
        spec[key.strip()] = value.strip()
    return spec


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    from paimon_core.table.rescale import rescale

    result = rescale(
        table, bucket_num=args.get("bucket_num"), partition=_partition(args.get("partition")), dry_run=args.dry_run
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
