"""The Airflow plugin object: the read-only "Paimon tables" page (FastAPI app + external views).

Hooks, operators, sensors and triggers need no registration here (tasks import them; the
triggerer loads triggers by class path); the connection type comes from the provider entry point.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from paimon_airflow.ui import ui_plugin_entries

_UI = ui_plugin_entries()


class PaimonPlugin(AirflowPlugin):
    """Paimon table maintenance for Airflow: the tables page, mounted under ``/paimon``."""

    name = "paimon"
    fastapi_apps = _UI["fastapi_apps"]
    external_views = _UI["external_views"]
