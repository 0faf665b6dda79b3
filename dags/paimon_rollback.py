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

from airflow.sdk import Param

from _paimon_common import manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.maintenance import PaimonRollbackOperator

with manual_dag(
    "paimon_rollback",
    description="Roll a Paimon table back (dry-run plan first; approval optional)",
    doc_md=__doc__,
    params={
        "snapshot_id": optional_param("target snapshot id", type="integer", minimum=1),
        "tag": optional_param("target tag"),
        "timestamp": optional_param("target time (ISO-8601, UTC)"),
        "as_latest": Param(
            False,
            type="boolean",
            description="commit the target's content as a new latest snapshot, deleting nothing "
            "(rollback_to_as_latest)",
        ),
    },
) as dag:
    plan_and_apply(
        PaimonRollbackOperator,
        "rollback",
        subject="Roll back {{ params.table }}?",
        snapshot_id=param_arg("snapshot_id"),
        tag=param_arg("tag"),
        timestamp=param_arg("timestamp"),
        as_latest="{{ params.as_latest }}",
    )
