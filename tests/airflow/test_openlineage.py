"""OpenLineage: the Paimon operators report their tables (namespace = warehouse, name = db.table)
with the snapshot ids before and after, through the real OpenLineage listener and file transport."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import REPO
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import table_with_snapshots


@pytest.fixture
def lineage_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """OpenLineage on, to a file transport, for the task events of this test only.

    Airflow's plugins (the provider's included) load first, while OpenLineage is still off, so no
    listener of theirs outlives the test; the test's own listener goes into the task SDK's
    listener manager and out again.
    """
    from airflow.listeners.listener import get_listener_manager as core_listener_manager
    from airflow.providers.openlineage.plugins.listener import OpenLineageListener
    from airflow.sdk import plugins_manager as sdk_plugins
    from airflow.sdk.lineage import HookLineageReader, get_hook_lineage_collector
    from airflow.sdk.listener import get_listener_manager

    manager = get_listener_manager()
    for lm in (manager, core_listener_manager()):
        assert not any(isinstance(p, OpenLineageListener) for p in lm.pm.get_plugins())
    path = tmp_path / "lineage.jsonl"
    monkeypatch.setenv(
        "AIRFLOW__OPENLINEAGE__TRANSPORT",
        json.dumps({"type": "file", "log_file_path": str(path), "append": True}),
    )
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__NAMESPACE", "paimon_tests")
    # emit in a thread of the task process, not a fork of pytest
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD", "True")
    # hook lineage: a fresh collector with a reader (as the provider's plugin registers when on)
    monkeypatch.setattr(sdk_plugins, "get_hook_lineage_readers_plugins", lambda: [HookLineageReader])
    get_hook_lineage_collector.cache_clear()
    listener = OpenLineageListener()
    manager.add_listener(listener)
    try:
        yield path
    finally:  # no listener or collected hook lineage left for the other tests
        manager.pm.unregister(listener)
        get_hook_lineage_collector.cache_clear()


def _serialize(dag: Any) -> None:
    """Write a DAG built in a test to the metadata DB (``dag.test()`` runs only serialized DAGs)."""
    from types import SimpleNamespace

    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import sync_bag_to_db

    DagBundlesManager().sync_bundles_to_db()  # the "dags-folder" bundle row the DAG belongs to
    bag = SimpleNamespace(
        dags={dag.dag_id: dag}, import_errors={}, bundle_path=None, dag_warnings=set(), file_last_changed={}
    )
    sync_bag_to_db(bag, "dags-folder", None)  # type: ignore[arg-type]


def _events(path: Path, event_type: str) -> dict[str, dict[str, Any]]:
    """The emitted events of one type, by job name (``dag.task``): one per task."""
    assert path.exists(), "no OpenLineage event was written"
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["eventType"] == event_type:
            name = event["job"]["name"]
            assert name not in out, f"two {event_type} events for {name}"
            out[name] = event
    return out


def _only(datasets: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(datasets) == 1, datasets
    return datasets[0]


def test_warehouse_namespace() -> None:
    from paimon_airflow.utils.lineage import warehouse_namespace

    assert warehouse_namespace("/data/wh/") == "file:///data/wh"
    assert warehouse_namespace("file:/data/wh") == "file:///data/wh"
    assert warehouse_namespace("file:///data/./wh") == "file:///data/wh"
    assert warehouse_namespace("local:///data/wh") == "file:///data/wh"
    assert warehouse_namespace("s3a://Lake/wh/") == "s3://lake/wh"  # hostnames are case-insensitive
    assert warehouse_namespace("s3://key:secret@lake") == "s3://lake"  # never credentials
    assert warehouse_namespace("hdfs://nn:8020/wh") == "hdfs://nn:8020/wh"
    assert warehouse_namespace("rel/wh") == "file://" + str(Path("rel/wh").resolve())
    with pytest.raises(ValueError, match="empty"):
        warehouse_namespace(" ")


@pytest.mark.integration
def test_dag_run_emits_paimon_datasets_with_snapshot_ids(
    airflow_db: None, paimon_warehouse: str, lineage_file: Path
) -> None:
    from airflow.sdk import DAG

    from paimon_airflow.operators.maintenance import (
        PaimonCreateTagOperator,
        PaimonExpireSnapshotsOperator,
        PaimonRemoveOrphanFilesOperator,
        PaimonRollbackOperator,
    )
    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    table_with_snapshots(paimon_warehouse, n=5)  # db.t, snapshots 1..5
    table_with_snapshots(paimon_warehouse, "db.c", n=6)  # six small files: worth compacting
    with DAG("paimon_lineage", schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) as dag:
        tag = PaimonCreateTagOperator(task_id="tag", table="db.t", tag_name="keep", snapshot_id=2)
        expire = PaimonExpireSnapshotsOperator(task_id="expire", table="db.t", retain_max=2, retain_min=1)
        rollback = PaimonRollbackOperator(task_id="rollback", table="db.t", snapshot_id=4, dry_run=False)
        orphans = PaimonRemoveOrphanFilesOperator(
            task_id="orphans", table="db.t", older_than="2026-01-01T00:00:00+00:00"
        )  # dry run by default
        PaimonCompactOperator(task_id="compact", table="db.c", compact_strategy="full", mode="local")
        tag >> expire >> rollback >> orphans
    _serialize(dag)
    run = dag.test(logical_date=dt.datetime(2026, 1, 2, tzinfo=dt.UTC))
    assert run.state == "success"

    namespace = "file://" + paimon_warehouse
    complete = _events(lineage_file, "COMPLETE")
    starts = _events(lineage_file, "START")
    assert {f"paimon_lineage.{t}" for t in ("tag", "expire", "rollback", "orphans", "compact")} <= set(complete)
    # on start: the table, no version yet
    started = _only(starts["paimon_lineage.expire"]["outputs"])
    assert (started["namespace"], started["name"]) == (namespace, "db.t")
    assert "version" not in started["facets"]

    tagged = _only(complete["paimon_lineage.tag"]["outputs"])
    assert (tagged["namespace"], tagged["name"]) == (namespace, "db.t")
    paimon = tagged["facets"]["paimon"]
    assert paimon["action"] == "create_tag" and paimon["committed_snapshot_ids"] == []
    assert (paimon["previous_snapshot_id"], paimon["snapshot_id"]) == (5, 5)
    assert paimon["result"]["tag_name"] == "keep" and paimon["result"]["snapshot_id"] == 2
    assert tagged["facets"]["version"]["datasetVersion"] == "5"
    assert tagged["facets"]["storage"]["storageLayer"] == "paimon"
    assert [f["name"] for f in tagged["facets"]["schema"]["fields"]] == ["id", "v"]

    expired = _only(complete["paimon_lineage.expire"]["outputs"])
    assert complete["paimon_lineage.expire"]["inputs"] == []
    assert expired["facets"]["paimon"]["result"]["expired_snapshot_ids"] == [1, 2, 3]
    assert expired["facets"]["version"]["datasetVersion"] == "5"
    assert "lifecycleStateChange" not in expired["facets"]

    rolled = _only(complete["paimon_lineage.rollback"]["outputs"])
    paimon = rolled["facets"]["paimon"]
    assert (paimon["previous_snapshot_id"], paimon["snapshot_id"]) == (5, 4)
    assert paimon["result"]["deleted_snapshot_ids"] == [5]
    assert rolled["facets"]["version"]["datasetVersion"] == "4"
    assert rolled["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"

    # a dry run writes nothing: the table is an input only
    orphan_event = complete["paimon_lineage.orphans"]
    assert orphan_event["outputs"] == []
    read = _only(orphan_event["inputs"])
    assert read["name"] == "db.t" and read["facets"]["paimon"]["dry_run"] is True
    assert read["facets"]["version"]["datasetVersion"] == "4"

    # compaction reads the table at 6 and writes the COMPACT snapshot 7
    compacted = complete["paimon_lineage.compact"]
    source = _only(compacted["inputs"])
    target = _only(compacted["outputs"])
    assert (source["namespace"], source["name"]) == (target["namespace"], target["name"]) == (namespace, "db.c")
    assert source["facets"]["version"]["datasetVersion"] == "6"
    assert target["facets"]["version"]["datasetVersion"] == "7"
    paimon = target["facets"]["paimon"]
    assert paimon["committed_snapshot_ids"] == [7] and paimon["commit_kind"] == "COMPACT"
    assert paimon["previous_snapshot_id"] == 6 and paimon["action"] == "compact"
    table = FileSystemCatalog(paimon_warehouse).get_table("db.c")
    assert table.snapshot_manager.latest_snapshot_id() == 7


@pytest.mark.integration
def test_failed_task_emits_fail_event_with_its_table(
    airflow_db: None, paimon_warehouse: str, lineage_file: Path
) -> None:
    from airflow.sdk import DAG

    from paimon_airflow.operators.maintenance import PaimonRollbackOperator

    table_with_snapshots(paimon_warehouse, n=2)
    with DAG("paimon_lineage_fail", schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) as dag:
        PaimonRollbackOperator(task_id="rollback", table="db.t", snapshot_id=9, dry_run=False)  # no snapshot 9
    _serialize(dag)
    run = dag.test(logical_date=dt.datetime(2026, 1, 2, tzinfo=dt.UTC))
    assert run.state == "failed"
    failed = _events(lineage_file, "FAIL")["paimon_lineage_fail.rollback"]
    out = _only(failed["outputs"])
    assert (out["namespace"], out["name"]) == ("file://" + paimon_warehouse, "db.t")
    assert out["facets"]["paimon"]["previous_snapshot_id"] == 2
    assert out["facets"]["paimon"]["committed_snapshot_ids"] == []
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.latest_snapshot_id() == 2


@pytest.mark.integration
def test_hook_lineage_of_a_task_using_the_hook(
    airflow_db: None, paimon_warehouse: str, lineage_file: Path
) -> None:
    from airflow.sdk import DAG, task

    from paimon_airflow.hooks.paimon import PaimonHook

    source = table_with_snapshots(paimon_warehouse, n=1)
    FileSystemCatalog(paimon_warehouse).create_table("db.copy", source.arrow_schema)
    with DAG("paimon_hook_lineage", schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) as dag:

        @task
        def copy() -> int:
            hook = PaimonHook()
            rows = hook.get_table("db.t").to_arrow()
            hook.get_table("db.copy", for_write=True).write_arrow(rows)
            return rows.num_rows

        copy()
    _serialize(dag)
    run = dag.test(logical_date=dt.datetime(2026, 1, 2, tzinfo=dt.UTC))
    assert run.state == "success"
    event = _events(lineage_file, "COMPLETE")["paimon_hook_lineage.copy"]
    namespace = "file://" + paimon_warehouse
    assert [(d["namespace"], d["name"]) for d in event["inputs"]] == [(namespace, "db.t")]
    assert [(d["namespace"], d["name"]) for d in event["outputs"]] == [(namespace, "db.copy")]
    assert FileSystemCatalog(paimon_warehouse).get_table("db.copy").to_arrow().num_rows == 10


def _to_json(lineage: Any) -> dict[str, Any]:
    """An ``OperatorLineage`` as the JSON OpenLineage sends."""
    from openlineage.client.serde import Serde

    return {
        "inputs": [json.loads(Serde.to_json(d)) for d in lineage.inputs],
        "outputs": [json.loads(Serde.to_json(d)) for d in lineage.outputs],
    }


@pytest.mark.integration
def test_spark_ingest_lineage_through_spark_submit(paimon_warehouse: str, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from paimon_airflow.operators.spark_job import PaimonIngestOperator

    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(5), pa.int64()), "v": [f"v{i}" for i in range(5)]}), src / "p.parquet")
    args = ["--source", str(src), "--logical-date", "{{ ds }}", "--num-partitions", "1"]
    op = PaimonIngestOperator(
        task_id="ingest", table="db.events", job_args=args, conf={"spark.sql.shuffle.partitions": "2"}
    )
    ctx = task_context("2026-01-01")
    first = render_and_execute(op, ctx)
    assert first["status"] == "ok" and first["snapshot_id"] == 1, first
    lineage = _to_json(op.get_openlineage_facets_on_complete(None))
    assert lineage["inputs"] == []
    out = _only(lineage["outputs"])
    assert (out["namespace"], out["name"]) == ("file://" + paimon_warehouse, "db.events")
    paimon = out["facets"]["paimon"]
    assert paimon["action"] == "ingest" and paimon["committed_snapshot_ids"] == [1]
    assert paimon["commit_kind"] == "APPEND" and paimon.get("previous_snapshot_id") is None  # no table before
    assert out["facets"]["version"]["datasetVersion"] == "1"
    assert out["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 5
    assert "dt" in [f["name"] for f in out["facets"]["schema"]["fields"]]

    retry = render_and_execute(op, ctx)  # the commit landed: nothing new, same snapshot reported
    assert retry["already_committed"] is True
    again = _only(_to_json(op.get_openlineage_facets_on_complete(None))["outputs"])
    assert again["facets"]["version"]["datasetVersion"] == "1"
    assert again["facets"]["paimon"]["previous_snapshot_id"] == 1
    assert "lifecycleStateChange" not in again["facets"] and "outputStatistics" not in again["outputFacets"]


def test_metadata_job_lineage(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    table_with_snapshots(paimon_warehouse, n=4)
    op = PaimonSparkJobOperator(
        task_id="expire", job="expire_snapshots", table="db.t", job_args=["--retain-max", "2", "--retain-min", "1"]
    )
    start = _to_json(op.get_openlineage_facets_on_start())
    assert _only(start["outputs"])["name"] == "db.t"
    render_and_execute(op, task_context())
    out = _only(_to_json(op.get_openlineage_facets_on_complete(None))["outputs"])
    assert out["namespace"] == "file://" + paimon_warehouse
    assert out["facets"]["paimon"]["result"]["expired_snapshot_ids"] == [1, 2]
    assert out["facets"]["paimon"]["committed_snapshot_ids"] == []
    assert out["facets"]["version"]["datasetVersion"] == "4"


def test_compact_database_lineage_names_each_compacted_table(paimon_warehouse: str) -> None:
    from paimon_airflow.operators.compact_database import PaimonCompactDatabaseOperator

    table_with_snapshots(paimon_warehouse, "db.many", n=6)  # six small files: compacted
    table_with_snapshots(paimon_warehouse, "db.one", n=1)  # nothing to compact
    op = PaimonCompactDatabaseOperator(task_id="cd", including_databases="db", compact_strategy="full", execution="local")
    assert _to_json(op.get_openlineage_facets_on_start()) == {"inputs": [], "outputs": []}  # not known yet
    result = render_and_execute(op, task_context())
    assert {t["table"]: t["status"] for t in result["tables"]} == {"db.many": "ok", "db.one": "ok"}, result
    lineage = _to_json(op.get_openlineage_facets_on_complete(None))
    namespace = "file://" + paimon_warehouse
    assert [(d["namespace"], d["name"]) for d in lineage["inputs"]] == [(namespace, "db.many")]
    out = _only(lineage["outputs"])
    assert (out["namespace"], out["name"]) == (namespace, "db.many")
    assert out["facets"]["version"]["datasetVersion"] == "7"
    assert out["facets"]["paimon"]["committed_snapshot_ids"] == [7]
    assert out["facets"]["paimon"]["commit_kind"] == "COMPACT"
    assert FileSystemCatalog(paimon_warehouse).get_table("db.many").snapshot_manager.latest_snapshot_id() == 7


def test_operators_import_and_run_without_openlineage(paimon_warehouse: str) -> None:
    """Without OpenLineage (its client and the provider's API unimportable) the operators run."""
    table_with_snapshots(paimon_warehouse, n=3)
    code = """
import sys
for name in ("openlineage", "airflow.providers.openlineage.extractors"):
    sys.modules[name] = None  # "not installed" (the client, the provider's lineage API)
from paimon_airflow.operators.maintenance import PaimonExpireSnapshotsOperator
from tests.airflow.context import render_and_execute, task_context
op = PaimonExpireSnapshotsOperator(task_id="e", table="db.t", retain_max=1, retain_min=1)
print(render_and_execute(op, task_context())["expired_snapshot_ids"])
try:
    op.get_openlineage_facets_on_complete(None)
except ImportError:
    print("no lineage")
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ["[1, 2]", "no lineage"], proc.stdout  # after Airflow's logs
