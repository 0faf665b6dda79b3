"""The "Paimon tables" page (``paimon_airflow.ui``) on real tables, a real api-server and a real browser.

1. The FastAPI app in-process (TestClient) with Airflow's real auth manager (simple auth manager,
   real JWTs): the JSON against what paimon_core says of the same tables; requests without a
   valid token refused; a real ``dag.test()`` task result shown as the table's last maintenance.
2. A real ``airflow api-server`` on 127.0.0.1 (own AIRFLOW_HOME, SQLite) with the plugin loaded:
   the page and its JSON through it with a token or the session cookie, refused without.
3. Headless Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright) logs in through
   Airflow's login form, opens the page in the Airflow UI (Browse > Paimon tables), sees the
   table and the charts; screenshots go to ``tests/airflow/artifacts/`` (paths printed).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.utils.clock import ManualClock
from tests.airflow.conftest import DAGS_FOLDER, PLUGINS_FOLDER, paimon_conn
from tests.airflow.live import LiveAirflow, http, launch

pytestmark = pytest.mark.integration

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
    events.compact(partitions=[{"dt": "2026-11-02"}])
    events = catalog.get_table("db.events")
    events.create_tag("2026-11-18", 2)
    events.reset_consumer("reader", 3)

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


#: run ids of the real DAG runs made here, for the api-server test to find again
_DAG_RUNS: dict[str, str] = {}


def test_app_shows_last_maintenance_result_from_a_real_dag_run(
    auth_manager: Any, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real run of ``paimon_expire_snapshots`` (``dag.test``, dry run: it changes nothing) stores
    each table's result in XCom; the page shows it as that table's last maintenance result."""
    import datetime as dt

    from airflow.dag_processing.dagbag import BundleDagBag
    from fastapi.testclient import TestClient

    from paimon_airflow.ui.app import create_app
    from paimon_airflow.ui.source import TableSource

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", paimon_conn(warehouse))
    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    run = bag.dags["paimon_expire_snapshots"].test(
        logical_date=dt.datetime(2026, 1, 2, tzinfo=dt.UTC), run_conf={"dry_run": True}
    )
    assert run.state == "success"
    _DAG_RUNS["paimon_expire_snapshots"] = run.run_id
    admin = {"Authorization": f"Bearer {_jwt(auth_manager, 'ADMIN')}"}
    with TestClient(create_app(TableSource(paimon_conn_id="paimon_default"))) as client:
        for table in ("db.events", "db.logs"):
            report = client.get(f"/api/tables/{table}", headers=admin).json()
            assert report["maintenance_error"] is None
            mine = [m for m in report["maintenance"] if m["run_id"] == run.run_id]
            assert [(m["dag_id"], m["task_id"]) for m in mine] == [
                ("paimon_expire_snapshots", "table.expire_snapshots")
            ]
            assert mine[0]["result"]["table"] == table and mine[0]["map_index"] >= 0
            assert mine[0]["result"]["dry_run"] is True
            # the task instance's "Paimon table" tab finds the table from the task
            ti = {
                "dag_id": "paimon_expire_snapshots",
                "run_id": run.run_id,
                "task_id": "table.expire_snapshots",
            }
            found = client.get(
                "/api/task-table", params={**ti, "map_index": mine[0]["map_index"]}, headers=admin
            )
            assert found.json() == {"table": table}
        other = {"dag_id": "paimon_expire_snapshots", "run_id": run.run_id, "task_id": "list_tables"}
        assert client.get("/api/task-table", params=other, headers=admin).status_code == 404
        assert client.get("/api/task-table", params=other).status_code == 401
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


def test_api_server_serves_the_page_only_with_airflow_auth(api_server: LiveAirflow) -> None:
    base = f"{api_server.base}/paimon"
    for path in ("/", "/api/tables", "/api/tables/db.events"):
        assert _get(base + path)[0] == 401, path
        assert _get(base + path, {"Authorization": "Bearer x.y.z"})[0] == 403, path
        assert _get(base + path, {"Cookie": "_token=expired-or-forged"})[0] == 403, path
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
    if "paimon_expire_snapshots" in _DAG_RUNS:  # the dag.test() run above, read from the shared DB
        assert _DAG_RUNS["paimon_expire_snapshots"] in {m["run_id"] for m in report["maintenance"]}
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


def test_browser_logs_in_and_sees_the_paimon_tables_page(api_server: LiveAirflow, browser: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1600, "height": 1150})
    page = context.new_page()
    try:
        # without a session: the page itself is refused, the UI sends the browser to the login form
        assert page.goto(f"{api_server.base}/paimon/").status == 401
        page.goto(f"{api_server.base}/plugin/paimon-tables")
        page.wait_for_url("**/auth/login**", timeout=30_000)
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", api_server.password)
        page.click("button[type=submit]")
        page.wait_for_url("**/plugin/paimon-tables", timeout=30_000)
        assert any(c["name"] == "_token" for c in context.cookies())

        # the Airflow UI shows the page in its frame (Browse > Paimon tables)
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
        assert frame.locator("#dag-links a[href='/dags/paimon_maintenance/runs']").count() == 1
        in_ui = ARTIFACTS / "paimon_tables_in_airflow_ui.png"
        page.screenshot(path=str(in_ui))

        # the page on its own, whole; then the other table, picked from the list
        page.goto(f"{api_server.base}/paimon/?table=db.events")
        page.wait_for_selector("body[data-loaded='db.events']", timeout=30_000)
        full = ARTIFACTS / "paimon_tables_page.png"
        page.screenshot(path=str(full), full_page=True)
        page.click("#table-list a[data-table='db.logs']")
        page.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
        assert page.locator("#snapshots-chart circle.snapshot-point").count() == 3
        shots = [in_ui, full]
        if "paimon_expire_snapshots" in _DAG_RUNS:
            # a mapped task instance of the dag.test() run: its "Paimon table" tab shows its table
            run_id = _DAG_RUNS["paimon_expire_snapshots"]
            page.goto(
                f"{api_server.base}/dags/paimon_expire_snapshots/runs/{run_id}"
                "/tasks/table.expire_snapshots/mapped/1/plugin/paimon-table-of-task"
            )
            tab = page.wait_for_selector("iframe[src*='task_id=table.expire_snapshots']", timeout=30_000)
            tab_frame = tab.content_frame()
            assert tab_frame is not None
            tab_frame.wait_for_selector("body[data-loaded='db.logs']", timeout=30_000)
            task_tab = ARTIFACTS / "paimon_table_task_instance_tab.png"
            page.screenshot(path=str(task_tab))
            shots.append(task_tab)
        print("\nscreenshots:", *shots)
        assert in_ui.stat().st_size > 10_000 and full.stat().st_size > 10_000
    finally:
        context.close()
