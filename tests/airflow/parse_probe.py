"""Run in a fresh interpreter: parse each DAG file with all I/O but the registry forbidden.

Prints one JSON line: per file, the parse seconds, the I/O attempts refused, the heavy modules
(paimon_core, pyspark, pyarrow) it imported, and its DAG ids.
"""

from __future__ import annotations

import builtins
import importlib.util
import io
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

DAGS = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(DAGS))  # as Airflow does for the DAGs folder

# What the DAG files import from elsewhere is imported first (its cost is not the file's).
import airflow.sdk  # noqa: E402,F401
from airflow.providers.standard.operators.hitl import ApprovalOperator  # noqa: E402,F401
from airflow.sdk import DAG, CronDataIntervalTimetable  # noqa: E402,F401  (croniter runs `file` on import)

import paimon_airflow.operators.compact_database  # noqa: E402,F401
import paimon_airflow.operators.maintenance  # noqa: E402,F401
import paimon_airflow.operators.spark_job  # noqa: E402,F401
import paimon_airflow.triggers.paimon  # noqa: E402,F401

ALLOWED = {str(DAGS / "paimon_tables.yaml")}
refused: list[str] = []
_real_open = builtins.open


def _guard(name: str, real: Any) -> Any:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        target = str(args[0]) if args else ""
        if name == "open" and os.path.abspath(target) in ALLOWED:
            return real(*args, **kwargs)
        refused.append(f"{name}({target})")
        if os.environ.get("PROBE_TRACE"):
            import traceback

            traceback.print_stack(file=sys.stderr)
        raise PermissionError(f"I/O at DAG parse time: {name}({target})")

    return guarded


PATCHES = {
    (builtins, "open"): _guard("open", builtins.open),
    (io, "open"): _guard("open", io.open),
    (os, "listdir"): _guard("listdir", os.listdir),
    (os, "scandir"): _guard("scandir", os.scandir),
    (os, "stat"): None,  # stat is used by the import system itself; left alone
    (socket.socket, "connect"): _guard("connect", socket.socket.connect),
}

results = {}
for path in sorted(DAGS.glob("paimon_*.py")):
    before = set(sys.modules)
    refused.clear()
    for (owner, attr), fn in PATCHES.items():
        if fn is not None:
            setattr(owner, "_orig_" + attr, getattr(owner, attr))
            setattr(owner, attr, fn)
    start = time.perf_counter()
    error = None
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {e}"
        module = None
    elapsed = time.perf_counter() - start
    for (owner, attr), fn in PATCHES.items():
        if fn is not None:
            setattr(owner, attr, getattr(owner, "_orig_" + attr))
    new = set(sys.modules) - before
    heavy = sorted(m for m in new if m.split(".")[0] in ("paimon_core", "pyspark", "pyarrow", "fsspec"))
    dag_ids = sorted(v.dag_id for v in vars(module).values() if isinstance(v, DAG)) if module else []
    results[path.name] = {
        "seconds": round(elapsed, 4),
        "refused": list(refused),
        "heavy_imports": heavy,
        "dag_ids": dag_ids,
        "error": error,
    }
print(json.dumps(results))
