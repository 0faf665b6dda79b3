"""``repair``: make the catalog consistent with the warehouse (Paimon's ``sys.repair``).

::

    python -m spark_jobs repair --warehouse W                                  # the whole catalog
    python -m spark_jobs repair --warehouse W --database-or-table 'db1,db2.t'  # databases / tables

Arguments (Paimon's names): ``database_or_table``: blank for the whole catalog, or a
comma-separated list of ``db`` and ``db.table``. Java's repair syncs a metastore (Hive, JDBC) with
the file system; a filesystem catalog has none (the warehouse directory is the catalog), so the
job checks that every database and table named exists and can be opened, and changes nothing
(:mod:`paimon_core.catalog.catalog_repair`). A missing database or table, or a name with more
than two parts, fails (exit 3). Takes no ``--table``.

Driver-only, no Spark session. Prints one JSON line: databases, tables, note, result (Java's
row: true). Each table checked is one ledger row (action ``repair``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.catalog.catalog_repair import repair
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict
from spark_jobs.common.runner import JobContext, run_job

__all__ = ["JOB", "PARAMS", "main", "parse_args"]

JOB = "repair"
PARAMS = (
    Param(
        "database_or_table",
        "str",
        "'db' or 'db.table', comma-separated (default: the whole catalog)",
        aliases=("databaseOrTable",),
    ),
)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(
        JOB, "Repair the catalog of a Paimon warehouse (a check for a filesystem catalog).", PARAMS, argv,
        dry_run=False, table=False,
    )  # fmt: skip


def _body(ctx: JobContext[ProcedureArgs]) -> Mapping[str, Any]:
    """Check the catalog; one ledger row per table checked."""
    result = result_dict(repair(ctx.catalog, ctx.args.get("database_or_table")))
    for name in result["tables"]:
        with ctx.record(name) as recording:
            recording.set_table(ctx.catalog.get_table(name))
            recording.set_result(result)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed)."""
    return run_job(JOB, argv, parse_args, _body, ledger="tables")


if __name__ == "__main__":
    sys.exit(main())
