"""``paimon_expire_snapshots``: expire old snapshots of every registered table, daily.

Retention per table from the registry (``snapshot_retain_max/min``; unset: the table's
``snapshot.num-retained.*`` and ``snapshot.time-retained`` options). Metadata work in the task
process (no JVM); consumers and tags hold their snapshots as Paimon's expiry requires. A run
started by a person only reports what would expire (``dry_run``, default on); scheduled runs expire.
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

from _paimon_common import DEFAULT_ARGS, DRY_RUN, cron_schedule, dry_run_param, list_tables, table_params
from _paimon_registry import load
from paimon_airflow.operators.maintenance import PaimonExpireSnapshotsOperator

REGISTRY = load()

with DAG(
    dag_id="paimon_expire_snapshots",
    description="Expire old snapshots of every registered Paimon table",
    schedule=cron_schedule("30 1 * * *"),
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        "dry_run": dry_run_param("report what would expire; delete nothing"),
    },
    tags=["paimon", "maintenance"],
    doc_md=__doc__,
) as dag:

    @task_group(group_id="table")
    def expire_table(
        table: Any,
        snapshot_retain_max: Any,
        snapshot_retain_min: Any,
    ) -> None:
        """Expire one table's snapshots."""
        PaimonExpireSnapshotsOperator(
            task_id="expire_snapshots",
            table=table,
            retain_max=snapshot_retain_max,
            retain_min=snapshot_retain_min,
            dry_run=DRY_RUN,
            paimon_conn_id=REGISTRY.paimon_conn_id,
            map_index_template="{{ task.table }}",
        )

    expire_table.expand_kwargs(list_tables(fields=["snapshot_retain_max", "snapshot_retain_min"]))
