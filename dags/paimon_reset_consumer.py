"""``paimon_reset_consumer`` (manual): move a streaming consumer of a table, or delete it.

The ``plan`` task shows the consumer's current position and the table's snapshot range; ``mode``
decides what follows (``plan`` only, ``apply``, or ``approve_in_ui``). An empty
``next_snapshot_id`` deletes the consumer (it no longer holds snapshots back from expiry).
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt

from airflow.sdk import DAG, Param

from _paimon_common import DEFAULT_ARGS, mode_param, plan_then_apply, table_param
from _paimon_registry import load
from paimon_airflow.operators.maintenance import PaimonResetConsumerOperator

REGISTRY = load()
ARGS = {
    "table": "{{ params.table }}",
    "consumer_id": "{{ params.consumer_id }}",
    "next_snapshot_id": "{{ params.next_snapshot_id if params.next_snapshot_id is not none else '' }}",
    "paimon_conn_id": REGISTRY.paimon_conn_id,
}

with DAG(
    dag_id="paimon_reset_consumer",
    description="Reset or delete a consumer of a Paimon table (plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "consumer_id": Param(
            type="string", pattern=r"^[A-Za-z0-9_.-]+$", minLength=1, description="consumer id"
        ),
        "next_snapshot_id": Param(
            None,
            type=["null", "integer"],
            minimum=1,
            description="next snapshot to read; empty: delete the consumer",
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonResetConsumerOperator(task_id="plan", dry_run=True, **ARGS)
    apply = PaimonResetConsumerOperator(task_id="reset_consumer", **ARGS)
    plan_then_apply(plan, apply, subject="Reset consumer {{ params.consumer_id }} of {{ params.table }}?")
