"""``schedule_pass``: budget, fairness, deadline, backlog and batching; properties with hypothesis."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.maintenance.actions import PlannedAction, TablePlan
from paimon_core.maintenance.scheduler import PassBudget, PassSchedule, schedule_pass

from .helpers import DAY, HOUR, MIB, NOW, state

GIB = 1024 * MIB


def compaction(
    size: int, *, spark: bool | None = None, urgent: bool = False, strategy: str = "minor"
) -> PlannedAction:
    return PlannedAction(
        "compact",
        f"compact {size} bytes",
        bytes_to_read=size,
        bytes_to_write=size,
        gain=1.0,
        priority=1.0 / max(1.0, size / MIB),
        needs_spark=size > 64 * MIB if spark is None else spark,
        args={"compact_strategy": strategy, "partitions": None, "partition_idle_time": None},
        urgent=urgent,
    )


def light(action: str = "expire_snapshots", gain: float = 1.0) -> PlannedAction:
    return PlannedAction(action, f"{action} needed", gain=gain, priority=gain)


def table_plan(name: str, *actions: PlannedAction) -> TablePlan:
    return TablePlan(name, state(table=name), tuple(actions), {}, NOW)


def schedule(
    plans: Sequence[TablePlan],
    *,
    policy: str = "balanced",
    last: Mapping[str, int] | None = None,
    **budget: object,
) -> PassSchedule:
    return schedule_pass(
        plans, PassBudget(**budget), policy=policy, now_millis=NOW, last_maintained=last or {}
    )  # type: ignore[arg-type]


def selected(s: PassSchedule) -> list[tuple[str, str]]:
    return [(a.table, a.action.action) for a in s.selected]


def test_light_actions_always_run_and_compactions_fit_the_budget() -> None:
    plans = [
        table_plan("db.a", compaction(40 * GIB), light()),
        table_plan("db.b", compaction(50 * GIB), light("create_tag")),
        table_plan("db.c", compaction(30 * GIB)),
    ]
    s = schedule(
        plans,
        max_rewrite_bytes=100 * GIB,
        last={"db.a": NOW - 3 * DAY, "db.b": NOW - 2 * DAY, "db.c": NOW - DAY},
    )
    assert selected(s) == [
        ("db.a", "compact"),
        ("db.a", "expire_snapshots"),
        ("db.b", "compact"),
        ("db.b", "create_tag"),
    ]
    (waiting,) = s.backlog
    assert (
        waiting.table == "db.c"
        and waiting.why == "over the pass's rewrite budget: needs 30.00 GiB, 10.00 GiB of 100.00 GiB left"
    )
    assert s.rewrite_bytes == 90 * GIB
    # the next pass: db.a and db.b were maintained now, db.c waited longest and goes first
    nxt = schedule(plans, max_rewrite_bytes=100 * GIB, last={"db.a": NOW, "db.b": NOW, "db.c": NOW - DAY})
    assert [a.table for a in nxt.selected if a.action.action == "compact"] == ["db.c", "db.a"]


def test_one_compaction_bigger_than_the_budget_runs_alone() -> None:
    plans = [table_plan("db.huge", compaction(300 * GIB)), table_plan("db.small", compaction(GIB), light())]
    s = schedule(plans, max_rewrite_bytes=100 * GIB, last={"db.small": NOW})
    assert selected(s) == [("db.huge", "compact"), ("db.small", "expire_snapshots")]
    assert [b.why for b in s.backlog] == ["the rewrite budget went to the oversize compaction of db.huge"]
    assert s.notes == ("one compaction larger than the whole rewrite budget (100.00 GiB) runs alone",)
    # not first in line: it waits, and the small one runs
    later = schedule(plans, max_rewrite_bytes=100 * GIB, last={"db.huge": NOW})
    assert ("db.small", "compact") in selected(later) and later.backlog[0].table == "db.huge"
    assert schedule(plans, max_rewrite_bytes=0).backlog[0].why == "the pass's rewrite budget is 0"


def test_urgent_compactions_go_first() -> None:
    plans = [table_plan("db.a", compaction(60 * GIB)), table_plan("db.b", compaction(60 * GIB, urgent=True))]
    s = schedule(plans, max_rewrite_bytes=100 * GIB, last={"db.b": NOW})
    assert selected(s) == [("db.b", "compact")]


def test_quota_gives_each_table_a_share_then_the_leftover() -> None:
    plans = [
        table_plan("db.a", compaction(70 * GIB)),
        table_plan("db.b", compaction(10 * GIB)),
        table_plan("db.c", compaction(20 * GIB)),
    ]
    s = schedule(plans, policy="quota", max_rewrite_bytes=100 * GIB)
    # shares of 33 GiB: b and c first; a (70 GiB, over its share) gets the 70 GiB left
    assert [a.table for a in s.selected] == ["db.b", "db.c", "db.a"]
    tight = schedule(plans, policy="quota", max_rewrite_bytes=90 * GIB)
    assert [a.table for a in tight.selected] == ["db.b", "db.c"]
    assert tight.backlog[0].why.endswith("(its quota share is 30.00 GiB)")
    with pytest.raises(InvalidArgumentError, match="quota_share"):
        PassBudget(quota_share=1.5)


def test_the_deadline_backlogs_what_does_not_fit() -> None:
    plans = [table_plan("db.a", compaction(10 * GIB, spark=True), light(), light("create_tag"))]
    past = schedule(plans, deadline_millis=NOW - 1)
    assert past.selected == () and {b.why for b in past.backlog} == {"the pass's deadline has passed"}
    # a minute is plenty for two metadata actions, not for 10 GiB on Spark at 32 MiB/s over 2 slots
    minute = schedule(plans, deadline_millis=NOW + 60_000)
    assert selected(minute) == [("db.a", "expire_snapshots"), ("db.a", "create_tag")]
    assert minute.backlog[0].why == "does not fit before the pass's deadline (60 s left)"


def test_without_spark_slots_big_compactions_wait_and_small_ones_run() -> None:
    plans = [table_plan("db.big", compaction(GIB)), table_plan("db.small", compaction(MIB))]
    s = schedule(plans, spark_slots=0)
    assert selected(s) == [("db.small", "compact")]
    assert s.backlog[0].why == "needs Spark and the pass has no Spark slots"


def test_partition_expiry_waits_for_the_tables_spark_compaction() -> None:
    plans = [
        table_plan("db.a", compaction(GIB), light("expire_partitions")),
        table_plan("db.b", compaction(MIB), light("expire_partitions")),
    ]
    s = schedule(plans)
    assert ("db.b", "expire_partitions") in selected(s) and ("db.a", "expire_partitions") not in selected(s)
    assert [(b.table, b.why) for b in s.backlog] == [
        ("db.a", "waits for the table's Spark compaction in this pass")
    ]


def test_batches_and_spark_groups_are_named_by_what_they_do() -> None:
    plans = [table_plan(f"db.t{i:03d}", light(), light("create_tag")) for i in range(250)]
    plans += [table_plan(f"db.s{i:02d}", compaction(GIB)) for i in range(10)]
    plans += [table_plan("db.x", compaction(MIB), light("remove_orphan_files"))]
    plans += [table_plan("db.f", compaction(GIB, strategy="full"))]
    s = schedule(plans, last={p.table: NOW - i for i, p in enumerate(plans)}, max_rewrite_bytes=None)
    # balanced: db.f, db.x, db.s09..db.s00, db.t249..db.t000 (the longest unmaintained first)
    labels = [b.label for b in s.light_batches]
    assert labels == ["compact+expire+tags+orphans 1-200", "expire+tags 201-251"]
    assert s.light_batches[0].tables[:2] == ("db.x", "db.t249")
    assert all(len(b.tables) <= 200 for b in s.light_batches)
    batch = s.light_batches[0].to_dict()
    assert set(batch) == {"label", "tables", "items"} and set(batch["items"][0]) == {
        "table",
        "action",
        "args",
        "reason",
    }
    groups = [g.to_dict() for g in s.spark_groups]
    assert [g["label"] for g in groups] == [
        "compact db.f",
        "compact db.s09, db.s08 +6",
        "compact db.s01, db.s00",
    ]
    assert [g["compact_strategy"] for g in groups] == ["full", "minor", "minor"]
    assert json.loads(json.dumps(s.to_dict()))["batches"][0]["label"] == labels[0]
    md = s.summary_md(max_rows=3)
    assert md.startswith("**Maintenance pass (balanced)**: 262 of 262 tables need work;") and "| +" in md


def test_bad_input_is_refused_naming_it() -> None:
    with pytest.raises(InvalidArgumentError, match="policy"):
        schedule([], policy="fifo")
    with pytest.raises(InvalidArgumentError, match="repeated"):
        schedule([table_plan("db.a"), table_plan("db.a")])
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        PassBudget(batch_size=0)
    with pytest.raises(InvalidArgumentError, match="unknown pass budget settings"):
        PassBudget.from_mapping({"max_rewrite_gb": 1})


# --- properties ------------------------------------------------------------------------------------
LIGHT = (
    "expire_snapshots",
    "create_tag",
    "expire_tags",
    "expire_partitions",
    "remove_orphan_files",
    "compact_manifest",
)


@st.composite
def passes(draw: st.DrawFn) -> tuple[list[TablePlan], PassBudget, str, dict[str, int]]:
    n = draw(st.integers(0, 25))
    plans = []
    last: dict[str, int] = {}
    for i in range(n):
        name = f"db.t{i:02d}"
        actions = [light(a) for a in draw(st.lists(st.sampled_from(LIGHT), unique=True, max_size=3))]
        if draw(st.booleans()):
            size = draw(st.integers(0, 60 * GIB))
            actions.insert(0, compaction(size, urgent=draw(st.integers(0, 9)) == 0))
        plans.append(table_plan(name, *actions))
        if draw(st.booleans()):
            last[name] = NOW - draw(st.integers(0, 30 * DAY))
    budget = PassBudget(
        max_rewrite_bytes=draw(st.one_of(st.none(), st.just(0), st.integers(1, 120 * GIB))),
        spark_slots=draw(st.integers(0, 3)),
        deadline_millis=draw(st.one_of(st.none(), st.integers(NOW - HOUR, NOW + 2 * DAY))),
        batch_size=draw(st.integers(1, 6)),
        spark_group_size=draw(st.integers(1, 4)),
    )
    return plans, budget, draw(st.sampled_from(("balanced", "quota"))), last


@given(passes())
def test_every_planned_action_is_selected_or_in_backlog_once(
    case: tuple[list[TablePlan], PassBudget, str, dict[str, int]],
) -> None:
    plans, budget, policy, last = case
    s = schedule_pass(plans, budget, policy=policy, now_millis=NOW, last_maintained=last)
    planned = Counter((p.table, a.action) for p in plans for a in p.actions)
    seen = Counter(
        [(a.table, a.action.action) for a in s.selected] + [(b.table, b.action.action) for b in s.backlog]
    )
    assert seen == planned
    assert all(b.why for b in s.backlog)
    # batches and groups hold exactly what was selected, within their sizes, with distinct labels
    in_batches = [(a.table, a.action.action) for b in s.light_batches for a in b.actions]
    in_groups = [(t, "compact") for g in s.spark_groups for t in g.tables]
    assert Counter(in_batches + in_groups) == Counter((a.table, a.action.action) for a in s.selected)
    assert all(len(b.tables) <= budget.batch_size for b in s.light_batches)
    assert all(len(g.tables) <= budget.spark_group_size for g in s.spark_groups)
    labels = [b.label for b in s.light_batches] + [g.label for g in s.spark_groups]
    assert len(labels) == len(set(labels))
    json.dumps(s.to_dict())


@given(passes())
def test_the_rewrite_budget_holds_but_for_one_oversize_compaction(
    case: tuple[list[TablePlan], PassBudget, str, dict[str, int]],
) -> None:
    plans, budget, policy, last = case
    s = schedule_pass(plans, budget, policy=policy, now_millis=NOW, last_maintained=last)
    picked = [a.action for a in s.selected if a.action.action == "compact"]
    limit = budget.max_rewrite_bytes
    if limit == 0:
        assert picked == []
    elif limit is not None and sum(a.bytes_to_read for a in picked) > limit:
        assert len(picked) == 1 and picked[0].bytes_to_read > limit
    if budget.spark_slots == 0:
        assert not any(a.needs_spark for a in picked)
    if budget.deadline_millis is not None and budget.deadline_millis <= NOW:
        assert s.selected == ()


@given(passes())
def test_balanced_takes_the_longest_waiting_first(
    case: tuple[list[TablePlan], PassBudget, str, dict[str, int]],
) -> None:
    plans, budget, _, last = case
    s = schedule_pass(plans, budget, policy="balanced", now_millis=NOW, last_maintained=last)
    waited = {p.table: last.get(p.table, -(2**62)) for p in plans}
    order = sorted(
        [(a.table, a.action) for a in s.selected if a.action.action == "compact"]
        + [(b.table, b.action) for b in s.backlog if b.action.action == "compact"],
        key=lambda ta: (not ta[1].urgent, waited[ta[0]]),
    )
    # the compactions were considered urgent first, then longest waiting first: one that waited
    # for the budget did not fit in what those before it left
    limit = budget.max_rewrite_bytes
    used = 0
    chosen = {a.table for a in s.selected if a.action.action == "compact"}
    for table, action in order:
        if table in chosen:
            used += action.bytes_to_read
            continue
        why = next(b.why for b in s.backlog if b.table == table and b.action.action == "compact")
        if why.startswith("over the pass's rewrite budget"):
            assert limit is not None and used + action.bytes_to_read > limit
    light_ranks = [a.rank for a in s.selected if a.action.light and not a.action.urgent]
    assert light_ranks == sorted(light_ranks)
