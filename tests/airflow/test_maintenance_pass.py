"""``paimon_maintenance`` as a planned pass, through ``dag.test()`` on a mixed warehouse.

The warehouse (``bench.maintenance_warehouse``): append, fixed-bucket and dynamic-bucket
primary-key tables, partitioned; some need compaction, some only snapshot expiry, some nothing.

* Triggered by hand with the defaults, the pass only plans: nothing changes.
* ``mode=apply``: exactly the tables that needed compaction get a COMPACT snapshot, exactly those
  over their retention lose snapshots, every table reads the same rows (here and through
  pypaimon), the task instances grow with the batches, not with the tables, and every action
  has its ledger row with the task's ids.
* The next pass finds nothing to do and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from bench.maintenance_warehouse import build
from paimon_core import FileSystemCatalog
from tests.airflow.conftest import DAGS_FOLDER

pytestmark = pytest.mark.integration

DAG_ID = "paimon_maintenance"
INCLUDE = r"bench\..*"


@pytest.fixture  # a fresh DAG per test: dag.test() leaves run state on the DAG object
def dag(airflow_db: None) -> Any:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}
    return bag.dags[DAG_ID]


def _snapshot(catalog: FileSystemCatalog, names: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for name in names:
        t = catalog.get_table(name)
        sm = t.snapshot_manager
        rows = t.to_arrow().sort_by([("id", "ascending"), ("dt", "ascending")])
        out[name] = {
            "ids": [s.id for s in sm.snapshots()],
            "kinds": [str(s.commit_kind.value) for s in sm.snapshots()],
            "rows": rows.to_pylist(),
        }
    return out


def _tis(run: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ti in run.get_task_instances():
        out.setdefault(ti.task_id, []).append(str(ti.state))
    return out


def test_plan_then_apply_then_nothing_to_do(dag: Any, paimon_warehouse: str, tmp_path: Path) -> None:
    wh = build(paimon_warehouse, 12, need_compaction=0.25, commits=2, compaction_commits=7)
    # 2 commits: within snapshot.num-retained.max 2; give half of them a third (expiry due)
    catalog = FileSystemCatalog(paimon_warehouse)
    import pyarrow as pa

    over_retention = tuple(n for i, n in enumerate(wh.tables) if i % 2 == 1 and n not in wh.needs_compaction)
    for name in over_retention:
        t = catalog.get_table(name)
        t.write_arrow(pa.table({"id": pa.array([999], pa.int64()), "dt": ["2026-11-02"], "v": ["x"]}, schema=t.arrow_schema))
    before = _snapshot(catalog, wh.tables)

    # 1. by hand, defaults: plan only
    run = dag.test(logical_date=dt.datetime(2026, 11, 27, tzinfo=dt.UTC), run_conf={"include": INCLUDE})
    assert run.state == "success", _tis(run)
    states = _tis(run)
    print(states)
    assert states["plan"] == ["success"]
    assert set(states["maintain"]) == {"skipped"}, states
    assert _snapshot(catalog, wh.tables) == before

    # the compaction debt of the tables that need compaction has been over budget for 3 days (as a
    # pass of 3 days ago would have recorded): the apply pass compacts them, so no lag alert may fire
    from paimon_core.maintenance.state_store import PlannerStateStore

    store = PlannerStateStore(catalog.file_io, paimon_warehouse)
    planned = store.load()
    over = {n: planned.states[n].compaction_debt for n in wh.needs_compaction}
    assert all(d > 0.8 for d in over.values()), over  # over the registry's max_compaction_debt
    three_days_ago = int(dt.datetime(2026, 11, 24, tzinfo=dt.UTC).timestamp() * 1000)
    store.save(
        planned.states,
        now_millis=planned.saved_millis or 0,
        extra={**planned.extra, "debt_over_since": dict.fromkeys(wh.needs_compaction, three_days_ago)},
    )

    # 2. apply
    run = dag.test(
        logical_date=dt.datetime(2026, 11, 27, 1, tzinfo=dt.UTC), run_conf={"include": INCLUDE, "mode": "apply"}
    )
    states = _tis(run)
    assert set(states["maintain"]) == {"success"}, states
    assert states.get("compact_on_spark") == ["skipped"], states  # every compaction fits in the task process
    alerts = run.get_task_instance("lag_alerts").xcom_pull(task_ids="lag_alerts") or []
    assert not [a for a in alerts if a["kind"] == "compaction_debt"], alerts  # measured after the compaction
    assert states["lag_alerts"] == ["success"] and run.state == "success", states
    total_tis = sum(len(v) for v in states.values())
    assert total_tis <= 10, states  # 12 tables: one batch, not 12 x 6 task instances
    after = _snapshot(catalog, wh.tables)
    for name in wh.tables:
        b, a = before[name], after[name]
        assert a["rows"] == b["rows"], name
        compacted = "COMPACT" in a["kinds"] and a["ids"][-1] > b["ids"][-1]
        assert compacted == (name in wh.needs_compaction), (name, b["kinds"], a["kinds"])
        expired = a["ids"][0] > b["ids"][0]
        assert expired == (name in over_retention or name in wh.needs_compaction), (name, b["ids"], a["ids"])
        if name not in wh.needs_compaction and name not in over_retention:
            assert a["ids"] == b["ids"], name

    # the ledger: one row per action, with the task's ids
    from paimon_core.ledger import Ledger

    ledger = Ledger(catalog).read()
    acted = [r for r in ledger.to_pylist() if r["dag_id"] == DAG_ID and r["action"] != "assess"]
    compact_rows = {r["table_name"] for r in acted if r["action"] == "compact" and r["status"] == "success"}
    assert compact_rows == set(wh.needs_compaction)
    assert all(r["task_id"] == "maintain" and r["run_id"] == run.run_id for r in acted)
    assessed = {r["table_name"] for r in ledger.to_pylist() if r["action"] == "assess"}
    assert set(wh.tables) <= assessed
    # lag_alerts measured again what the batches touched: the console and the alerts see each table
    # as the pass left it (its latest snapshot, its debt after compaction), not as the plan found it
    saved = PlannerStateStore(catalog.file_io, paimon_warehouse).load()
    for name in wh.tables:
        state, t = saved.states[name], catalog.get_table(name)
        assert state.snapshot_id == t.snapshot_manager.latest_snapshot_id(), name
        assert state.earliest_snapshot_id == t.snapshot_manager.earliest_snapshot_id(), name
        if name in wh.needs_compaction:
            assert state.compaction_debt < 1.0 and state.health_score == 100, (name, state.health)
    touched = {r["table_name"] for r in acted if r["status"] in ("success", "no_op")}
    assert set(wh.needs_compaction) | set(over_retention) <= touched
    assert saved.extra.get("refreshed_after_pass") == len(touched)
    # each of those measurements is an assess row after the table's actions (the health chart's point
    # after the run), so the console marks no table as changed since it was measured
    ledger_rows = Ledger(catalog).read().to_pylist()
    after_run = {r["table_name"]: r for r in ledger_rows if r["action"] == "assess" and '"after_run":true' in (r["details"] or "")}
    assert set(after_run) == touched
    for name, r in after_run.items():
        assert r["run_id"] == run.run_id and r["health_score"] == saved.states[name].health_score, (name, r)
        assert r["end_time"] >= max(x["end_time"] for x in acted if x["table_name"] == name), name
    from paimon_core.maintenance.overview import warehouse_overview

    overview = {t.table: t for t in warehouse_overview(catalog).tables}
    assert [n for n in wh.tables if overview[n].changed_after_assessed is not None] == [], overview
    # "measured" is the wall clock of the newest assess row, not the run's clock (a day back here)
    for name in wh.tables:
        newest = max(r["end_time"] for r in ledger_rows if r["action"] == "assess" and r["table_name"] == name)
        measured = overview[name].measured_at_millis
        assert measured is not None and measured > saved.states[name].checked_at_millis + 3_600_000, name
        assert abs(measured - int(newest.replace(tzinfo=dt.UTC).timestamp() * 1000)) <= 1, name

    # 3. the next pass: nothing to do
    settled = _snapshot(catalog, wh.tables)
    run = dag.test(
        logical_date=dt.datetime(2026, 11, 27, 2, tzinfo=dt.UTC), run_conf={"include": INCLUDE, "mode": "apply"}
    )
    assert run.state == "success", _tis(run)
    plan = run.get_task_instance("plan").xcom_pull(task_ids="plan", key="summary")
    assert plan["actions"] == 0, json.dumps(plan, indent=1)
    # nothing is scanned again: the last pass measured what it changed; each table costs one metadata read
    assert plan["planned"] == len(wh.tables) and plan["scanned"] == 0, plan
    print(_tis(run))
    assert _snapshot(catalog, wh.tables) == settled


def test_big_compactions_run_grouped_on_spark(dag: Any, paimon_warehouse: str) -> None:
    """Compactions over ``in_process_max_mb`` go to Spark: the due tables of a group in ONE
    spark-submit (``compact_database`` over exactly them), with their leases and ledger rows."""
    wh = build(paimon_warehouse, 6, need_compaction=0.5, commits=1, compaction_commits=6)
    catalog = FileSystemCatalog(paimon_warehouse)
    before = _snapshot(catalog, wh.tables)
    run = dag.test(
        logical_date=dt.datetime(2026, 11, 27, 3, tzinfo=dt.UTC),
        run_conf={"include": INCLUDE, "mode": "apply", "in_process_max_mb": 0},
    )
    states = _tis(run)
    assert run.state == "success", states
    assert states["compact_on_spark"] == ["success"], states  # 3 tables, one Spark application
    result = run.get_task_instance("compact_on_spark", map_index=0).xcom_pull(
        task_ids="compact_on_spark", map_indexes=0
    )
    assert sorted(t["table"] for t in result["tables"] if t.get("snapshot_id")) == sorted(wh.needs_compaction)
    after = _snapshot(catalog, wh.tables)
    for name in wh.tables:
        assert after[name]["rows"] == before[name]["rows"], name
        assert ("COMPACT" in after[name]["kinds"]) == (name in wh.needs_compaction), name
    from paimon_core.ledger import Ledger

    rows = [r for r in Ledger(catalog).read().to_pylist() if r["task_id"] == "compact_on_spark"]
    assert sorted(r["table_name"] for r in rows if r["action"] == "compact_database") == sorted(wh.needs_compaction)
    assert all(r["entry_point"] == "spark_job" and r["cpu_seconds"] for r in rows), rows


def test_work_the_budget_defers_is_kept_for_the_console(dag: Any, paimon_warehouse: str) -> None:
    """A pass whose rewrite budget (``max_rewrite_gb``) is too small for every compaction defers
    the rest; the state document keeps what it deferred and why, and the console's overview shows
    it per table (``deferred``) until the next pass."""
    from paimon_core.maintenance.overview import warehouse_overview
    from paimon_core.maintenance.state_store import PlannerStateStore

    wh = build(paimon_warehouse, 8, need_compaction=0.5, commits=2, compaction_commits=7)
    catalog = FileSystemCatalog(paimon_warehouse)
    run = dag.test(
        logical_date=dt.datetime(2026, 11, 27, tzinfo=dt.UTC),
        run_conf={"include": INCLUDE, "max_rewrite_gb": 1e-9},  # plan only (a manual run's default)
    )
    assert run.state == "success", _tis(run)
    summary = run.get_task_instance("plan").xcom_pull(task_ids="plan", key="summary")
    saved = PlannerStateStore(catalog.file_io, paimon_warehouse).load()
    deferred = saved.extra["deferred"]
    assert len(deferred) == summary["backlog"] > 0, summary
    # one compaction larger than the whole budget runs alone; the others wait, each with why
    assert {d["table"] for d in deferred if d["action"] == "compact"} < set(wh.needs_compaction)
    assert len({d["table"] for d in deferred if d["action"] == "compact"}) == len(wh.needs_compaction) - 1
    assert all("budget" in d["why"] for d in deferred), deferred
    overview = {t.table: t for t in warehouse_overview(catalog).tables}
    for name in wh.tables:
        want = [{"action": d["action"], "why": d["why"]} for d in deferred if d["table"] == name]
        assert [dict(x) for x in overview[name].deferred] == want, name
