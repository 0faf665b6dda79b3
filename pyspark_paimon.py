"""Auto-registration of the ``paimon`` Spark data source.

PySpark (4.0+) imports every top-level ``pyspark_*`` module on the Python path when the
first Python data source call happens and registers its ``DefaultSource``, so with this
project installed ``spark.read.format("paimon")`` works in any session, with no
``spark.dataSource.register`` call. Importing this module does not start Spark.
"""

from __future__ import annotations

from spark_jobs.datasource.paimon_source import PaimonDataSource as DefaultSource

__all__ = ["DefaultSource"]
