"""The "Paimon tables" page of the Airflow UI (read-only, behind Airflow's own auth).

:func:`ui_plugin_entries` gives the plugin's ``fastapi_apps`` (the app of
:mod:`paimon_airflow.ui.app`, mounted by the api-server at :data:`URL_PREFIX`) and
``external_views`` (a "Paimon tables" item in the UI's Browse menu that shows the page in the
UI's frame at ``/plugin/paimon-tables``, and a "Paimon table" tab on task instances that shows
the table the task works on)::

    _UI = ui_plugin_entries()


    class PaimonPlugin(AirflowPlugin):
        name = "paimon"
        fastapi_apps = _UI["fastapi_apps"]
        external_views = _UI["external_views"]

Building the app imports FastAPI but neither paimon_core nor the api-server's modules (those load
on the first request), so every Airflow process can import the plugin cheaply.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONSOLE_ROUTE", "TASK_URL_ROUTE", "URL_PREFIX", "URL_ROUTE", "ui_plugin_entries"]

#: Where the api-server mounts the app (must not start with /api/v2, /ui, /execution, /auth, /pluginsv2).
URL_PREFIX = "/paimon"
#: The UI route of the page: ``<airflow>/plugin/paimon-tables``.
URL_ROUTE = "paimon-tables"
#: The UI route of the operator's console: ``<airflow>/plugin/paimon-console``.
CONSOLE_ROUTE = "paimon-console"
#: The UI route of the task instance tab.
TASK_URL_ROUTE = "paimon-table-of-task"


def _api_root_path() -> str:
    """The path of ``[api] base_url`` with a trailing slash (``/`` by default)."""
    from urllib.parse import urlsplit

    from airflow.configuration import conf

    path = urlsplit(conf.get("api", "base_url", fallback="") or "").path
    return path if path.endswith("/") else f"{path}/"


def ui_plugin_entries() -> dict[str, list[dict[str, Any]]]:
    """``{"fastapi_apps": [...], "external_views": [...]}`` for ``AirflowPlugin``."""
    from paimon_airflow.ui.app import create_app

    root = _api_root_path()
    return {
        "fastapi_apps": [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Paimon tables"}],
        "external_views": [
            {
                "name": "Paimon tables",
                # Same origin as the UI: the iframe's requests carry the UI's _token cookie.
                "href": f"{root}{URL_PREFIX.lstrip('/')}/",
                "destination": "nav",
                "category": "browse",
                "url_route": URL_ROUTE,
            },
            {
                # The operator's console: warehouse overview, per-table history, plans, alerts.
                "name": "Paimon console",
                "href": f"{root}{URL_PREFIX.lstrip('/')}/console",
                "destination": "nav",
                "category": "browse",
                "url_route": CONSOLE_ROUTE,
            },
            {
                # A "Paimon table" tab on every task instance: the table that task works on.
                "name": "Paimon table",
                "href": (
                    f"{root}{URL_PREFIX.lstrip('/')}/"
                    "?dag_id={DAG_ID}&run_id={RUN_ID}&task_id={TASK_ID}&map_index={MAP_INDEX}"
                ),
                "destination": "task_instance",
                "url_route": TASK_URL_ROUTE,
            },
        ],
    }
