"""``ingest``: load files or a Spark table into a Paimon table through the ``paimon`` data source.

::

    python -m spark_jobs ingest --warehouse W --table db.events --source /data/events/2024-01-01/ \\
        [--format parquet|csv|json|table] [--source-option header=true] [--source-schema DDL] \\
        [--logical-date 2024-01-01 [--date-column dt]] [--run-id RUN] [--overwrite] \\
        [--primary-key id --bucket 4] [--partition-by dt] [--table-option k=v] [--num-partitions N]

* The source is a Parquet, CSV or JSON file or directory (``--format auto`` picks by extension),
  or a Spark table / view name (``--format table``).
* ``--logical-date`` fills ``--date-column`` (default ``dt``) with that date for every row; with
  ``--overwrite`` exactly that partition is replaced. ``--overwrite`` alone replaces the
  partitions written (the table's ``dynamic-partition-overwrite``, default true) or the whole
  unpartitioned table.
* ``--run-id`` makes the run idempotent: commit user ``ingest-<table>-<run id>``, identifier 1. A
  re-run of a committed run reads nothing, commits nothing and reports ``already_committed``.
* A missing table is created from the source schema (``--primary-key`` needs ``--bucket``).

Prints one JSON line: table, snapshot_id, commit_kind, commit_user, commit_identifier,
already_committed, delta_record_count, total_record_count, seconds.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from paimon_core import FileSystemCatalog
from paimon_core.schema.data_types import DateType, VarCharType
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import JobConfig, UsageError, base_parser, parse_job_args
from spark_jobs.common.runner import JobContext, run_job
from spark_jobs.common.session import parse_conf_pairs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["IngestPlan", "commit_user_for", "committed_result", "main", "parse_args", "run", "source_format"]

logger = logging.getLogger(__name__)

JOB = "ingest"
FORMATS = ("auto", "parquet", "csv", "json", "table")
_EXTENSIONS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}
#: A run id commits under this identifier (one commit per run).
RUN_COMMIT_IDENTIFIER = 1


@dataclass(frozen=True)
class IngestPlan:
    """Everything ``ingest`` decided from its arguments (pure; no Spark, no IO)."""

    config: JobConfig
    source: str
    source_format: str
    source_options: Mapping[str, str] = field(default_factory=dict)
    source_schema: str | None = None
    logical_date: dt.date | None = None
    date_column: str = "dt"
    run_id: str | None = None
    overwrite: bool = False
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    bucket: int | None = None
    table_options: Mapping[str, str] = field(default_factory=dict)
    num_partitions: int | None = None
    #: ``auto`` | ``native`` | ``datasource`` (see :func:`spark_jobs.datasource.write.write_table`).
    writer: str = "auto"
    #: Stable per run id (idempotent re-runs), else unique per invocation (see :func:`commit_user_for`).
    commit_user: str = ""

    @property
    def commit_identifier(self) -> int:
        return RUN_COMMIT_IDENTIFIER if self.run_id is not None else BATCH_COMMIT_IDENTIFIER


def commit_user_for(table: str, run_id: str | None) -> str:
    """``ingest-<table>-<run id>``; a fresh unique user without a run id."""
    return f"ingest-{table}-{run_id if run_id is not None else uuid.uuid4().hex}"


def source_format(source: str, requested: str = "auto") -> str:
    """The reader for ``source``: the requested one, else by file extension (also of a directory's files)."""
    if requested != "auto":
        return requested
    lowered = source.lower().rstrip("/")
    for ext, fmt in _EXTENSIONS.items():
        if lowered.endswith(ext):
            return fmt
    if os.path.isdir(source):
        found = set()
        for _root, _dirs, files in os.walk(source):
            for name in files:
                ext = os.path.splitext(name)[1].lower()
                if ext in _EXTENSIONS and not name.startswith(("_", ".")):
                    found.add(_EXTENSIONS[ext])
        if len(found) == 1:
            return found.pop()
        raise UsageError(
            f"cannot tell the format of directory {source!r} (found {sorted(found) or 'no data files'}); pass --format"
        )
    if "://" not in source and not os.path.exists(source):
        return "table"
    raise UsageError(f"cannot tell the format of {source!r}; pass --format")


def parse_args(argv: Sequence[str] | None) -> IngestPlan:
    """Parse the command line into an :class:`IngestPlan` (raises :class:`UsageError`)."""
    p = base_parser(JOB, "Load a source (Parquet/CSV/JSON files or a Spark table) into a Paimon table.")
    p.add_argument("--source", required=True, help="file, directory or Spark table name")
    p.add_argument("--format", default="auto", choices=FORMATS, help="source format (default: by extension)")
    p.add_argument("--source-option", action="append", default=[], metavar="K=V", help="Spark reader option")
    p.add_argument("--source-schema", help="source schema as Spark DDL (CSV/JSON: skips inference)")
    p.add_argument("--logical-date", help="YYYY-MM-DD: write every row into this date's partition")
    p.add_argument("--date-column", default="dt", help="column of the logical date (default: dt)")
    p.add_argument("--run-id", help="idempotency key: a re-run of the same run id commits nothing new")
    p.add_argument(
        "--overwrite", action="store_true", help="replace the partition(s) written instead of appending"
    )
    p.add_argument("--primary-key", default="", help="comma-separated primary key (new tables)")
    p.add_argument("--partition-by", default="", help="comma-separated partition keys (new tables)")
    p.add_argument("--bucket", type=int, help="number of buckets (new tables; required with --primary-key)")
    p.add_argument(
        "--table-option", action="append", default=[], metavar="K=V", help="table option (new tables)"
    )
    p.add_argument(
        "--num-partitions", type=int, help="write tasks of a fixed-bucket table (default: Spark's)"
    )
    p.add_argument(
        "--writer",
        default="auto",
        choices=("auto", "native", "datasource"),
        help="native: Spark's Parquet writer (append tables and fixed-bucket deduplicate primary-key "
        "tables in Parquet on a local or mounted file system); datasource: the paimon data source; auto (default): native where possible",
    )
    config, ns = parse_job_args(JOB, p, argv)
    try:
        source_options = parse_conf_pairs(ns.source_option)
        table_options = parse_conf_pairs(ns.table_option)
    except ValueError as e:
        raise UsageError(f"--source-option/--table-option: {e}") from None
    logical_date = None
    if ns.logical_date is not None:
        try:
            logical_date = dt.date.fromisoformat(ns.logical_date)
        except ValueError:
            raise UsageError(f"--logical-date must be YYYY-MM-DD, got {ns.logical_date!r}") from None
    if ns.run_id is not None and not ns.run_id.strip():
        raise UsageError("--run-id must not be empty")
    if ns.bucket is not None and (ns.bucket == 0 or ns.bucket < -1):
        raise UsageError(f"--bucket must be > 0 (or -1), got {ns.bucket}")
    if ns.num_partitions is not None and ns.num_partitions <= 0:
        raise UsageError(f"--num-partitions must be > 0, got {ns.num_partitions}")
    primary_keys = tuple(k.strip() for k in ns.primary_key.split(",") if k.strip())
    partition_keys = tuple(k.strip() for k in ns.partition_by.split(",") if k.strip())
    if logical_date is not None and not partition_keys:
        partition_keys = (ns.date_column,)
    return IngestPlan(
        config=config,
        source=ns.source,
        source_format=source_format(ns.source, ns.format),
        source_options=source_options,
        source_schema=ns.source_schema,
        logical_date=logical_date,
        date_column=ns.date_column,
        run_id=ns.run_id.strip() if ns.run_id else None,
        overwrite=ns.overwrite,
        primary_keys=primary_keys,
        partition_keys=partition_keys,
        bucket=ns.bucket,
        table_options=table_options,
        num_partitions=ns.num_partitions,
        writer=ns.writer,
        commit_user=commit_user_for(config.table, ns.run_id.strip() if ns.run_id else None),
    )


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------


def _catalog(plan: IngestPlan) -> FileSystemCatalog:
    return FileSystemCatalog(plan.config.warehouse, storage_options=dict(plan.config.storage_options) or None)


def _already_committed(plan: IngestPlan) -> bool:
    if plan.run_id is None:
        return False
    catalog = _catalog(plan)
    if not catalog.table_exists(plan.config.table):
        return False
    table = catalog.get_table(plan.config.table)
    return table.new_stream_write_builder(plan.commit_user).new_commit().is_committed(plan.commit_identifier)


def read_source(spark: SparkSession, plan: IngestPlan) -> DataFrame:
    """The source as a DataFrame."""
    if plan.source_format == "table":
        return spark.table(plan.source)
    reader = spark.read
    if plan.source_format == "csv":
        reader = reader.option("header", "true")
        if plan.source_schema is None:
            reader = reader.option("inferSchema", "true")
    if plan.source_schema:
        reader = reader.schema(plan.source_schema)
    for k, v in plan.source_options.items():
        reader = reader.option(k, v)
    return reader.format(plan.source_format).load(plan.source)


def _with_logical_date(df: DataFrame, plan: IngestPlan, table: FileStoreTable | None) -> DataFrame:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    if plan.logical_date is None:
        return df
    column = plan.date_column
    value: Any = plan.logical_date.isoformat()
    spark_type = "string"
    if table is not None:
        if column not in table.schema.partition_keys:
            raise UsageError(
                f"--date-column {column!r} is not a partition key of {table.name} "
                f"(partition keys: {list(table.schema.partition_keys)})"
            )
        field_type = next(f.type for f in table.schema.fields if f.name == column)
        if isinstance(field_type, DateType):
            spark_type = "date"
        elif not isinstance(field_type, VarCharType):
            raise UsageError(f"--date-column {column!r} has type {field_type}; it must be STRING or DATE")
    if column in df.columns:
        logger.warning("Source column %r is replaced by the logical date %s", column, value)
    return df.withColumn(column, F.lit(value).cast(spark_type))


def _create_table(df: DataFrame, plan: IngestPlan) -> FileStoreTable:
    from spark_jobs.datasource.types import spark_arrow_schema

    options = dict(plan.table_options)
    if plan.bucket is not None:
        options["bucket"] = str(plan.bucket)
    if plan.primary_keys and int(options.get("bucket", "-1")) <= 0:
        raise UsageError(
            "--primary-key needs --bucket N (paimon_core writes primary-key tables with fixed buckets)"
        )
    schema = spark_arrow_schema(df.schema)
    logger.info(
        "Creating table %s (pk=%s, partitions=%s)", plan.config.table, plan.primary_keys, plan.partition_keys
    )
    catalog = _catalog(plan)
    catalog.create_database(plan.config.table.split(".")[0], ignore_if_exists=True)
    return catalog.create_table(
        plan.config.table,
        schema,
        primary_keys=list(plan.primary_keys),
        partition_keys=list(plan.partition_keys),
        options=options,
        ignore_if_exists=True,
    )


def run(spark: SparkSession, plan: IngestPlan) -> dict[str, Any]:
    """Ingest with an existing session; returns the JSON-safe result."""
    from spark_jobs.datasource.write import write_table

    started = time.monotonic()
    result = _plan_fields(plan)
    if _already_committed(plan):
        logger.info("Run %s of %s is already committed: nothing to do", plan.run_id, plan.config.table)
        return committed_result(plan, _catalog(plan).get_table(plan.config.table), started=started)
    catalog = _catalog(plan)
    table = catalog.get_table(plan.config.table) if catalog.table_exists(plan.config.table) else None
    df = _with_logical_date(read_source(spark, plan), plan, table)
    if table is None:
        table = _create_table(df, plan)
    overwrite_partition = (
        {plan.date_column: plan.logical_date.isoformat()}
        if plan.overwrite and plan.logical_date is not None
        else None
    )
    write_table(
        df,
        plan.config.warehouse,
        plan.config.table,
        mode="overwrite" if plan.overwrite else "append",
        overwrite_partition=overwrite_partition,
        commit_user=plan.commit_user,
        commit_identifier=plan.commit_identifier,
        num_partitions=plan.num_partitions,
        storage_options=plan.config.storage_options,
        writer=cast(Literal["auto", "native", "datasource"], plan.writer),
    )
    snapshot = table.snapshot_manager.latest_snapshot_of_user(plan.commit_user)
    return {
        **result,
        **_snapshot_fields(snapshot),
        "already_committed": False,
        "seconds": round(time.monotonic() - started, 3),
    }


def _plan_fields(plan: IngestPlan) -> dict[str, Any]:
    return {
        "job": JOB,
        "status": "ok",
        "table": plan.config.table,
        "source": plan.source,
        "run_id": plan.run_id,
        "commit_user": plan.commit_user,
        "commit_identifier": plan.commit_identifier,
        "logical_date": plan.logical_date.isoformat() if plan.logical_date else None,
        "overwrite": plan.overwrite,
    }


def committed_result(plan: IngestPlan, table: FileStoreTable, *, started: float) -> dict[str, Any]:
    """The result of a run whose commit already landed in ``table`` (nothing is written again)."""
    return {
        **_plan_fields(plan),
        **_snapshot_fields(table.snapshot_manager.latest_snapshot_of_user(plan.commit_user)),
        "already_committed": True,
        "seconds": round(time.monotonic() - started, 3),
    }


def _snapshot_fields(snapshot: Any) -> dict[str, Any]:
    if snapshot is None:
        return {"snapshot_id": None, "commit_kind": None, "delta_record_count": 0, "total_record_count": None}
    return {
        "snapshot_id": snapshot.id,
        "commit_kind": getattr(snapshot.commit_kind, "value", snapshot.commit_kind),
        "delta_record_count": snapshot.delta_record_count,
        "total_record_count": snapshot.total_record_count,
    }


def _body(ctx: JobContext[IngestPlan]) -> Mapping[str, Any]:
    plan = ctx.args
    if _already_committed(plan):  # no Spark session needed for a no-op re-run
        return committed_result(plan, _catalog(plan).get_table(plan.config.table), started=ctx.started)
    return run(ctx.spark(), plan)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, ingest (a Spark session unless the run id already committed), print
    one JSON line; returns the exit code. Not maintenance: no ledger row."""
    return run_job(JOB, argv, parse_args, _body, needs_spark=True, ledger="off")


if __name__ == "__main__":
    sys.exit(main())
