"""``write_table``: route a DataFrame for its table and write it through the ``paimon`` source."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

from pyspark.sql import DataFrame

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.input_conform import check_nested_columns
from paimon_core.table.table import FileStoreTable
from spark_jobs.datasource.options import COMMIT_IDENTIFIER, COMMIT_USER, OVERWRITE_PARTITION, WAREHOUSE
from spark_jobs.datasource.paimon_source import SOURCE_NAME
from spark_jobs.datasource.routing import distribute_for_table
from spark_jobs.datasource.types import spark_arrow_schema

__all__ = ["WRITERS", "write_table"]

#: ``auto``: Spark's own Parquet writer where the table allows it (see
#: :func:`.native_write.native_write_problem`), else the ``paimon`` data source.
WRITERS = ("auto", "native", "datasource")

logger = logging.getLogger(__name__)


def write_table(
    df: DataFrame,
    warehouse: str,
    table: str,
    *,
    mode: Literal["append", "overwrite"] = "append",
    overwrite_partition: Mapping[str, object] | None = None,
    commit_user: str | None = None,
    commit_identifier: int | None = None,
    options: Mapping[str, str] | None = None,
    num_partitions: int | None = None,
    storage_options: Mapping[str, str] | None = None,
    writer: Literal["auto", "native", "datasource"] = "auto",
) -> None:
    """Write ``df`` into ``table`` (``db.t``) in one commit, routed for fixed-bucket tables.

    ``commit_user`` + ``commit_identifier`` make the write idempotent: if that pair is
    already committed, tasks write nothing and nothing is committed.

    ``writer``: ``native`` writes the files with Spark's own Parquet writer and commits them
    on the driver (append tables, unaware or fixed-bucket, and fixed-bucket deduplicate
    primary-key tables, in Parquet on a local or mounted file system: it skips the JVM -> Python transfer
    of every row; a primary-key write whose rows repeat a key falls back to the data source,
    which merges them); ``datasource`` goes through the ``paimon`` data source; ``auto``
    (default) takes ``native`` where the table allows it.
    """
    if writer not in WRITERS:
        raise InvalidArgumentError(f"writer must be one of {WRITERS}, got {writer!r}")
    if overwrite_partition and mode != "overwrite":
        raise ValueError("overwrite_partition needs mode='overwrite'")
    catalog = FileSystemCatalog(warehouse, storage_options=dict(storage_options or {}) or None)
    paimon_table = catalog.get_table(table)
    # nested fields the table lacks: refused here, before any task runs (the tasks check again)
    check_nested_columns(spark_arrow_schema(df.schema), paimon_table.arrow_schema)
    if writer != "datasource":
        from spark_jobs.datasource.native_files import DuplicateKeysError
        from spark_jobs.datasource.native_write import native_write_problem

        problem = native_write_problem(paimon_table)
        if problem is None:
            try:
                _write_native(
                    df,
                    paimon_table,
                    mode=mode,
                    overwrite_partition=overwrite_partition,
                    commit_user=commit_user,
                    commit_identifier=commit_identifier,
                    options=options,
                    num_partitions=num_partitions,
                )
                return
            except DuplicateKeysError as e:  # nothing was committed; the data source merges
                logger.warning("%s; writing %s through the paimon data source instead", e, table)
        elif writer == "native":
            raise InvalidArgumentError(
                f"Table {table} cannot be written by Spark's Parquet writer: {problem}"
            )
        else:
            logger.info("Writing %s through the paimon data source: %s", table, problem)
    routed = distribute_for_table(df, paimon_table, num_partitions=num_partitions)
    sink = routed.write.format(SOURCE_NAME).mode(mode).option(WAREHOUSE, warehouse)
    for k, v in (storage_options or {}).items():
        sink = sink.option(f"storage.{k}", str(v))
    if overwrite_partition:
        spec = ",".join(f"{k}={v}" for k, v in overwrite_partition.items())
        sink = sink.option(OVERWRITE_PARTITION, spec)
    if commit_user is not None:
        sink = sink.option(COMMIT_USER, commit_user)
    if commit_identifier is not None:
        sink = sink.option(COMMIT_IDENTIFIER, str(commit_identifier))
    for k, v in (options or {}).items():
        sink = sink.option(k, v)
    logger.info("Writing to paimon table %s (%s) in %s", table, mode, warehouse)
    sink.save(table)


def _write_native(
    df: DataFrame,
    table: FileStoreTable,
    *,
    mode: str,
    overwrite_partition: Mapping[str, object] | None,
    commit_user: str | None,
    commit_identifier: int | None,
    options: Mapping[str, str] | None,
    num_partitions: int | None,
) -> None:
    from spark_jobs.datasource.native_write import write_native

    ident = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
    builder = table.new_batch_write_builder(commit_user=commit_user)
    if commit_user is not None and table.new_stream_write_builder(commit_user).new_commit().is_committed(
        ident
    ):
        logger.info(
            "paimon %s: commit %s/%d already committed; nothing written", table.name, commit_user, ident
        )
        return
    if mode == "overwrite":
        flag = (options or {}).get("dynamic-partition-overwrite")
        builder.overwrite(
            overwrite_partition or None, dynamic=None if flag is None else flag.lower() == "true"
        )
    committer = builder.new_commit()
    result = write_native(
        df,
        table,
        commit=lambda messages: committer.commit(messages, ident),
        landed=lambda: table.new_stream_write_builder(builder.commit_user).new_commit().is_committed(ident),
        num_partitions=num_partitions,
    )
    logger.info(
        "paimon %s: Spark's Parquet writer wrote %d file(s), %d row(s); snapshot %s",
        table.name,
        result.files,
        result.rows,
        result.commit.snapshot_id if result.commit else None,
    )
