"""PySpark jobs and the ``paimon`` Spark data source, thin layers over :mod:`paimon_core`.

* :mod:`spark_jobs.datasource`: the Python Data Source ``paimon`` (batch read and write).
* :mod:`spark_jobs.ingest`: load files or a Spark table into a Paimon table.
* ``python -m spark_jobs <job> --warehouse W --table DB.T [args]`` runs a job (see
  :mod:`spark_jobs.__main__`); every job prints exactly one JSON result line.

Importing this package never starts Spark: sessions are created only in a job's ``main``.
"""

from __future__ import annotations

__all__ = ["JOBS"]

#: Job name -> module (each module has ``main(argv) -> int``).
JOBS: dict[str, str] = {
    "ingest": "spark_jobs.ingest",
}
