"""``paimon_rollback`` (manual): roll a table back to a snapshot, tag or time, plan first.

The run's form takes the table and exactly one target (Paimon's ``rollback_to`` for a snapshot or
tag, ``rollback_to_timestamp`` for a time: the newest snapshot at or before it). ``as_latest``
runs Paimon's ``rollback_to_as_latest`` instead: a new snapshot with the target's content, later
snapshots and tags kept (so it can be undone). The ``plan`` task always runs first as a
dry run (what would be removed); ``mode`` decides what follows: ``plan`` stops there,
``apply`` rolls back, ``approve_in_ui`` waits for a person to approve the plan in the UI.
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
from paimon_airflow.operators.maintenance import PaimonRollbackOperator

REGISTRY = load()
TARGET = {
    "snapshot_id": "{{ params.snapshot_id if params.snapshot_id is not none else '' }}",
    "tag": "{{ params.tag or '' }}",
    "timestamp": "{{ params.timestamp or '' }}",
    "as_latest": "{{ params.as_latest }}",
}

with DAG(
    dag_id="paimon_rollback",
    description="Roll a Paimon table back (dry-run plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "snapshot_id": Param(None, type=["null", "integer"], minimum=1, description="target snapshot id"),
        "tag": Param(None, type=["null", "string"], description="target tag"),
        "timestamp": Param(None, type=["null", "string"], description="target time (ISO-8601, UTC)"),
        "as_latest": Param(
            False,
            type="boolean",
            description="commit the target's content as a new latest snapshot, deleting nothing "
            "(rollback_to_as_latest)",
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonRollbackOperator(
        task_id="plan",
        table="{{ params.table }}",
        dry_run=True,
        paimon_conn_id=REGISTRY.paimon_conn_id,
        **TARGET,
    )
    apply = PaimonRollbackOperator(
        task_id="rollback", table="{{ params.table }}", paimon_conn_id=REGISTRY.paimon_conn_id, **TARGET
    )
    plan_then_apply(plan, apply, subject="Roll back {{ params.table }}?")
