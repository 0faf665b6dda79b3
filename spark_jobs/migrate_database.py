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
Java), and the job then exits 1 after printing the one JSON line with every table's result and
Java's counts. A source inside a Paimon table or the warehouse's metadata, overlapping the target
database, or holding no table directory is refused before anything changes. ``--dry-run`` checks
every table and creates nothing. Driver-only, no Spark session. Each table is one ledger row.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

from paimon_core import FileSystemCatalog, PaimonError
from paimon_core.migrate.database_migrator import migrate_database
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE, UsageError
from spark_jobs.common.ledger import job_catalog, job_recording
from spark_jobs.common.output import EXIT_TERMINAL, configure_logging, emit, emit_error
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args
from spark_jobs.migrate_table import _options

__all__ = ["JOB", "PARAMS", "main", "parse_args"]

JOB = "migrate_database"
PARAMS = (
    Param("connector", "str", "format of the source tables: parquet", aliases=("source_type",)),
    Param("source_database", "str", "the directory holding one directory per table", required=True),
    Param("options", "str", "options of the new tables, 'k=v,k2=v2'"),
    Param("parallelism", "int", "accepted for Paimon's signature; tables are migrated one after another"),
    Param("target_database", "str", "database of the new tables (default: the source directory's name)"),
)
logger = logging.getLogger(__name__)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(
        JOB, "Adopt every table directory of a database directory as Paimon tables.", PARAMS, argv,
        dry_run=True, table=False,
    )  # fmt: skip
    connector = (args.get("connector") or "parquet").lower()
    if connector == "hive":
        raise UsageError("connector 'hive' needs a Hive metastore; give the database's directory with connector parquet")
    if connector != "parquet":
        raise UsageError(f"unsupported connector {connector!r}: only 'parquet' directories can be migrated")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 when every table migrated, 1 when one failed (all are reported), 2 bad arguments."""
    configure_logging()
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
        options = _options(args.get("options"))
    except UsageError as e:
        return emit_error(JOB, e, exit_code=EXIT_USAGE)
    config = args.config
    try:
        catalog = job_catalog(config)
        result = migrate_database(
            catalog,
            str(args.get("source_database")),
            target_database=args.get("target_database"),
            options=options,
            dry_run=args.dry_run,
        )
        for table in result.tables:
            try:
                _record(args, catalog, table)
            except _TableFailed:
                pass  # recorded as that table's failure; the others go on
    except (PaimonError, OSError) as e:
        logger.info("%s from %s failed: %s", JOB, args.get("source_database"), e)
        return emit_error(JOB, e, exit_code=EXIT_FAILURE)
    payload = result.to_dict()
    failed = [t["table"] for t in result.tables if t["status"] != "ok"]
    emit(
        {
            **payload,
            "job": JOB,
            "status": "error" if failed else "ok",
            "error": f"{len(failed)} of {len(result.tables)} table(s) failed: {', '.join(failed)}" if failed else None,
            "retryable": False,
        }
    )
    return EXIT_TERMINAL if failed else 0  # the line says retryable: false


class _TableFailed(Exception):
    """One table's migration failed (its ledger row records it)."""


def _record(args: ProcedureArgs, catalog: FileSystemCatalog, table: dict[str, Any]) -> None:
    """One table's ledger row (its failure: a failed row naming the error)."""
    name = str(table["table"])
    with job_recording(args.config, name, JOB, catalog=catalog, dry_run=args.dry_run) as recording:
        if catalog.table_exists(name):
            recording.set_table(catalog.get_table(name))
            if table.get("created_table"):
                recording.set_metrics(snapshot_before=None)  # the migration created the table
        if table["status"] != "ok":
            raise _TableFailed(f"{table['error_type']}: {table['error']}")
        recording.set_result(table)


if __name__ == "__main__":
    sys.exit(main())
