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
* ``purge_files``: delete every branch, tag, consumer, row and file of the table; it stays, empty;
* ``reassign_row_id``: a row-tracking table's partitions (``partitions``, empty: all) whose row-id
  ranges have gaps get new contiguous ids from the table's next row id (metadata only, one OVERWRITE
  commit; older snapshots and tags keep the old ids);
* ``rewrite_file_index``: rebuild the data-file indexes of ``partitions`` (empty: all) from the
  table's ``file-index.*`` options, in one COMPACT commit (data files and rows unchanged; the plan
  reads the files and reports how many indexes would change).

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

from airflow.sdk import Param

from _paimon_common import manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.table_admin import ADMIN_PROCEDURES, PaimonTableAdminOperator

with manual_dag(
    "paimon_table_admin",
    description="Paimon procedures that delete or rewrite: drop_partition, purge_files, merge_branch, "
    "rollback_to_watermark, remove_unexisting_manifests, reassign_row_id, rewrite_file_index (dry-run plan first; approval optional)",
    doc_md=__doc__,
    params={
        "procedure": Param(
            ADMIN_PROCEDURES[0],
            type="string",
            enum=list(ADMIN_PROCEDURES),
            description="the procedure to run (its arguments below; the others are ignored)",
        ),
        "partitions": optional_param(
            "drop_partition: 'k=v[,k2=v2][;k=v3...]' (a spec may name some partition keys); "
            "reassign_row_id, rewrite_file_index: the partitions to process (empty: all)"
        ),
        "watermark": optional_param("rollback_to_watermark: a watermark (epoch millis)", type="integer"),
        "source_branch": optional_param("merge_branch: the branch to merge"),
        "target_branch": optional_param("merge_branch: the branch to merge into (empty: main)"),
    },
) as dag:
    plan_and_apply(
        PaimonTableAdminOperator,
        "apply",
        subject="Run {{ params.procedure }} on {{ params.table }}?",
        procedure="{{ params.procedure }}",
        **{name: param_arg(name) for name in ("partitions", "watermark", "source_branch", "target_branch")},
    )
