# syntax=docker/dockerfile:1
# Spark standalone master and workers with this project installed, so executors' Python workers
# import paimon_core / spark_jobs / pyspark_paimon from site-packages (not from a driver's cwd).
# The image of the spark-master and spark-worker services of docker/compose.yaml. Build from
# the repository root:
#   docker build -f docker/spark.Dockerfile -t paimon-spark .
FROM python:3.11-slim-bookworm

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps tini \
    && rm -rf /var/lib/apt/lists/*

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYSPARK_PYTHON=python3 \
    SPARK_WORKER_DIR=/opt/spark/work
RUN useradd --create-home --uid 185 --gid 0 --home-dir /opt/spark spark \
    && mkdir -p /opt/spark/work \
    && chown -R spark:0 /opt/spark

WORKDIR /opt/paimon
# Only what executors need (core, spark, s3), at the lock file's exact versions (--constraint):
# the same Python, pyarrow and pyspark as the driver in the Airflow image.
COPY requirements-lock.txt pyproject.toml README.md pyspark_paimon.py ./
COPY paimon_core ./paimon_core
COPY spark_jobs ./spark_jobs
COPY plugins ./plugins
RUN python -m pip install --no-cache-dir --constraint requirements-lock.txt ".[spark,s3]"
COPY docker/entrypoint.sh ./docker/entrypoint.sh

USER 185
WORKDIR /opt/spark
# 7077: master RPC; 8080: master UI; 8081: worker UI
EXPOSE 7077 8080 8081
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/paimon/docker/entrypoint.sh"]
CMD ["spark-master"]
