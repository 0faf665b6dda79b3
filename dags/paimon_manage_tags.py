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

from airflow.sdk import Param

from _paimon_common import DURATION_PATTERN, manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.table_procedures import TAG_ACTIONS, PaimonManageTagsOperator

_TAG_NAME = r"^[A-Za-z0-9_.-]+$"
#: The operator's arguments besides the table, each from the Param of its name.
TAG_ARGUMENTS = ("tag_action", "tag", "target_tag", "snapshot_id", "timestamp", "time_retained", "older_than")

with manual_dag(
    "paimon_manage_tags",
    description="Create-from-timestamp, replace, rename, expire or auto-create tags of a Paimon table (plan first)",
    doc_md=__doc__,
    params={
        "tag_action": Param("expire", type="string", enum=list(TAG_ACTIONS), description="what to do"),
        "tag": optional_param("the tag (not for expire)", pattern=_TAG_NAME),
        "target_tag": optional_param("rename: the new name", pattern=_TAG_NAME),
        "snapshot_id": optional_param("replace: the snapshot", type="integer", minimum=1),
        "timestamp": optional_param(
            "create_from_timestamp: the time (ISO-8601 UTC or epoch millis); "
            "trigger_automatic_creation: run as of it"
        ),
        "time_retained": optional_param("the tag's retention ('7 d')", pattern=DURATION_PATTERN),
        "older_than": optional_param("expire: also tags created before this time (ISO-8601 UTC)"),
    },
) as dag:
    plan_and_apply(
        PaimonManageTagsOperator,
        "manage_tags",
        subject="{{ params.tag_action }} tags of {{ params.table }}?",
        **{name: param_arg(name) for name in TAG_ARGUMENTS},
    )
