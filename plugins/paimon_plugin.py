"""Airflow plugins-folder entry: registers :class:`paimon_airflow.plugin.PaimonPlugin`."""

from __future__ import annotations

from paimon_airflow.plugin import PaimonPlugin

__all__ = ["PaimonPlugin"]
