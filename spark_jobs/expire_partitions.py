"""``expire_partitions``: drop partitions older than an expiration time (Paimon's ``sys.expire_partitions``).

::

    python -m spark_jobs expire_partitions --warehouse W --table db.t --expiration-time '7 d' \\
        [--timestamp-formatter yyyyMMdd] [--timestamp-pattern '$dt'] [--expire-strategy values-time] \\
        [--max-expires N] [--dry-run]
    python -m spark_jobs expire_partitions --warehouse W --table db.t '7 d' yyyyMMdd   # in Paimon's order

Arguments (Paimon's names and order; each also as ``--expiration_time`` etc.): ``expiration_time``
(a Paimon duration; default the table's ``partition.expiration-time``), ``timestamp_formatter``
(a Java ``DateTimeFormatter`` pattern), ``timestamp_pattern`` (``$col`` substitution),
``expire_strategy`` (``values-time`` or ``update-time``), ``max_expires``, then ``dry_run``
(``--dry-run`` or ``true``/``false``: list the partitions, drop nothing). Unset arguments come from
the table's ``partition.*`` options (Java's procedure uses only its arguments' values and Java's
defaults; here a table's own formatter is honoured too).

Calls ``table.maintenance.expire_partitions(...)``: one OVERWRITE commit deleting the partitions' files from
the table's state; old snapshots and tags keep them until snapshot expiry. A driver-only metadata
procedure, so no Spark session is started. Prints one JSON line with the ``PartitionExpireResult``
(``expired_partitions`` as ``dt=20240101, hh=0`` plus each spec and size, ``snapshot_id``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "expire_partitions"
PARAMS = (
    Param("expiration_time", "str", "drop partitions older than this, e.g. '7 d'", aliases=("expirationTime",)),
    Param(
        "timestamp_formatter",
        "str",
        "Java DateTimeFormatter of the partition time, e.g. yyyyMMdd",
        aliases=("timestampFormatter",),
    ),
    Param("timestamp_pattern", "str", "partition time from columns, e.g. '$dt $hh:00:00'", aliases=("timestampPattern",)),
    Param("expire_strategy", "str", "values-time or update-time", aliases=("expireStrategy",)),
    Param("max_expires", "int", "at most this many partitions in this run", aliases=("maxExpires",)),
    Param("dry_run", "bool", "list the partitions; drop nothing", aliases=("dryRun",), default=False),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Expire old partitions of a Paimon table.", PARAMS, argv, dry_run=False)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    result = table.maintenance.expire_partitions(
        args.get("expiration_time"),
        timestamp_formatter=args.get("timestamp_formatter"),
        timestamp_pattern=args.get("timestamp_pattern"),
        expire_strategy=args.get("expire_strategy"),
        max_expires=args.get("max_expires"),
        dry_run=bool(args.get("dry_run")),
    )
    return result_dict(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
