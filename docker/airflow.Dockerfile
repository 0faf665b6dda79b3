# syntax=docker/dockerfile:1
# Airflow with this project: paimon_core, spark_jobs, the provider (plugins/) and the DAGs (dags/).
# The image of the airflow-init, api-server, scheduler, dag-processor and triggerer services of
# docker/compose.yaml. Build from the repository root:
#   docker build -f docker/airflow.Dockerfile -t paimon-airflow .
FROM python:3.11-slim-bookworm

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Java: the LocalExecutor's tasks run spark-submit in client mode (the driver lives here).
# tini: forwards signals and reaps the task processes. procps: ps/kill for on_kill.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps tini \
    && rm -rf /var/lib/apt/lists/*

ENV AIRFLOW_HOME=/opt/airflow \
    PAIMON_HOME=/opt/paimon \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# the logs and auth directories exist in the image so that named volumes inherit their owner
RUN useradd --create-home --uid 50000 --gid 0 --home-dir /opt/airflow airflow \
    && mkdir -p /opt/airflow/logs /opt/airflow/auth \
    && chown -R airflow:0 /opt/airflow

WORKDIR /opt/paimon
# The same install as the tests': scripts/bootstrap.sh makes .venv from requirements-lock.txt
# (exact pins) and installs the project in it with plugins/ on its sys.path.
COPY requirements-lock.txt pyproject.toml README.md ./
COPY scripts/bootstrap.sh ./scripts/bootstrap.sh
COPY paimon_core ./paimon_core
COPY spark_jobs ./spark_jobs
COPY plugins ./plugins
COPY pyspark_paimon.py ./
RUN PYTHON=python3 scripts/bootstrap.sh \
    && rm -rf /root/.cache
COPY dags ./dags
COPY docker/entrypoint.sh ./docker/entrypoint.sh

ENV PATH=/opt/paimon/.venv/bin:$PATH \
    PYTHONPATH=/opt/paimon:/opt/paimon/plugins \
    AIRFLOW__CORE__DAGS_FOLDER=/opt/paimon/dags \
    AIRFLOW__CORE__PLUGINS_FOLDER=/opt/paimon/plugins \
    AIRFLOW__CORE__LOAD_EXAMPLES=False

USER 50000
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/paimon/docker/entrypoint.sh"]
CMD ["api-server"]
