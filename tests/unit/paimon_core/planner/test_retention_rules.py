"""Snapshot, tag, partition expiry, manifest and orphan rules of the planner, on crafted table states."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.maintenance.actions import TablePlan
from paimon_core.maintenance.planner import plan_table
from paimon_core.maintenance.retention_need import daily_tag
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import ManifestState, TableState, TagState

from .helpers import DAY, HOUR, MIB, NOW, partition, state

MINUTE = 60_000
#: end of 2026-11-01 UTC: the state the daily tag 2026-11-01 holds
DAY_END = NOW - 3 * HOUR


def plan(
    s: TableState, *, last: Mapping[str, int] | None = None, now: int = NOW, **settings: object
) -> TablePlan:
    return plan_table(s, MaintenanceSettings.from_mapping(settings), now_millis=now, last_success=last or {})


# --- snapshots ------------------------------------------------------------------------------------
def test_snapshots_within_retention_are_kept() -> None:
    p = plan(state())
    assert p.action("expire_snapshots") is None
    assert p.skipped_reasons["expire_snapshots"] == "10 snapshots <= snapshot.num-retained.min 10"
    p = plan(state(snapshot_id=30, snapshot_count=20))
    assert p.skipped_reasons["expire_snapshots"].startswith("20 snapshots, none past retention (")
    assert "the oldest's successor is 10 min old" in p.skipped_reasons["expire_snapshots"]


def test_snapshots_over_retain_max_expire_regardless_of_time() -> None:
    s = state(snapshot_id=40, snapshot_count=30)  # 11..40, all young
    a = plan(s, snapshot_retain_max=20).action("expire_snapshots")
    assert a is not None and a.gain == 10 and a.urgent
    assert a.reason.startswith(
        "10 of 30 snapshots past retention (30 snapshots > snapshot.num-retained.max 20"
    )
    assert a.args == {"retain_max": 20, "retain_min": None}
    assert a.files_to_delete == 40  # snapshot file, 2 manifest lists and a delta manifest each
    table_option = state(
        snapshot_id=40, snapshot_count=30, options={"bucket": "2", "snapshot.num-retained.max": "25"}
    )
    b = plan(table_option).action("expire_snapshots")
    assert b is not None and b.gain == 5 and b.args == {"retain_max": None, "retain_min": None}


def test_snapshots_older_than_time_retained_expire_keeping_retain_min() -> None:
    # 11..40; successors of 11..24 are older than snapshot.time-retained (1 h): 14 expire, 26 stay
    s = state(snapshot_id=40, snapshot_count=30, successor_time_millis=NOW - 5 * HOUR, time_retention_end=25)
    a = plan(s).action("expire_snapshots")
    assert a is not None and a.gain == 14 and not a.urgent
    assert "snapshots older than snapshot.time-retained 60 min" in a.reason
    # retain_min caps it: keep the newest 20
    b = plan(s, snapshot_retain_min=20).action("expire_snapshots")
    assert b is not None and b.gain == 10
    # a consumer still reading snapshot 15 holds 15 and later
    c = plan(
        state(
            snapshot_id=40,
            snapshot_count=30,
            successor_time_millis=NOW - 5 * HOUR,
            time_retention_end=25,
            consumer_min_next_snapshot=15,
        )
    ).action("expire_snapshots")
    assert c is not None and c.gain == 4 and "a consumer holds snapshot 15 and later" in c.reason
    fenced = plan(
        state(snapshot_id=40, snapshot_count=30, time_retention_end=25, consumer_min_next_snapshot=11)
    )
    assert "a consumer still reads from snapshot 11" in fenced.skipped_reasons["expire_snapshots"]


def test_a_reused_state_knows_at_least_the_earliest_snapshot_expired_since() -> None:
    # read an hour ago: nothing past retention then; the successor of 11 is now older than 1 h
    s = state(
        snapshot_id=40,
        snapshot_count=30,
        successor_time_millis=NOW - 90 * MINUTE,
        time_retention_end=11,
        retention_cutoff_millis=NOW - 2 * HOUR,
    )
    a = plan(s).action("expire_snapshots")
    assert a is not None and a.gain == 1 and a.reason.startswith("at least 1 of 30 snapshots past retention")


def test_expiry_runs_at_most_every_expire_interval_unless_over_retain_max() -> None:
    s = state(snapshot_id=40, snapshot_count=30, successor_time_millis=NOW - 5 * HOUR, time_retention_end=25)
    recent = {"expire_snapshots": NOW - 10 * MINUTE}
    p = plan(s, last=recent)
    assert "expiry ran 10 min ago (< expire_interval 1 h)" in p.skipped_reasons["expire_snapshots"]
    assert plan(s, last=recent, snapshot_retain_max=20).action("expire_snapshots") is not None
    assert plan(s, last={"expire_snapshots": NOW - 2 * HOUR}).action("expire_snapshots") is not None


# --- tags -------------------------------------------------------------------------------------------
def test_daily_tag_names_the_last_complete_utc_day() -> None:
    assert daily_tag(NOW) == ("2026-11-01", DAY_END)


def test_the_daily_tag_is_planned_when_missing() -> None:
    a = plan(state()).action("create_tag")
    assert a is not None
    assert a.args == {"tag_name": "2026-11-01", "snapshot_time_millis": DAY_END, "time_retained": "7 d"}
    assert a.reason == "daily tag 2026-11-01 (the table at 2026-11-02 00:00 UTC) is missing, due 3 h ago"
    tagged = state(tags=(TagState("2026-11-01", 15, DAY_END - HOUR),))
    assert plan(tagged).skipped_reasons["create_tag"] == "tag 2026-11-01 exists"
    # created by the last pass after the state was read
    done = plan(state(), last={"create_tag": DAY_END + MINUTE})
    assert done.skipped_reasons["create_tag"] == "tag 2026-11-01 was created at 2026-11-02 00:01 UTC"
    young = plan(state(earliest_snapshot_time_millis=DAY_END + MINUTE))
    assert (
        young.skipped_reasons["create_tag"]
        == "no snapshot at or before 2026-11-02 00:00 UTC to tag 2026-11-01"
    )
    assert (
        plan(state(), tag_period="none").skipped_reasons["create_tag"]
        == "tag_period 'none' in the registry settings"
    )


def test_a_table_with_automatic_tags_gets_its_own_period_tag() -> None:
    opts = {
        "bucket": "2",
        "tag.automatic-creation": "process-time",
        "tag.creation-period": "hourly",
        "sink.process-time-zone": "UTC",
    }
    p = plan(state(options=opts))
    a = p.action("trigger_tag_automatic_creation")
    assert a is not None and p.action("create_tag") is None
    assert a.reason == (
        "tag 2026-11-02 02 of tag.automatic-creation process-time (tag.creation-period hourly) is missing, "
        "due since 2026-11-02 03:00 UTC"
    )
    tagged = state(options=opts, tags=(TagState("2026-11-02 02", 20, NOW - MINUTE),))
    assert plan(tagged).skipped_reasons["trigger_tag_automatic_creation"] == "auto tag 2026-11-02 02 exists"
    batch = plan(state(options={"bucket": "2", "tag.automatic-creation": "batch"}))
    assert batch.skipped_reasons["trigger_tag_automatic_creation"] == (
        "tag.automatic-creation batch: batch writes tag themselves"
    )


def test_tags_past_their_retention_expire() -> None:
    tags = (
        TagState(
            "2026-10-20", 11, NOW - 13 * DAY, create_time_millis=NOW - 13 * DAY, time_retained_ms=7 * DAY
        ),
        TagState("2026-10-30", 12, NOW - 3 * DAY, create_time_millis=NOW - 3 * DAY, time_retained_ms=7 * DAY),
        TagState("manual", 13, NOW - 30 * DAY),
    )
    a = plan(state(tags=tags)).action("expire_tags")
    assert a is not None and a.gain == 1 and a.reason == "1 tag(s) past their time-retained: 2026-10-20"
    # expire_tags ran after the tag expired (the state is older than that run)
    assert plan(state(tags=tags), last={"expire_tags": NOW - HOUR}).action("expire_tags") is None


# --- partitions -------------------------------------------------------------------------------------
def _partitioned(**kw: object) -> TableState:
    parts = [
        partition(f"dt=2026-10-{d:02d}", time=NOW - (33 - d) * DAY - HOUR, size=10 * MIB)
        for d in range(1, 31)
    ]
    return state(partitions=parts, **kw)  # type: ignore[arg-type]


def test_partitions_past_the_expiration_time_expire() -> None:
    assert (
        "no partition_expiration_time in the settings"
        in plan(_partitioned()).skipped_reasons["expire_partitions"]
    )
    a = plan(_partitioned(), partition_expiration_time="30 d").action("expire_partitions")
    assert a is not None and a.gain == 3 and a.args == {"expiration_time": "30 d"}
    assert a.reason.startswith(
        "3 of 30 partition(s) older than partition_expiration_time 30 d: dt=2026-10-01, dt=2026-10-02, dt=2026-10-03"
    )
    table_option = _partitioned(
        options={"bucket": "2", "partition.expiration-time": "25 d", "partition.expiration-max-num": "5"}
    )
    b = plan(table_option).action("expire_partitions")
    assert b is not None and b.gain == 5 and "partition.expiration-max-num 5 per run" in b.reason
    assert b.args == {"expiration_time": None}


def test_partition_expiry_waits_for_its_check_interval() -> None:
    s = _partitioned(collected_at_millis=NOW - 20 * MINUTE)
    p = plan(s, last={"expire_partitions": NOW - 10 * MINUTE}, partition_expiration_time="30 d")
    assert (
        "checked 10 min ago (partition.expiration-check-interval 60 min)"
        in p.skipped_reasons["expire_partitions"]
    )
    assert plan(s, last={"expire_partitions": NOW - 2 * HOUR}, partition_expiration_time="30 d").action(
        "expire_partitions"
    )


def test_unpartitioned_tables_and_unreadable_partition_times() -> None:
    flat = state(partition_keys=(), partitions=[])
    assert (
        plan(flat, partition_expiration_time="1 d").skipped_reasons["expire_partitions"]
        == "the table is not partitioned"
    )
    bad = state(partitions=[partition(time=None)], partition_time_error="InvalidArgumentError: bad formatter")
    reason = plan(bad, partition_expiration_time="1 d").skipped_reasons["expire_partitions"]
    assert reason == "no partition time can be read (InvalidArgumentError: bad formatter)"


# --- manifests and orphan files ---------------------------------------------------------------------
def test_manifests_are_merged_past_the_merge_min_count() -> None:
    few = state(
        manifests=ManifestState(count=12, total_bytes=12 * 4096, small_count=12, small_bytes=12 * 4096)
    )
    assert (
        "12 manifests, 12 small (manifest.merge-min-count 30)"
        in plan(few).skipped_reasons["compact_manifest"]
    )
    many = state(
        manifests=ManifestState(count=31, total_bytes=31 * 4096, small_count=31, small_bytes=31 * 4096)
    )
    a = plan(many).action("compact_manifest")
    assert a is not None and a.gain == 30
    assert a.reason.startswith(
        "31 manifests under manifest.target-file-size 8.0 MiB >= manifest.merge-min-count 30"
    )
    assert plan(many, manifest_compaction=False).action("compact_manifest") is None


def test_orphan_cleanup_runs_every_interval() -> None:
    a = plan(state()).action("remove_orphan_files")
    assert a is not None and a.args == {"older_than_days": 2} and a.reason.startswith("never cleaned")
    recent = plan(state(), last={"remove_orphan_files": NOW - 2 * DAY})
    assert recent.skipped_reasons["remove_orphan_files"] == "last clean 2 d ago < orphan_clean_interval 7 d"
    old = plan(state(), last={"remove_orphan_files": NOW - 14 * DAY}, orphan_min_age_days=3)
    b = old.action("remove_orphan_files")
    assert b is not None and b.gain == pytest.approx(2.0) and b.args == {"older_than_days": 3}
    off = plan(state(), orphan_clean_interval=None)
    assert off.skipped_reasons["remove_orphan_files"] == "orphan_clean_interval is off in the settings"


def test_every_action_is_either_planned_or_explained_in_pass_order() -> None:
    from paimon_core.maintenance.executor import ACTION_ORDER
    from paimon_core.maintenance.planner import RULES

    s = _partitioned(snapshot_id=40, snapshot_count=30)
    p = plan(s, snapshot_retain_max=20, partition_expiration_time="30 d")
    names = [a.action for a in p.actions]
    assert names == sorted(names, key=ACTION_ORDER.index)
    assert set(names).isdisjoint(p.skipped_reasons)
    assert len(names) + len(p.skipped_reasons) == len(RULES) == 8


def test_an_option_the_rules_cannot_parse_is_a_reason_not_a_crash() -> None:
    p = plan(state(options={"bucket": "2", "snapshot.time-retained": "soon"}))
    assert p.skipped_reasons["expire_snapshots"].startswith("cannot plan: InvalidOptionError")
    assert p.action("create_tag") is not None  # the other rules still plan


def test_settings_errors_name_the_setting() -> None:
    with pytest.raises(InvalidArgumentError, match="expire_interval"):
        MaintenanceSettings.from_mapping({"expire_interval": "often"})
