"""``migrate_database``: adopt every table directory of a source database as Paimon append tables
(Paimon's ``sys.migrate_database``).

::

    python -m spark_jobs migrate_database --warehouse W --connector parquet \\
        --source-database /landing/sales.db [--target-database sales] [--options 'file.compression=zstd'] [--dry-run]

Arguments (Paimon's names and order): ``connector`` (``parquet``; ``hive`` needs a metastore, which
a filesystem catalog does not have, and is refused), ``source_database`` (a directory whose
subdirectories are the tables: Hive-style ``key=value`` partition directories of Parquet files),
``options`` (options of the new tables, ``k=v,k2=v2``), ``parallelism`` (accepted; the tables are
migrated one after another). Ours: ``target_database`` (default: the source directory's name
without ``.db``, as Java keeps the database name). Takes no ``--table``.

Each table is migrated as ``migrate_table`` migrates a directory
(:mod:`paimon_core.migrate.database_migrator`); a table that fails does not stop the others (as
Java), and the job then exits 3 after printing the one JSON line with every table's result and
Java's counts. A source inside a Paimon table or the warehouse's metadata, overlapping the target
database, or holding no table directory is refused before anything changes. ``--dry-run`` checks
every table and creates nothing. Driver-only, no Spark session. Each table is one ledger row.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.migrate.database_migrator import migrate_database
from spark_jobs.common.args import parse_options
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args
from spark_jobs.common.runner import JobContext, run_job
from spark_jobs.migrate_table import check_connector

__all__ = ["JOB", "PARAMS", "main", "parse_args"]

JOB = "migrate_database"
PARAMS = (
    Param("connector", "str", "format of the source tables: parquet", aliases=("source_type",)),
    Param("source_database", "str", "the directory holding one directory per table", required=True),
    Param("options", "str", "options of the new tables, 'k=v,k2=v2'"),
    Param("parallelism", "int", "accepted for Paimon's signature; tables are migrated one after another"),
    Param("target_database", "str", "database of the new tables (default: the source directory's name)"),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(
        JOB, "Adopt every table directory of a database directory as Paimon tables.", PARAMS, argv,
        dry_run=True, table=False,
    )  # fmt: skip
    check_connector(args.get("connector"), argument="connector", source="the database's")
    parse_options(args.get("options"))
    return args


def _body(ctx: JobContext[ProcedureArgs]) -> Mapping[str, Any]:
    """Migrate every table directory; one ledger row per table (a failed one names its error)."""
    args = ctx.args
    result = migrate_database(
        ctx.catalog,
        str(args.get("source_database")),
        target_database=args.get("target_database"),
        options=parse_options(args.get("options")),
        dry_run=args.dry_run,
    )
    for table in result.tables:
        try:
            _record(ctx, table)
        except _TableFailed:
            pass  # recorded as that table's failure; the others go on
    failed = [t["table"] for t in result.tables if t["status"] != "ok"]
    return {
        **result.to_dict(),
        "status": "error" if failed else "ok",
        "error": f"{len(failed)} of {len(result.tables)} table(s) failed: {', '.join(failed)}" if failed else None,
        "retryable": False,  # the same directories fail again
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 when every table migrated, 3 when one failed (all are reported), 2 bad arguments."""
    return run_job(JOB, argv, parse_args, _body, ledger="tables")


class _TableFailed(Exception):
    """One table's migration failed (its ledger row records it)."""


def _record(ctx: JobContext[ProcedureArgs], table: dict[str, Any]) -> None:
    """One table's ledger row (its failure: a failed row naming the error)."""
    name = str(table["table"])
    with ctx.record(name) as recording:
        if ctx.catalog.table_exists(name):
            recording.set_table(ctx.catalog.get_table(name))
            if table.get("created_table"):
                recording.set_metrics(snapshot_before=None)  # the migration created the table
        if table["status"] != "ok":
            raise _TableFailed(f"{table['error_type']}: {table['error']}")
        recording.set_result(table)


if __name__ == "__main__":
    sys.exit(main())
