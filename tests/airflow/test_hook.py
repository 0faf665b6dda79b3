"""PaimonHook against a real local warehouse (connections from AIRFLOW_CONN_* variables)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.airflow.conftest import paimon_conn
from tests.airflow.tables import table_with_snapshots


def test_hook_reads_warehouse_and_tables(paimon_warehouse: str) -> None:
    from paimon_airflow.hooks.paimon import PaimonHook

    table_with_snapshots(paimon_warehouse, "db.t", n=2)
    hook = PaimonHook()
    assert hook.warehouse == paimon_warehouse
    assert hook.storage_options == {}
    assert hook.get_catalog().list_databases() == ["db"]
    assert hook.list_tables() == ["db.t"]
    assert hook.get_table("db.t").snapshot_manager.latest_snapshot_id() == 2
    ok, message = hook.test_connection()
    assert ok, message
    assert "1 database" in message


def test_hook_host_and_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from paimon_airflow.hooks.paimon import PaimonHook

    monkeypatch.setenv(
        "AIRFLOW_CONN_PAIMON_S3",
        '{"conn_type": "paimon", "host": "s3://lake/wh", "login": "AK", "password": "SK", '
        '"extra": {"endpoint_url": "http://127.0.0.1:9", "storage_options": {"use_ssl": false, "key": "own"}}}',
    )
    hook = PaimonHook(paimon_conn_id="paimon_s3")
    assert hook.warehouse == "s3://lake/wh"
    # the storage options' own key wins over Login; Password becomes the secret
    assert hook.storage_options == {
        "use_ssl": False,
        "key": "own",
        "secret": "SK",
        "endpoint_url": "http://127.0.0.1:9",
    }
    # a local warehouse never gets credentials
    monkeypatch.setenv(
        "AIRFLOW_CONN_PAIMON_LOCAL",
        json.dumps({"conn_type": "paimon", "host": str(tmp_path), "login": "u", "password": "p"}),
    )
    assert PaimonHook(paimon_conn_id="paimon_local").storage_options == {}


def test_test_connection_false(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from paimon_airflow.hooks.paimon import PaimonHook

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_MISSING", paimon_conn(str(tmp_path / "nowhere")))
    ok, message = PaimonHook(paimon_conn_id="paimon_missing").test_connection()
    assert not ok and "does not exist" in message
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_EMPTY", '{"conn_type": "paimon"}')
    ok, message = PaimonHook(paimon_conn_id="paimon_empty").test_connection()
    assert not ok and "names no warehouse" in message


def test_connection_type_registered_with_airflow() -> None:
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    pm = ProvidersManager()
    assert "paimon-py" in pm.providers
    hook_info = ProvidersManagerTaskRuntime().hooks["paimon"]
    assert hook_info is not None and hook_info.hook_class_name == "paimon_airflow.hooks.paimon.PaimonHook"
    assert "extra__paimon__warehouse" in pm.connection_form_widgets
    assert pm.field_behaviours["paimon"]["relabeling"]["host"] == "Warehouse URL"
