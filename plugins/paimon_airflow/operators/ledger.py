"""The maintenance ledger from Airflow: the task instance's ids on every row a task records.

* :func:`task_ledger`: around the work a task does in its own process: the warehouse's ledger is
  created when missing (unless the connection's ``ledger`` extra is false: then nothing is
  recorded) and every row recorded inside carries the task's ``dag_id``, ``run_id``,
  ``task_id``, ``map_index``, ``try_number`` and ``entry_point = 'airflow'``;
* :func:`job_env`: the same ids for a ``spark_jobs`` process the task starts
  (``$PAIMON_LEDGER_CONTEXT``), whose rows have ``entry_point = 'spark_job'``;
* :func:`record_skipped`: a ``skipped`` row for an action the task decided not to run (a
  table another task is compacting, compaction ``none``).

Each action is recorded once: by the process that runs it (the job, or the task process for the
work the operators settle there: in-process maintenance, small compactions, landed retries).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from paimon_core.ledger import ledger_context, ledger_disabled, record_action

if TYPE_CHECKING:
    from paimon_airflow.hooks.paimon import PaimonHook

__all__ = ["job_env", "record_skipped", "task_ids", "task_ledger"]


def task_ids(context: Mapping[str, Any]) -> dict[str, Any]:
    """The running task instance's ids (those present)."""
    ti = context.get("ti")
    if ti is None:
        return {}
    out: dict[str, Any] = {}
    for key in ("dag_id", "run_id", "task_id", "map_index", "try_number"):
        value = getattr(ti, key, None)
        if value is not None:
            out[key] = int(value) if key in ("map_index", "try_number") else str(value)
    return out


@contextlib.contextmanager
def task_ledger(context: Mapping[str, Any], hook: PaimonHook) -> Iterator[bool]:
    """Record inside with the task's ids (the ledger created if missing); yields whether the
    ledger is on."""
    try:
        enabled = hook.ledger_enabled
    except Exception as e:  # noqa: BLE001 - a bad or missing connection fails the task where it did before
        hook.log.warning("Recording nothing in the maintenance ledger: %s: %s", type(e).__name__, e)
        enabled = False
    if not enabled:
        with ledger_disabled():
            yield False
        return
    hook.ensure_ledger()
    with ledger_context(entry_point="airflow", **task_ids(context)):
        yield True


def job_env(context: Mapping[str, Any]) -> dict[str, str]:
    """``PAIMON_LEDGER_CONTEXT`` for a ``spark_jobs`` process the task starts."""
    from paimon_core.ledger.recorder import CONTEXT_ENV

    ids = task_ids(context)
    return {CONTEXT_ENV: json.dumps(ids, sort_keys=True)} if ids else {}


def record_skipped(hook: PaimonHook, table: str, action: str, reason: str) -> None:
    """One ``skipped`` row (inside :func:`task_ledger`): the task did not run ``action`` on ``table``."""
    try:
        catalog = hook.get_catalog()
        with record_action(table, action, entry_point="airflow", catalog=catalog) as recording:
            if catalog.table_exists(table):
                recording.set_table(catalog.get_table(table))
            recording.set_status("skipped")
            recording.set_result({"reason": reason})
    except Exception as e:  # noqa: BLE001 - the ledger never fails a task
        hook.log.warning("Could not record the skipped %s of %s: %s", action, table, e)
