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

from airflow.sdk import Param

from _paimon_common import manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.maintenance import PaimonResetConsumerOperator

with manual_dag(
    "paimon_reset_consumer",
    description="Reset or delete a consumer of a Paimon table (plan first; approval optional)",
    doc_md=__doc__,
    params={
        "consumer_id": Param(
            type="string", pattern=r"^[A-Za-z0-9_.-]+$", minLength=1, description="consumer id"
        ),
        "next_snapshot_id": optional_param(
            "next snapshot to read; empty: delete the consumer", type="integer", minimum=1
        ),
    },
) as dag:
    plan_and_apply(
        PaimonResetConsumerOperator,
        "reset_consumer",
        subject="Reset consumer {{ params.consumer_id }} of {{ params.table }}?",
        consumer_id="{{ params.consumer_id }}",
        next_snapshot_id=param_arg("next_snapshot_id"),
    )
