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

from _paimon_common import manual_dag, optional_param, param_arg, plan_and_apply
from paimon_airflow.operators.table_procedures import PaimonRemoveUnexistingFilesOperator

with manual_dag(
    "paimon_remove_unexisting_files",
    description="Drop entries of missing data files from a damaged Paimon table (plan first)",
    doc_md=__doc__,
    params={"parallelism": optional_param("existence checks at once", type="integer", minimum=1)},
) as dag:
    plan_and_apply(
        PaimonRemoveUnexistingFilesOperator,
        "remove_unexisting_files",
        subject="Remove missing files from {{ params.table }}?",
        parallelism=param_arg("parallelism"),
    )
