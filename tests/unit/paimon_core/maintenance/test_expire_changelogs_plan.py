"""The maintenance planner plans ``expire_changelogs``: a write-only table with a decoupled changelog
lifecycle keeps ``changelog/changelog-N`` until someone expires them, and the warehouse scheduler
is that someone.

The rule (:func:`~paimon_core.maintenance.retention_need.expire_changelogs_need`) is checked on
crafted states for each reason it gives, and on real tables against what
:class:`~paimon_core.operation.expire_changelogs.ExpireChangelogs` itself would expire (its dry
run) for several option sets; then a whole pass (collect, plan, schedule, execute) on a real
table deletes exactly the planned changelogs, the next collects (the cheap refresh and reuse
paths) plan nothing, and a streaming read of a retained changelog still returns its rows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.maintenance import (
    MaintenanceSettings,
    PassBudget,
    collect_table_state,
    plan_table,
    schedule_pass,
)
from paimon_core.maintenance.actions import TablePlan
from paimon_core.maintenance.executor import ActionItem, BatchResult, execute_batch
from paimon_core.maintenance.lag import lag_alerts
from paimon_core.maintenance.planner import RULES
from paimon_core.maintenance.table_state import TableState
from paimon_core.operation.expire_changelogs import ExpireChangelogs
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead
from paimon_core.utils.clock import ManualClock
from tests.unit.paimon_core.planner.helpers import DAY, HOUR, NOW
from tests.unit.paimon_core.planner.helpers import state as planner_state
from tests.unit.paimon_core.planner.test_table_state import CountingIO, counted

SECOND = 1000
MINUTE = 60 * SECOND
ACTION = "expire_changelogs"

#: What the crafted states' table says: snapshots kept 1..2, changelogs up to 20 for a day.
DECOUPLED = {
    "bucket": "1",
    "write-only": "true",
    "snapshot.num-retained.max": "2",
    "snapshot.num-retained.min": "1",
    "changelog.num-retained.max": "20",
    "changelog.num-retained.min": "1",
    "changelog.time-retained": "1 d",
}


def _state(options: dict[str, str] | None = None, **kw: Any) -> TableState:
    """Snapshots 19..20 and changelogs 11..18 (the oldest 3 h old, inside ``1 d``), collected now."""
    base: dict[str, Any] = {
        "partition_keys": (),
        "partitions": (),
        "snapshot_id": 20,
        "earliest_snapshot_id": 19,
        "earliest_snapshot_time_millis": NOW - 2 * MINUTE,
        "successor_time_millis": NOW - MINUTE,
        "snapshot_count": 2,
        "time_retention_end": 20,
        "earliest_changelog_id": 11,
        "latest_changelog_id": 18,
        "earliest_changelog_time_millis": NOW - 3 * HOUR,
        "changelog_count": 8,
        "changelog_time_retention_end": 11,
        "changelog_retention_cutoff_millis": NOW - DAY,
    }
    base.update(kw)
    return planner_state(
        options=dict(DECOUPLED if options is None else options), primary_keys=("id",), **base
    )


#: Every changelog of the crafted state committed before the ``1 d`` cutoff.
ALL_OLD: dict[str, Any] = {
    "changelog_time_retention_end": 19,
    "earliest_changelog_time_millis": NOW - 3 * DAY,
}


def _plan(
    s: TableState, *, last: dict[str, int] | None = None, settings: MaintenanceSettings | None = None
) -> TablePlan:
    return plan_table(s, settings or MaintenanceSettings(), now_millis=NOW, last_success=last or {})


def _skipped(s: TableState, **kw: Any) -> str:
    p = _plan(s, **kw)
    assert p.action(ACTION) is None, p.action(ACTION)
    return p.skipped_reasons[ACTION]


RULES_TEXT = "changelog.num-retained.min 1, .max 20, changelog.time-retained 24 h"


# --- the rule on crafted states ----------------------------------------------------------------------
def test_the_rule_runs_right_after_snapshot_expiry() -> None:
    names = [name for name, _ in RULES]
    assert names.index(ACTION) == names.index("expire_snapshots") + 1
    p = _plan(_state(**ALL_OLD), settings=MaintenanceSettings(snapshot_retain_max=1, snapshot_retain_min=1))
    planned = [a.action for a in p.actions]
    assert planned.index(ACTION) == planned.index("expire_snapshots") + 1


def test_skip_reasons() -> None:
    coupled = _state(
        options={"bucket": "1"}, earliest_changelog_id=None, latest_changelog_id=None, changelog_count=0
    )
    assert _skipped(coupled) == "not decoupled: changelogs expire with their snapshots"
    none = _state(earliest_changelog_id=None, latest_changelog_id=None, changelog_count=0)
    assert _skipped(none) == "no long-lived changelog"
    assert _skipped(_state(snapshot_id=None, earliest_snapshot_id=None)) == "the table has no snapshot"
    assert _skipped(_state()) == f"8 changelogs, none past retention ({RULES_TEXT}); the oldest is 3 h old"
    at_min = _state(options={**DECOUPLED, "changelog.num-retained.min": "10"}, **ALL_OLD)
    assert _skipped(at_min) == "8 changelogs + 2 snapshots <= changelog.num-retained.min 10"
    single = _state(earliest_changelog_id=18, changelog_count=1, **ALL_OLD)
    assert _skipped(single) == f"1 changelog: the latest stays as the expiry's retained end ({RULES_TEXT})"
    fenced = _state(changelog_consumer_fence=11, **ALL_OLD)
    assert _skipped(fenced) == f"8 changelogs; a consumer still reads from snapshot 11 ({RULES_TEXT})"
    # an option the rule cannot judge is a reason, not a crash of the table's plan
    bad = _state(options={**DECOUPLED, "changelog.num-retained.min": "30"})
    assert _skipped(bad).startswith("cannot plan: InvalidOptionError")


def test_a_planned_expiry_names_its_numbers_and_options() -> None:
    a = _plan(_state(**ALL_OLD)).action(ACTION)
    assert a is not None
    assert a.reason == (
        "7 of 8 changelogs past retention (changelogs older than changelog.time-retained 24 h; keeping "
        "changelog.num-retained.min 1 counted with the snapshots); write-only=true: writers do not expire"
    )
    assert (a.gain, a.files_to_delete, a.args, a.urgent, a.light) == (7.0, 28, {}, False, True)

    by_max = _plan(_state(options={**DECOUPLED, "changelog.num-retained.max": "4"})).action(ACTION)
    assert by_max is not None and by_max.urgent and by_max.gain == 6  # 10 kept > 4: 11..16 regardless of time
    assert by_max.reason.startswith(
        "6 of 8 changelogs past retention (10 changelogs and snapshots > changelog.num-retained.max 4;"
    )

    part = _plan(_state(changelog_consumer_fence=14, **ALL_OLD)).action(ACTION)
    assert part is not None and part.gain == 3 and "; a consumer holds snapshot 14 and later" in part.reason

    limited = _plan(_state(options={**DECOUPLED, "snapshot.expire.limit": "3"}, **ALL_OLD)).action(ACTION)
    assert limited is not None and limited.gain == 7 and limited.files_to_delete == 3 * 4
    assert "; snapshot.expire.limit 3 per run" in limited.reason

    # read an hour ago: the changelogs aged since, so the count is a lower bound
    stale = _state(
        changelog_retention_cutoff_millis=NOW - DAY - HOUR, earliest_changelog_time_millis=NOW - DAY - MINUTE
    )
    a = _plan(stale).action(ACTION)
    assert a is not None and a.reason.startswith("at least 1 of 8 changelogs past retention")


def test_expire_interval_throttles_as_for_snapshots() -> None:
    s = _state(**ALL_OLD)
    recent = {ACTION: NOW - 10 * MINUTE}
    assert _skipped(s, last=recent) == (
        "7 changelog(s) past retention, but changelog expiry ran 10 min ago (< expire_interval 1 h)"
    )
    assert _plan(s, last={ACTION: NOW - 2 * HOUR}).action(ACTION) is not None
    # more than changelog.num-retained.max kept: not throttled (urgent)
    over = _state(options={**DECOUPLED, "changelog.num-retained.max": "4"}, **ALL_OLD)
    assert _plan(over, last=recent).action(ACTION) is not None


def test_an_overdue_changelog_expiry_is_a_lag_alert() -> None:
    # the oldest changelog is 3 d old: past changelog.time-retained (1 d) for 2 d > lag_grace 1 d
    (alert,) = [
        a
        for a in lag_alerts(
            _state(**ALL_OLD),
            MaintenanceSettings(),
            now_millis=NOW,
            last_success={},
            debt_over_since_millis=None,
        )
        if a.kind == ACTION
    ]
    assert alert.since_millis == NOW - 2 * DAY and "expire_changelogs overdue for 2 d" in alert.message


# --- real tables: the rule counts what ExpireChangelogs expires ------------------------------------
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
COMMITS = 10
STEP = SECOND
BASE = {
    "bucket": "1",
    "changelog-producer": "input",
    "write-only": "true",
    "snapshot.num-retained.max": "2",
    "snapshot.num-retained.min": "1",
}


def _rows(i: int) -> pa.Table:
    return pa.table({"id": [i % 3], "v": [f"v{i}"]}, schema=SCHEMA)


def _table(
    tmp_path: Path, options: dict[str, str], *, consumer_at: int | None = None
) -> tuple[FileSystemCatalog, FileStoreTable, ManualClock]:
    """A primary-key table (changelog-producer input, write-only) with 10 commits one second
    apart (snapshot ``i`` committed at ``T0 + (i - 1) s``); ``consumer_at``: a consumer whose next
    snapshot that is, made while it exists."""
    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={**BASE, **options})
    for i in range(COMMITS):
        t.write_arrow(_rows(i))
        if consumer_at is not None and i + 1 == consumer_at:
            t.maintenance.reset_consumer("reader", consumer_at)
        clock.advance(STEP)
    return catalog, t, clock


def _collect(table: FileStoreTable, now: int, previous: TableState | None = None) -> TableState:
    s = collect_table_state(table, now_millis=now, previous=previous)
    assert TableState.from_dict(json.loads(json.dumps(s.to_dict()))) == s  # JSON round trip
    return s


def _changelog_ids(t: FileStoreTable) -> list[int]:
    return ChangelogManager(t.file_io, t.paths).list_ids()


#: option set -> (extra options, consumer's next snapshot, clock advance after the snapshot expiry,
#: changelogs expired). Snapshot expiry keeps 9..10 and leaves changelogs 1..8 (changelog i
#: committed at T0 + (i - 1) s; the clock stands at T0 + 10 s).
CASES: dict[str, tuple[dict[str, str], int | None, int, int]] = {
    # young (changelog.time-retained = snapshot.time-retained 1 h): only what .max 5 exceeds
    "max_only": ({"changelog.num-retained.max": "5", "changelog.num-retained.min": "1"}, None, 0, 5),
    # the cutoff falls between changelogs 4 and 5: time decides
    "min_and_time": (
        {
            "changelog.num-retained.max": "50",
            "changelog.num-retained.min": "3",
            "changelog.time-retained": "1 h",
        },
        None,
        HOUR - 7 * STEP + 1,
        4,
    ),
    # all old: .min 6 keeps 5..10 (counted over changelogs and snapshots)
    "min_binds": (
        {
            "changelog.num-retained.max": "50",
            "changelog.num-retained.min": "6",
            "changelog.time-retained": "1 h",
        },
        None,
        2 * HOUR,
        4,
    ),
    # consumer.changelog-only lets the snapshots go, never the changelogs the consumer reads
    "consumer_fence": (
        {"changelog.num-retained.max": "5", "consumer.changelog-only": "true"},
        4,
        2 * HOUR,
        3,
    ),
    # snapshot.expire.limit 3 per run (snapshot expiry runs until it is done)
    "limit": ({"changelog.num-retained.max": "5", "snapshot.expire.limit": "3"}, None, 0, 3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_planned_count_is_what_expire_changelogs_expires(tmp_path: Path, case: str) -> None:
    options, consumer_at, advance, expected = CASES[case]
    _, t, clock = _table(tmp_path, options, consumer_at=consumer_at)
    while t.maintenance.expire_snapshots().expired_snapshot_ids:
        pass
    assert _changelog_ids(t) == list(range(1, 9)) and t.snapshot_manager.earliest_snapshot_id() == 9
    clock.advance(advance)
    now = clock.now_millis()
    s = _collect(t, now)
    assert (s.earliest_changelog_id, s.latest_changelog_id, s.changelog_count) == (1, 8, 8)
    assert s.changelog_consumer_fence == consumer_at
    a = plan_table(s, MaintenanceSettings(), now_millis=now, last_success={}).action(ACTION)
    dry = ExpireChangelogs(t.store).expire(dry_run=True)
    assert dry.expired_changelog_ids == tuple(range(1, expected + 1))
    assert a is not None
    limit = t.options.snapshot_expire_limit
    assert min(int(a.gain), limit) == expected and a.files_to_delete == 4 * expected
    assert a.reason.startswith(f"{int(a.gain)} of 8 changelogs past retention (")


# --- a whole pass on a real table ---------------------------------------------------------------------
SETTINGS = MaintenanceSettings(
    compaction="none", tag_period="none", orphan_clean_interval=None, manifest_compaction=False
)


def _execute(catalog: FileSystemCatalog, plan: TablePlan, now: int) -> BatchResult:
    """Schedule and run one plan as a maintenance pass does."""
    schedule = schedule_pass([plan], PassBudget(), policy="balanced", now_millis=now, last_maintained={})
    assert schedule.spark_groups == () and schedule.backlog == ()
    items = [ActionItem.from_dict(i) for b in schedule.light_batches for i in b.to_dict()["items"]]
    result = execute_batch(catalog.get_table, items, commit_user_of=lambda n: "test", now_millis=now)
    assert result.failed == () and {o.status for o in result.outcomes} == {"success"}
    return result


def _changelog_reads(io: CountingIO) -> list[str]:
    return [p for p in io.reads if Path(p).name.startswith("changelog-")]


def _stream_changelog(t: FileStoreTable, changelog_id: int) -> list[dict[str, Any]]:
    """The rows a streaming read from ``changelog_id`` gets for it (its changelog files)."""
    changelog = ChangelogManager(t.file_io, t.paths).try_changelog(changelog_id)
    assert changelog is not None
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": str(changelog_id)})
    rows: list[dict[str, Any]] = (
        TableRead(t, row_kind=True).to_arrow(scan.plan_delta(changelog) or []).to_pylist()
    )
    return rows


def test_a_pass_expires_the_changelogs_write_only_writers_leave(tmp_path: Path) -> None:
    catalog, t, clock = _table(
        tmp_path, {"changelog.num-retained.max": "5", "changelog.num-retained.min": "1"}
    )
    rows_before = t.to_arrow().sort_by("id")

    # pass 1: the snapshots go (10 > snapshot.num-retained.max 2); their changelogs stay behind
    now = clock.now_millis()
    s1 = _collect(catalog.get_table("db.t"), now)
    p1 = plan_table(s1, SETTINGS, now_millis=now, last_success={})
    assert [a.action for a in p1.actions] == ["expire_snapshots"]
    assert p1.skipped_reasons[ACTION] == "no long-lived changelog"
    _execute(catalog, p1, now)
    assert _changelog_ids(t) == list(range(1, 9))

    # pass 2: the expired snapshots' collect refreshes the retention; changelog expiry is planned
    clock.advance(STEP)
    now = clock.now_millis()
    watched, io = counted(catalog.get_table("db.t"))
    s2 = _collect(watched, now, previous=s1)
    assert s2.source == "earliest-refresh"
    # the earliest changelog and a binary search over the times: never all 8 changelog files (one
    # listing of changelog/ finds the earliest: snapshot expiry writes no EARLIEST hint)
    assert len(_changelog_reads(io)) <= 1 + 4
    assert (s2.earliest_changelog_id, s2.latest_changelog_id, s2.changelog_count) == (1, 8, 8)
    p2 = plan_table(s2, SETTINGS, now_millis=now, last_success={})
    assert [a.action for a in p2.actions] == [ACTION], p2.skipped_reasons
    planned = p2.actions[0]
    assert planned.gain == 5 and planned.urgent  # changelogs and snapshots: 10 > changelog.num-retained.max 5
    assert planned.reason.startswith(
        "5 of 8 changelogs past retention (10 changelogs and snapshots > changelog.num-retained.max 5;"
    )
    dry = ExpireChangelogs(t.store).expire(dry_run=True)
    assert dry.expired_changelog_ids == (1, 2, 3, 4, 5)
    result = _execute(catalog, p2, now)
    (outcome,) = result.outcomes
    assert outcome.action == ACTION and outcome.result is not None
    assert tuple(outcome.result["expired_changelog_ids"]) == dry.expired_changelog_ids
    assert _changelog_ids(t) == [6, 7, 8]

    # pass 3: the earliest changelog is gone: its range is refreshed, not reused; nothing is left
    clock.advance(STEP)
    now = clock.now_millis()
    s3 = _collect(catalog.get_table("db.t"), now, previous=s2)
    assert s3.source == "earliest-refresh" and s3.snapshot_id == s2.snapshot_id
    assert (s3.earliest_changelog_id, s3.latest_changelog_id, s3.changelog_count) == (6, 8, 3)
    p3 = plan_table(s3, SETTINGS, now_millis=now, last_success={})
    assert p3.actions == ()
    assert p3.skipped_reasons[ACTION].startswith(
        "3 changelogs, none past retention (changelog.num-retained.min 1, .max 5, changelog.time-retained 60 min)"
    )
    # pass 4: unchanged: the previous state is reused and still plans nothing
    clock.advance(STEP)
    now = clock.now_millis()
    watched, io = counted(catalog.get_table("db.t"))
    s4 = _collect(watched, now, previous=s3)
    assert s4.source == "unchanged" and s4.earliest_changelog_id == 6
    assert [Path(p).name for p in io.reads] == ["LATEST"] and io.listings == []  # + existence checks
    assert plan_table(s4, SETTINGS, now_millis=now, last_success={}).actions == ()

    # the table reads the same, and a stream from a retained changelog gets its rows
    assert t.to_arrow().sort_by("id").equals(rows_before)
    for cid in (6, 7, 8):
        assert _stream_changelog(t, cid) == [{"id": (cid - 1) % 3, "v": f"v{cid - 1}", "_ROW_KIND": "+I"}]
