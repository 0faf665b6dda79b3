"""Lag alerts of the maintenance DAGs: who hears that a table lags on its maintenance.

:func:`notify` logs the alerts (``paimon_core.maintenance.lag``) and hands them to the registry's
``alerts.callback``: a dotted path of ``callable(alerts: list[dict], context)``, e.g. a function
that sends them to your chat or pager through an Airflow notifier. (Airflow 3.3.2's Deadline
Alerts are not used: a DAG with one fails ``dag.test()`` in 3.3.2, and ``dag.test()`` is how
people and our tests run a DAG.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["notify"]

log = logging.getLogger(__name__)


def notify(callback: str | None, alerts: Sequence[Mapping[str, Any]], context: Any) -> None:
    """Log ``alerts`` and call ``callback`` (a dotted path) with them; a failing callback is logged."""
    for alert in alerts:
        log.error("Paimon maintenance alert: %s", alert.get("message") or alert)
    if not callback or not alerts:
        return
    import importlib

    try:
        module, _, name = callback.rpartition(".")
        getattr(importlib.import_module(module), name)(list(alerts), context)
    except Exception:  # noqa: BLE001 - an alert channel that fails must not hide the alert
        log.exception("Paimon maintenance alert callback %s failed", callback)
