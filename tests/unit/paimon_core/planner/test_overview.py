"""The warehouse overview: the planner states and the ledger, without reading the tables."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from bench.maintenance_warehouse import build
from paimon_core import FileSystemCatalog
from paimon_core.ledger import Ledger, LedgerRecord, deferred_ledger
from paimon_core.ledger.record import new_record_id
from paimon_core.maintenance.executor import ActionItem, execute_batch
from paimon_core.maintenance.overview import table_history, warehouse_overview
from paimon_core.maintenance.planner import plan_table
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.state_store import PlannerStateStore
from paimon_core.maintenance.table_state import collect_table_state

DAY = 86_400_000


def test_overview_from_states_and_ledger(local_warehouse: str) -> None:
    w = build(local_warehouse, 6, need_compaction=0.5)
    c = FileSystemCatalog(local_warehouse)
    ledger = Ledger(c)
    ledger.ensure()
    now = int(time.time() * 1000)
    states, items = {}, []
    for t in w.tables:
        st = states[t] = collect_table_state(c.get_table(t), now_millis=now)
        items += [ActionItem(t, a.action, a.args) for a in plan_table(st, MaintenanceSettings(), now_millis=now, last_success={}).actions]
    PlannerStateStore(c.file_io, local_warehouse).save(states, now_millis=now, extra={"last_pass": {"tables": 6}})
    with deferred_ledger():
        execute_batch(c.get_table, items, commit_user_of=lambda t: f"u:{t}", now_millis=now)
    failed = w.tables[1]
    ledger.append(
        [
            LedgerRecord(
                new_record_id(), failed, "expire_snapshots", "failed", now, now + 5, error="OSError: disk",
                dag_id="paimon_maintenance", run_id="r1", task_id="maintain", map_index=0, try_number=1,
            )
        ]
    )

    o = warehouse_overview(c, now_millis=now + 1000)
    assert [t.table for t in o.tables] == sorted(w.tables)
    assert o.last_pass == {"tables": 6}
    by = {t.table: t for t in o.tables}
    for name in w.needs_compaction:
        assert by[name].last_compaction_millis is not None and by[name].health_score is not None
        assert by[name].small_files > 0
    assert by[failed].failures_7d == 1 and by[failed].last_failure is not None
    assert by[failed].last_failure["error"] == "OSError: disk" and by[failed].last_failure["task_id"] == "maintain"
    assert o.failures[0]["table"] == failed
    [day] = o.daily
    assert day["failures"] == 1 and day["bytes_rewritten"] > 0 and day["files_deleted"] > 0
    # a week later nothing has run: orphan cleanup and expiry are overdue -> lag alerts
    later = warehouse_overview(c, now_millis=now + 9 * DAY)
    assert all(t.alerts for t in later.tables), [t.to_dict() for t in later.tables]
    assert later.tables[0].failures_7d == 0 or later.tables[0].table == failed

    history = table_history(c, w.needs_compaction[0], since_millis=now - DAY)
    assert {r["action"] for r in history} >= {"compact", "expire_snapshots"}
    assert all(isinstance(r["start_millis"], int) for r in history)


def test_overview_without_a_pass_or_ledger(local_warehouse: str) -> None:
    c = FileSystemCatalog(local_warehouse)
    c.create_database("db")
    o = warehouse_overview(c, tables=["db.t"])
    assert [t.table for t in o.tables] == ["db.t"] and o.tables[0].health_score is None
    assert o.notes and "no maintenance pass" in o.notes[0]


@pytest.mark.parametrize("n", [3])
def test_overview_is_cached_per_minute(local_warehouse: str, n: int) -> None:
    build(local_warehouse, n)
    c = FileSystemCatalog(local_warehouse)
    now = int(time.time() * 1000)
    a = warehouse_overview(c, now_millis=now)
    assert warehouse_overview(c, now_millis=now) is a


def test_a_table_changed_after_the_pass_measured_it_is_flagged(local_warehouse: str) -> None:
    """Figures measured before an action changed the table (a commit, or snapshots expired) are
    marked as older than the table, naming the action; an action that changed nothing (no_op)
    does not mark it; measuring the table again clears the mark."""
    w = build(local_warehouse, 6, need_compaction=0.5)
    c = FileSystemCatalog(local_warehouse)
    Ledger(c).ensure()
    now = int(time.time() * 1000) - 60_000  # the pass measured a minute ago
    states, items = {}, []
    for t in w.tables:
        st = states[t] = collect_table_state(c.get_table(t), now_millis=now)
        items += [ActionItem(t, a.action, a.args) for a in plan_table(st, MaintenanceSettings(), now_millis=now, last_success={}).actions]
    store = PlannerStateStore(c.file_io, local_warehouse)
    store.save(states, now_millis=now)
    # the tables without compaction debt run only what changes nothing here (orphan clean: no_op)
    items = [i for i in items if i.table in w.needs_compaction or not i.action.startswith("expire")]
    with deferred_ledger():
        batch = execute_batch(c.get_table, items, commit_user_of=lambda t: f"u:{t}", now_millis=now)
    ledger_rows = Ledger(c).read(since_millis=now).to_pylist()
    changed = {
        r["table_name"]
        for r in ledger_rows
        if r["status"] == "success" and (r["snapshot_after"] != r["snapshot_before"] or r["action"] == "expire_snapshots")
    }
    assert set(w.needs_compaction) <= changed, batch
    untouched = set(w.tables) - changed
    assert {r["table_name"] for r in ledger_rows if r["status"] == "no_op"} >= untouched != set()

    o = warehouse_overview(c, now_millis=int(time.time() * 1000))
    by = {t.table: t for t in o.tables}
    for name in w.tables:
        mark = by[name].changed_after_assessed
        if name in changed:
            assert mark is not None and mark["action"] in ("compact", "expire_snapshots"), by[name]
            assert mark["end_millis"] > by[name].assessed_at_millis
            assert by[name].to_dict()["changed_after_assessed"] == dict(mark)
        else:
            assert mark is None, by[name]

    # the next measurement is after the actions: no mark
    later = int(time.time() * 1000) + 1
    store.save({t: collect_table_state(c.get_table(t), now_millis=later, previous=states[t]) for t in w.tables}, now_millis=later)
    again = warehouse_overview(c, now_millis=later + 1000)
    assert all(t.changed_after_assessed is None for t in again.tables), [t.to_dict() for t in again.tables]


def _model(rows: list[dict], now: int) -> tuple[dict, dict, list, dict]:
    """The overview's fold of ledger rows, row by row (the reference for the vectorised one)."""
    import datetime as dt

    last_success: dict = {}
    last_change: dict = {}
    failures: list = []
    daily: dict = {}
    for r in rows:
        end = int(r["end_time"].replace(tzinfo=dt.UTC).timestamp() * 1000)
        name, action, status = r["table_name"], r["action"], r["status"]
        day = time.strftime("%Y-%m-%d", time.gmtime(end / 1000))
        d = daily.setdefault(day, {"day": day, "bytes_rewritten": 0, "files_deleted": 0, "actions": 0, "failures": 0, "cpu_seconds": 0.0})
        if action != "assess":
            d["actions"] += 1
            d["cpu_seconds"] += float(r["cpu_seconds"] or 0.0)
        if action in ("compact", "sort_compact", "compact_database") and status == "success":
            d["bytes_rewritten"] += int(r["bytes_read"] or 0)
        d["files_deleted"] += int(r["files_deleted"] or 0)
        if status in ("success", "no_op"):
            per = last_success.setdefault(name, {})
            per[action] = max(per.get(action, -1), end)
            moved = r["snapshot_after"] is not None and r["snapshot_after"] != r["snapshot_before"]
            changed = status == "success" and action != "assess" and (moved or action in ("expire_snapshots", "expire_changelogs", "purge_files"))
            if changed and end > last_change.get(name, {}).get("end_millis", -1):
                last_change[name] = {"action": action, "end_millis": end}
        elif status == "failed":
            d["failures"] += 1
            if end >= now - 7 * DAY:
                failures.append((name, action, end, r["error"]))
    return last_success, last_change, sorted(failures), daily


def test_the_ledger_fold_equals_a_row_by_row_model() -> None:
    """``_fold_ledger`` (pyarrow group-bys) against the row-by-row fold it replaced, on 3,000
    random rows: every status and kind of action, nulls, 40 days, ties on end times."""
    import datetime as dt
    import random

    from paimon_core.maintenance.overview import _LEDGER_COLUMNS, _fold_ledger

    rng = random.Random(20261128)
    now = 1_795_900_000_000
    actions = ["assess", "compact", "sort_compact", "expire_snapshots", "expire_changelogs", "remove_orphan_files", "create_tag", "rollback_to"]
    statuses = ["success", "no_op", "failed", "dry_run", "skipped"]
    rows = []
    for _ in range(3000):
        end = now - rng.randrange(40 * DAY) // 1000 * 1000  # whole seconds: ties happen
        before = rng.choice([None, 5, 6])
        rows.append(
            {
                "table_name": f"db.t{rng.randrange(30)}", "action": rng.choice(actions), "status": rng.choice(statuses),
                "end_time": dt.datetime.fromtimestamp(end / 1000, dt.UTC).replace(tzinfo=None),
                "snapshot_before": before, "snapshot_after": rng.choice([None, before, 7]),
                "bytes_read": rng.choice([None, 0, 1024]), "files_deleted": rng.choice([None, 0, 3]),
                "cpu_seconds": rng.choice([None, 0.5]), "error": rng.choice([None, "OSError: x"]),
                **dict.fromkeys(("dag_id", "run_id", "task_id", "map_index", "try_number", "bytes_written")),
            }
        )
    schema = {"end_time": pa.timestamp("ms"), "snapshot_before": pa.int64(), "snapshot_after": pa.int64(),
              "bytes_read": pa.int64(), "files_deleted": pa.int64(), "cpu_seconds": pa.float64(),
              "map_index": pa.int32(), "try_number": pa.int32(), "bytes_written": pa.int64()}
    cols = ["table_name", "action", *[c for c in _LEDGER_COLUMNS if c not in ("end_time",)], "end_time"]
    table = pa.table({c: pa.array([r.get(c) for r in rows], schema.get(c, pa.string())) for c in dict.fromkeys(cols)})
    last_success, last_change, failures, daily = _fold_ledger(table, now_millis=now)
    want = _model(rows, now)
    assert last_success == want[0]
    # ties: the model keeps the first row of the newest time, the fold one of them; same time, a changing action
    assert {k: v["end_millis"] for k, v in last_change.items()} == {k: v["end_millis"] for k, v in want[1].items()}
    untied = [k for k, v in want[1].items() if sum(
        1 for r in rows if r["table_name"] == k and r["status"] == "success" and r["action"] != "assess"
        and int(r["end_time"].replace(tzinfo=dt.UTC).timestamp() * 1000) == v["end_millis"]
    ) == 1]
    assert len(untied) > 10 and all(last_change[k]["action"] == want[1][k]["action"] for k in untied)
    assert sorted((f["table"], f["action"], f["end_millis"], f["error"]) for f in failures) == want[2]
    assert daily.keys() == want[3].keys()
    for day, d in daily.items():
        assert d == pytest.approx(want[3][day]), day
