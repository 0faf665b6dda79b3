"""Fixtures for the Spark integration tests: ONE local SparkSession for the whole test session.

* ``spark``: ``local[2,4]`` (2 threads; up to 4 attempts per task, so failure-injection tests see
  retries: in plain ``local[2]`` Spark ignores ``spark.task.maxFailures``), UI off, 4 shuffle
  partitions, quiet log4j, created through ``spark_jobs.common.session.get_spark`` (which
  registers the ``paimon`` source and enables Python filter pushdown).
* ``wh``: a fresh warehouse directory under ``tmp_path``.
* ``pypaimon`` (tests/fixtures/peers.py, shared with the unit tests): the official pypaimon in its own venv; a missing
  peer venv fails like the interop suite (``PAIMON_ALLOW_MISSING_PEERS=1`` skips instead).

Every test in this directory is marked ``integration``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


_HERE = Path(__file__).resolve().parent

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tsm.name = org.apache.spark.scheduler.TaskSetManager
logger.tsm.level = off
logger.writer.name = org.apache.spark.sql.execution.datasources.v2
logger.writer.level = off
"""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    from spark_jobs.common.session import SessionConfig, get_spark

    base = tmp_path_factory.mktemp("spark")
    log4j = base / "log4j2.properties"
    log4j.write_text(_LOG4J)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    session = get_spark(
        SessionConfig(
            app_name="paimon-integration-tests",
            master="local[2,4]",
            conf={
                "spark.ui.enabled": "false",
                "spark.sql.shuffle.partitions": "4",
                "spark.task.maxFailures": "4",
                "spark.local.dir": str(base / "local"),
                "spark.sql.warehouse.dir": str(base / "spark-warehouse"),
                "spark.driver.extraJavaOptions": java_opts,
                "spark.executor.extraJavaOptions": java_opts,
            },
        )
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def wh(tmp_path: Path) -> str:
    path = tmp_path / "warehouse"
    path.mkdir()
    return str(path)
