"""The "Paimon tables" page (``paimon_airflow.ui``) on real tables, a real api-server and a real browser.

1. The FastAPI app in-process (TestClient) with Airflow's real auth manager (simple auth manager,
   real JWTs): the JSON against what paimon_core says of the same tables; requests without a
   valid token refused (a browser's page request sent to Airflow's login instead); real
   ``dag.test()`` runs (a mapped expiry, a ``compact_database`` plan, a failing rollback) shown
   as the table's results and failures, each named by its table and linked to its log.
2. A real ``airflow api-server`` on 127.0.0.1 (own AIRFLOW_HOME, SQLite) with the plugin loaded:
   the page and its JSON through it with a token or the session cookie, refused without.
3. Headless Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright) opens the page without
   a session and lands on Airflow's login, logs in and comes back; opens the page in the Airflow
   UI (Browse > Paimon tables), sees the table, the charts and the results as readable fields;
   clicks the "Airflow DAGs" and log links inside the UI's frame and lands on those UI pages; and
   opens the "Paimon table" tab of an unmapped and of a mapped task instance. Screenshots go to
   ``tests/airflow/artifacts/`` (paths printed).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.utils.clock import ManualClock
from tests.airflow.conftest import DAGS_FOLDER, PLUGINS_FOLDER, paimon_conn
from tests.airflow.live import LiveAirflow, http, launch

pytestmark = [pytest.mark.integration, pytest.mark.scenario]  # steps of one story on one warehouse and API server

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DAY_MS = 86_400_000
T0 = 1_795_000_000_000  # 2026-11-18 UTC
#: db.events: 4 appends to dt=2026-11-01 (4 level-0 files per bucket), 1 to dt=2026-11-02, then a
#: full compaction of dt=2026-11-02: snapshots 1-5 APPEND, 6 COMPACT.
EVENTS_KINDS = ["APPEND"] * 5 + ["COMPACT"]
EVENTS_RUNS = {
    ("dt=2026-11-01", 0): 4,
    ("dt=2026-11-01", 1): 4,
    ("dt=2026-11-02", 0): 1,
    ("dt=2026-11-02", 1): 1,
}


def _events(n: int, day: str, start: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "dt": pa.array([day] * n),
            "v": pa.array([f"v{i}" for i in range(start, start + n)]),
        }
    )


def build_warehouse(wh: str) -> None:
    """``db.events`` (primary key, 2 buckets, partitioned; a consumer and a tag) and ``db.logs`` (append)."""
    clock = ManualClock(T0)
    catalog = FileSystemCatalog(wh, clock=clock)
    catalog.create_database("db")
    events = catalog.create_table(
        "db.events",
        _events(1, "x", 0).schema,
        primary_keys=["dt", "id"],
        partition_keys=["dt"],
        options={
            "bucket": "2",
            "write-only": "true",  # no compaction while writing: level-0 files pile up
            "num-sorted-run.compaction-trigger": "3",
            "num-sorted-run.stop-trigger": "6",
        },
    )
    for i in range(4):
        clock.set(T0 + i * DAY_MS // 2)
        events.write_arrow(_events(10, "2026-11-01", i * 10))
    clock.set(T0 + 2 * DAY_MS)
    events.write_arrow(_events(5, "2026-11-02", 0))
    clock.set(T0 + 2 * DAY_MS + 3_600_000)
    events = catalog.get_table("db.events")
    events.maintenance.compact(partitions=[{"dt": "2026-11-02"}])
    events = catalog.get_table("db.events")
    events.maintenance.create_tag("2026-11-18", 2)
    events.maintenance.reset_consumer("reader", 3)

    logs = catalog.create_table("db.logs", pa.schema([("id", pa.int64()), ("msg", pa.string())]))
    for i in range(3):
        clock.set(T0 + i * 3_600_000)
        logs.write_arrow(pa.table({"id": pa.array([i], pa.int64()), "msg": [f"m{i}"]}))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("ui") / "wh")
    build_warehouse(wh)
    return wh


# --- 1. the app in-process, with Airflow's real auth manager ----------------------------------
@pytest.fixture(scope="module")
def auth_manager(airflow_db: None) -> Iterator[Any]:
    """Airflow's configured auth manager (the simple one), initialised as the api-server does."""
    from airflow.api_fastapi.app import create_auth_manager, purge_cached_app

    old = os.environ.get("AIRFLOW__API_AUTH__JWT_SECRET")
    os.environ["AIRFLOW__API_AUTH__JWT_SECRET"] = secrets.token_urlsafe(64)
    am = create_auth_manager()
    am.init()
    yield am
    purge_cached_app()
    if old is None:
        os.environ.pop("AIRFLOW__API_AUTH__JWT_SECRET", None)
    else:
        os.environ["AIRFLOW__API_AUTH__JWT_SECRET"] = old


def _jwt(am: Any, role: str | None) -> str:
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    return str(am.generate_jwt(SimpleAuthManagerUser(username="someone", role=role)))


@pytest.fixture
def client(warehouse: str, auth_manager: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from paimon_airflow.ui.app import create_app
    from paimon_airflow.ui.source import TableSource

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_UI", paimon_conn(warehouse))
    with TestClient(create_app(TableSource(paimon_conn_id="paimon_ui", ingest_tables=("db.events",)))) as c:
        yield c


def test_app_refuses_requests_without_a_valid_airflow_login(client: Any, auth_manager: Any) -> None:
    for path in ("/", "/api/tables", "/api/tables/db.events", "/static/app.js"):
        assert client.get(path).status_code == 401, path  # no token at all
        assert client.get(path, headers={"Authorization": "Bearer not.a.jwt"}).status_code == 403, path
    assert client.get("/api/tables", headers={"Cookie": "_token=garbage"}).status_code == 403
    # a browser asking for the page without a (valid) session goes to Airflow's login, and back
    html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    for cookie in ({}, {"Cookie": "_token=garbage"}):
        page = client.get("/?table=db.logs", headers={**html, **cookie}, follow_redirects=False)
        assert page.status_code == 307, page.text
        assert page.headers["location"] == "/auth/login?next=http%3A%2F%2Ftestserver%2F%3Ftable%3Ddb.logs"
    # its JSON, script and style sheet are no pages: 401 stays 401
    for path in ("/api/tables", "/static/app.js"):
        assert client.get(path, headers=html, follow_redirects=False).status_code == 401, path
    # a JWT signed with another key (another Airflow) is invalid here
    import jwt

    forged = jwt.encode({"sub": "admin", "role": "ADMIN"}, secrets.token_bytes(64), algorithm="HS512")
    assert client.get("/api/tables", headers={"Authorization": f"Bearer {forged}"}).status_code == 403
    # a valid token of a user without any role may not see the UI
    no_role = {"Authorization": f"Bearer {_jwt(auth_manager, None)}"}
    assert client.get("/api/tables", headers=no_role).status_code == 403
    # read-only: nothing but GET exists
    admin = {"Authorization": f"Bearer {_jwt(auth_manager, 'ADMIN')}"}
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert client.request(method, "/api/tables/db.events", headers=admin).status_code == 405
    assert client.get("/api/tables/db.nope", headers=admin).status_code == 404


def test_app_json_matches_the_tables(client: Any, auth_manager: Any, warehouse: str) -> None:
    viewer = {"Authorization": f"Bearer {_jwt(auth_manager, 'VIEWER')}"}
    listing = client.get("/api/tables", headers=viewer).json()
    assert listing["paimon_conn_id"] == "paimon_ui" and listing["errors"] == []
    assert [t["table"] for t in listing["tables"]] == ["db.events", "db.logs"]
    assert listing["tables"][0]["snapshot_id"] == 6 and listing["tables"][0]["commit_kind"] == "COMPACT"

    r = client.get("/api/tables/db.events", headers=viewer).json()
    table = FileSystemCatalog(warehouse).get_table("db.events")
    snaps = list(table.snapshot_manager.snapshots())
    assert [s["commit_kind"] for s in r["snapshots"]] == EVENTS_KINDS == [s.commit_kind.value for s in snaps]
    assert [s["time_millis"] for s in r["snapshots"]] == [s.time_millis for s in snaps]
    assert r["snapshot_kinds"] == {"APPEND": 5, "COMPACT": 1}
    # sorted runs per bucket, counted here from the live files: level-0 files + non-empty levels >= 1
    entries = table.new_file_store_scan().live_entries(table.latest_snapshot())
    levels: dict[tuple[str, int], list[int]] = {}
    for e in entries:
        part = "dt=" + str(table.partition_codec.decode(e.partition)[0])
        levels.setdefault((part, e.bucket), []).append(e.file.level)
    counted = {k: v.count(0) + len({lv for lv in v if lv > 0}) for k, v in levels.items()}
    assert counted == EVENTS_RUNS
    assert {(b["partition"], b["bucket"]): b["sorted_runs"] for b in r["buckets"]} == EVENTS_RUNS
    assert r["compaction"] == {"compaction_trigger": 3, "stop_trigger": 6}
    assert r["max_sorted_runs"] == 4 and r["data_file_count"] == len(entries) == 10
    assert r["small_file_count"] == 10 and r["small_file_ratio"] == 1.0  # KiB files vs a 64+ MiB target
    assert r["consumers"] == [
        {
            "consumer_id": "reader",
            "next_snapshot": 3,
            "lag_snapshots": 4,  # snapshots 3, 4, 5 and 6 not consumed yet
            "behind_earliest": False,
            "waiting_since_millis": snaps[2].time_millis,
            "status": "ok",  # lags 4 snapshots: fewer than snapshot.num-retained.min (10)
        }
    ]
    assert r["tags"] == [{"name": "2026-11-18", "snapshot_id": 2, "time_millis": snaps[1].time_millis}]
    assert r["retention"]["snapshot_num_retained_min"] == 10
    assert [d["dag_id"] for d in r["dags"]][:1] == ["paimon_ingest"]  # db.events is ingested
    assert all(d["runs_url"] == f"/dags/{d['dag_id']}/runs" for d in r["dags"])

    logs = client.get("/api/tables/db.logs", headers=viewer).json()
    assert logs["primary_key"] is False and logs["sorted_run_stop_trigger"] is None
    assert [s["snapshot_id"] for s in logs["snapshots"]] == [1, 2, 3]
    assert logs["bucket_count"] == 1 and logs["buckets"][0]["sorted_runs"] is None

    page = client.get("/", headers={"Cookie": f"_token={_jwt(auth_manager, 'VIEWER')}"})
    assert page.status_code == 200 and "<title>Paimon tables</title>" in page.text
    assert 'data-base=""' in page.text and "/static/app.js" in page.text


@pytest.fixture(scope="module")
def dag_runs(warehouse: str, airflow_db: None) -> dict[str, str]:
    """Real ``dag.test()`` runs (in this session's metadata DB, which the api-server below shares)
    that store results in XCom: ``paimon_expire_snapshots`` (a dry run: mapped, one task per
    table), ``paimon_compact_database`` (a plan: one entry per table in XCom ``tables``) and
    ``paimon_rollback`` of db.logs without a target (its plan fails). Their run ids by DAG."""
    import datetime as dt

    from airflow.dag_processing.dagbag import BundleDagBag

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", paimon_conn(warehouse))
        bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
        run = bag.dags["paimon_expire_snapshots"].test(
            logical_date=dt.datetime(2026, 1, 2, tzinfo=dt.UTC), run_conf={"dry_run": True}
        )
        assert run.state == "success"
        plan = bag.dags["paimon_compact_database"].test(run_conf={"execution": "local"})  # run_mode plan
        assert plan.state == "success"
        failed = bag.dags["paimon_rollback"].test(run_conf={"table": "db.logs"})  # no target: plan fails
        assert failed.state == "failed"
    return {
        "paimon_expire_snapshots": run.run_id,
        "paimon_compact_database": plan.run_id,
        "paimon_rollback": failed.run_id,
    }


def test_app_shows_results_and_failures_from_real_dag_runs(
    auth_manager: Any, warehouse: str, dag_runs: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page lists each table's results and failures of the real runs, named by table, with
    links to the task logs; the task instance tab finds a task's table, mapped or not."""
    from fastapi.testclient import TestClient

    from paimon_airflow.ui.app import create_app
    from paimon_airflow.ui.source import TableSource

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", paimon_conn(warehouse))
    run_id, plan_id, failed_id = (
        dag_runs[d] for d in ("paimon_expire_snapshots", "paimon_compact_database", "paimon_rollback")
    )
    admin = {"Authorization": f"Bearer {_jwt(auth_manager, 'ADMIN')}"}
    with TestClient(create_app(TableSource(paimon_conn_id="paimon_default"))) as client:
        for table in ("db.events", "db.logs"):
            report = client.get(f"/api/tables/{table}", headers=admin).json()
            assert report["maintenance_error"] is None
            rows = {(m["dag_id"], m["task"]): m for m in report["maintenance"]}
            expire = rows[("paimon_expire_snapshots", f"table.expire_snapshots [{table}]")]
            assert expire["run_id"] == run_id and expire["status"] == "dry_run"
            assert expire["result"]["table"] == table and expire["result"]["dry_run"] is True
            assert expire["log_url"] == (
                f"/dags/paimon_expire_snapshots/runs/{quote(run_id, safe='')}"
                f"/tasks/table.expire_snapshots/mapped/{expire['map_index']}"
            )
            planned = rows[("paimon_compact_database", "plan")]  # its entry for this table only
            assert planned["run_id"] == plan_id and planned["result"]["table"] == table
            assert planned["status"] == "dry_run" and planned["log_url"].endswith("/tasks/plan")
            # the task instance's "Paimon table" tab finds the table from the task
            ti = {"dag_id": "paimon_expire_snapshots", "run_id": run_id, "task_id": "table.expire_snapshots"}
            found = client.get(
                "/api/task-table", params={**ti, "map_index": expire["map_index"]}, headers=admin
            )
            assert found.json() == {"table": table}
            newest_first = [m["timestamp"] for m in report["maintenance"]]
            assert newest_first == sorted(newest_first, reverse=True)
        logs = client.get("/api/tables/db.logs", headers=admin).json()["maintenance"]
        (fail,) = [m for m in logs if m["dag_id"] == "paimon_rollback"]
        assert fail["status"] == "failed" and fail["task"] == "plan" and fail["result"] is None
        assert fail["run_id"] == failed_id and fail["log_url"].endswith("/tasks/plan")
        events = client.get("/api/tables/db.events", headers=admin).json()["maintenance"]
        assert not [m for m in events if m["dag_id"] == "paimon_rollback"]  # it named db.logs
        other = {"dag_id": "paimon_expire_snapshots", "run_id": run_id, "task_id": "list_tables"}
        assert client.get("/api/task-table", params=other, headers=admin).status_code == 404
        assert client.get("/api/task-table", params=other).status_code == 401
        # an unmapped task: the UI sends the literal {MAP_INDEX}; the run's table Param names it
        unmapped = {"dag_id": "paimon_rollback", "run_id": failed_id, "task_id": "plan"}
        for literal in ("{MAP_INDEX}", "", "-1"):
            got = client.get("/api/task-table", params={**unmapped, "map_index": literal}, headers=admin)
            assert got.status_code == 200 and got.json() == {"table": "db.logs"}, (literal, got.text)
    assert len(list(FileSystemCatalog(warehouse).get_table("db.logs").snapshot_manager.snapshots())) == 3


def test_consumer_status_against_retention() -> None:
    from paimon_airflow.ui.report import consumer_status

    hour = 3_600_000
    base = {"latest_id": 100, "earliest_id": 50, "now_millis": 10 * hour, "retain_min": 10, "retain_max": 80}
    # caught up, or lagging less than num-retained.min: fine however old
    assert (
        consumer_status(next_snapshot=101, waiting_since_millis=None, time_retained_ms=hour, **base) == "ok"
    )
    assert consumer_status(next_snapshot=95, waiting_since_millis=0, time_retained_ms=hour, **base) == "ok"
    # lagging more than num-retained.min on a snapshot older than time-retained: it holds expiry back
    assert (
        consumer_status(next_snapshot=60, waiting_since_millis=0, time_retained_ms=hour, **base) == "pinning"
    )
    assert (
        consumer_status(next_snapshot=60, waiting_since_millis=9 * hour, time_retained_ms=hour, **base)
        == "ok"
    )
    # its next snapshot is gone: it lost its position
    assert (
        consumer_status(next_snapshot=10, waiting_since_millis=None, time_retained_ms=hour, **base)
        == "expired"
    )


# --- 2. a real api-server with the plugin loaded ------------------------------------------------
def _plugins_folder(tmp: Path) -> Path:
    """The repo's plugins folder if its plugin already mounts the page, else a shim plugin file."""
    if "ui_plugin_entries" in (PLUGINS_FOLDER / "paimon_airflow" / "plugin.py").read_text(encoding="utf-8"):
        return PLUGINS_FOLDER
    shim = tmp / "plugins"
    shim.mkdir()
    (shim / "paimon_ui_plugin.py").write_text(
        "from airflow.plugins_manager import AirflowPlugin\n"
        "from paimon_airflow.ui import ui_plugin_entries\n\n"
        "_ENTRIES = ui_plugin_entries()\n\n\n"
        "class PaimonUiPlugin(AirflowPlugin):\n"
        '    name = "paimon_ui"\n'
        '    fastapi_apps = _ENTRIES["fastapi_apps"]\n'
        '    external_views = _ENTRIES["external_views"]\n',
        encoding="utf-8",
    )
    return shim


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    return http("GET", url, headers=headers)


@pytest.fixture(scope="module", autouse=True)
def _api_server_launch(
    request: pytest.FixtureRequest,
    warehouse: str,
    airflow_db: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LiveAirflow | None]:
    """Start ``airflow api-server`` in the background when the module starts (its ~15 s start
    overlaps the in-process tests), if a selected test needs it. It shares this session's SQLite
    metadata DB (created by ``airflow_db``), so it sees the XComs of the ``dag.test()`` runs."""
    if not any("api_server" in getattr(item, "fixturenames", ()) for item in request.session.items):
        yield None
        return
    home = tmp_path_factory.mktemp("airflow_home")
    live = launch(
        home,
        ("api-server",),
        sql_alchemy_conn=os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"],
        plugins_folder=_plugins_folder(home),
        extra_env={"AIRFLOW_CONN_PAIMON_DEFAULT": paimon_conn(warehouse)},
    )
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def api_server(_api_server_launch: LiveAirflow | None) -> LiveAirflow:
    """The api-server once it answers ``/api/v2/monitor/health``."""
    assert _api_server_launch is not None
    return _api_server_launch.wait_ready()


def test_api_server_serves_the_page_only_with_airflow_auth(
    api_server: LiveAirflow, dag_runs: dict[str, str]
) -> None:
    base = f"{api_server.base}/paimon"
    for path in ("/", "/api/tables", "/api/tables/db.events"):
        assert _get(base + path)[0] == 401, path
        assert _get(base + path, {"Authorization": "Bearer x.y.z"})[0] == 403, path
        assert _get(base + path, {"Cookie": "_token=expired-or-forged"})[0] == 403, path
    # a browser without a session: the page redirects to the auth manager's login, then back here
    from http.client import HTTPConnection

    conn = HTTPConnection("127.0.0.1", api_server.port, timeout=30)
    conn.request("GET", "/paimon/?table=db.logs", headers={"Accept": "text/html"})
    answer = conn.getresponse()
    assert answer.status == 307, answer.read()
    assert answer.getheader("location") == "/auth/login?" + urlencode(
        {"next": f"{api_server.base}/paimon/?table=db.logs"}
    )
    conn.close()
    token = api_server.token()
    bearer = {"Authorization": f"Bearer {token}"}
    status, body = _get(base + "/api/tables", bearer)
    assert status == 200, body
    listing = json.loads(body)
    assert listing["paimon_conn_id"] == "paimon_default"  # from dags/paimon_tables.yaml
    # the dag.test() run above recorded its actions: the maintenance ledger is a table of the warehouse
    names = [t["table"] for t in listing["tables"]]
    assert [n for n in names if n != "paimon_maintenance.ledger"] == ["db.events", "db.logs"], names
    status, body = _get(base + "/api/tables/db.events", bearer)
    report = json.loads(body)
    assert status == 200 and [s["commit_kind"] for s in report["snapshots"]] == EVENTS_KINDS
    assert report["maintenance_error"] is None
    assert dag_runs["paimon_expire_snapshots"] in {m["run_id"] for m in report["maintenance"]}
    status, body = _get(base + "/", {"Cookie": f"_token={token}"})  # the browser's session cookie
    assert status == 200 and b'data-base="/paimon"' in body
    # the plugin is registered with Airflow: its app and its UI menu entry
    status, body = _get(f"{api_server.base}/api/v2/plugins", bearer)
    plugins = json.loads(body)["plugins"]
    views = [v for p in plugins for v in p["external_views"] if v.get("url_route") == "paimon-tables"]
    apps = [a for p in plugins for a in p["fastapi_apps"] if a["url_prefix"] == "/paimon"]
    assert len(views) == 1 and views[0]["href"] == "/paimon/" and len(apps) == 1


# --- 3. a real browser logs in and looks at the page --------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _top_url_becomes(page: Any, path: str) -> None:
    """The UI (the top page, not the frame) is at ``path`` (its router moved, no reload needed)."""
    page.wait_for_function("p => decodeURIComponent(location.pathname) === p", arg=path, timeout=30_000)


def test_browser_logs_in_and_sees_the_paimon_tables_page(
    api_server: LiveAirflow, browser: Any, dag_runs: dict[str, str]
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1600, "height": 1150})
    page = context.new_page()
    shots: list[Path] = []

    def shot(name: str, *, full_page: bool = False) -> None:
        path = ARTIFACTS / name
        page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 10_000, path
        shots.append(path)

    try:
        # without a session the page sends the browser to Airflow's login, and back to it after
        page.goto(f"{api_server.base}/paimon/?table=db.logs")
        page.wait_for_url("**/auth/login**", timeout=30_000)
        assert "next=" in page.url and "paimon" in page.url
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", api_server.password)
        page.click("button[type=submit]")
        page.wait_for_url("**/paimon/?table=db.logs", timeout=30_000)
        page.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
        assert any(c["name"] == "_token" for c in context.cookies())

        # the Airflow UI shows the page in its frame (Browse > Paimon tables)
        page.goto(f"{api_server.base}/plugin/paimon-tables")
        frame_el = page.wait_for_selector("iframe[src='/paimon/']", timeout=30_000)
        frame = frame_el.content_frame()
        assert frame is not None
        frame.wait_for_selector("body[data-loaded='db.events']", timeout=30_000)
        assert frame.inner_text("#table-name") == "db.events"
        assert frame.locator("#table-list a").all_inner_texts()[0].startswith("db.events")
        points = frame.locator("#snapshots-chart circle.snapshot-point")
        assert points.count() == len(EVENTS_KINDS)
        assert [points.nth(i).get_attribute("data-kind") for i in range(points.count())] == EVENTS_KINDS
        bars = frame.locator("#runs-chart rect.run-bar")
        assert sorted(int(bars.nth(i).get_attribute("data-value") or -1) for i in range(bars.count())) == [
            1,
            1,
            4,
            4,
        ]
        assert frame.locator("#stop-trigger-line").count() == 1

        # the results as readable fields, every one of them, mapped tasks named by their table
        token = api_server.token()
        status, body = _get(
            f"{api_server.base}/paimon/api/tables/db.events", {"Authorization": f"Bearer {token}"}
        )
        expected = {
            (m["dag_id"], m["task"]): m for m in json.loads(body)["maintenance"] if m["result"] is not None
        }
        expire = expected[("paimon_expire_snapshots", "table.expire_snapshots [db.events]")]
        row = frame.locator("#maintenance tr[data-task='table.expire_snapshots [db.events]']")
        assert row.count() == 1 and row.get_attribute("data-status") == "dry_run"
        fields = row.locator("dl.fields > div")
        assert sorted(fields.evaluate_all("els => els.map(e => e.dataset.field)")) == sorted(
            k for k in expire["result"] if k != "table"
        )
        for k in ("deleted_bytes", "latest_snapshot_id", "cutoff_millis"):  # past the old 300-char cut
            assert row.locator(f"[data-field={k}] dd").inner_text() == str(expire["result"][k]), k
        planned = frame.locator("#maintenance tr[data-task='plan']").filter(
            has_text="paimon_compact_database"
        )
        assert planned.count() == 1 and planned.get_attribute("data-status") == "dry_run"
        shot("paimon_tables_in_airflow_ui.png")

        # "Airflow DAGs" links work inside the UI's sandboxed frame: the UI goes to the DAG's runs
        link = frame.locator("#dag-links a[href='/dags/paimon_expire_snapshots/runs']")
        assert link.count() == 1
        link.click()
        _top_url_becomes(page, "/dags/paimon_expire_snapshots/runs")
        page.get_by_text(dag_runs["paimon_expire_snapshots"]).first.wait_for(timeout=30_000)
        shot("paimon_tables_dag_link_landed.png")
        page.go_back()  # the browser's Back returns to the page (the UI keeps the frame's path in its URL)
        page.wait_for_function("() => location.pathname.startsWith('/plugin/paimon-tables')", timeout=30_000)
        frame = page.wait_for_selector("iframe[title='Paimon tables']", timeout=30_000).content_frame()
        assert frame is not None
        frame.wait_for_selector("body[data-loaded='db.events']", timeout=30_000)

        # a failure of db.logs is listed with a link to its task log, which opens in the UI
        frame.click("#table-list a[data-table='db.logs']")
        frame.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
        failed = frame.locator("#maintenance tr[data-status='failed']").filter(has_text="paimon_rollback")
        assert failed.count() == 1
        failed.locator("a.log-link").click()
        run_id = dag_runs["paimon_rollback"]
        _top_url_becomes(page, f"/dags/paimon_rollback/runs/{run_id}/tasks/plan")
        page.get_by_text("Log message source details").first.wait_for(timeout=30_000)  # its log tab
        page.get_by_text("Failed", exact=True).first.wait_for(timeout=30_000)
        shot("paimon_tables_failure_log.png")

        # the page on its own, whole
        page.goto(f"{api_server.base}/paimon/?table=db.events")
        page.wait_for_selector("body[data-loaded='db.events']", timeout=30_000)
        shot("paimon_tables_page.png", full_page=True)

        # the "Paimon table" tab of task instances: an unmapped one (the UI's href keeps the literal
        # {MAP_INDEX}; its run's table Param names the table), then a mapped one (its table label)
        page.goto(
            f"{api_server.base}/dags/paimon_rollback/runs/{run_id}/tasks/plan/plugin/paimon-table-of-task"
        )
        tab = page.wait_for_selector("iframe[src*='task_id=plan']", timeout=30_000)
        assert "map_index=-1" in str(tab.get_attribute("src")) or "MAP_INDEX" in str(tab.get_attribute("src"))
        tab_frame = tab.content_frame()
        assert tab_frame is not None
        tab_frame.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
        shot("paimon_table_task_instance_tab_unmapped.png")
        expire_run = dag_runs["paimon_expire_snapshots"]
        page.goto(
            f"{api_server.base}/dags/paimon_expire_snapshots/runs/{expire_run}"
            "/tasks/table.expire_snapshots/mapped/1/plugin/paimon-table-of-task"
        )
        tab = page.wait_for_selector("iframe[src*='task_id=table.expire_snapshots']", timeout=30_000)
        tab_frame = tab.content_frame()
        assert tab_frame is not None
        tab_frame.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
        shot("paimon_table_task_instance_tab.png")
        print("\nscreenshots:", *shots)
    finally:
        context.close()
