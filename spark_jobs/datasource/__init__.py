"""The ``paimon`` Spark data source (Python Data Source API, PySpark >= 4.0).

With the project installed, PySpark registers it by itself (``pyspark_paimon.py``); to register
it explicitly (``spark_jobs.common.session.get_spark`` does)::

    from spark_jobs.datasource import PaimonDataSource
    spark.dataSource.register(PaimonDataSource)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")  # only for filter-pushdown=true

Read with ``spark.read.format("paimon").option("warehouse", W).load("db.t")``; write fixed-bucket
(primary-key) tables with :func:`write_table` (routes rows so one task writes each bucket).
"""

from __future__ import annotations

from spark_jobs.datasource.paimon_source import (
    SOURCE_NAME,
    PaimonCommitMessage,
    PaimonDataSource,
    PaimonReader,
    PaimonWriter,
)
from spark_jobs.datasource.routing import distribute_for_table
from spark_jobs.datasource.write import write_table

__all__ = [
    "SOURCE_NAME",
    "PaimonCommitMessage",
    "PaimonDataSource",
    "PaimonReader",
    "PaimonWriter",
    "distribute_for_table",
    "register",
    "write_table",
]


def register(spark: object) -> None:
    """Register the source with a SparkSession, with session (dynamic) options and Python
    filter pushdown enabled (used by readers with ``filter-pushdown=true``)."""
    from spark_jobs.datasource.dynamic_options import enable_session_options

    enable_session_options(spark)  # type: ignore[arg-type]
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")  # type: ignore[attr-defined]
