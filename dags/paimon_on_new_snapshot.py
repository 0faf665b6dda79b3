"""``paimon_on_new_snapshot``: compact a table as soon as its commits make a compaction due.

Event-driven, no schedule to tune: one ``Asset`` per watched table (the registry's ``watch.tables``,
else its ingest tables), each with an ``AssetWatcher`` whose trigger is
``PaimonTableSnapshotTrigger(fire_on="compaction", planner_settings=...)``. The triggerer polls the
tables' latest snapshot ids (one shared poll for all of them); when after a new snapshot the
maintenance planner (``paimon_core.maintenance``: the same rules ``paimon_maintenance`` plans by,
i.e. the table's own ``num-sorted-run.compaction-trigger``, ``compaction.min.file-num``,
off-peak hours..., and the registry's settings) plans a compaction, it fires once, and this DAG
runs for that table: ``compact`` (the registry's strategy and mode, the table's compaction lease, so
it never overlaps ``paimon_compaction`` or ``paimon_maintenance`` on the same table), then
``health``. A manual run compacts the tables of its ``tables`` Param.

Parse cost: the registry only; the trigger and the operator import no ``paimon_core`` until
they run.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt
import logging
from typing import Any

from airflow.sdk import DAG, Asset, AssetAny, AssetWatcher, Param, get_current_context, task, task_group

from _paimon_common import DEFAULT_ARGS, SPARK_POOL, TABLE_PATTERN, table_health
from _paimon_registry import load
from paimon_airflow.operators.spark_job import PaimonCompactOperator
from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

log = logging.getLogger(__name__)
REGISTRY = load()
WATCHED = REGISTRY.watch.tables or tuple(e.table for e in REGISTRY.ingest)
TABLE_LABEL = "{{ task.table }}"


def table_asset(table: str) -> Asset:
    """The asset of ``table``'s health, watched by a health trigger."""
    settings = REGISTRY.settings_for(table).to_dict()
    settings["max_compaction_debt"] = REGISTRY.watch.max_compaction_debt
    trigger = PaimonTableSnapshotTrigger(
        table=table,
        paimon_conn_id=REGISTRY.paimon_conn_id,
        poll_interval=REGISTRY.watch.poll_interval_seconds,
        fire_on="compaction",  # the maintenance planner's rules, as paimon_maintenance plans
        planner_settings=settings,
        with_partitions=False,
    )
    return Asset(
        name=f"paimon_health__{table}",
        uri=f"paimon://{REGISTRY.paimon_conn_id}/{table}",
        watchers=[AssetWatcher(name=f"paimon_health__{table}", trigger=trigger)],
    )


ASSETS = [table_asset(t) for t in WATCHED]

with DAG(
    dag_id="paimon_on_new_snapshot",
    description="Compact a Paimon table when its commits push it over its compaction-debt budget",
    schedule=AssetAny(*ASSETS) if ASSETS else None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        "tables": Param(
            [],
            type="array",
            items={"type": "string", "pattern": TABLE_PATTERN},
            description="manual run: the db.table names to compact (an asset event names its own)",
        ),
    },
    tags=["paimon", "compaction", "event-driven"],
    doc_md=__doc__,
) as dag:

    @task(task_id="tables_over_budget")
    def tables_over_budget() -> list[dict[str, Any]]:
        """The tables of the triggering events (or the ``tables`` Param), with their compaction settings."""
        context = get_current_context()
        names = [str(t) for t in context["params"].get("tables") or ()]
        for events in (context.get("triggering_asset_events") or {}).values():
            for event in events:
                payload = (event.extra or {}).get("payload") or {}
                if payload.get("table"):
                    names.append(str(payload["table"]))
                    log.info("%s over budget: %s", payload["table"], payload.get("violations"))
        out = []
        for name in sorted(set(names)):
            s = REGISTRY.settings_for(name)
            out.append(
                {
                    "table": name,
                    "compaction": s.compaction,
                    "compaction_mode": s.compaction_mode,
                    "partition_idle_time": s.partition_idle_time,
                }
            )
        return out

    @task_group(group_id="table")
    def compact_table(table: Any, compaction: Any, compaction_mode: Any, partition_idle_time: Any) -> None:
        """Compact the table (under its lease), then report its health."""
        compact = PaimonCompactOperator(
            task_id="compact",
            table=table,
            compact_strategy=compaction,
            mode=compaction_mode,
            partition_idle_time=partition_idle_time,
            if_busy="skip",
            paimon_conn_id=REGISTRY.paimon_conn_id,
            spark_conn_id=REGISTRY.spark_conn_id,
            pool=SPARK_POOL,
            execution_timeout=dt.timedelta(hours=2),
            conf={"spark.sql.shuffle.partitions": "4"},
            map_index_template=TABLE_LABEL,
        )
        compact >> table_health(table)

    compact_table.expand_kwargs(tables_over_budget())
