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
own metadata, or holding a symbolic link is refused (exit 1, nothing changed). A driver-only
procedure: no Spark session is started.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from paimon_core import FileSystemCatalog, PaimonError
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE, UsageError
from spark_jobs.common.ledger import job_recording
from spark_jobs.common.output import configure_logging, emit, emit_error
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args

__all__ = ["JOB", "PARAMS", "main", "parse_args"]

JOB = "migrate_table"
PARAMS = (
    Param("source_type", "str", "format of the source directory: parquet", aliases=("connector",)),
    Param("source_path", "str", "the directory of Parquet files (Hive-style partitions)", required=True),
    Param("options", "str", "options of the new table, 'k=v,k2=v2'"),
)
logger = logging.getLogger(__name__)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(
        JOB, "Adopt a directory of Parquet files as a Paimon append table.", PARAMS, argv, dry_run=True
    )
    source_type = (args.get("source_type") or "parquet").lower()
    if source_type == "hive":
        raise UsageError("source_type 'hive' needs a Hive metastore; give the table's directory with source_type parquet")
    if source_type != "parquet":
        raise UsageError(f"unsupported source_type {source_type!r}: only 'parquet' directories can be migrated")
    return args


def _options(text: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise UsageError(f"options must be 'k=v' pairs separated by ',', got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 failed, 2 bad arguments)."""
    from paimon_core.migrate import migrate_directory

    configure_logging()
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
        options = _options(args.get("options"))
    except UsageError as e:
        return emit_error(JOB, e, exit_code=EXIT_USAGE)
    config = args.config
    try:
        catalog = FileSystemCatalog(config.warehouse, storage_options=dict(config.storage_options) or None)
        with job_recording(config, config.table, JOB, catalog=catalog, dry_run=args.dry_run) as recording:
            existed = catalog.table_exists(config.table)
            if existed:
                recording.set_table(catalog.get_table(config.table))
            result = migrate_directory(
                catalog, str(args.get("source_path")), config.table, options=options, dry_run=args.dry_run
            )
            if not existed and catalog.table_exists(config.table):
                recording.set_table(catalog.get_table(config.table))
                recording.set_metrics(snapshot_before=None)  # the migration created the table
            recording.set_result(result)
    except (PaimonError, OSError) as e:
        logger.info("%s into %s failed: %s", JOB, config.table, e)
        return emit_error(JOB, e, exit_code=EXIT_FAILURE)
    emit({**result.to_dict(), "job": JOB, "status": "ok", "table": config.table})
    return 0


if __name__ == "__main__":
    sys.exit(main())
