"""Plan, schedule and execute on real tables: the planned ``args`` are the table calls' arguments,
and after the pass the planner finds nothing left to do (and every row still reads the same)."""

from __future__ import annotations

from paimon_core import FileSystemCatalog
from paimon_core.maintenance import (
    MaintenanceSettings,
    PassBudget,
    collect_table_state,
    plan_table,
    schedule_pass,
)
from paimon_core.maintenance.executor import ActionItem, execute_batch

from .helpers import TABLE_KINDS, kind_table, new_table, wall_now, write_commits


def test_a_pass_does_what_the_tables_need_and_then_nothing(catalog: FileSystemCatalog) -> None:
    settings = MaintenanceSettings(snapshot_retain_max=3, snapshot_retain_min=1, orphan_clean_interval=None)
    before = {}
    for kind in TABLE_KINDS:
        table = kind_table(catalog, kind)
        write_commits(table, 6, days=("2026-11-01",))  # one partition needs compaction
        write_commits(table, 1, days=("2026-11-02",))  # the other does not
        before[table.name] = table.to_arrow().sort_by(
            [("dt", "ascending"), ("id", "ascending"), ("v", "ascending")]
        )

    t0 = wall_now()
    plans = [
        plan_table(
            collect_table_state(catalog.get_table(n), now_millis=t0), settings, now_millis=t0, last_success={}
        )
        for n in before
    ]
    for p in plans:
        compact = p.action("compact")
        assert compact is not None, p.skipped_reasons
        assert compact.args["partitions"] == [{"dt": "2026-11-01"}]  # only the partition that needs it
        assert p.action("expire_snapshots") is not None  # 7 snapshots > snapshot_retain_max 3
    schedule = schedule_pass(plans, PassBudget(), policy="balanced", now_millis=t0, last_maintained={})
    assert schedule.spark_groups == () and len(schedule.light_batches) == 1 and schedule.backlog == ()
    items = [ActionItem.from_dict(i) for i in schedule.light_batches[0].to_dict()["items"]]
    result = execute_batch(catalog.get_table, items, commit_user_of=lambda t: f"test-{t}", now_millis=t0)
    assert result.failed == () and set(result.counts()) == {"success"}

    t1 = wall_now()
    for name, rows in before.items():
        table = catalog.get_table(name)
        after = plan_table(
            collect_table_state(table, now_millis=t1), settings, now_millis=t1, last_success={}
        )
        assert after.action("compact") is None, after.actions
        assert after.action("expire_snapshots") is None
        assert (
            table.to_arrow()
            .sort_by([("dt", "ascending"), ("id", "ascending"), ("v", "ascending")])
            .equals(rows)
        )


def test_a_table_with_automatic_tags_gets_them_from_the_pass(catalog: FileSystemCatalog) -> None:
    table = new_table(
        catalog,
        "tagged",
        pk=True,
        bucket="1",
        **{
            "tag.automatic-creation": "process-time",
            "tag.creation-period": "hourly",
            "sink.process-time-zone": "UTC",
        },
    )
    write_commits(table, 1, days=("2026-11-01",))
    settings = MaintenanceSettings(orphan_clean_interval=None)
    t0 = wall_now()
    plan = plan_table(
        collect_table_state(catalog.get_table("db.tagged"), now_millis=t0),
        settings,
        now_millis=t0,
        last_success={},
    )
    action = plan.action("trigger_tag_automatic_creation")
    assert action is not None and plan.action("create_tag") is None
    expected = action.reason.split(" ")[1] + " " + action.reason.split(" ")[2]  # 'tag 2026-11-28 05 of ...'
    items = [ActionItem("db.tagged", "trigger_tag_automatic_creation", dict(action.args), action.reason)]
    result = execute_batch(catalog.get_table, items, commit_user_of=lambda t: "test", now_millis=t0)
    assert [o.status for o in result.outcomes] == ["success"]
    assert expected in catalog.get_table("db.tagged").tag_manager.list_names()
    t1 = wall_now()
    again = plan_table(
        collect_table_state(catalog.get_table("db.tagged"), now_millis=t1),
        settings,
        now_millis=t1,
        last_success={},
    )
    assert again.action("trigger_tag_automatic_creation") is None or t1 // 3_600_000 != t0 // 3_600_000
