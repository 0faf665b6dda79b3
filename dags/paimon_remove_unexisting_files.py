"""``paimon_remove_unexisting_files`` (manual): repair a table whose data files were deleted
behind its back.

Paimon's ``remove_unexisting_files``: the latest snapshot's data files are checked and the missing
ones are dropped from the table's state in one OVERWRITE commit, so the table reads again (their
rows were already lost). Nothing on storage is deleted. Use it for what Paimon documents: a file
deleted by hand or by too young an orphan cleanup, or a file a restarted writer committed again
after it had expired. The ``plan`` task lists the missing files per partition; ``mode`` decides
what follows (``plan`` only, ``apply``, or ``approve_in_ui``: look at the plan first).
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
from paimon_airflow.operators.table_procedures import PaimonRemoveUnexistingFilesOperator

REGISTRY = load()
ARGS = {
    "table": "{{ params.table }}",
    "parallelism": "{{ params.parallelism if params.parallelism is not none else '' }}",
    "paimon_conn_id": REGISTRY.paimon_conn_id,
}

with DAG(
    dag_id="paimon_remove_unexisting_files",
    description="Drop entries of missing data files from a damaged Paimon table (plan first)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "parallelism": Param(
            None, type=["null", "integer"], minimum=1, description="existence checks at once"
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonRemoveUnexistingFilesOperator(task_id="plan", dry_run=True, **ARGS)
    apply = PaimonRemoveUnexistingFilesOperator(task_id="remove_unexisting_files", dry_run=False, **ARGS)
    plan_then_apply(plan, apply, subject="Remove missing files from {{ params.table }}?")
