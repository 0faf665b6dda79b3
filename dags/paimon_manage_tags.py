"""``paimon_manage_tags`` (manual): one of Paimon's tag procedures on a table, planned first.

The run's form takes the table and ``tag_action``:

* ``create_from_timestamp``: ``tag`` on the first snapshot committed at or after ``timestamp``
  (``time_retained`` optional);
* ``replace``: point the existing ``tag`` at ``snapshot_id`` (empty: the latest);
* ``rename``: ``tag`` becomes ``target_tag``;
* ``expire``: delete tags past their retention, or created before ``older_than``;
* ``trigger_automatic_creation``: create the due ``tag.automatic-creation`` tags (as of
  ``timestamp``, default now).

The daily tags themselves come from ``paimon_tags``. The ``plan`` task always runs first as a dry
run (the checks, the snapshot concerned, the tags that would expire); ``mode`` decides what
follows: ``plan`` stops there, ``apply`` runs it, ``approve_in_ui`` waits for a person.
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

from _paimon_common import DEFAULT_ARGS, DURATION_PATTERN, mode_param, plan_then_apply, table_param
from _paimon_registry import load
from paimon_airflow.operators.table_procedures import TAG_ACTIONS, PaimonManageTagsOperator

REGISTRY = load()
ARGS = {
    "table": "{{ params.table }}",
    "tag_action": "{{ params.tag_action }}",
    "tag": "{{ params.tag or '' }}",
    "target_tag": "{{ params.target_tag or '' }}",
    "snapshot_id": "{{ params.snapshot_id if params.snapshot_id is not none else '' }}",
    "timestamp": "{{ params.timestamp or '' }}",
    "time_retained": "{{ params.time_retained or '' }}",
    "older_than": "{{ params.older_than or '' }}",
    "paimon_conn_id": REGISTRY.paimon_conn_id,
}
_TAG_NAME = r"^[A-Za-z0-9_.-]+$"

with DAG(
    dag_id="paimon_manage_tags",
    description="Create-from-timestamp, replace, rename, expire or auto-create tags of a Paimon table (plan first)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "table": table_param(),
        "tag_action": Param("expire", type="string", enum=list(TAG_ACTIONS), description="what to do"),
        "tag": Param(
            None, type=["null", "string"], pattern=_TAG_NAME, description="the tag (not for expire)"
        ),
        "target_tag": Param(
            None, type=["null", "string"], pattern=_TAG_NAME, description="rename: the new name"
        ),
        "snapshot_id": Param(None, type=["null", "integer"], minimum=1, description="replace: the snapshot"),
        "timestamp": Param(
            None,
            type=["null", "string"],
            description="create_from_timestamp: the time (ISO-8601 UTC or epoch millis); "
            "trigger_automatic_creation: run as of it",
        ),
        "time_retained": Param(
            None, type=["null", "string"], pattern=DURATION_PATTERN, description="the tag's retention ('7 d')"
        ),
        "older_than": Param(
            None,
            type=["null", "string"],
            description="expire: also tags created before this time (ISO-8601 UTC)",
        ),
        "mode": mode_param(),
    },
    tags=["paimon", "manual"],
    doc_md=__doc__,
) as dag:
    plan = PaimonManageTagsOperator(task_id="plan", dry_run=True, **ARGS)
    apply = PaimonManageTagsOperator(task_id="manage_tags", **ARGS)
    plan_then_apply(plan, apply, subject="{{ params.tag_action }} tags of {{ params.table }}?")
