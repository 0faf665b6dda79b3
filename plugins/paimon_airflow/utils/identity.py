"""A task's deterministic commit identity: the same on every try of the same task instance.

Paimon filters what a commit user already committed (``filter_committed``): a retried task that
commits under the same user and identifier as its landed first try commits nothing. The identity
comes from (dag_id, run_id, task_id, map_index, table), never from the try number or the clock.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["commit_user", "run_key"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:+=@-]+")


def run_key(context: Mapping[str, Any]) -> str:
    """``<dag_id>/<run_id>/<task_id>/<map_index>`` of the running task instance."""
    ti = context["ti"]
    map_index = getattr(ti, "map_index", -1)
    map_index = -1 if map_index is None else int(map_index)
    return f"{ti.dag_id}/{ti.run_id}/{ti.task_id}/{map_index}"


def commit_user(context: Mapping[str, Any], table: str) -> str:
    """``airflow-<readable key>-<hash>``: stable per (dag, run, task, map index, table)."""
    key = f"{run_key(context)}/{table}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    readable = _UNSAFE.sub("_", key)[:120]
    return f"airflow-{readable}-{digest}"
