"""``MaintenanceSettings`` (the registry's knobs and the planner's) and the lag alerts."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from paimon_core.exceptions import InvalidArgumentError, PaimonError
from paimon_core.maintenance.lag import LAG_KINDS, debt_over_since, lag_alerts
from paimon_core.maintenance.settings import DEFAULT_IN_PROCESS_MAX_BYTES, MaintenanceSettings
from paimon_core.maintenance.table_state import TagState

from .helpers import DAY, HOUR, MIB, NOW, pk_bucket, state

REPO = Path(__file__).resolve().parents[4]


def registry() -> ModuleType:
    """``dags/_paimon_registry.py`` (stdlib only at import), loaded from its file."""
    spec = importlib.util.spec_from_file_location(
        "_paimon_registry_for_planner", REPO / "dags" / "_paimon_registry.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_registry_table_setting_is_a_planner_setting_with_the_same_default() -> None:
    table_settings = registry().TableSettings()
    settings = MaintenanceSettings.from_mapping(table_settings.to_dict())
    for f in dataclasses.fields(table_settings):
        assert getattr(settings, f.name) == getattr(table_settings, f.name), f.name
    assert settings == MaintenanceSettings()


def test_defaults() -> None:
    s = MaintenanceSettings()
    assert (s.compaction, s.compaction_mode, s.tag_period, s.tag_retention) == (
        "minor",
        "distributed",
        "daily",
        "7 d",
    )
    assert s.in_process_max_bytes == DEFAULT_IN_PROCESS_MAX_BYTES == 64 * MIB
    assert s.millis("orphan_clean_interval") == 7 * DAY and s.millis("partition_idle_time") is None
    assert (
        MaintenanceSettings.from_mapping({"tag_retention": None}).tag_retention is None
    )  # None is a value here
    assert (
        MaintenanceSettings.from_mapping({"expire_interval": None}).expire_interval == "1 h"
    )  # and the default here


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"compaction": "major"}, "compaction"),
        ({"compaction_mode": "cloud"}, "compaction_mode"),
        ({"tag_period": "hourly"}, "tag_period"),
        ({"snapshot_retain_max": 0}, "snapshot_retain_max"),
        ({"snapshot_retain_max": 3, "snapshot_retain_min": 5}, "snapshot_retain_max"),
        ({"orphan_min_age_days": 0}, "orphan_min_age_days"),
        ({"orphan_min_age_days": True}, "orphan_min_age_days"),
        ({"partition_idle_time": "a while"}, "partition_idle_time"),
        ({"partition_expiration_time": "-1 d"}, "partition_expiration_time"),
        ({"tag_retention": 7.5}, "tag_retention"),
        ({"max_compaction_debt": 0}, "max_compaction_debt"),
        ({"respect_offpeak": "yes"}, "respect_offpeak"),
        ({"in_process_max_bytes": -1}, "in_process_max_bytes"),
        ({"lag_grace": "soon"}, "lag_grace"),
        ({"compation": "full"}, "compation"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(raw: dict[str, object], named: str) -> None:
    with pytest.raises(InvalidArgumentError, match=named) as e:
        MaintenanceSettings.from_mapping(raw)
    assert isinstance(e.value, PaimonError)


# --- lag ----------------------------------------------------------------------------------------
def test_compaction_debt_over_budget_for_longer_than_the_grace() -> None:
    s = state(buckets=[pk_bucket([(0, MIB, 1)] * 9)], compaction_debt=9 / 8)
    settings = MaintenanceSettings()
    since = debt_over_since(s, settings, now_millis=NOW, previous_since=None)
    assert since == NOW and debt_over_since(s, settings, now_millis=NOW + HOUR, previous_since=since) == NOW
    assert debt_over_since(state(compaction_debt=0.5), settings, now_millis=NOW, previous_since=since) is None
    kinds = lambda alerts: [a.kind for a in alerts]  # noqa: E731
    young = lag_alerts(s, settings, now_millis=NOW, last_success={}, debt_over_since_millis=NOW - HOUR)
    assert "compaction_debt" not in kinds(young)
    old = lag_alerts(s, settings, now_millis=NOW, last_success={}, debt_over_since_millis=NOW - 2 * DAY)
    (alert,) = [a for a in old if a.kind == "compaction_debt"]
    assert alert.since_millis == NOW - 2 * DAY
    assert alert.message == (
        "db.t: compaction debt 1.12 (most sorted runs of a bucket / num-sorted-run.stop-trigger) has been over "
        "max_compaction_debt 0.8 for 2 d (lag_grace 1 d)"
    )


def test_an_action_overdue_past_its_period_and_the_grace() -> None:
    s = state(snapshot_id=40, snapshot_count=30, successor_time_millis=NOW - 5 * DAY, time_retention_end=25)
    settings = MaintenanceSettings()
    fresh = {"remove_orphan_files": NOW - DAY, "create_tag": NOW - HOUR, "expire_snapshots": NOW - 2 * HOUR}
    # expiry is needed (for 5 d), but it last succeeded 2 h ago: overdue 1 h after its 1 h period, in the grace
    assert lag_alerts(s, settings, now_millis=NOW, last_success=fresh, debt_over_since_millis=None) == []
    stale = {"remove_orphan_files": NOW - 10 * DAY, "expire_snapshots": NOW - 3 * DAY}
    by_kind = {
        a.kind: a
        for a in lag_alerts(s, settings, now_millis=NOW, last_success=stale, debt_over_since_millis=None)
    }
    assert set(by_kind) == {"remove_orphan_files", "expire_snapshots"} <= set(LAG_KINDS)
    assert by_kind["expire_snapshots"].since_millis == NOW - 3 * DAY + HOUR
    orphan = by_kind["remove_orphan_files"]
    assert orphan.since_millis == NOW - 3 * DAY
    assert orphan.message.startswith(
        "db.t: remove_orphan_files overdue for 3 d (last succeeded 2026-10-23 03:00 UTC; period 7 d, lag_grace 1 d): "
    )
    # the daily tag became due 3 h ago: within the grace; but the newest daily tag is 2026-10-30,
    # so 2026-10-31 has been missing since 2026-11-01 00:00 (27 h)
    assert "create_tag" not in {
        a.kind for a in lag_alerts(s, settings, now_millis=NOW, last_success={}, debt_over_since_millis=None)
    }
    behind = dataclasses.replace(s, tags=(TagState("2026-10-30", 11, NOW - 3 * DAY),))
    (tag,) = [
        a
        for a in lag_alerts(behind, settings, now_millis=NOW, last_success={}, debt_over_since_millis=None)
        if a.kind == "create_tag"
    ]
    assert tag.since_millis == NOW - 27 * HOUR
    assert tag.message.endswith("is missing, due 3 h ago (the newest daily tag is 2026-10-30)")
