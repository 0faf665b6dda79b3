"""``paimon_remove_orphan_files``: delete files no snapshot, tag or changelog references.

Only files older than ``orphan_min_age_days`` (registry, at least 1 day: longer than any write
or compaction takes) before the run's data interval end are touched, so a commit in flight never
loses its files. A run started by a person only lists what would go (``dry_run``, default on;
untick it to delete); scheduled runs delete. In-process (no JVM),
for tables of up to some 100k files; use ``PaimonRemoveOrphanFilesSparkOperator`` beyond that.
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

from airflow.sdk import DAG, Param, task_group

from _paimon_common import DEFAULT_ARGS, DRY_RUN, cron_schedule, dry_run_param, list_tables, table_params
from _paimon_registry import load
from paimon_airflow.operators.maintenance import PaimonRemoveOrphanFilesOperator

REGISTRY = load()

with DAG(
    dag_id="paimon_remove_orphan_files",
    description="Delete unreferenced files (older than a safe age) of every registered Paimon table",
    schedule=cron_schedule("0 4 * * 0"),  # Sundays 04:00
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        "dry_run": dry_run_param("list the orphans; delete nothing"),
        "orphan_min_age_days": Param(
            None,
            type=["null", "integer"],
            minimum=1,
            description="only files older than this many days (empty: the registry's, per table)",
        ),
    },
    tags=["paimon", "maintenance"],
    doc_md=__doc__,
) as dag:

    @task_group(group_id="table")
    def clean_table(
        table: Any,
        orphan_min_age_days: Any,
    ) -> None:
        """Orphan cleanup of one table."""
        PaimonRemoveOrphanFilesOperator(
            task_id="remove_orphan_files",
            table=table,
            older_than_days=orphan_min_age_days,
            dry_run=DRY_RUN,
            paimon_conn_id=REGISTRY.paimon_conn_id,
            map_index_template="{{ task.table }}",
        )

    clean_table.expand_kwargs(list_tables(fields=["orphan_min_age_days"]))
