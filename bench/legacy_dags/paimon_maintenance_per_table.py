"""The ``paimon_maintenance`` DAG as it was before the planned pass (bench only: ``bench.airflow_scale
--dag old`` runs it beside today's, side by side). Per table, in order: compaction, tags, partition expiry, snapshot expiry,
orphan cleanup.

One mapped task group per table (``list_tables`` at run time, filtered by the registry), so the
steps of one table run in order while tables proceed independently; orphan cleanup of a table
starts only after its compaction finished, so the two never race. ``max_active_runs=1`` keeps a
single compactor per table (Paimon requires it) within this DAG, and the table's compaction lease
(see ``paimon_compaction``) across DAGs: a table another DAG is compacting right now is skipped
here. Compaction runs in the ``paimon_spark`` pool.
A step that fails stops that table's later steps (``none_failed``); a skipped one (compaction
``none``, tag period ``none``, partition expiry off) does not. Partition expiry runs only for a
table whose registry ``partition_expiration_time`` or option ``partition.expiration-time`` is set;
it writes an OVERWRITE snapshot, and the snapshot expiry after it removes the dropped files once no
retained snapshot or tag holds them.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt
from typing import Any

from airflow.sdk import DAG, task_group

from _paimon_common import DEFAULT_ARGS, SPARK_POOL, compaction_params, list_tables, table_params
from _paimon_registry import load
from paimon_airflow.operators.maintenance import (
    PaimonCreateTagOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonRemoveOrphanFilesOperator,
)
from paimon_airflow.operators.partitions import PaimonExpirePartitionsOperator
from paimon_airflow.operators.spark_job import PaimonCompactOperator

REGISTRY = load()
TABLE_LABEL = "{{ task.table }}"  # mapped task instances are named by their table

with DAG(
    dag_id="paimon_maintenance_per_table",
    description="Compaction, tags, snapshot expiry and orphan cleanup of every registered Paimon table",
    schedule="0 2 * * *",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        **compaction_params(scope="compaction of every table in this run"),
    },
    tags=["paimon", "maintenance"],
    doc_md=__doc__,
) as dag:

    @task_group(group_id="table")
    def maintain(
        table: Any,
        compaction: Any,
        compaction_mode: Any,
        snapshot_retain_max: Any,
        snapshot_retain_min: Any,
        tag_period: Any,
        tag_retention: Any,
        orphan_min_age_days: Any,
        partition_idle_time: Any,
        partition_expiration_time: Any,
    ) -> None:
        """One table's maintenance, in order."""
        common: dict[str, Any] = {
            "table": table,
            "paimon_conn_id": REGISTRY.paimon_conn_id,
            "map_index_template": TABLE_LABEL,
        }
        compact = PaimonCompactOperator(
            task_id="compact",
            compact_strategy=compaction,
            mode=compaction_mode,
            partition_idle_time=partition_idle_time,
            spark_conn_id=REGISTRY.spark_conn_id,
            pool=SPARK_POOL,
            conf={"spark.sql.shuffle.partitions": "4"},
            **common,
        )
        tag = PaimonCreateTagOperator(
            task_id="create_tag",
            period=tag_period,
            time_retained=tag_retention,
            trigger_rule="none_failed",
            **common,
        )
        expire_tags = PaimonExpireTagsOperator(task_id="expire_tags", trigger_rule="none_failed", **common)
        expire_partitions = PaimonExpirePartitionsOperator(
            task_id="expire_partitions",
            expiration_time=partition_expiration_time,
            skip_when_off=True,
            trigger_rule="none_failed",
            **common,
        )
        expire = PaimonExpireSnapshotsOperator(
            task_id="expire_snapshots",
            retain_max=snapshot_retain_max,
            retain_min=snapshot_retain_min,
            trigger_rule="none_failed",
            **common,
        )
        orphans = PaimonRemoveOrphanFilesOperator(
            task_id="remove_orphan_files",
            older_than_days=orphan_min_age_days,
            dry_run=False,
            trigger_rule="none_failed",
            **common,
        )
        compact >> tag >> expire_tags >> expire_partitions >> expire >> orphans

    maintain.expand_kwargs(
        list_tables(
            fields=[
                "compaction",
                "compaction_mode",
                "snapshot_retain_max",
                "snapshot_retain_min",
                "tag_period",
                "tag_retention",
                "orphan_min_age_days",
                "partition_idle_time",
                "partition_expiration_time",
            ]
        )
    )
