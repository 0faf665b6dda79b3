"""The planner's compaction choices against Paimon's trigger rules, on crafted table states."""

from __future__ import annotations

import pytest

from paimon_core.maintenance.actions import PlannedAction, TablePlan
from paimon_core.maintenance.planner import plan_table
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState
from paimon_core.tag.tag_period import to_local_datetime

from .helpers import DAY, HOUR, MIB, NOW, append_bucket, partition, pk_bucket, state

L0 = 0
MAX = 5  # num-levels defaults to num-sorted-run.compaction-trigger + 1 = 6: levels 0..5


def plan(s: TableState, **settings: object) -> TablePlan:
    return plan_table(s, MaintenanceSettings.from_mapping(settings), now_millis=NOW, last_success={})


def compact(s: TableState, **settings: object) -> PlannedAction | None:
    return plan(s, **settings).action("compact")


def l0_runs(n: int, size: int = MIB) -> list[tuple[int, int, int]]:
    return [(L0, size, 1)] * n


# --- primary-key tables: UniversalCompaction -------------------------------------------------------
def test_below_the_run_trigger_nothing_is_compacted_and_the_plan_says_why() -> None:
    s = state(buckets=[pk_bucket([*l0_runs(3), (MAX, 1024 * MIB, 4)])])
    p = plan(s)
    assert p.action("compact") is None
    assert p.skipped_reasons["compact"].startswith("no bucket needs compaction: at most 4 sorted run(s)")
    assert "num-sorted-run.compaction-trigger 5" in p.skipped_reasons["compact"]


def test_at_the_run_trigger_the_level0_runs_are_picked_by_size_ratio() -> None:
    # 4 level-0 runs of 1 MiB + a 1 GiB max-level run: 5 runs >= trigger 5, no size amplification;
    # size ratio absorbs the four small runs and stops at the big one (Java UniversalCompaction)
    s = state(buckets=[pk_bucket([*l0_runs(4), (MAX, 1024 * MIB, 8)])])
    a = compact(s)
    assert a is not None and a.bytes_to_read == 4 * MIB
    assert "bucket dt=2026-11-01/0: 5 sorted runs >= num-sorted-run.compaction-trigger 5" in a.reason
    assert "size amplification" not in a.reason
    assert a.args == {"compact_strategy": "minor", "partitions": None, "partition_idle_time": None}
    assert a.gain == 3  # 4 runs (and files) into 1
    assert not a.needs_spark and not a.urgent


def test_the_table_trigger_option_is_honoured() -> None:
    s = state(
        options={"bucket": "2", "num-sorted-run.compaction-trigger": "3"},
        buckets=[pk_bucket([*l0_runs(2), (3, 1024 * MIB, 8)])],  # num-levels = 4: max level 3
    )
    a = compact(s)
    assert a is not None and "3 sorted runs >= num-sorted-run.compaction-trigger 3" in a.reason


def test_size_amplification_compacts_every_run_into_the_max_level() -> None:
    # newer runs 3 x 40 MiB = 120 MiB > 200 % of... no: 5 runs, newer 4 x 30 MiB vs oldest 50 MiB: 240 % > 200 %
    s = state(buckets=[pk_bucket([*l0_runs(4, 30 * MIB), (MAX, 50 * MIB, 1)])])
    a = compact(s)
    assert a is not None and a.bytes_to_read == 170 * MIB
    assert "size amplification 240% > compaction.max-size-amplification-percent 200" in a.reason
    assert a.needs_spark  # 170 MiB > in_process_max_bytes 64 MiB
    local = compact(s, compaction_mode="local")
    assert local is not None and not local.needs_spark
    bigger = compact(s, in_process_max_bytes=200 * MIB)
    assert bigger is not None and not bigger.needs_spark


def test_more_runs_than_the_stop_trigger_is_urgent() -> None:
    s = state(buckets=[pk_bucket([*l0_runs(9), (MAX, 1024 * MIB, 8)])])  # 10 runs > stop trigger 8
    a = compact(s)
    assert a is not None and a.urgent
    assert "10 sorted runs > num-sorted-run.stop-trigger 8: writers wait for compaction" in a.reason


def test_optimization_interval_forces_a_full_compaction_below_the_trigger() -> None:
    opts = {"bucket": "2", "compaction.optimization-interval": "1 h"}
    runs = [(L0, MIB, 1), (MAX, 100 * MIB, 2)]
    # creation times are stored as local wall-clock millis, as Paimon writes them
    import datetime as dt

    def stored(epoch: int) -> int:
        return int((to_local_datetime(epoch, None) - dt.datetime(1970, 1, 1)).total_seconds() * 1000)

    old = state(options=opts, buckets=[pk_bucket(runs, created=stored(NOW - 3 * HOUR))])
    a = compact(old)
    assert a is not None and a.bytes_to_read == 101 * MIB
    assert "the last full compaction was 3 h ago > compaction.optimization-interval 1 h" in a.reason
    fresh = state(options=opts, buckets=[pk_bucket(runs, created=stored(NOW - 10 * 60_000))])
    assert compact(fresh) is None


def test_lookup_tables_compact_level0_at_once() -> None:
    # deletion vectors: ForceUpLevel0Compaction; level-0 rows are invisible to batch reads
    s = state(
        options={"bucket": "2", "deletion-vectors.enabled": "true"},
        buckets=[pk_bucket([(L0, MIB, 1), (MAX, 100 * MIB, 2)])],
    )
    a = compact(s)
    assert a is not None and a.bytes_to_read == MIB  # level 0 up into the level below the max run
    assert "1 level-0 file(s) on a table that needs lookup" in a.reason
    plain = state(buckets=[pk_bucket([(L0, MIB, 1), (MAX, 100 * MIB, 2)])])
    assert compact(plain) is None


def test_full_compaction_by_registry_and_by_delta_commits() -> None:
    buckets = [
        pk_bucket([(L0, MIB, 1), (MAX, 100 * MIB, 2)]),
        pk_bucket(
            [
                (MAX, 10 * MIB, 1),
            ],
            bucket=1,
        ),
    ]
    s = state(buckets=buckets)
    full = compact(s, compaction="full")
    assert full is not None and full.args["compact_strategy"] == "full" and full.bytes_to_read == 101 * MIB
    assert compact(s) is None  # minor: 2 runs < trigger
    due = state(
        options={"bucket": "2", "full-compaction.delta-commits": "3"},
        buckets=buckets,
        appends_since_compact=3,
    )
    a = compact(due)
    assert a is not None and a.args["compact_strategy"] == "full"
    assert "full-compaction.delta-commits 3 reached (3 commits since the last compaction)" in a.reason
    not_yet = state(
        options={"bucket": "2", "full-compaction.delta-commits": "3"},
        buckets=buckets,
        appends_since_compact=2,
    )
    assert compact(not_yet) is None


def test_offpeak_hours_are_respected_unless_writers_stall() -> None:
    hour = to_local_datetime(NOW, None).hour
    outside = {
        "bucket": "2",
        "compaction.offpeak.start.hour": str((hour + 2) % 24),
        "compaction.offpeak.end.hour": str((hour + 4) % 24),
    }
    inside = {
        "bucket": "2",
        "compaction.offpeak.start.hour": str(hour),
        "compaction.offpeak.end.hour": str((hour + 2) % 24),
    }
    runs = [*l0_runs(5), (MAX, 1024 * MIB, 8)]
    p = plan(state(options=outside, buckets=[pk_bucket(runs)]))
    assert p.action("compact") is None
    assert (
        "1 bucket(s) wait for the off-peak hours (compaction.offpeak.start.hour"
        in p.skipped_reasons["compact"]
    )
    assert compact(state(options=outside, buckets=[pk_bucket(runs)]), respect_offpeak=False) is not None
    assert compact(state(options=inside, buckets=[pk_bucket(runs)])) is not None
    stalled = compact(state(options=outside, buckets=[pk_bucket([*l0_runs(9), (MAX, MIB, 1)])]))
    assert stalled is not None and stalled.urgent


def test_partitions_written_within_the_idle_time_are_left_alone() -> None:
    hot, cold = "dt=2026-11-02", "dt=2026-11-01"
    runs = [*l0_runs(5), (MAX, 1024 * MIB, 8)]
    s = state(
        buckets=[pk_bucket(runs, part=cold), pk_bucket(runs, part=hot)],
        partitions=[partition(cold, created=NOW - 2 * DAY), partition(hot, created=NOW - 10 * 60_000)],
    )
    a = compact(s, partition_idle_time="1 h")
    assert a is not None and a.bytes_to_read == 5 * MIB
    assert a.args == {
        "compact_strategy": "minor",
        "partitions": [{"dt": "2026-11-01"}],
        "partition_idle_time": "1 h",
    }
    assert "1 partition(s) written within partition_idle_time 1 h left alone" in a.reason
    # the table may carry its own idle time
    own = state(
        options={"bucket": "2", "partition.idle-time-to-compact": "1 h"},
        buckets=list(s.buckets),
        partitions=list(s.partitions),
    )
    assert compact(own) == a
    everything = compact(s)
    assert (
        everything is not None
        and everything.args["partitions"] is None
        and everything.bytes_to_read == 10 * MIB
    )


def test_no_compaction_when_the_registry_says_none_the_table_is_empty_or_postponed() -> None:
    runs = [*l0_runs(6), (MAX, MIB, 1)]
    assert plan(state(buckets=[pk_bucket(runs)]), compaction="none").skipped_reasons["compact"] == (
        "compaction is 'none' in the registry settings"
    )
    assert (
        plan(state(snapshot_id=None, earliest_snapshot_id=None)).skipped_reasons["compact"]
        == "the table has no snapshot"
    )
    # postpone-bucket tables: real buckets are left to the postpone compaction's own rules; it
    # is due exactly when bucket-postpone holds files (their rows are unreadable until then)
    postponed = plan(state(options={"bucket": "-2"}, buckets=[pk_bucket([(MAX, MIB, 1)])]))
    assert postponed.skipped_reasons["compact"].startswith("no postpone files (bucket = -2)")
    # real buckets with level-0 runs the strategy picks: the postpone compaction's level-0 markers
    level0 = compact(state(options={"bucket": "-2"}, buckets=[pk_bucket(runs)]))
    assert level0 is not None and level0.args["partitions"] is None and level0.args["compact_strategy"] == "minor"
    pending = compact(state(options={"bucket": "-2"}, buckets=[pk_bucket(runs), pk_bucket(l0_runs(3), bucket=-2)]))
    assert pending is not None and pending.urgent and pending.args["partitions"] is None
    assert pending.bytes_to_read == 3 * MIB and "bucket-postpone" in pending.reason


def test_write_only_tables_say_nothing_else_compacts_them() -> None:
    a = compact(
        state(
            options={"bucket": "2", "write-only": "true"}, buckets=[pk_bucket([*l0_runs(5), (MAX, MIB, 1)])]
        )
    )
    assert a is not None and "write-only=true: no writer compacts this table" in a.reason


def test_priority_is_gain_over_bytes_rewritten() -> None:
    small = compact(state(buckets=[pk_bucket([*l0_runs(5, MIB), (MAX, 1024 * MIB, 8)])]))
    big = compact(state(buckets=[pk_bucket([*l0_runs(5, 20 * MIB), (MAX, 10240 * MIB, 8)])]))
    assert small is not None and big is not None
    assert small.gain == big.gain  # the same runs removed
    assert small.priority > big.priority  # for fewer bytes


# --- append tables: what Paimon's pickers chose, as the state recorded it ------------------------
def test_unaware_append_compacts_the_partitions_with_bins() -> None:
    other = "dt=2026-10-31"
    s = state(
        primary_keys=(),
        options={"bucket": "-1"},
        buckets=[append_bucket(files=8, minor=8, full=8), append_bucket(part=other, files=2)],
        partitions=[partition(), partition(other)],
    )
    a = compact(s)
    assert a is not None and a.bytes_to_read == 8 * MIB and a.gain == 7  # 8 small files into 1
    assert a.reason.startswith(
        "1 partition(s) to compact (minor): partition dt=2026-11-01: 8 files under 179.2 MiB"
    )
    assert a.args["partitions"] == [{"dt": "2026-11-01"}]
    none = plan(state(primary_keys=(), options={"bucket": "-1"}, buckets=[append_bucket(files=2)]))
    assert none.skipped_reasons["compact"].startswith("no partition has files to compact: at most 2 file(s)")


def test_fixed_bucket_append_minor_and_full() -> None:
    b = append_bucket(files=6, minor=5, full=6)
    s = state(primary_keys=(), options={"bucket": "4"}, buckets=[b])
    minor = compact(s)
    assert minor is not None and minor.bytes_to_read == 5 * MIB
    assert (
        "bucket dt=2026-11-01/0: 5 files >= compaction.min.file-num 5 (BucketedAppendCompactManager)"
        in minor.reason
    )
    full = compact(s, compaction="full")
    assert full is not None and full.bytes_to_read == 6 * MIB and full.args["compact_strategy"] == "full"


@pytest.mark.parametrize("table_kind", ["pk", "append"])
def test_every_planned_compaction_is_json_safe(table_kind: str) -> None:
    import json

    if table_kind == "pk":
        s = state(buckets=[pk_bucket([*l0_runs(6), (MAX, MIB, 1)])])
    else:
        s = state(primary_keys=(), options={"bucket": "-1"}, buckets=[append_bucket(minor=8, full=8)])
    p = plan(s)
    again = TablePlan.from_dict(json.loads(json.dumps(p.to_dict())))
    assert again == p
