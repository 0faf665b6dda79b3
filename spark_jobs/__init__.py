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
    "remove_unexisting_files": "spark_jobs.remove_unexisting_files",
    "expire_changelogs": "spark_jobs.expire_changelogs",
    "create_tag": "spark_jobs.create_tag",
    "create_tag_from_timestamp": "spark_jobs.create_tag_from_timestamp",
    "replace_tag": "spark_jobs.replace_tag",
    "rename_tag": "spark_jobs.rename_tag",
    "delete_tag": "spark_jobs.delete_tag",
    "expire_tags": "spark_jobs.expire_tags",
    "trigger_tag_automatic_creation": "spark_jobs.trigger_tag_automatic_creation",
    "rollback_to": "spark_jobs.rollback_to",
    "rollback_to_timestamp": "spark_jobs.rollback_to_timestamp",
    "rollback_to_as_latest": "spark_jobs.rollback_to_as_latest",
    "reset_consumer": "spark_jobs.reset_consumer",
    "clear_consumers": "spark_jobs.clear_consumers",
    "merge_into": "spark_jobs.merge_into",
    "migrate_table": "spark_jobs.migrate_table",
    "rescale": "spark_jobs.rescale",
    "expire_partitions": "spark_jobs.expire_partitions",
    "mark_partition_done": "spark_jobs.mark_partition_done",
    "create_branch": "spark_jobs.create_branch",
    "delete_branch": "spark_jobs.delete_branch",
    "fast_forward": "spark_jobs.fast_forward",
    "rename_branch": "spark_jobs.rename_branch",
    "merge_branch": "spark_jobs.merge_branch",
    "purge_files": "spark_jobs.purge_files",
    "repair": "spark_jobs.repair",
    "repair_earliest_snapshot": "spark_jobs.repair_earliest_snapshot",
    "create_tag_from_watermark": "spark_jobs.create_tag_from_watermark",
    "rollback_to_watermark": "spark_jobs.rollback_to_watermark",
    "drop_partition": "spark_jobs.drop_partition",
    "remove_unexisting_manifests": "spark_jobs.remove_unexisting_manifests",
    "rewrite_file_index": "spark_jobs.rewrite_file_index",
    "migrate_database": "spark_jobs.migrate_database",
    "reassign_row_id": "spark_jobs.reassign_row_id",
}
