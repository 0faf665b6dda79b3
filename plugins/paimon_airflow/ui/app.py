"""The "Paimon tables" FastAPI app: a read-only page and its JSON, mounted under the api-server.

Routes (relative to the mount prefix, ``/paimon`` by default; every one needs an Airflow login,
see :mod:`paimon_airflow.ui.auth`; only GET exists, nothing here writes):

* ``GET /``: the page (``static/index.html``; vanilla JS + SVG charts, no build step); a browser
  without an Airflow session is sent to Airflow's login (the JSON routes answer 401);
* ``GET /static/{name}``: its script and style sheet;
* ``GET /api/tables``: the tables of the registry's warehouse, with their latest snapshot;
* ``GET /api/task-table?dag_id=&run_id=&task_id=&map_index=``: the table a task instance works
  on (its XCom result's ``"table"``, else its rendered map index, else its run's ``table``
  Param), for the task instance tab (``map_index`` not a number, as the UI's literal
  ``{MAP_INDEX}`` of an unmapped task: -1);
* ``GET /api/tables/{db.table}``: one table (:func:`paimon_airflow.ui.report.table_report`), its
  DAGs with links to their runs in the Airflow UI, and what the ``paimon_*`` DAGs did to it
  (:func:`paimon_airflow.ui.maintenance_results.recent_results`: results and failures).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from paimon_airflow.ui.auth import airflow_user, may_read_dag_xcoms
from paimon_airflow.ui.source import TableNotListedError, TableSource, registry_source

__all__ = ["STATIC_DIR", "create_app"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
_STATIC_FILES = {"app.js": "text/javascript", "app.css": "text/css"}

#: The request's Airflow user (a ``BaseUser``; typed Any so FastAPI need not resolve it at import).
UserDep = Annotated[Any, Depends(airflow_user)]


def _ui_root() -> str:
    """The Airflow UI's root path (``[api] base_url``'s path, ``/`` by default)."""
    try:
        from airflow.api_fastapi.app import API_ROOT_PATH

        return str(API_ROOT_PATH) or "/"
    except Exception:  # noqa: BLE001 - links only; never fail the page for them
        return "/"


def _map_index(value: str | None) -> int:
    """A task instance's map index from the tab's query; not a number (the UI leaves the literal
    ``{MAP_INDEX}`` for an unmapped task): -1."""
    try:
        return int(str(value).strip())
    except ValueError:
        return -1


def _wants_page(request: Request) -> bool:
    """A browser asking for a page (not the JSON API, not a script or style sheet)."""
    path = str(request.scope.get("path", ""))
    root = str(request.scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root) :]
    return (
        request.method == "GET"
        and "text/html" in request.headers.get("accept", "")
        and not path.startswith(("/api/", "/static/"))
    )


def create_app(
    source: TableSource | Callable[[], TableSource] = registry_source,
    *,
    with_maintenance_results: bool = True,
) -> FastAPI:
    """The app; ``source`` (or a factory of it, called once on first use) says which tables to show."""
    get_source: Callable[[], TableSource] = cache(source) if callable(source) else (lambda: source)
    app = FastAPI(
        title="Paimon tables",
        description="Read-only health of the Paimon tables that the paimon_* DAGs maintain.",
        dependencies=[Depends(airflow_user)],
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )

    from paimon_airflow.ui.console import console_router

    app.include_router(console_router(get_source, _ui_root))  # /console and its JSON

    @app.exception_handler(StarletteHTTPException)
    async def login_for_pages(request: Request, exc: StarletteHTTPException) -> Response:
        """No session (or an expired or foreign one) on a page: Airflow's login, back here after."""
        no_session = exc.status_code == 401 or (exc.status_code == 403 and exc.detail == "Invalid JWT token")
        if no_session and _wants_page(request):
            from airflow.api_fastapi.app import get_auth_manager

            return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), status_code=307)
        return await http_exception_handler(request, exc)

    @app.get("/", response_class=HTMLResponse)
    def page(request: Request) -> HTMLResponse:
        html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
        base = str(request.scope.get("root_path", "")).rstrip("/")
        return HTMLResponse(html.replace("__PAIMON_BASE__", base))

    @app.get("/static/{name}")
    def static(name: str) -> FileResponse:
        if name not in _STATIC_FILES:
            raise HTTPException(status_code=404, detail="Not found")
        return FileResponse(STATIC_DIR / name, media_type=_STATIC_FILES[name])

    @app.get("/api/tables")
    def tables() -> dict[str, Any]:
        from paimon_airflow.ui.report import table_summary

        src = get_source()
        names = src.list_tables()
        catalog = src.catalog()
        out: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for name in names:
            try:
                out.append(table_summary(catalog.get_table(name)))
            except Exception as e:  # noqa: BLE001 - one broken table must not hide the others
                log.warning("Paimon tables page: cannot read %s: %s", name, e)
                errors.append({"table": name, "error": f"{type(e).__name__}: {e}"})
        return {"paimon_conn_id": src.paimon_conn_id, "tables": out, "errors": errors}

    @app.get("/api/task-table")
    def task_table(
        dag_id: str, run_id: str, task_id: str, user: UserDep, map_index: str | None = None
    ) -> dict[str, Any]:
        """The table a task instance works on (for the task instance's "Paimon table" tab)."""
        from paimon_airflow.ui.maintenance_results import task_table as lookup

        if not may_read_dag_xcoms(user, dag_id):
            raise HTTPException(status_code=403, detail="Forbidden")
        name = lookup(dag_id, run_id, task_id, _map_index(map_index))
        if name is None or name not in get_source().list_tables():
            raise HTTPException(status_code=404, detail="This task names no Paimon table of the registry")
        return {"table": name}

    @app.get("/api/tables/{identifier}")
    def table(identifier: str, user: UserDep) -> dict[str, Any]:
        from paimon_airflow.ui.report import table_report

        src = get_source()
        try:
            tbl = src.get_table(identifier)
        except TableNotListedError:
            raise HTTPException(status_code=404, detail=f"Table {identifier!r} is not listed") from None
        report = table_report(tbl)
        root = _ui_root()
        report["dags"] = [{"dag_id": d, "runs_url": f"{root}dags/{d}/runs"} for d in src.dags_of(identifier)]
        report["maintenance"] = []
        report["maintenance_error"] = None
        if with_maintenance_results:
            from paimon_airflow.ui.maintenance_results import recent_results

            try:
                report["maintenance"] = recent_results(
                    identifier, may_read_dag=lambda dag_id: may_read_dag_xcoms(user, dag_id), ui_root=root
                )
            except Exception as e:  # noqa: BLE001 - optional section; the table data still shows
                log.warning("Paimon tables page: no maintenance results for %s: %s", identifier, e)
                report["maintenance_error"] = f"{type(e).__name__}: {e}"
        return report

    return app
