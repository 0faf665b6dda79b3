"""The Airflow plugin object: the read-only "Paimon tables" page (FastAPI app + external views).

The scheduled DAGs' timetables (:mod:`paimon_airflow.timetables`) are registered here: the
scheduler deserializes them by class path. Hooks, operators, sensors and triggers need no
registration (tasks import them; the triggerer loads triggers by class path); the connection
type comes from the provider entry point.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from paimon_airflow.timetables import OnTimeCronDataIntervalTimetable, OnTimeCronTriggerTimetable
from paimon_airflow.ui import ui_plugin_entries

_UI = ui_plugin_entries()


class PaimonPlugin(AirflowPlugin):
    """Paimon table maintenance for Airflow: the tables page, mounted under ``/paimon``."""

    name = "paimon"
    fastapi_apps = _UI["fastapi_apps"]
    external_views = _UI["external_views"]
    timetables = [OnTimeCronTriggerTimetable, OnTimeCronDataIntervalTimetable]
