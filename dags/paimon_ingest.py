"""``paimon_ingest``: load each day's landing files into its Paimon table, idempotently.

Daily data intervals (no catchup: missed days are ingested by a backfill, never released by an
unpause): the run of interval [D, D+1) overwrites exactly partition
``<date_column>=D`` from its source (``{ds}`` → D), under a commit user derived from (dag, run,
task, map index, table). A retry whose commit landed commits nothing; a re-run or a backfill of
the same day replaces the partition with the same rows, never duplicates. Runs through
spark-submit (pool ``paimon_spark``) with the master of the Spark connection.

Compaction-debt gate: before each table's ingest a ``PaimonCompactionDebtSensor`` (reschedule
mode: no worker slot held while waiting) waits while the table's sorted runs per bucket are over
the ``max_compaction_debt`` Param (share of ``num-sorted-run.stop-trigger``; default the sensor's)
instead of adding more runs that make every read slower; a table the ingest will create (missing
so far) passes.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt
import inspect
from typing import Any

from airflow.sdk import DAG, Param, PokeReturnValue

from _paimon_common import DEFAULT_ARGS, SPARK_POOL, daily_intervals
from _paimon_registry import load
from paimon_airflow.operators.spark_job import PaimonIngestOperator
from paimon_airflow.sensors.paimon import PaimonCompactionDebtSensor

REGISTRY = load()
#: The sensor's own default budget (most sorted runs per bucket / stop trigger).
DEFAULT_MAX_COMPACTION_DEBT = (
    inspect.signature(PaimonCompactionDebtSensor).parameters["max_compaction_debt"].default
)


class IngestCompactionDebtGate(PaimonCompactionDebtSensor):
    """The debt sensor, except that a table that does not exist yet passes (the ingest creates it)."""

    def poke(self, context: Any) -> PokeReturnValue:
        from paimon_airflow.hooks.paimon import PaimonHook

        if not PaimonHook(paimon_conn_id=self.paimon_conn_id).get_catalog().table_exists(self.table):
            self.log.info("%s does not exist yet: no compaction debt", self.table)
            return PokeReturnValue(is_done=True, xcom_value={"table": self.table, "exists": False})
        return super().poke(context)


with DAG(
    dag_id="paimon_ingest",
    description="Daily partition ingest (overwrite of the data interval's date) into Paimon tables",
    schedule=daily_intervals(),
    start_date=REGISTRY.start_date,
    catchup=False,  # missed days are ingested by a backfill (the trigger form must not release them)
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        "sources": Param(
            {e.table: e.source for e in REGISTRY.ingest},
            type="object",
            description='source path per table; "{ds}" becomes the interval\'s date (YYYY-MM-DD)',
        ),
        "max_compaction_debt": Param(
            DEFAULT_MAX_COMPACTION_DEBT,
            type="number",
            minimum=0,
            description="ingest waits while a table's most sorted runs in a bucket exceed this share "
            "of num-sorted-run.stop-trigger (1.0: where Paimon's writers stall)",
        ),
    },
    tags=["paimon", "ingest"],
    doc_md=__doc__,
) as dag:
    for entry in REGISTRY.ingest:
        name = entry.table.replace(".", "__")
        gate = IngestCompactionDebtGate(
            task_id=f"compaction_debt__{name}",
            table=entry.table,
            paimon_conn_id=REGISTRY.paimon_conn_id,
            max_compaction_debt="{{ params.max_compaction_debt }}",
            mode="reschedule",
            poke_interval=dt.timedelta(minutes=2),
            timeout=dt.timedelta(hours=6),
        )
        ingest = PaimonIngestOperator(
            task_id=f"ingest__{name}",
            table=entry.table,
            job_args=[
                "--source",
                "{{ params.sources[" + repr(entry.table) + "].replace('{ds}', data_interval_start | ds) }}",
                "--logical-date",
                "{{ data_interval_start | ds }}",
                "--date-column",
                entry.date_column,
                "--overwrite",
            ],
            paimon_conn_id=REGISTRY.paimon_conn_id,
            spark_conn_id=REGISTRY.spark_conn_id,
            pool=SPARK_POOL,
            conf={"spark.sql.shuffle.partitions": "4"},
        )
        gate >> ingest
