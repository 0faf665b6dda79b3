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

from _paimon_common import manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.table_procedures import PaimonClearConsumersOperator

with manual_dag(
    "paimon_clear_consumers",
    description="Delete consumers of a Paimon table by id regex (plan first; approval optional)",
    doc_md=__doc__,
    params={
        "including_consumers": optional_param("regex of the consumer ids to delete (empty: all)"),
        "excluding_consumers": optional_param("regex of the consumer ids to keep"),
    },
) as dag:
    plan_and_apply(
        PaimonClearConsumersOperator,
        "clear_consumers",
        subject="Clear consumers of {{ params.table }}?",
        including_consumers=param_arg("including_consumers"),
        excluding_consumers=param_arg("excluding_consumers"),
    )
