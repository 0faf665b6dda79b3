"""A job on an ``s3://`` warehouse hands its S3 environment to the executors (``spark.executorEnv.*``).

The Airflow operator puts the connection's credentials into the driver's environment only; on a
cluster whose workers carry none, the executors' writes would fail. These check the session conf
(no Spark); ``tests/distributed/test_full_topology.py`` checks what executors on a standalone
cluster actually see.
"""

from __future__ import annotations

import pytest

from spark_jobs.common.args import JobConfig
from spark_jobs.common.session import S3_EXECUTOR_ENV, SessionConfig, s3_executor_env, session_conf

ENV = {
    "AWS_ACCESS_KEY_ID": "AKIA-conn",
    "AWS_SECRET_ACCESS_KEY": "conn-secret",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
    "AWS_SESSION_TOKEN": "",  # blank: not forwarded
    "HOME": "/root",  # not an S3 setting: never forwarded
}


@pytest.mark.parametrize("warehouse", ["s3://lake/wh", "S3A://lake/wh", "s3n://lake/wh"])
def test_s3_warehouse_forwards_the_s3_environment(warehouse: str) -> None:
    assert s3_executor_env(warehouse, ENV) == {
        "AWS_ACCESS_KEY_ID": "AKIA-conn",
        "AWS_SECRET_ACCESS_KEY": "conn-secret",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
    }


@pytest.mark.parametrize("warehouse", ["/data/wh", "file:///data/wh", "gs://lake/wh", "memory://wh"])
def test_other_warehouses_forward_nothing(warehouse: str) -> None:
    assert s3_executor_env(warehouse, ENV) == {}


def test_job_config_puts_it_in_the_session_conf_unless_the_user_set_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PAIMON_SPARK_CONF", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    for name in S3_EXECUTOR_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-conn")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "conn-secret")
    own = {"spark.executorEnv.AWS_ACCESS_KEY_ID": "AKIA-mine"}
    config = JobConfig(job="ingest", warehouse="s3://lake/wh", table="db.t", conf=own)
    conf = session_conf(config.session_config())
    assert conf["spark.executorEnv.AWS_SECRET_ACCESS_KEY"] == "conn-secret"
    assert conf["spark.executorEnv.AWS_ACCESS_KEY_ID"] == "AKIA-mine"  # the user's conf wins
    local = JobConfig(job="ingest", warehouse="/data/wh", table="db.t").session_config()
    assert not [k for k in session_conf(local) if k.startswith("spark.executorEnv.")]


def test_spark_submit_conf_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark

    class SubmittedConf:
        def contains(self, key: str) -> bool:
            return key == "spark.executorEnv.AWS_SECRET_ACCESS_KEY"

    monkeypatch.delenv("PAIMON_SPARK_CONF", raising=False)
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # as under spark-submit
    monkeypatch.setattr(pyspark.SparkContext, "_ensure_initialized", classmethod(lambda cls: None))
    monkeypatch.setattr(pyspark, "SparkConf", SubmittedConf)
    conf = session_conf(SessionConfig(executor_env={"AWS_SECRET_ACCESS_KEY": "x", "AWS_ACCESS_KEY_ID": "y"}))
    assert "spark.executorEnv.AWS_SECRET_ACCESS_KEY" not in conf  # spark-submit's value stays
    assert conf["spark.executorEnv.AWS_ACCESS_KEY_ID"] == "y"
