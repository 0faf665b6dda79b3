"""``write_table``: route a DataFrame for its table and write it through the ``paimon`` source."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

from pyspark.sql import DataFrame

from paimon_core import FileSystemCatalog
from spark_jobs.datasource.options import COMMIT_IDENTIFIER, COMMIT_USER, OVERWRITE_PARTITION, WAREHOUSE
from spark_jobs.datasource.paimon_source import SOURCE_NAME
from spark_jobs.datasource.routing import distribute_for_table

__all__ = ["write_table"]

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
) -> None:
    """Write ``df`` into ``table`` (``db.t``) in one commit, routed for fixed-bucket tables.

    ``commit_user`` + ``commit_identifier`` make the write idempotent: if that pair is
    already committed, tasks write nothing and nothing is committed.
    """
    catalog = FileSystemCatalog(warehouse, storage_options=dict(storage_options or {}) or None)
    paimon_table = catalog.get_table(table)
    routed = distribute_for_table(df, paimon_table, num_partitions=num_partitions)
    writer = routed.write.format(SOURCE_NAME).mode(mode).option(WAREHOUSE, warehouse)
    for k, v in (storage_options or {}).items():
        writer = writer.option(f"storage.{k}", str(v))
    if overwrite_partition:
        if mode != "overwrite":
            raise ValueError("overwrite_partition needs mode='overwrite'")
        spec = ",".join(f"{k}={v}" for k, v in overwrite_partition.items())
        writer = writer.option(OVERWRITE_PARTITION, spec)
    if commit_user is not None:
        writer = writer.option(COMMIT_USER, commit_user)
    if commit_identifier is not None:
        writer = writer.option(COMMIT_IDENTIFIER, str(commit_identifier))
    for k, v in (options or {}).items():
        writer = writer.option(k, v)
    logger.info("Writing to paimon table %s (%s) in %s", table, mode, warehouse)
    writer.save(table)
