"""The command-line demo (``scripts/demo_cli.sh``; README command 1 is the Airflow demo),
run as it is against a temporary warehouse.

``PAIMON_DEMO_PYTHON`` makes the script use this interpreter (the project is installed in it)
instead of running ``scripts/bootstrap.sh``; every command after the bootstrap is the script's own.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_demo_script_end_to_end(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    env = {**os.environ, "WAREHOUSE": str(wh), "PAIMON_DEMO_PYTHON": sys.executable}
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo_cli.sh")], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    created = json.loads(lines[0])
    assert created["table"] == "demo.events" and created["path"] == str(wh / "demo.db" / "events")
    writes = [json.loads(x) for x in lines if x.startswith("{") and '"commit_kind"' in x]
    assert [(w["snapshot_id"], w["added_rows"]) for w in writes] == [(1, 1000), (2, 1000)]
    assert json.loads(next(x for x in lines if '"tag"' in x)) == {"tag": "first", "snapshot_id": 1}
    # the filtered read: dt = '2024-01-02' AND id >= 1990 -> ids 1990..1999 with id % 3 == 1
    filtered = [json.loads(x) for x in lines if x.startswith('{"id"')]
    assert [row["id"] for row in filtered] == [1990, 1993, 1996, 1999]
    assert all(row["dt"] == "2024-01-02" and set(row) == {"id", "dt", "v"} for row in filtered)
    outputs = [json.loads(x) for x in lines if '"output"' in x]
    assert [(o["snapshot_id"], o["rows"]) for o in outputs] == [(2, 2000), (1, 1000)]  # latest, then tag "first"
    assert ast.literal_eval(lines[-1]) == [(1, "APPEND", 1000), (2, "APPEND", 2000)]
    # the script's commands really wrote the table where WAREHOUSE points
    assert sorted(p.name for p in (wh / "demo.db" / "events" / "snapshot").iterdir() if p.name.startswith("snapshot-")) == [
        "snapshot-1",
        "snapshot-2",
    ]
    assert pq.read_schema(next((wh / "demo.db" / "events").rglob("*.parquet"))).names[:4] == ["id", "dt", "v", "s"]
