"""The DAG folder: DagBag integrity, no I/O at parse time, and registry checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.airflow.conftest import DAGS_FOLDER, PLUGINS_FOLDER

DAG_IDS = {
    "paimon_compact_database",
    "paimon_compaction",
    "paimon_expire_snapshots",
    "paimon_ingest",
    "paimon_maintenance",
    "paimon_merge_into",
    "paimon_on_new_snapshot",
    "paimon_remove_orphan_files",
    "paimon_reset_consumer",
    "paimon_rollback",
    "paimon_manage_tags",
    "paimon_clear_consumers",
    "paimon_remove_unexisting_files",
    "paimon_table_admin",
    "paimon_tags",
}


@pytest.fixture(scope="module")
def dagbag():  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import BundleDagBag

    # as the dag-processor and task runner load them: the bundle (dags/) goes on sys.path
    return BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)


def test_dagbag_loads_every_dag(dagbag) -> None:  # type: ignore[no-untyped-def]
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == DAG_IDS
    for dag in dagbag.dags.values():
        assert "paimon" in dag.tags
        assert dag.max_active_runs == 1 or dag.dag_id == "paimon_tags"
        for t in dag.tasks:
            assert t.retries is not None


def test_maintenance_plans_then_runs_batches(dagbag) -> None:  # type: ignore[no-untyped-def]
    """One plan task; light batches and Spark groups mapped over what it found, named by label."""
    dag = dagbag.dags["paimon_maintenance"]
    assert dag.get_task("plan").downstream_task_ids == {"decide", "batches", "spark_groups"}
    assert dag.get_task("decide").downstream_task_ids == {"approve", "go"}
    assert dag.get_task("batches").downstream_task_ids == {"maintain"}
    assert dag.get_task("spark_groups").downstream_task_ids == {"compact_on_spark"}
    assert dag.get_task("compact_on_spark").pool == "paimon_spark"
    assert dag.get_task("maintain").map_index_template == "{{ task.batch['label'] }}"
    assert dag.get_task("compact_on_spark").map_index_template == "{{ task.group['label'] }}"
    assert dag.get_task("lag_alerts").upstream_task_ids == {"maintain", "compact_on_spark"}
    # the trigger form's default is no mode: a manual run plans, a scheduled one applies
    assert dag.params["mode"] is None


def test_scheduled_dags_backfill(dagbag) -> None:  # type: ignore[no-untyped-def]
    from airflow.timetables.interval import CronDataIntervalTimetable

    for dag_id in ("paimon_ingest", "paimon_tags"):
        dag = dagbag.dags[dag_id]
        # data intervals, backfilled deliberately (no catchup: unpausing releases no missed day)
        assert dag.catchup is False
        assert isinstance(dag.timetable, CronDataIntervalTimetable)
    for dag_id in (
        "paimon_rollback",
        "paimon_reset_consumer",
        "paimon_manage_tags",
        "paimon_clear_consumers",
        "paimon_remove_unexisting_files",
    ):
        assert type(dagbag.dags[dag_id].timetable).__name__ == "NullTimetable"


def test_dag_files_do_no_io_at_parse() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.airflow.parse_probe", str(DAGS_FOLDER)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    print("\nparse time per DAG file (s):", {name: r["seconds"] for name, r in results.items()})
    assert {d for r in results.values() for d in r["dag_ids"]} == DAG_IDS
    for name, r in results.items():
        assert r["error"] is None, (name, r)
        assert r["refused"] == [], (name, r["refused"])
        assert r["heavy_imports"] == [], (name, r["heavy_imports"])
        assert r["seconds"] < 2.0, (name, r["seconds"])


def test_parse_probe_catches_io(tmp_path: Path) -> None:
    """Negative control: a DAG file that lists a directory at parse time is caught."""
    (tmp_path / "paimon_bad.py").write_text(
        "import os\nfrom airflow.sdk import DAG\nFILES = os.listdir('/')\nwith DAG(dag_id='paimon_bad', schedule=None):\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tests.airflow.parse_probe", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])["paimon_bad.py"]
    assert result["refused"] == ["listdir(/)"] and "PermissionError" in str(result["error"])


def test_registry_selects_like_compact_database() -> None:
    sys.path.insert(0, str(DAGS_FOLDER))
    from _paimon_registry import Registry, TableSettings

    reg = Registry(include=r"db\..*", exclude=r".*_tmp", overrides={"db.b": {"compaction": "full"}})
    assert reg.select_tables(["db.a", "db.a_tmp", "other.x", "db.b"]) == ["db.a", "db.b"]
    assert reg.settings_for("db.b").compaction == "full"
    assert reg.settings_for("db.a") == TableSettings()
    with pytest.raises(ValueError, match="compaction"):
        TableSettings.parse({"compaction": "weekly"}, where="t")
    with pytest.raises(ValueError, match="orphan_min_age_days"):
        TableSettings.parse({"orphan_min_age_days": 0}, where="t")


def test_retry_delay_from_the_environment(dagbag) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    sys.path.insert(0, str(DAGS_FOLDER))
    from _paimon_common import retry_delay

    assert retry_delay({}) == retry_delay({"PAIMON_RETRY_DELAY_SECONDS": " "}) == dt.timedelta(seconds=30)
    assert retry_delay({"PAIMON_RETRY_DELAY_SECONDS": "2.5"}) == dt.timedelta(seconds=2.5)
    for bad in ("soon", "-1", "nan"):
        with pytest.raises(ValueError, match="PAIMON_RETRY_DELAY_SECONDS"):
            retry_delay({"PAIMON_RETRY_DELAY_SECONDS": bad})
    task = dagbag.dags["paimon_ingest"].get_task("ingest__db__events")  # the DAGs take it
    assert task.retry_delay == retry_delay(os.environ) and task.retries == 2


def test_registry_compaction_and_watch_settings() -> None:
    sys.path.insert(0, str(DAGS_FOLDER))
    from _paimon_registry import TableSettings, WatchSettings, _parse

    assert TableSettings.parse({"partition_idle_time": "12 h"}, where="t").partition_idle_time == "12 h"
    with pytest.raises(ValueError, match="partition_idle_time"):
        TableSettings.parse({"partition_idle_time": "a week"}, where="t")
    assert TableSettings().partition_expiration_time is None  # partition expiry: off unless configured
    assert TableSettings.parse({"partition_expiration_time": "30 d"}, where="t").partition_expiration_time == "30 d"
    with pytest.raises(ValueError, match="partition_expiration_time"):
        TableSettings.parse({"partition_expiration_time": "a month"}, where="t")
    reg = _parse({"watch": {"tables": ["db.a"], "max_compaction_debt": 0.5}, "ingest": [{"table": "db.i", "source": "s"}]})
    assert reg.watch == WatchSettings(tables=("db.a",), poll_interval_seconds=60.0, max_compaction_debt=0.5)
    for bad in ({"tables": ["no_dot"]}, {"max_compaction_debt": 0}, {"poll": 1}):
        with pytest.raises(ValueError, match="watch"):
            _parse({"watch": bad})


def test_plugins_folder_loads_the_plugin_only() -> None:
    """Airflow imports each .py of the plugins folder by bare file name; the .airflowignore keeps
    it to paimon_plugin.py, so no module named "paimon" or "maintenance" shadows anything."""
    from airflow import plugins_manager

    plugins, errors = plugins_manager._get_plugins()
    assert errors == {}
    assert "paimon" in [p.name for p in plugins]
    # (the test suite itself has a package named "maintenance": only modules loaded from plugins/ count)
    shadowing = {
        name
        for name in ("paimon", "maintenance", "spark_job", "__init__")
        if name in sys.modules and str(PLUGINS_FOLDER) in str(getattr(sys.modules[name], "__file__", "") or "")
    }
    assert not shadowing


def test_dagbag_of_this_folder_under_another_dags_folder(tmp_path: Path) -> None:
    """A DagBag of dags/ loaded where Airflow's DAGS_FOLDER is another folder (so dags/ is not on
    sys.path) still imports every DAG: the files find their shared modules themselves."""
    code = (
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"b = DagBag(dag_folder={str(DAGS_FOLDER)!r})\n"
        "assert b.import_errors == {}, b.import_errors\n"
        "print(len(b.dag_ids))\n"
    )
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path),
        "AIRFLOW__CORE__DAGS_FOLDER": str(tmp_path / "elsewhere"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PYTHONPATH": "",
    }
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.strip().splitlines()[-1]) == len(DAG_IDS)
