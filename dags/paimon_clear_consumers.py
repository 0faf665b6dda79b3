"""``paimon_clear_consumers`` (manual): delete streaming consumers of a table by id pattern.

Paimon's ``clear_consumers``: consumers whose ids fully match ``including_consumers`` (empty: all)
and not ``excluding_consumers``. A cleared consumer no longer holds snapshots back from expiry;
stop its reader first. The ``plan`` task lists the consumers that would go; ``mode`` decides what
follows (``plan`` only, ``apply``, or ``approve_in_ui``). To move one consumer instead, use
``paimon_reset_consumer``.
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
from paimon_airflow.operators.table_procedures import PaimonClearConsumersOperator

REGISTRY = load()
ARGS = {
    "table": "{{ params.table }}",
    "including_consumers": "{{ params.including_consumers or '' }}",
    "excluding_consumers": "{{ params.excluding_consumers or '' }}",
    "paimon_conn_id": REGISTRY.paimon_conn_id,
}

with DAG(
    dag_id="paimon_clear_consumers",
    description="Delete consumers of a Paimon table by id regex (plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "including_consumers": Param(
            None, type=["null", "string"], description="regex of the consumer ids to delete (empty: all)"
        ),
        "excluding_consumers": Param(
            None, type=["null", "string"], description="regex of the consumer ids to keep"
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonClearConsumersOperator(task_id="plan", dry_run=True, **ARGS)
    apply = PaimonClearConsumersOperator(task_id="clear_consumers", **ARGS)
    plan_then_apply(plan, apply, subject="Clear consumers of {{ params.table }}?")
