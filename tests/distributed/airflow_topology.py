"""The Airflow of the production topology on loopback: each component started by
``docker/entrypoint.sh ROLE``, the command of its service in ``docker/compose.yaml``.

Builds on :mod:`tests.airflow.live` (environment, REST access, stopping process groups); only the
command differs: ``entrypoint.sh airflow-init`` once (migrate the metadata database, the Spark
pool, serialize the DAGs), then ``entrypoint.sh api-server|scheduler|dag-processor|triggerer``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.airflow.live import LiveAirflow, airflow_env, free_port
from tests.distributed.postgres import ENTRYPOINT

__all__ = ["AIRFLOW_ROLES", "INIT_ROLE", "EntrypointAirflow", "launch_topology"]

#: The long-running Airflow components, as roles of docker/entrypoint.sh (and compose services).
AIRFLOW_ROLES = ("api-server", "scheduler", "dag-processor", "triggerer")
#: The one-shot role run before them (migrate, pool, serialize DAGs).
INIT_ROLE = "airflow-init"


class EntrypointAirflow(LiveAirflow):
    """A :class:`LiveAirflow` whose components run as ``entrypoint.sh ROLE``."""

    def start(self, name: str, *args: str) -> None:
        with open(self.log(name), "wb") as out:
            self.procs[name] = subprocess.Popen(
                [str(ENTRYPOINT), name, *args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def run_role(self, role: str, *, timeout: float = 300) -> None:
        """Run a one-shot role (``airflow-init``) to completion; raise with its output on failure."""
        r = subprocess.run(
            [str(ENTRYPOINT), role],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if r.returncode != 0:
            raise RuntimeError(
                f"entrypoint.sh {role} failed ({r.returncode}):\n{(r.stdout + r.stderr)[-4000:]}"
            )


def launch_topology(
    home: Path,
    sql_alchemy_conn: str,
    *,
    components: Sequence[str] = AIRFLOW_ROLES,
    parallelism: int = 3,
    pool_slots: int = 3,
    extra_env: Mapping[str, str] | None = None,
) -> EntrypointAirflow:
    """``airflow-init``, then ``components`` on 127.0.0.1 with the LocalExecutor running up to
    ``parallelism`` tasks at once. Returns at once; call :meth:`LiveAirflow.wait_ready`."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = airflow_env(
        home,
        port,
        sql_alchemy_conn=sql_alchemy_conn,
        extra={
            "AIRFLOW_API_HOST": "127.0.0.1",
            "AIRFLOW_API_PORT": str(port),
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": str(parallelism),
            "PAIMON_SPARK_POOL_SLOTS": str(pool_slots),
            **(extra_env or {}),
        },
    )
    live = EntrypointAirflow(home=home, port=port, env=env)
    live.run_role(INIT_ROLE)
    try:
        for name in components:
            live.start(name)
    except BaseException:
        live.stop()
        raise
    return live
