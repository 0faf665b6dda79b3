"""Apache Paimon table maintenance for Airflow 3: a connection type and hook, in-process
maintenance operators (no JVM) and Spark job operators.

* :mod:`paimon_airflow.hooks.paimon`: :class:`~paimon_airflow.hooks.paimon.PaimonHook` (conn type ``paimon``).
* :mod:`paimon_airflow.operators.maintenance`: expire snapshots/changelogs, tags, rollback,
  consumers and orphan cleanup of small tables, in the task process.
* :mod:`paimon_airflow.operators.spark_job`: ``python -m spark_jobs <job>`` through spark-submit
  (ingest, compaction, distributed orphan cleanup) or as a plain subprocess (metadata procedures).
* :mod:`paimon_airflow.operators.compact_database`: Paimon's ``compact_database`` over a warehouse.
* :mod:`paimon_airflow.utils.lease`: the per-table compaction lease (one compactor per table across DAGs).
* :mod:`paimon_airflow.sensors.paimon` / :mod:`paimon_airflow.triggers.paimon`: a deferrable snapshot
  sensor, a compaction-debt sensor and ``PaimonTableSnapshotTrigger`` (an ``AssetWatcher`` trigger).
* :mod:`paimon_airflow.ui`: the read-only "Paimon tables" page of the Airflow UI.

Importing this package imports neither Airflow nor paimon_core; :func:`get_provider_info` is the
``apache_airflow_provider`` entry point that registers the connection type with Airflow.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_provider_info"]


def get_provider_info() -> dict[str, Any]:
    """Provider metadata (Airflow reads the connection form from here, without importing the hook)."""
    return {
        "package-name": "paimon-py",
        "name": "Apache Paimon (paimon-py)",
        "description": "Apache Paimon tables: connection, hook and maintenance operators.",
        "connection-types": [
            {
                "connection-type": "paimon",
                "hook-class-name": "paimon_airflow.hooks.paimon.PaimonHook",
                "hook-name": "Apache Paimon",
                "ui-field-behaviour": {
                    "hidden-fields": ["port", "schema"],
                    "relabeling": {
                        "host": "Warehouse URL",
                        "login": "Access key id",
                        "password": "Secret access key",
                    },
                    "placeholders": {
                        "host": "/data/warehouse, file:///data/wh or s3://bucket/warehouse",
                        "login": "object store key (optional)",
                        "password": "object store secret (optional)",
                    },
                },
                "conn-fields": {
                    "warehouse": {
                        "label": "Warehouse",
                        "description": "Warehouse URL; overrides Host when set",
                        "schema": {"type": ["string", "null"]},
                    },
                    "endpoint_url": {
                        "label": "Endpoint URL",
                        "description": "Object store endpoint (S3-compatible stores such as MinIO)",
                        "schema": {"type": ["string", "null"]},
                    },
                    "storage_options": {
                        "label": "Storage options (JSON)",
                        "description": "fsspec options of the warehouse's file system",
                        "schema": {"type": ["object", "string", "null"]},
                    },
                },
            }
        ],
        "integrations": [{"integration-name": "Apache Paimon", "external-doc-url": "https://paimon.apache.org/"}],
        # paimon://<conn id>/<db.table>: PaimonHook's hook lineage; OpenLineage dataset db.table
        # in the warehouse's namespace (paimon_airflow.utils.lineage)
        "asset-uris": [
            {
                "schemes": ["paimon"],
                "handler": None,
                "to_openlineage_converter": "paimon_airflow.utils.lineage.convert_asset_to_openlineage",
            }
        ],
        "triggers": [{"integration-name": "Apache Paimon", "python-modules": ["paimon_airflow.triggers.paimon"]}],
        "sensors": [{"integration-name": "Apache Paimon", "python-modules": ["paimon_airflow.sensors.paimon"]}],
    }
