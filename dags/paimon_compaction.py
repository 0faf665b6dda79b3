"""``paimon_compaction``: hourly dedicated compaction of every registered table, one table per task.

Tables are listed at run time (``list_tables``, filtered by the registry or the run's Params) and
fanned out with dynamic task mapping, one mapped ``table`` group per table (labelled by it): a
``compact`` task in the ``paimon_spark`` pool with the table's registry strategy (``compaction``:
full / minor / none, ``compaction_mode``, ``partition_idle_time``), then ``health`` (files, sorted
runs, compaction debt after it). A manual run takes Params: the table filter, the strategy, the
mode, ``partition_idle_time`` and ``dry_run`` (the plan only: the compaction units per bucket;
default on for runs started by a person, since a compaction's commit also expires snapshots by the
table's retention; scheduled runs compact).

One compactor per table at a time (Paimon requires it):

* within this DAG, ``max_active_runs=1`` (an hour's run never overlaps the previous one) and one
  mapped task per table;
* across DAGs (``paimon_maintenance``, ``paimon_on_new_snapshot`` also compact), an Airflow pool
  cannot give each table its own slot when the tables are known only at run time. So the compact
  operator holds the table's compaction lease while its job runs: a small JSON file in the
  warehouse, ``_airflow/compaction-leases/<db.table>.json``, published with the same no-overwrite
  write that publishes a Paimon snapshot, naming the holding task instance and an expiry
  (:mod:`paimon_airflow.utils.lease`). A table whose lease another task holds is skipped in this
  run (it is being compacted right now); the next hour compacts it. A lease left by a task that
  died expires (the task's ``execution_timeout``; a retry of the same task takes it back at once).
* and if two compactions still overlap (a holder past its expiry), Paimon's own commit check is
  the last line: a COMPACT commit whose input files another commit removed conflicts, and the
  compaction re-plans on the new snapshot or fails; no data is lost either way.
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

from _paimon_common import (
    DEFAULT_ARGS,
    DRY_RUN,
    DURATION_PATTERN,
    SPARK_POOL,
    compaction_params,
    cron_schedule,
    dry_run_param,
    list_tables,
    table_health,
    table_params,
)
from _paimon_registry import load
from paimon_airflow.operators.spark_job import PaimonCompactOperator

REGISTRY = load()
TABLE_LABEL = "{{ task.table }}"  # mapped task instances are named by their table

with DAG(
    dag_id="paimon_compaction",
    description="Hourly dedicated compaction of every registered Paimon table (one compactor per table)",
    schedule=cron_schedule("0 * * * *"),  # hourly; a missed hour is not made up
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=dt.timedelta(hours=3),
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        **compaction_params(scope="strategy for every table of this run"),
        "partition_idle_time": Param(
            None,
            type=["null", "string"],
            pattern=DURATION_PATTERN,
            description="only partitions without new files for this long, e.g. '1 d' (empty: the registry's)",
        ),
        "dry_run": dry_run_param("plan only: the compaction units per bucket"),
    },
    tags=["paimon", "compaction"],
    doc_md=__doc__,
) as dag:

    @task_group(group_id="table")
    def compact_table(table: Any, compaction: Any, compaction_mode: Any, partition_idle_time: Any) -> None:
        """One table's compaction, then its health."""
        compact = PaimonCompactOperator(
            task_id="compact",
            table=table,
            compact_strategy=compaction,
            mode=compaction_mode,
            partition_idle_time=partition_idle_time,
            dry_run=DRY_RUN,
            if_busy="skip",
            paimon_conn_id=REGISTRY.paimon_conn_id,
            spark_conn_id=REGISTRY.spark_conn_id,
            pool=SPARK_POOL,
            execution_timeout=dt.timedelta(hours=2),  # also the lease's expiry if the task dies
            conf={"spark.sql.shuffle.partitions": "4"},
            map_index_template=TABLE_LABEL,
        )
        compact >> table_health(table)

    compact_table.expand_kwargs(list_tables(fields=["compaction", "compaction_mode", "partition_idle_time"]))
