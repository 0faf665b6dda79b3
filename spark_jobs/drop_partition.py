"""``drop_partition``: drop partitions of a table (Paimon's Flink procedure ``sys.drop_partition``).

::

    python -m spark_jobs drop_partition --warehouse W --table db.t 'dt=2024-01-01' 'dt=2024-01-02,hh=3'  # plan
    python -m spark_jobs drop_partition --warehouse W --table db.t 'dt=2024-01-01' --dry-run false     # drop
    python -m spark_jobs drop_partition --warehouse W --table db.t --partitions 'dt=2024-01-01;dt=2024-01-02,hh=3'

Arguments: the partition specs, in either of Paimon's forms or both mixed: Flink's variadic
``CALL sys.drop_partition('db.t', 'dt=1', 'dt=2')`` (several positional arguments, one spec
each) and the named ``partitions => 'dt=1;dt=2'`` (``--partitions``, repeatable; ``--partition``
too, as the Flink action's flag). A spec may name some of the partition keys. As Java's
``truncatePartitions``: ONE OVERWRITE commit deletes every live file of all those partitions
(older snapshots and tags keep the rows). ``--dry-run`` (ours) is on unless ``--dry-run false``
is given (Paimon's procedure drops at once): it lists the partitions with their rows and files
and changes nothing (the ``paimon_table_admin`` DAG always
plans with a dry run before its approval step). Refused, changing nothing: a spec that is not
``key=value[,key=value...]``, an empty spec (``''``, ``'dt=1;;dt=2'``), a key named twice (exit 2);
a key that is not a partition key, an unpartitioned table, a spec that matches no partition
(exit 3: all specs are dropped or none).

Calls ``table.maintenance.drop_partition(...)``: driver-only, no Spark session. Prints one JSON line:
partitions, snapshot_id, deleted_files, deleted_rows.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.partition_drop import parse_partition_specs
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import UsageError, add_dry_run_flag, base_parser, check_argument, parse_job_args
from spark_jobs.common.procedure import Param, ProcedureArgs, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "drop_partition"
PARAMS = (
    Param(
        "partitions",
        "str",
        "partitions to drop: 'k=v[,k2=v2][;k=v3...]'",
        required=True,
        aliases=("partition",),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    """Flags and the variadic positional specs, joined into one ``partitions`` value (``;``)."""
    parser = base_parser(JOB, "Drop partitions of a Paimon table.")
    parser.add_argument(
        *PARAMS[0].flags(),
        dest="partition_flags",
        action="append",
        default=[],
        metavar="PARTITIONS",
        help=f"{PARAMS[0].help} (repeatable)",
    )
    parser.add_argument(
        "specs",
        nargs="*",
        metavar="PARTITION",
        help="partition specs, one per argument (Flink's variadic form)",
    )
    add_dry_run_flag(parser, default=True, help="list the partitions; drop nothing")
    config, ns = parse_job_args(JOB, parser, argv)
    items: list[str] = [*ns.partition_flags, *ns.specs]
    if not items:
        raise UsageError("missing required argument --partitions (or the specs as arguments: 'dt=1' 'dt=2')")
    for item in items:
        if not item.strip():
            raise UsageError(
                "--partitions: a partition spec is empty (''): drop_partition never drops every partition"
            )
        check_argument("partitions", item)  # the shared rule: 'k=v' segments, not only ';'
    try:
        parse_partition_specs(items)
    except InvalidArgumentError as e:
        raise UsageError(f"--partitions: {e}") from None
    return ProcedureArgs(
        config=config, values={"partitions": ";".join(i.strip() for i in items)}, dry_run=ns.dry_run
    )


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    return result_dict(table.maintenance.drop_partition(args.get("partitions"), dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 3 failed, 2 bad arguments)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
