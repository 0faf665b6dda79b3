"""Airflow test setup: a private AIRFLOW_HOME with SQLite, this repo's dags/ and plugins/.

Everything is set in the environment when this conftest is imported, *before* anything imports
airflow (Airflow reads its configuration once, on first import). The metadata DB is created only
for the tests that need it (the ``airflow_db`` fixture: DagBag, ``dag.test()``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS_FOLDER = REPO / "dags"
PLUGINS_FOLDER = REPO / "plugins"

assert "airflow" not in sys.modules, "airflow was imported before tests/airflow/conftest.py configured it"

_HOME = Path(tempfile.mkdtemp(prefix="paimon-airflow-home-"))
os.environ.update(
    {
        "AIRFLOW_HOME": str(_HOME),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{_HOME / 'airflow.db'}",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "True",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        # The Spark connection of the Spark job operators: local Spark, 2 cores.
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
    }
)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


def paimon_conn(warehouse: str, **extra: object) -> str:
    """An ``AIRFLOW_CONN_*`` value of a ``paimon`` connection to ``warehouse``."""
    return json.dumps({"conn_type": "paimon", "extra": {"warehouse": warehouse, **extra}})


@pytest.fixture
def paimon_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh local warehouse with database ``db``, as connection ``paimon_default``."""
    from paimon_core import FileSystemCatalog

    wh = str(tmp_path / "wh")
    FileSystemCatalog(wh).create_database("db")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", paimon_conn(wh))
    return wh


@pytest.fixture(scope="session")
def airflow_db() -> Iterator[None]:
    """The SQLite metadata DB, created once per session."""
    from airflow.utils import db

    db.initdb()
    yield
