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
    "compact": "spark_jobs.compact",
    "compact_database": "spark_jobs.compact_database",
    "compact_manifest": "spark_jobs.compact_manifest",
    "expire_snapshots": "spark_jobs.expire_snapshots",
    "remove_orphan_files": "spark_jobs.remove_orphan_files",
    "create_tag": "spark_jobs.create_tag",
    "delete_tag": "spark_jobs.delete_tag",
    "rollback_to": "spark_jobs.rollback_to",
    "reset_consumer": "spark_jobs.reset_consumer",
    "merge_into": "spark_jobs.merge_into",
}
