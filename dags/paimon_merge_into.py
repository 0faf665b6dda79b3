"""``paimon_merge_into`` (manual): Paimon's ``merge_into`` on one table, plan first.

The run's form takes the target table and Paimon's merge arguments (``''`` = not given). The
``plan`` task always runs first as a dry run through Spark (how many rows would be updated,
deleted and inserted); ``mode`` decides what follows: ``plan`` stops there, ``apply`` merges,
``approve_in_ui`` waits for a person to approve the plan in the UI, then merges. The merge
commits once (primary-key tables: upserts and deletes by key; append tables: the files holding
changed rows are rewritten), under a commit user of the task instance, so a retry of a landed
merge is a no-op.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from airflow.sdk import Param

from _paimon_common import SPARK_POOL, manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.merge_into import MERGE_ARGUMENTS, PaimonMergeIntoOperator

with manual_dag(
    "paimon_merge_into",
    description="MERGE INTO a Paimon table (Paimon's merge_into; dry-run plan first; approval optional)",
    doc_md=__doc__,
    table_description="target db.table",
    params={
        "target_alias": optional_param(
            "name of the target in the conditions (default: the table's name)", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"
        ),
        "source_sqls": optional_param("';'-separated Spark SQL run first, e.g. CREATE TEMPORARY VIEW S AS ..."),
        "source_table": Param(type="string", minLength=1,
                              description="source: a Spark view/table (e.g. made by source_sqls) or a db.table"),
        "merge_condition": Param(type="string", minLength=1, description="e.g. T.id = S.order_id"),
        "matched_upsert_condition": optional_param("extra condition of the matched upsert"),
        "matched_upsert_setting": optional_param("'col=expr,...' or '*' (the source row)"),
        "not_matched_insert_condition": optional_param("condition of the insert"),
        "not_matched_insert_values": optional_param("'expr, expr, ...' or '*'"),
        "matched_delete_condition": optional_param("delete matched rows where (TRUE: all)"),
    },
) as dag:
    plan_and_apply(
        PaimonMergeIntoOperator,
        "merge_into",
        subject="MERGE INTO {{ params.table }}?",
        pool=SPARK_POOL,
        **{name: param_arg(name) for name in MERGE_ARGUMENTS},
    )
