"""Options → strategy, as ``MergeTreeCompactManagerFactory.createCompactStrategy`` and ``CoreOptions``."""

from __future__ import annotations

import datetime as dt

import pytest

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.compact.compact_options import (
    compact_strategy_from_options,
    compaction_file_size,
    force_keep_delete,
    need_lookup,
    num_levels,
    num_sorted_run_stop_trigger,
)
from paimon_core.mergetree.compact.force_up_level0 import ForceUpLevel0Compaction
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction
from paimon_core.utils.clock import ManualClock

from .compaction_helpers import data_file


def test_defaults() -> None:
    strategy = compact_strategy_from_options({}, clock=ManualClock())
    assert isinstance(strategy, UniversalCompaction)
    assert (strategy.max_size_amp, strategy.size_ratio, strategy.num_run_compaction_trigger) == (200, 1, 5)
    assert strategy.early_full_compaction is None and strategy.off_peak_hours is None
    assert num_levels({}) == 6
    assert num_sorted_run_stop_trigger({}) == 8
    assert compaction_file_size({}) == int(128 * 1024 * 1024 * 0.7)
    assert not need_lookup({}) and not force_keep_delete({})


@pytest.mark.parametrize(
    ("options", "levels", "stop"),
    [
        ({"num-sorted-run.compaction-trigger": "3"}, 4, 6),
        ({"num-levels": "3"}, 3, 8),
        ({"num-sorted-run.stop-trigger": "2"}, 6, 5),  # max(trigger, stop)
        ({"num-sorted-run.stop-trigger": "20"}, 6, 20),
    ],
)
def test_levels_and_stop_trigger(options: dict[str, str], levels: int, stop: int) -> None:
    assert num_levels(options) == levels
    assert num_sorted_run_stop_trigger(options) == stop


def test_compaction_file_size() -> None:
    assert compaction_file_size({"target-file-size": "10 mb", "compaction.small-file-ratio": "0.5"}) == 5 * 1024 * 1024
    assert compaction_file_size({"target-file-size": "10"}) == 7


def test_universal_options() -> None:
    strategy = compact_strategy_from_options(
        {
            "compaction.max-size-amplification-percent": "50",
            "compaction.size-ratio": "7",
            "num-sorted-run.compaction-trigger": "3",
            "compaction.offpeak.start.hour": "22",
            "compaction.offpeak.end.hour": "6",
            "compaction.offpeak-ratio": "20",
        },
        clock=ManualClock(),
    )
    assert isinstance(strategy, UniversalCompaction)
    assert (strategy.max_size_amp, strategy.size_ratio, strategy.num_run_compaction_trigger) == (50, 7, 3)
    assert strategy.off_peak_hours is not None and strategy.off_peak_hours.current_ratio(23) == 20


@pytest.mark.parametrize(
    "options",
    [
        {"compaction.force-up-level-0": "true"},
        {"changelog-producer": "lookup"},
        {"deletion-vectors.enabled": "true"},
        {"merge-engine": "first-row"},
        {"force-lookup": "true"},
        {"changelog-producer": "lookup", "lookup-compact": "radical"},
    ],
)
def test_force_up_level0_radical(options: dict[str, str]) -> None:
    strategy = compact_strategy_from_options(options, clock=ManualClock())
    assert isinstance(strategy, ForceUpLevel0Compaction)
    assert strategy.max_compact_interval is None


@pytest.mark.parametrize(
    ("extra", "interval"),
    [({}, 10), ({"lookup-compact.max-interval": "3"}, 5), ({"lookup-compact.max-interval": "20"}, 20)],
)
def test_lookup_compact_gentle(extra: dict[str, str], interval: int) -> None:
    options = {"deletion-vectors.enabled": "true", "lookup-compact": "GENTLE", **extra}
    strategy = compact_strategy_from_options(options, clock=ManualClock())
    assert isinstance(strategy, ForceUpLevel0Compaction)
    assert strategy.max_compact_interval == interval


def test_gentle_ignored_without_lookup() -> None:
    """``lookup-compact`` only matters when the table needs lookup; force-up-level-0 stays radical."""
    strategy = compact_strategy_from_options(
        {"compaction.force-up-level-0": "true", "lookup-compact": "gentle"}, clock=ManualClock()
    )
    assert isinstance(strategy, ForceUpLevel0Compaction) and strategy.max_compact_interval is None


def test_early_full_compaction_seeded_from_max_level_files() -> None:
    hour = 3_600_000
    clock = ManualClock(10 * hour)
    restore = [data_file(level=5, creation_time=9 * hour + 1), data_file(level=0, creation_time=10 * hour)]
    strategy = compact_strategy_from_options(
        {"compaction.optimization-interval": "1 h"}, clock=clock, restore_files=restore, zone=dt.UTC
    )
    assert isinstance(strategy, UniversalCompaction)
    trigger = strategy.early_full_compaction
    assert trigger is not None
    assert trigger.full_compaction_interval_ms == hour
    assert trigger.last_full_compaction_ms == 9 * hour + 1


@pytest.mark.parametrize(
    "options",
    [
        {"num-levels": "x"},
        {"compaction.force-up-level-0": "yes"},
        {"changelog-producer": "lookup", "lookup-compact": "fast"},
        {"compaction.optimization-interval": "soon"},
        {"compaction.total-size-threshold": "big"},
        {"changelog-producer": "sometimes"},
    ],
)
def test_invalid_options(options: dict[str, str]) -> None:
    with pytest.raises(InvalidOptionError):
        compact_strategy_from_options(options, clock=ManualClock())
