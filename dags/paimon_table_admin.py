"""``paimon_table_admin`` (manual): Paimon's table procedures that delete or rewrite, plan first.

The form's ``procedure`` picks one (Paimon's names and arguments):

* ``remove_unexisting_manifests`` (default): the latest snapshot names manifests that are gone;
  commit it without them (their rows are lost; the rest reads again);
* ``drop_partition``: drop ``partitions`` (``'dt=2024-01-01;dt=2024-01-02,hh=3'``) in one
  OVERWRITE commit (older snapshots and tags keep the rows);
* ``rollback_to_watermark``: roll back to the newest snapshot whose watermark is <= ``watermark``,
  deleting the later snapshots, tags and changelogs;
* ``merge_branch``: commit the files of ``source_branch`` that ``target_branch`` (default main)
  lacks to it (append-only tables with a complete append-only history, as Java);
* ``purge_files``: delete every branch, tag, consumer, row and file of the table; it stays, empty.

The ``plan`` task always runs first as a dry run (what would change); ``mode`` decides what
follows: ``plan`` stops there (the default: a form submitted as it opens changes nothing),
``apply`` runs it, ``approve_in_ui`` waits for a person to approve the plan in the UI.
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
from paimon_airflow.operators.table_admin import ADMIN_PROCEDURES, PaimonTableAdminOperator

REGISTRY = load()
ARGS = {
    "table": "{{ params.table }}",
    "procedure": "{{ params.procedure }}",
    "partitions": "{{ params.partitions or '' }}",
    "watermark": "{{ params.watermark if params.watermark is not none else '' }}",
    "source_branch": "{{ params.source_branch or '' }}",
    "target_branch": "{{ params.target_branch or '' }}",
    "paimon_conn_id": REGISTRY.paimon_conn_id,
}

with DAG(
    dag_id="paimon_table_admin",
    description="Paimon procedures that delete or rewrite: drop_partition, purge_files, merge_branch, "
    "rollback_to_watermark, remove_unexisting_manifests (dry-run plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "procedure": Param(
            ADMIN_PROCEDURES[0],
            type="string",
            enum=list(ADMIN_PROCEDURES),
            description="the procedure to run (its arguments below; the others are ignored)",
        ),
        "partitions": Param(
            None,
            type=["null", "string"],
            description="drop_partition: 'k=v[,k2=v2][;k=v3...]' (a spec may name some partition keys)",
        ),
        "watermark": Param(
            None, type=["null", "integer"], description="rollback_to_watermark: a watermark (epoch millis)"
        ),
        "source_branch": Param(None, type=["null", "string"], description="merge_branch: the branch to merge"),
        "target_branch": Param(
            None, type=["null", "string"], description="merge_branch: the branch to merge into (empty: main)"
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonTableAdminOperator(task_id="plan", dry_run=True, **ARGS)
    apply = PaimonTableAdminOperator(task_id="apply", dry_run=False, **ARGS)
    plan_then_apply(plan, apply, subject="Run {{ params.procedure }} on {{ params.table }}?")
