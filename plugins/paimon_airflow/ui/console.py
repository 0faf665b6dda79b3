"""The operator's console: the warehouse overview and each table's maintenance, inside Airflow's UI.

Routes (under the Paimon app's prefix, ``/paimon``; behind Airflow's login like every route of
the app):

* ``GET /console``: the page (``static/console.html``: vanilla JS + SVG, no build step);
* ``GET /console/static/{name}``: its script and style sheet;
* ``GET /api/overview``: every table of the registry with its health score, compaction debt,
  small files, snapshots, files and bytes (as of the last maintenance pass), what that pass
  deferred (its budget or deadline) and why, whether an action changed it since, when each kind of
  maintenance last succeeded, failures of the last 7 days, who holds its compaction lease, lag
  alerts, and per day the bytes compactions rewrote and the files maintenance deleted
  (:func:`paimon_core.maintenance.overview.warehouse_overview`: two reads, cached per minute);
* ``GET /api/console/tables/{db.table}``: one table: its ledger history (last 30 days), what the
  next pass would do and why (the planner on the table now), its effective maintenance settings
  (registry defaults, its overrides, the table's own options) and its health score explained.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

if TYPE_CHECKING:
    from paimon_airflow.ui.source import TableSource

__all__ = ["console_router"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
_FILES = {"console.js": "text/javascript", "console.css": "text/css"}
DAY_MILLIS = 86_400_000
HISTORY_DAYS = 30


def _registry() -> Any | None:
    """The registry of Airflow's DAGs folder (``_paimon_registry.load()``), or None without one."""
    from airflow.configuration import conf

    from paimon_airflow.ui.source import _load_registry_module

    path = Path(conf.get("core", "dags_folder")) / "_paimon_registry.py"
    return _load_registry_module(path).load() if path.is_file() else None


def _settings_of(registry: Any | None) -> Callable[[str], Any]:
    from paimon_core.maintenance.settings import MaintenanceSettings

    made: dict[Any, Any] = {}  # most tables share the registry's defaults: build each set once

    def defaults() -> Any:
        if None not in made:
            made[None] = MaintenanceSettings()
        return made[None]

    def settings(table: str) -> Any:
        if registry is None:
            return defaults()
        try:
            raw = registry.settings_for(table).to_dict()
            key = tuple(sorted(raw.items()))
            try:
                hash(key)
            except TypeError:  # a value that is no scalar: not shared
                return MaintenanceSettings.from_mapping(raw)
            if key not in made:
                made[key] = MaintenanceSettings.from_mapping(raw)
            return made[key]
        except Exception:  # noqa: BLE001 - a bad override shows as defaults, the registry says why elsewhere
            return defaults()

    return settings


def _leases(source: TableSource) -> dict[str, dict[str, Any]]:
    """``{table: lease}`` of the compaction leases held now (one directory listing)."""
    from paimon_airflow.hooks.paimon import PaimonHook
    from paimon_airflow.utils.lease import LEASE_DIR, Lease
    from paimon_core.io.file_io import join

    hook = PaimonHook(paimon_conn_id=source.paimon_conn_id)
    file_io = hook.get_catalog().file_io
    now = int(time.time() * 1000)
    out: dict[str, dict[str, Any]] = {}
    try:
        statuses = file_io.list_files(join(hook.warehouse, LEASE_DIR))
    except (FileNotFoundError, OSError):
        return out
    for st in statuses:
        try:
            lease = Lease.parse(file_io.read_bytes(st.path))
        except OSError:
            continue
        if lease is not None and not lease.expired(now):
            out[lease.table] = lease.to_dict()
    return out


def console_router(get_source: Callable[[], TableSource], ui_root: Callable[[], str]) -> APIRouter:
    """The console's routes (see the module docs), for the Paimon app."""
    router = APIRouter()

    @router.get("/console", response_class=HTMLResponse)
    def page(request: Request) -> HTMLResponse:
        html = (STATIC_DIR / "console.html").read_text(encoding="utf-8")
        base = str(request.scope.get("root_path", "")).rstrip("/")
        return HTMLResponse(html.replace("__PAIMON_BASE__", base).replace("__AIRFLOW_ROOT__", ui_root()))

    @router.get("/console/static/{name}")
    def static(name: str) -> FileResponse:
        if name not in _FILES:
            raise HTTPException(status_code=404, detail="Not found")
        return FileResponse(STATIC_DIR / name, media_type=_FILES[name])

    @router.get("/api/overview")
    def overview() -> dict[str, Any]:
        from paimon_core.maintenance.overview import warehouse_overview

        started = time.monotonic()
        src = get_source()
        names = src.list_tables()
        registry = _registry()
        result = warehouse_overview(src.catalog(), settings_of=_settings_of(registry)).to_dict()
        by_name = {t["table"]: t for t in result["tables"]}
        leases = _leases(src)
        tables = []
        for name in names:
            row = by_name.get(name) or {"table": name, "health_score": None, "last_success": {}, "alerts": []}
            row["lease"] = leases.get(name)
            tables.append(row)
        result["tables"] = tables
        result["paimon_conn_id"] = src.paimon_conn_id
        result["seconds"] = round(time.monotonic() - started, 3)
        return result

    @router.get("/api/console/tables/{identifier}")
    def table(identifier: str) -> dict[str, Any]:
        from paimon_airflow.ui.source import TableNotListedError
        from paimon_core.maintenance.overview import table_history
        from paimon_core.maintenance.planner import plan_table
        from paimon_core.maintenance.state_store import PlannerStateStore

        src = get_source()
        try:
            tbl = src.get_table(identifier)
        except TableNotListedError:
            raise HTTPException(status_code=404, detail=f"Table {identifier!r} is not listed") from None
        catalog = src.catalog()
        now = int(time.time() * 1000)
        history = table_history(catalog, identifier, since_millis=now - HISTORY_DAYS * DAY_MILLIS)
        registry = _registry()
        settings = _settings_of(registry)(identifier)
        from paimon_core.maintenance.table_state import collect_table_state

        saved = PlannerStateStore(catalog.file_io, catalog.warehouse).load().states.get(identifier)
        # the table now (one metadata read when it has not changed since the last pass)
        state = collect_table_state(tbl, now_millis=now, previous=saved)
        last_success: dict[str, int] = {}
        for r in history:
            if r["status"] in ("success", "no_op") and r.get("end_millis"):
                last_success[r["action"]] = max(last_success.get(r["action"], 0), int(r["end_millis"]))
        plan = plan_table(state, settings, now_millis=now, last_success=last_success)
        next_plan = {
            "as_of_millis": now,
            "actions": [a.to_dict() for a in plan.actions],
            "skipped": dict(plan.skipped_reasons),
        }
        defaults = registry.defaults.to_dict() if registry is not None else {}
        overrides = dict(registry.overrides.get(identifier, {})) if registry is not None else {}
        return {
            "table": identifier,
            "history": history,
            "next_plan": next_plan,
            "settings": {
                "registry_defaults": defaults,
                "overrides": overrides,
                "effective": settings.to_dict(),
                "table_options": dict(tbl.options.options),
            },
            # when the overview's figures were measured: the newest assess row (wall clock), else the state's time
            "overview_measured_millis": max(
                [saved.checked_at_millis]
                + [int(r["end_millis"]) for r in history if r["action"] == "assess" and r.get("end_millis")]
            )
            if saved is not None
            else None,
            "health": dict(state.health),
            "health_score": state.health_score,
            "airflow_root": ui_root(),
        }

    return router
