"""A real Airflow run (``dag.test()``: real task instances, the metadata DB) records its ledger rows
with the task instances' own ids: mapped in-process operators and a ``spark_jobs`` subprocess.
The DAG lives in its own bundle (a temporary folder), apart from the repository's dags/."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.ledger.ledger import forget_cached_existence
from tests.unit.paimon_core.ledger.helpers import ledger_rows, small_table

pytestmark = pytest.mark.integration

DAG_FILE = """
import datetime as dt
from airflow.sdk import DAG
from paimon_airflow.operators.maintenance import PaimonCreateTagOperator
from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

with DAG("ledger_dag_run", schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)) as dag:
    tags = PaimonCreateTagOperator.partial(task_id="tag", tag_name="t1", snapshot_time=None).expand(
        table=["db.a", "db.b"]
    )
    expire = PaimonSparkJobOperator(
        task_id="expire", job="expire_snapshots", table="db.a", job_args=["--retain-max", "1", "--retain-min", "1"]
    )
    tags >> expire
"""


def test_dag_run_records_each_task_instance(
    airflow_db: None, paimon_warehouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "ledger_dag_run.py").write_text(DAG_FILE)
    monkeypatch.setenv(
        "AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST",
        json.dumps(
            [
                {
                    "name": "ledger_test",
                    "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
                    "kwargs": {"path": str(bundle), "refresh_interval": 0},
                }
            ]
        ),
    )
    monkeypatch.setenv("PAIMON_LEDGER_SPOOL", str(tmp_path / "spool"))
    forget_cached_existence()
    catalog = FileSystemCatalog(paimon_warehouse)
    for name in ("db.a", "db.b"):
        small_table(catalog, name)
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(bundle), bundle_path=bundle, bundle_name="ledger_test")
    assert bag.import_errors == {}
    dag = bag.dags["ledger_dag_run"]
    run: Any = dag.test(logical_date=dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
    assert run.state == "success"
    got = sorted(
        (
            r["table_name"],
            r["action"],
            r["status"],
            r["entry_point"],
            r["dag_id"],
            r["run_id"],
            r["task_id"],
            r["map_index"],
            r["try_number"],
        )
        for r in ledger_rows(catalog)
    )
    assert got == [
        ("db.a", "create_tag", "success", "airflow", "ledger_dag_run", run.run_id, "tag", 0, 1),
        ("db.a", "expire_snapshots", "success", "spark_job", "ledger_dag_run", run.run_id, "expire", -1, 1),
        ("db.b", "create_tag", "success", "airflow", "ledger_dag_run", run.run_id, "tag", 1, 1),
    ]
