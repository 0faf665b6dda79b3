"""A person runs ``paimon_rollback`` from the Airflow UI: headless Chromium on a real Airflow.

One Airflow for the module on 127.0.0.1 (api-server, scheduler, dag-processor, triggerer; its own
SQLite, LocalExecutor), a warehouse with ``db.t`` (3 snapshots). Chromium (Debian's
``/usr/bin/chromium`` driven by Playwright) logs in through Airflow's login form and:

1. opens the DAG's page, presses *Trigger*, fills the form Airflow renders from the DAG's Params
   (table, snapshot id, mode) and submits it, leaving the DAG paused; the REST API shows one
   queued run with exactly that conf (then deletes it).
   Bad input is refused: a table name off the Param's pattern gets the server's 400 in the form
   and no run; a negative snapshot id is clamped by the form to the Param's minimum (1) on blur,
   so it never reaches a run.
2. triggers a run with ``mode=approve_in_ui`` the same way; the run parks on the approval task
   (Airflow's human-in-the-loop ``ApprovalOperator``) with the dry run's plan in its body and the
   table untouched; the person opens the task's *Required Action* tab and presses *Approve*; the
   rollback task runs and the table is at snapshot 2 (snapshot 3 gone).

Screenshots go to ``tests/airflow/artifacts/trigger_form_*.png`` and ``approval_*.png``.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.conftest import paimon_conn
from tests.airflow.live import LiveAirflow, launch
from tests.airflow.test_ui import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.integration

DAG_ID = "paimon_rollback"
#: Seconds a run may take to reach a state: only a hang should reach it (2 shared cores).
RUN_TIMEOUT = 300.0
UI_TIMEOUT = 60_000  # ms


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real Airflow with the repo's DAGs and a warehouse whose ``db.t`` has snapshots 1, 2, 3."""
    root = tmp_path_factory.mktemp("ui_trigger")
    wh = str(root / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    for i in range(3):
        t.write_arrow(pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]}))
    started = time.monotonic()
    airflow = launch(
        root / "airflow",
        ("api-server", "scheduler", "dag-processor", "triggerer"),
        migrate=True,
        reserialize=True,
        extra_env={"AIRFLOW_CONN_PAIMON_DEFAULT": paimon_conn(wh)},
    )
    try:
        airflow.wait_ready()
        print(f"\nAirflow up in {time.monotonic() - started:.1f} s at {airflow.base}")
        yield {"airflow": airflow, "wh": wh, "token": airflow.token()}
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


def _keep_paused(dialog: Any) -> None:
    """Untick "Unpause on trigger": test 1's run only has to exist (test 2's must not queue behind it)."""
    unpause = dialog.locator("input[type=checkbox]:not([name^=element_])")  # not a Param's (as_latest)
    assert unpause.count() == 1 and unpause.is_checked()
    dialog.get_by_text(f"Unpause {DAG_ID} on trigger").click()
    assert not unpause.is_checked()


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


def test_trigger_form_fills_params_and_refuses_bad_input(page: Any, live: dict[str, Any]) -> None:
    base = live["airflow"].base
    dialog = _open_trigger_form(page, base)
    # the form is built from the DAG's Params: their fields, mode's default
    for name in ("table", "snapshot_id", "tag", "timestamp", "mode"):
        assert dialog.locator(f"input[name=element_{name}]").count() == 1, name
    assert dialog.locator("input[name=element_mode]").input_value() == "plan"
    _keep_paused(dialog)

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

    dialog = _open_trigger_form(page, base)  # afresh: without the error above
    _keep_paused(dialog)
    _fill(dialog, page, table="db.t", snapshot_id="2", mode="plan")
    _shot(page, "trigger_form_filled.png")
    run = _submit(dialog, page, live)
    assert run["conf"] == {
        "table": "db.t", "snapshot_id": 2, "tag": None, "timestamp": None, "as_latest": False, "mode": "plan"
    }
    assert run["run_type"] == "manual" and run["state"] == "queued"
    page.get_by_text(run["dag_run_id"]).first.wait_for()
    _shot(page, "trigger_form_result.png")
    airflow = live["airflow"]
    assert airflow.api("GET", f"/dags/{DAG_ID}", token=live["token"])["is_paused"] is True
    airflow.api("DELETE", f"/dags/{DAG_ID}/dagRuns/{urllib.parse.quote(run['dag_run_id'], safe='')}")


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
