"""README command 1, ``scripts/demo.sh``, run as a newcomer runs it: the real Airflow 3 components on
loopback (api-server, scheduler, dag-processor, triggerer; SQLite, LocalExecutor), local Spark, a
backfill of ``paimon_ingest`` over three days and ``paimon_maintenance`` in apply mode, all over
Airflow's REST API; a second run (it replaces the servers and lands no row twice); then
``scripts/demo.sh stop``.

``PAIMON_DEMO_PYTHON`` points the script at this interpreter (the project is installed in it) instead of
running ``scripts/bootstrap.sh``; every other line is the script's own. The environment is the
user's, without this test session's ``AIRFLOW_*`` settings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo.sh"

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYSPARK", "SPARK_"))}
    env.update(
        {
            "WAREHOUSE": str(tmp_path / "warehouse"),
            "PAIMON_DEMO_HOME": str(tmp_path / "demo-home"),
            "PAIMON_DEMO_PYTHON": sys.executable,
            "PAIMON_DEMO_TIMEOUT": "400",
        }
    )
    return env


def _groups(home: Path) -> list[str]:
    """The process groups the script recorded under its home (one per Airflow component)."""
    return [f.read_text().strip() for f in (home / "run").glob("*.pgid")]


def _alive(groups: list[str]) -> list[str]:
    alive = []
    for g in groups:
        r = subprocess.run(["ps", "-o", "pid=,args=", "-g", g], capture_output=True, text=True, check=False)
        alive += [line for line in r.stdout.splitlines() if line.strip()]
    return alive


def test_readme_demo_runs_ingest_and_maintenance_end_to_end(tmp_path: Path) -> None:
    env = _env(tmp_path)
    home = Path(env["PAIMON_DEMO_HOME"])
    groups: list[str] = []
    try:
        r = subprocess.run(
            ["bash", str(DEMO)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1500
        )
        groups = _groups(home)
        out = r.stdout
        assert r.returncode == 0, f"exit {r.returncode}\n{out[-4000:]}\n{r.stderr[-4000:]}"
        # three backfilled days of ingest and the maintenance run, each a success
        assert len(re.findall(r"paimon_ingest \S+: success", out)) == 3, out
        assert re.search(r"paimon_maintenance \S+: success", out), out
        # what the maintenance batch did to db.clicks (6 small write-only commits, an orphan file)
        assert re.search(r"db\.clicks\s+compact\s+success", out), out
        assert re.search(r"db\.clicks\s+expire_snapshots\s+success", out), out
        assert re.search(r"db\.clicks\s+remove_orphan_files\s+success", out), out
        assert "Paimon console:" in out and "Log in as:           admin / " in out
        catalog = FileSystemCatalog(env["WAREHOUSE"])
        events = catalog.get_table("db.events").to_arrow()
        assert events.num_rows == 100 + 110 + 120  # the three days' landing files, once each
        clicks = catalog.get_table("db.clicks")
        assert clicks.to_arrow().num_rows == 60
        assert not (Path(clicks.path) / "bucket-0" / "data-demo-orphan.parquet").exists()
        assert f"db.events: {events.num_rows} rows" in out
        # README: "a second run stops the old servers, re-runs the same days and adds no rows"
        first = groups
        again = subprocess.run(
            ["bash", str(DEMO)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1500
        )
        groups = _groups(home)
        assert again.returncode == 0, (
            f"exit {again.returncode}\n{again.stdout[-4000:]}\n{again.stderr[-4000:]}"
        )
        assert _alive(first) == [] and set(groups).isdisjoint(first), (
            "the first run's servers were not replaced"
        )
        assert len(re.findall(r"paimon_ingest \S+: success", again.stdout)) == 3, again.stdout
        assert catalog.get_table("db.events").to_arrow().num_rows == events.num_rows
    finally:
        groups = groups or _groups(home)
        stop = subprocess.run(
            ["bash", str(DEMO), "stop"], env=env, capture_output=True, text=True, timeout=120
        )
    assert stop.returncode == 0 and "stopped the Airflow servers" in stop.stdout, stop
    assert len(groups) == 4, groups  # api-server, scheduler, dag-processor, triggerer
    assert _alive(groups) == [], "servers left running after scripts/demo.sh stop"
