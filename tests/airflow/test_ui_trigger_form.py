"""A person uses the DAGs' trigger forms in the Airflow UI: headless Chromium on a real Airflow.

One Airflow for the module on 127.0.0.1 (api-server, scheduler, dag-processor, triggerer; its own
SQLite, LocalExecutor) with the repo's DAGs and a warehouse whose ``db.t`` has something for every
destructive DAG to delete: 3 snapshots over a retention of 2 (write-only, so only an expiry
removes any), a tag past its retention, a consumer, an orphan file older than any cleanup cutoff.
No JVM here: ``JAVA_HOME`` points nowhere, so a Spark job fails at once (Spark has its own tests).
Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright) logs in through Airflow's login form
and:

1. opens ``paimon_rollback``'s form: bad input is refused (a table name off the Param's pattern
   gets the server's 400 in the form and no run; a negative snapshot id is clamped to 1 on blur);
2. opens the trigger form of **every** DAG of the DagBag (a DAG added later is covered), checks
   that Trigger is enabled as the form opens (once a required Param is filled: ``table`` = db.t,
   and the few other required ones), submits it with every default left as it is, including the
   "Unpause on trigger" box that the form shows ticked for a paused (scheduled) DAG. Then, over
   REST: each DAG got exactly one run, with the Params' defaults as its conf, and no run was
   created anywhere else (no run released by the unpause); every run reaches a final state and
   no file of the warehouse is gone, no snapshot, tag or consumer changed;
3. triggers a run with ``mode=approve_in_ui`` the same way; the run parks on the approval task
   (Airflow's human-in-the-loop ``ApprovalOperator``) with the dry run's plan in its body and the
   table untouched; the person opens the task's *Required Action* tab and presses *Approve*; the
   rollback task runs and the table is at snapshot 2 (snapshot 3 gone).

Screenshots go to ``tests/airflow/artifacts/trigger_form_*.png`` and ``approval_*.png``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.utils.clock import ManualClock
from tests.airflow.conftest import DAGS_FOLDER, paimon_conn
from tests.airflow.live import LiveAirflow, launch
from tests.airflow.test_ui import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.integration, pytest.mark.scenario]  # steps of one story on one live server

DAG_ID = "paimon_rollback"
#: Seconds a run may take to reach a state: only a hang should reach it (2 shared cores).
RUN_TIMEOUT = 300.0
UI_TIMEOUT = 60_000  # ms


#: Values for the Params a form requires (no default); a DAG with another required Param fails
#: the every-DAG test until it is given one here.
REQUIRED = {
    "table": "db.t",
    "consumer_id": "reader",
    "source_table": "db.t",
    "merge_condition": "T.id = S.id",
}
#: Where the warehouse keeps what is not table data: the maintenance ledger's database (it records
#: every action, and expires its own snapshots) and the compaction leases.
NOT_TABLE_DATA = ("paimon_maintenance.db", "_airflow")
DAY_MS = 86_400_000


def build_warehouse(wh: str) -> None:
    """``db.t``: snapshots 1, 2, 3 committed 3 days ago over a retention of 2 (write-only: only an
    expiry removes one), a tag of snapshot 1 retained 1 day, consumer ``reader`` at snapshot 2, and
    an orphan data file 10 days old: every destructive DAG has something to delete."""
    now = int(time.time() * 1000)
    clock = ManualClock(now - 3 * DAY_MS)
    catalog = FileSystemCatalog(wh, clock=clock)
    catalog.create_database("db")
    t = catalog.create_table(
        "db.t",
        pa.schema([("id", pa.int64()), ("v", pa.string())]),
        options={"write-only": "true", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"},
    )
    for i in range(3):
        clock.set(now - 3 * DAY_MS + i * 60_000)
        t.write_arrow(pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]}))
    t = catalog.get_table("db.t")
    t.maintenance.create_tag("old", 1, time_retained="1 d")
    t.maintenance.reset_consumer("reader", 2)
    orphan = os.path.join(t.path, "bucket-0", "data-orphan-from-a-crashed-writer.parquet")
    with open(orphan, "wb") as f:
        f.write(b"no snapshot references this file")
    old = time.time() - 10 * 86_400
    os.utime(orphan, (old, old))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real Airflow with the repo's DAGs and the warehouse of :func:`build_warehouse`."""
    root = tmp_path_factory.mktemp("ui_trigger")
    wh = str(root / "wh")
    build_warehouse(wh)
    started = time.monotonic()
    airflow = launch(
        root / "airflow",
        ("api-server", "scheduler", "dag-processor", "triggerer"),
        migrate=True,
        reserialize=True,
        extra_env={
            "AIRFLOW_CONN_PAIMON_DEFAULT": paimon_conn(wh),
            "PAIMON_RETRY_DELAY_SECONDS": "1",
            "JAVA_HOME": str(root / "no-java"),  # a Spark job fails at once: no JVM in this test
        },
    )
    try:
        airflow.wait_ready()
        token = airflow.token()
        airflow.api(
            "POST", "/pools", {"name": "paimon_spark", "slots": 2, "include_deferred": False}, token=token
        )
        print(f"\nAirflow up in {time.monotonic() - started:.1f} s at {airflow.base}")
        yield {"airflow": airflow, "wh": wh, "token": token}
    finally:
        airflow.stop()


@pytest.fixture(scope="module")
def page(live: dict[str, Any]) -> Iterator[Any]:
    """A logged-in browser page (one context for the module: the login's session cookie)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    airflow: LiveAirflow = live["airflow"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1500})
            p = context.new_page()
            p.set_default_timeout(UI_TIMEOUT)
            p.goto(f"{airflow.base}/dags/{DAG_ID}")
            p.wait_for_url("**/auth/login**")
            p.fill("input[name=username]", "admin")
            p.fill("input[name=password]", airflow.password)
            p.click("button[type=submit]")
            p.wait_for_url(f"**/dags/{DAG_ID}")
            ARTIFACTS.mkdir(exist_ok=True)
            yield p
        finally:
            browser.close()


def _runs(live: dict[str, Any]) -> dict[str, dict[str, Any]]:
    body = live["airflow"].api("GET", f"/dags/{DAG_ID}/dagRuns?limit=100", token=live["token"])
    return {r["dag_run_id"]: r for r in body["dag_runs"]}


def _snapshot_ids(wh: str) -> list[int]:
    return [s.id for s in FileSystemCatalog(wh).get_table("db.t").snapshot_manager.snapshots()]


def _shot(page: Any, name: str) -> Path:
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000, path
    print("screenshot:", path)
    return path


def _open_trigger_form(page: Any, base: str) -> Any:
    """The DAG's page, its *Trigger* button; the dialog with the form rendered from the Params."""
    page.goto(f"{base}/dags/{DAG_ID}")
    page.get_by_role("button", name="Trigger").first.click()
    dialog = page.locator("[role=dialog][data-state=open]").filter(has_text=f"Trigger Dag - {DAG_ID}")
    dialog.locator("input[name=element_table]").wait_for()
    return dialog


def _fill(dialog: Any, page: Any, *, table: str, snapshot_id: str, mode: str) -> None:
    dialog.locator("input[name=element_table]").fill(table)
    dialog.locator("input[name=element_snapshot_id]").fill(snapshot_id)
    dialog.locator("input[name=element_tag]").click()  # leave the number field (it settles on blur)
    dialog.locator("#element_mode").click()  # a select of the Param's enum
    page.get_by_role("option", name=mode, exact=True).click()
    assert dialog.locator("input[name=element_mode]").input_value() == mode


def _submit(dialog: Any, page: Any, live: dict[str, Any]) -> dict[str, Any]:
    """Press *Trigger*; the UI goes to the new run's page; that run from the REST API."""
    before = set(_runs(live))
    dialog.get_by_role("button", name="Trigger").click()
    page.wait_for_url(f"**/dags/{DAG_ID}/runs/*")
    run_id = urllib.parse.unquote(page.url.rsplit("/runs/", 1)[1])
    runs = _runs(live)
    assert set(runs) - before == {run_id}, (sorted(before), sorted(runs))
    return runs[run_id]


def test_trigger_form_refuses_bad_input(page: Any, live: dict[str, Any]) -> None:
    base = live["airflow"].base
    dialog = _open_trigger_form(page, base)
    # the form is built from the DAG's Params: their fields, mode's default
    for name in ("table", "snapshot_id", "tag", "timestamp", "mode"):
        assert dialog.locator(f"input[name=element_{name}]").count() == 1, name
    assert dialog.locator("input[name=element_mode]").input_value() == "plan"
    # a manual DAG is created unpaused: no "Unpause on trigger" box (only the as_latest Param's)
    assert dialog.locator("input[type=checkbox]:not([name^=element_])").count() == 0

    # a table name off the Param's pattern: the server's validation error shows in the form, no run
    _fill(dialog, page, table="no-dot", snapshot_id="2", mode="plan")
    dialog.get_by_role("button", name="Trigger").click()
    error = dialog.get_by_text("Invalid input for param table")
    error.wait_for()
    assert "does not match" in dialog.inner_text()
    _shot(page, "trigger_form_refused.png")
    assert _runs(live) == {} and f"/dags/{DAG_ID}/runs/" not in page.url

    # a negative snapshot id: the number field clamps it to the Param's minimum (1) on blur
    field = dialog.locator("input[name=element_snapshot_id]")
    field.fill("-3")
    dialog.locator("input[name=element_tag]").click()
    assert field.input_value() == "1"
    assert _runs(live) == {}
    page.keyboard.press("Escape")


# --- every DAG's form, submitted as it opens ----------------------------------------------------
def _all_runs(live: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    body = live["airflow"].api("GET", "/dags/~/dagRuns?limit=1000", token=live["token"])
    return {(r["dag_id"], r["dag_run_id"]): r for r in body["dag_runs"]}


def _warehouse_state(wh: str) -> dict[str, Any]:
    """Every file of the tables (not the ledger's or the leases'), and db.t's snapshots, tags and
    consumers."""
    files = set()
    for root, _dirs, names in os.walk(wh):
        rel = os.path.relpath(root, wh)
        if rel.split(os.sep)[0] in NOT_TABLE_DATA:
            continue
        files |= {os.path.join(rel, n) for n in names}
    t = FileSystemCatalog(wh).get_table("db.t")
    return {
        "files": files,
        "snapshots": [s.id for s in t.snapshot_manager.snapshots()],
        "tags": {name: snap.id for name, snap in t.tag_manager.tags().items()},
        "consumers": t.consumer_manager.consumers(),
    }


def _param_defaults(dag: Any) -> tuple[dict[str, Any], list[str]]:
    """The conf a form submitted as it opens sends (each Param's default), and the required Params."""
    defaults: dict[str, Any] = {}
    required = []
    for name in dag.params:
        param = dag.params.get_param(name)
        if type(param.value).__name__ != "ArgNotSet":  # a default (None too)
            defaults[name] = param.value
        else:
            required.append(name)
    return defaults, required


def _unpaused_by_the_form(live: dict[str, Any], dag_id: str, failures: list[str]) -> None:
    """The form's ticked box sends ``PATCH is_paused=false`` along with the trigger, neither waited
    for nor retried by the UI; on this test's SQLite it can fail ("database is locked", HTTP 500)
    while task processes write, leaving the run queued on a paused DAG. Then it is sent again here,
    as the person would click the toggle (and noted in the test's output)."""
    airflow: LiveAirflow = live["airflow"]
    deadline = time.monotonic() + 10
    while airflow.api("GET", f"/dags/{dag_id}", token=live["token"])["is_paused"]:
        if time.monotonic() > deadline:
            failures.append(dag_id)
            _wait(f"{dag_id} unpaused", lambda: _patch_unpause(live, dag_id), timeout=60)
            return
        time.sleep(0.5)


def _patch_unpause(live: dict[str, Any], dag_id: str) -> bool:
    from tests.airflow.live import http

    status, _ = http(
        "PATCH",
        f"{live['airflow'].base}/api/v2/dags/{dag_id}",
        {"is_paused": False},
        {"Authorization": f"Bearer {live['token']}"},
    )
    return status == 200


def test_every_dags_form_submitted_as_it_opens_starts_one_run_and_deletes_nothing(
    page: Any, live: dict[str, Any]
) -> None:
    from airflow.dag_processing.dagbag import BundleDagBag

    airflow: LiveAirflow = live["airflow"]
    token, wh = live["token"], live["wh"]
    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {} and len(bag.dags) >= 14, bag.import_errors
    before = _warehouse_state(wh)
    runs_before = _all_runs(live)
    started = time.monotonic()
    triggered: dict[str, dict[str, Any]] = {}
    unpause_failures: list[str] = []
    for dag_id in sorted(bag.dags):
        dag = bag.dags[dag_id]
        defaults, required = _param_defaults(dag)
        unknown = [p for p in required if p not in REQUIRED]
        assert not unknown, f"{dag_id}: required Params {unknown}: give this test a value for them"
        paused = airflow.api("GET", f"/dags/{dag_id}", token=token)["is_paused"]
        scheduled = type(dag.timetable).__name__ not in ("NullTimetable",)
        assert paused is scheduled, (dag_id, paused)  # manual DAGs are created unpaused

        page.goto(f"{airflow.base}/dags/{dag_id}")
        page.get_by_role("button", name="Trigger").first.click()
        dialog = page.locator("[role=dialog][data-state=open]").filter(has_text=f"Trigger Dag - {dag_id}")
        dialog.wait_for()
        button = dialog.get_by_role("button", name="Trigger")
        for name in required:
            field = dialog.locator(f"input[name=element_{name}]")
            field.wait_for()
            assert button.is_disabled(), f"{dag_id}: Trigger enabled without required {name}"
            field.fill(REQUIRED[name])
        # the form submittable as it opens: the regression of 6 DAGs whose button stayed disabled
        page.wait_for_function("b => !b.disabled", arg=button.element_handle(), timeout=10_000)
        unpause = dialog.locator("input[type=checkbox]:not([name^=element_])")
        assert unpause.count() == (1 if paused else 0), dag_id
        if paused:
            assert unpause.is_checked(), f"{dag_id}: the UI's 'Unpause on trigger' box is ticked by default"
        if "dry_run" in defaults:
            assert dialog.locator("input[name=element_dry_run]").is_checked(), f"{dag_id}: dry_run off"
        page.screenshot(path=str(ARTIFACTS / f"trigger_form_defaults_{dag_id}.png"))
        submitted = dt.datetime.now(dt.UTC)
        button.click()
        page.wait_for_url(f"**/dags/{dag_id}/runs/*")
        run_id = urllib.parse.unquote(page.url.rsplit("/runs/", 1)[1])
        triggered[dag_id] = {
            "run_id": run_id,
            "conf": {**defaults, **{p: REQUIRED[p] for p in required}},
            "submitted": submitted,
            "paused": paused,
        }
        if paused:
            _unpaused_by_the_form(live, dag_id, unpause_failures)
    forms = time.monotonic() - started

    def all_final() -> Any:
        runs = _all_runs(live)
        states = {d: runs[(d, t["run_id"])]["state"] for d, t in triggered.items()}
        return runs if all(s in ("success", "failed") for s in states.values()) else None

    try:
        runs = _wait("every triggered run to finish", all_final)
    except AssertionError:
        runs = _all_runs(live)
        stuck = {}
        for dag_id, t in triggered.items():
            if runs[(dag_id, t["run_id"])]["state"] not in ("success", "failed"):
                tis = airflow.api(
                    "GET",
                    f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(t['run_id'], safe='')}/taskInstances?limit=100",
                    token=token,
                )["task_instances"]
                stuck[dag_id] = [(ti["task_id"], ti["map_index"], ti["state"]) for ti in tis]
        raise AssertionError(f"runs not final: {stuck}\n{airflow.tail('scheduler', 3000)}") from None
    time.sleep(3)  # a few scheduler loops: a run released by an unpause would exist by now
    runs = _all_runs(live)
    finished = time.monotonic() - started
    # exactly one new run per DAG, the one submitted, with the Params' defaults as conf
    for dag_id, t in triggered.items():
        run = runs[(dag_id, t["run_id"])]
        assert run["run_type"] == "manual", run
        assert run["conf"] == t["conf"], (dag_id, run["conf"], t["conf"])
    new = {
        k: r
        for k, r in runs.items()
        if k not in runs_before and k[1] != triggered.get(k[0], {}).get("run_id")
    }
    # the only other runs allowed: a scheduled run of a cron time AFTER its DAG was unpaused (on time)
    released = {
        k: (r["run_type"], r["run_after"])
        for k, r in new.items()
        if not (
            r["run_type"] == "scheduled"
            and dt.datetime.fromisoformat(r["run_after"].replace("Z", "+00:00"))
            > triggered[k[0]]["submitted"]
        )
    }
    assert released == {}, f"runs nobody triggered: {released}"
    for dag_id, t in triggered.items():  # the form's box unpaused the paused DAGs; nothing came of it
        assert airflow.api("GET", f"/dags/{dag_id}", token=token)["is_paused"] is False, dag_id
        if t["paused"]:
            airflow.api("PATCH", f"/dags/{dag_id}", {"is_paused": True}, token=token)
    # nothing deleted: no file of a table gone, snapshots, tags and consumers as they were
    after = _warehouse_state(wh)
    assert before["files"] - after["files"] == set(), sorted(before["files"] - after["files"])
    assert after["snapshots"] == before["snapshots"] == [1, 2, 3]
    assert after["consumers"] == before["consumers"] == {"reader": 2}
    assert {k: v for k, v in after["tags"].items() if k in before["tags"]} == before["tags"], after["tags"]
    states = {d: runs[(d, t["run_id"])]["state"] for d, t in triggered.items()}
    failed = {}
    for dag_id, state in states.items():
        if state == "failed":
            tis = airflow.api(
                "GET",
                f"/dags/{dag_id}/dagRuns/{urllib.parse.quote(triggered[dag_id]['run_id'], safe='')}"
                "/taskInstances?limit=100",
                token=token,
            )["task_instances"]
            failed[dag_id] = sorted({t["task_id"] for t in tis if t["state"] == "failed"})
    print(
        f"\n{len(triggered)} forms submitted in {forms:.1f} s, all runs final after {finished:.1f} s; "
        f"states {states}; failed tasks {failed}; files added {sorted(after['files'] - before['files'])}; "
        f"the UI's unpause failed (SQLite locked) and was sent again for {unpause_failures}"
    )
    page.goto(f"{airflow.base}/dags")
    page.get_by_text("paimon_tags").first.wait_for()
    _shot(page, "trigger_form_every_dag_runs.png")


def _wait(what: str, check: Any, timeout: float = RUN_TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(1)


def test_approve_in_ui_run_rolls_back_after_a_person_approves(page: Any, live: dict[str, Any]) -> None:
    airflow: LiveAirflow = live["airflow"]
    token = live["token"]
    assert _snapshot_ids(live["wh"]) == [1, 2, 3]

    dialog = _open_trigger_form(page, airflow.base)
    _fill(dialog, page, table="db.t", snapshot_id="2", mode="approve_in_ui")
    run = _submit(dialog, page, live)
    run_id = run["dag_run_id"]
    assert run["conf"]["mode"] == "approve_in_ui" and run["conf"]["snapshot_id"] == 2
    quoted = urllib.parse.quote(run_id, safe="")
    hitl_path = f"/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances/approve/-1/hitlDetails"

    def awaiting() -> Any:
        runs = _runs(live)
        if runs[run_id]["state"] == "failed":
            raise AssertionError(f"{run_id} failed:\n{airflow.tail('scheduler', 2000)}")
        ti = airflow.api("GET", f"/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances/approve", token=token)
        return ti if ti["state"] == "awaiting_input" else None

    _wait("the approval task to await input", awaiting)
    # the person has not answered yet: the dry run planned, nothing changed
    detail = airflow.api("GET", hitl_path, token=token)
    assert detail["response_received"] is False and detail["options"] == ["Approve", "Reject"]
    assert '"deleted_snapshot_ids": [\n    3\n  ]' in detail["body"]
    assert _snapshot_ids(live["wh"]) == [1, 2, 3]

    page.goto(f"{airflow.base}/dags/{DAG_ID}/runs/{quoted}/tasks/approve/required_actions")
    page.get_by_text("Roll back db.t?").wait_for()
    _shot(page, "approval_required_action.png")
    page.get_by_role("button", name="Approve", exact=True).click()

    def finished() -> Any:
        state = _runs(live)[run_id]["state"]
        if state == "failed":
            raise AssertionError(f"{run_id} failed:\n{airflow.tail('scheduler', 2000)}")
        return state == "success"

    _wait("the run to finish", finished)
    detail = airflow.api("GET", hitl_path, token=token)
    assert detail["chosen_options"] == ["Approve"] and detail["responded_by_user"]["name"] == "admin"
    tis = airflow.api("GET", f"/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances", token=token)
    states = {t["task_id"]: t["state"] for t in tis["task_instances"]}
    assert states == {
        "plan": "success",
        "decide": "success",
        "approve": "success",
        "no_approval_needed": "skipped",
        "rollback": "success",
    }, states
    result = airflow.api(
        "GET", f"/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances/rollback/xcomEntries/return_value", token=token
    )
    value = result["value"] if isinstance(result["value"], dict) else json.loads(result["value"])
    assert value["dry_run"] is False and value["deleted_snapshot_ids"] == [3]
    assert _snapshot_ids(live["wh"]) == [1, 2]
    rows = FileSystemCatalog(live["wh"]).get_table("db.t").to_arrow()
    assert sorted(rows.column("id").to_pylist()) == [0, 1]
    page.goto(f"{airflow.base}/dags/{DAG_ID}/runs/{quoted}")
    page.get_by_text(run_id).first.wait_for()
    _shot(page, "approval_done.png")
