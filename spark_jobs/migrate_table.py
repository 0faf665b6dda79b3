"""``migrate_table``: adopt a directory of plain Parquet files as a Paimon append table (Paimon's ``sys.migrate_table``).

::

    python -m spark_jobs migrate_table --warehouse W --table db.events \\
        --source-type parquet --source-path s3://landing/events [--options 'file.compression=zstd'] [--dry-run]

Arguments (Paimon's names; ``table`` is the target table, given as ``--table``): ``source_type``
(``parquet``; ``hive`` needs a metastore, which a filesystem catalog does not have, and is refused
with that reason), ``source_path`` (the directory: Hive-style ``key=value`` partition directories
of Parquet files), ``options`` (table options for a new table, ``k=v,k2=v2``).

No row is copied: every file moves under its own name into ``<partition>/bucket-0/`` of the table
and one APPEND snapshot publishes them (see :mod:`paimon_core.migrate.file_migrator`). A dry run
checks every file and reports files, rows and partitions without creating or moving anything. A
source inside a Paimon table (``schema/schema-N`` at it or any ancestor), inside the warehouse's
own metadata, or holding a symbolic link is refused (exit 3, nothing changed). A driver-only
procedure: no Spark session is started.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from spark_jobs.common.args import UsageError, parse_options
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args
from spark_jobs.common.runner import JobContext, run_job

__all__ = ["JOB", "PARAMS", "check_connector", "main", "parse_args"]

JOB = "migrate_table"
PARAMS = (
    Param("source_type", "str", "format of the source directory: parquet", aliases=("connector",)),
    Param("source_path", "str", "the directory of Parquet files (Hive-style partitions)", required=True),
    Param("options", "str", "options of the new table, 'k=v,k2=v2'"),
)


def check_connector(value: str | None, *, argument: str, source: str) -> None:
    """UsageError unless ``value`` (``source_type`` / ``connector``, default parquet) is one a
    filesystem catalog can migrate: Parquet directories. ``source``: what to give instead of a
    Hive table (``"the table's"``, ``"the database's"``)."""
    connector = (value or "parquet").lower()
    if connector == "hive":
        raise UsageError(f"{argument} 'hive' needs a Hive metastore; give {source} directory with {argument} parquet")
    if connector != "parquet":
        raise UsageError(f"unsupported {argument} {connector!r}: only 'parquet' directories can be migrated")


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(
        JOB, "Adopt a directory of Parquet files as a Paimon append table.", PARAMS, argv, dry_run=True
    )
    check_connector(args.get("source_type"), argument="source_type", source="the table's")
    parse_options(args.get("options"))
    return args


def _body(ctx: JobContext[ProcedureArgs]) -> Mapping[str, Any]:
    """Migrate into ``--table`` (created when missing: the ledger row then starts from no snapshot)."""
    from paimon_core.migrate import migrate_directory

    args, catalog, name = ctx.args, ctx.catalog, ctx.config.table
    existed = catalog.table_exists(name)
    if existed:
        ctx.table()
    result = migrate_directory(
        catalog, str(args.get("source_path")), name, options=parse_options(args.get("options")), dry_run=args.dry_run
    )
    if not existed and catalog.table_exists(name):
        ctx.table()
        ctx.recording.set_metrics(snapshot_before=None)  # the migration created the table
    return result.to_dict()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed)."""
    return run_job(JOB, argv, parse_args, _body)


if __name__ == "__main__":
    sys.exit(main())
