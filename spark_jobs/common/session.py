"""The jobs' SparkSession: created only inside a job's ``main`` (never at import).

Master, driver memory and extra Spark conf come from flags, else from the environment:

* ``SPARK_MASTER`` (default ``local[*]``; ignored under ``spark-submit``, whose ``--master`` wins),
* ``SPARK_DRIVER_MEMORY`` (only effective before the JVM starts, i.e. not under ``spark-submit``),
* ``PAIMON_SPARK_CONF``: extra ``key=value`` pairs separated by whitespace or commas.

Every session gets the ``paimon`` data source registered and Python filter pushdown on (our
reader pushes filters; Spark fails reads of such a source when the flag is off), and Python
workers forked from :mod:`spark_jobs.daemon` (paimon_core and pyspark imported once, before
the fork) unless ``spark.python.daemon.module`` is set by the caller, ``PAIMON_SPARK_CONF`` or
``spark-submit --conf``.

Executors of a job on an ``s3://`` warehouse get the driver's S3 settings from the environment
(:data:`S3_EXECUTOR_ENV`: the credentials the Airflow operator puts there from its connection, the
endpoint, the region) as ``spark.executorEnv.*``, unless the caller or ``spark-submit --conf`` set
that variable: on a cluster whose workers carry no credentials the executors' writes would fail
otherwise. Never on a command line; Spark's default ``spark.redaction.regex`` hides the secret and
the session token in its UI, event logs and REST API.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "DAEMON_MODULE",
    "DAEMON_MODULE_CONF",
    "S3_EXECUTOR_ENV",
    "SessionConfig",
    "get_spark",
    "parse_conf_pairs",
    "s3_executor_env",
    "session_conf",
    "under_spark_submit",
]

logger = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
#: Conf every job session gets unless overridden.
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}
#: Spark's conf naming the Python module its worker daemon runs; ours preloads paimon_core.
DAEMON_MODULE_CONF = "spark.python.daemon.module"
DAEMON_MODULE = "spark_jobs.daemon"
#: What botocore (s3fs) reads from the environment that a driver on an ``s3://`` warehouse hands
#: to its executors: credentials, endpoint, region.
S3_EXECUTOR_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)
_S3_SCHEMES = ("s3", "s3a", "s3n")


@dataclass(frozen=True)
class SessionConfig:
    """How to build the session (flags first, then environment, then defaults)."""

    app_name: str = "paimon-spark-job"
    master: str | None = None
    driver_memory: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    #: environment variables executors get as ``spark.executorEnv.*`` (unless set otherwise)
    executor_env: Mapping[str, str] = field(default_factory=dict)


def parse_conf_pairs(items: list[str] | str | None) -> dict[str, str]:
    """``["k=v", ...]`` or ``"k=v k2=v2"`` / ``"k=v,k2=v2"`` -> dict; raises ValueError on a bad pair."""
    if not items:
        return {}
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def s3_executor_env(warehouse: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The :data:`S3_EXECUTOR_ENV` variables set in ``environ`` (default: this process's) when
    ``warehouse`` is on S3; empty for any other warehouse."""
    scheme = warehouse.split("://", 1)[0].lower() if "://" in warehouse else ""
    if scheme not in _S3_SCHEMES:
        return {}
    env = os.environ if environ is None else environ
    return {k: env[k] for k in S3_EXECUTOR_ENV if env.get(k)}


def under_spark_submit() -> bool:
    """True when this Python process was launched by ``spark-submit`` (the JVM already runs)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_spark(config: SessionConfig) -> SparkSession:
    """Create (or get) the session, register the ``paimon`` source, and return it."""
    from pyspark.sql import SparkSession

    from spark_jobs.datasource.dynamic_options import enable_session_options

    # Spark's Python workers must run this interpreter (it has paimon_core and spark_jobs).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(config.app_name)
    master = config.master or (
        None if under_spark_submit() else os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
    )
    if master:
        builder = builder.master(master)
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    memory = config.driver_memory or os.environ.get("SPARK_DRIVER_MEMORY")
    if memory:
        if under_spark_submit():
            logger.warning("--driver-memory %s ignored under spark-submit (pass it to spark-submit)", memory)
        else:
            builder = builder.config("spark.driver.memory", memory)
    for k, v in session_conf(config).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    enable_session_options(spark)  # registers the source with session (dynamic) options
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    logger.info("Spark %s session on %s", spark.version, spark.sparkContext.master)
    return spark


def session_conf(config: SessionConfig) -> dict[str, str]:
    """The conf ``get_spark`` sets: defaults, then ``PAIMON_SPARK_CONF``, then ``config.conf``;
    ``spark.python.daemon.module`` is ours unless set there or by ``spark-submit --conf``."""
    conf = {**DEFAULT_CONF, **parse_conf_pairs(os.environ.get("PAIMON_SPARK_CONF")), **dict(config.conf)}
    if DAEMON_MODULE_CONF not in conf and not _submitted_conf_has(DAEMON_MODULE_CONF):
        conf[DAEMON_MODULE_CONF] = DAEMON_MODULE
    for name, value in config.executor_env.items():
        key = f"spark.executorEnv.{name}"
        if key not in conf and not _submitted_conf_has(key):
            conf[key] = value
    return conf


def _submitted_conf_has(key: str) -> bool:
    """Whether ``spark-submit`` (the JVM this process was launched by) already has ``key`` set."""
    if not under_spark_submit():
        return False
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to the submitting JVM (getOrCreate would too)
    return bool(SparkConf().contains(key))
