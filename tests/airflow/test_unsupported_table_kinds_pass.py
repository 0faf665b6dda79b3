"""The maintenance pass skips Paimon 2.x table kinds it does not support, naming the feature (issue 25).

A warehouse holds the refused kinds, made by pypaimon 2.1.0 (:data:`tests.tools.table_kinds.UNSUPPORTED`:
a chain table, a global index, BLOB and VECTOR columns, a vector and a primary-key index) next to an
ordinary table that needs compaction. ``paimon_maintenance`` through ``dag.test()`` in apply mode:
the run succeeds, the plan lists every refused table under ``summary.skipped`` with its feature and
the refusal, none under ``errors``; the ordinary table is compacted; the refused tables'
directories are byte-for-byte unchanged.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import DAGS_FOLDER
from tests.tools.table_kinds import DATABASE, UNSUPPORTED, build, identifier, tree_digest

pytestmark = pytest.mark.integration




@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dag(airflow_db: None) -> Any:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return bag.dags["paimon_maintenance"]


def test_the_pass_skips_unsupported_kinds_with_the_reason(dag: Any, paimon_warehouse: str) -> None:
    build(paimon_warehouse, UNSUPPORTED)
    catalog = FileSystemCatalog(paimon_warehouse)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    ok = catalog.create_table("db.ok", schema, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    for i in range(6):  # six level-0 runs: over num-sorted-run.compaction-trigger 5
        ok.write_arrow(pa.table({"id": pa.array([i, i + 1], pa.int64()), "v": pa.array([i, i], pa.int64())}))
    kinds_dir = Path(paimon_warehouse) / f"{DATABASE}.db"
    before = tree_digest(kinds_dir)

    run = dag.test(
        logical_date=dt.datetime(2026, 11, 28, tzinfo=dt.UTC),
        run_conf={"include": rf"{DATABASE}\..*|db\.ok", "mode": "apply"},
    )
    assert run.state == "success"
    summary = run.get_task_instance("plan").xcom_pull(task_ids="plan", key="summary")
    assert summary["errors"] == [], summary
    skipped = {s["table"]: s for s in summary["skipped"]}
    assert set(skipped) == {identifier(k) for k in UNSUPPORTED}, summary
    for kind in UNSUPPORTED:
        entry = skipped[identifier(kind)]
        assert entry["feature"] == kind.refused_as and f"'{kind.refused_as}'" in entry["reason"], entry
    assert summary["planned"] == 1 and summary["by_action"].get("compact") == 1, summary
    assert catalog.get_table("db.ok").latest_snapshot().commit_kind.value == "COMPACT"  # type: ignore[union-attr]
    assert tree_digest(kinds_dir) == before
