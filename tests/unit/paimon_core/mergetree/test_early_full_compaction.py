"""Java's ``EarlyFullCompactionTest`` and ``OffPeakHoursTest``, case for case."""

from __future__ import annotations

import datetime as dt

import pytest

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_options import (
    early_full_compaction_from_options,
    off_peak_hours_from_options,
)
from paimon_core.mergetree.compact.early_full_compaction import (
    EarlyFullCompaction,
    estimate_last_full_compaction_time,
)
from paimon_core.mergetree.compact.off_peak_hours import OffPeakHours, current_hour
from paimon_core.mergetree.sorted_run import LevelSortedRun
from paimon_core.utils.clock import ManualClock

from .compaction_helpers import data_file, run


def runs_of(*sizes: int) -> list[LevelSortedRun]:
    return [run(0, s) for s in sizes]


@pytest.mark.parametrize(
    ("options", "created"),
    [
        ({}, False),
        ({"compaction.optimization-interval": "1 h"}, True),
        ({"compaction.total-size-threshold": "100 mb"}, True),
        ({"compaction.optimization-interval": "1 h", "compaction.total-size-threshold": "100 mb"}, True),
        ({"compaction.incremental-size-threshold": "1 gb"}, True),
    ],
)
def test_create_from_options(options: dict[str, str], created: bool) -> None:
    trigger = early_full_compaction_from_options(options, clock=ManualClock())
    assert (trigger is not None) == created


def test_create_parses_duration_and_memory() -> None:
    trigger = early_full_compaction_from_options(
        {"compaction.optimization-interval": "1 h", "compaction.total-size-threshold": "100 mb"},
        clock=ManualClock(),
        last_full_compaction_ms=1_234_567_890,
    )
    assert trigger is not None
    assert trigger.full_compaction_interval_ms == 3_600_000
    assert trigger.total_size_threshold == 100 * 1024 * 1024
    assert trigger.last_full_compaction_ms == 1_234_567_890


def test_single_run() -> None:
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, total_size_threshold=1000)
    assert trigger.try_full_compact(5, runs_of(100)) is None


def test_no_options() -> None:
    assert EarlyFullCompaction().try_full_compact(5, runs_of(100, 200)) is None


@pytest.mark.parametrize(("seed", "first_picks"), [(9_500, False), (5_000, True)])
def test_interval_with_seeded_last_full_compaction(seed: int, first_picks: bool) -> None:
    clock = ManualClock(10_000)
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, last_full_compaction_ms=seed, clock=clock)
    unit = trigger.try_full_compact(5, runs_of(100, 200))
    assert (unit is not None) == first_picks
    if not first_picks:
        clock.advance(501)  # 10_501 - 9_500 = 1001 > 1000
        unit = trigger.try_full_compact(5, runs_of(100, 200))
    assert unit is not None and unit.output_level == 4


def test_interval() -> None:
    clock = ManualClock(10_000)
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, clock=clock)
    unit = trigger.try_full_compact(5, runs_of(100, 200))
    assert unit is not None and unit.output_level == 4 and len(unit.files) == 2
    clock.advance(500)
    assert trigger.try_full_compact(5, runs_of(100, 200)) is None
    clock.advance(501)
    unit = trigger.try_full_compact(5, runs_of(100, 200))
    assert unit is not None and unit.output_level == 4 and len(unit.files) == 2


@pytest.mark.parametrize(("sizes", "picks"), [((100, 200), True), ((500, 500), False), ((500, 1000), False)])
def test_total_size_threshold(sizes: tuple[int, ...], picks: bool) -> None:
    unit = EarlyFullCompaction(total_size_threshold=1000).try_full_compact(5, runs_of(*sizes))
    assert (unit is not None) == picks
    if unit is not None:
        assert unit.output_level == 4 and len(unit.files) == 2


@pytest.mark.parametrize(
    ("runs", "picked_files"),
    [
        (runs_of(400, 200), 2),
        (runs_of(100, 200), None),
        ([run(0, 100), run(0, 300), run(4, 500)], None),
        ([run(0, 100), run(0, 300), run(0, 300), run(4, 500)], 4),
    ],
)
def test_incremental_size_threshold(runs: list[LevelSortedRun], picked_files: int | None) -> None:
    unit = EarlyFullCompaction(incremental_size_threshold=500).try_full_compact(5, runs)
    assert (None if unit is None else len(unit.files)) == picked_files
    assert unit is None or unit.output_level == 4


def test_interval_triggers_first() -> None:
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, total_size_threshold=500, clock=ManualClock(10_000))
    unit = trigger.try_full_compact(5, runs_of(300, 300))
    assert unit is not None and unit.output_level == 4


def test_threshold_triggers_when_interval_fails() -> None:
    clock = ManualClock(10_000)
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, total_size_threshold=500, clock=clock)
    assert trigger.try_full_compact(5, runs_of(10, 20)) is not None
    clock.advance(500)
    unit = trigger.try_full_compact(5, runs_of(30, 30))
    assert unit is not None and unit.output_level == 4
    assert trigger.try_full_compact(5, runs_of(300, 300)) is None


@pytest.mark.parametrize(
    ("thresholds", "second_sizes", "third_sizes"),
    [
        ({"total_size_threshold": 500}, (300, 100), (300, 300)),
        ({"incremental_size_threshold": 500}, (300, 300), (300, 100)),
    ],
    ids=["total-size", "incremental-size"],
)
def test_update_last_when_full_compact_triggered_by_size(
    thresholds: dict[str, int], second_sizes: tuple[int, ...], third_sizes: tuple[int, ...]
) -> None:
    clock = ManualClock(10_000)
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, clock=clock, **thresholds)
    assert trigger.try_full_compact(5, runs_of(300, 100 if "incremental_size_threshold" in thresholds else 300))
    clock.advance(100)
    unit = trigger.try_full_compact(5, runs_of(*second_sizes))
    assert unit is not None and unit.output_level == 4
    clock.advance(901)  # 11_001 - 10_100 < 1000: the size trigger reset the interval
    assert trigger.try_full_compact(5, runs_of(*third_sizes)) is None


def test_estimate_last_full_compaction_time() -> None:
    """``MergeTreeCompactManagerFactory.estimateLastFullCompactionTime``: newest max-level file."""
    hour = 3_600_000
    files: list[DataFileMeta] = [
        data_file(level=4, creation_time=5 * hour),
        data_file(level=4, creation_time=7 * hour),
        data_file(level=3, creation_time=9 * hour),
        data_file(level=4, creation_time=None),
    ]
    assert estimate_last_full_compaction_time(files, 5, zone=dt.UTC) == 7 * hour
    # creation times are local wall-clock millis: 07:00 at UTC+2 is 05:00 UTC
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert estimate_last_full_compaction_time(files, 5, zone=plus_two) == 5 * hour
    assert estimate_last_full_compaction_time([data_file(level=3, creation_time=hour)], 5, zone=dt.UTC) is None
    assert estimate_last_full_compaction_time([], 5) is None


# --- OffPeakHoursTest ---------------------------------------------------------------------------

RATIO = 10


def test_off_peak_create_from_options() -> None:
    off_peak = off_peak_hours_from_options(
        {"compaction.offpeak.start.hour": "22", "compaction.offpeak.end.hour": "6", "compaction.offpeak-ratio": "10"}
    )
    assert off_peak is not None
    assert off_peak.current_ratio(23) == RATIO
    assert off_peak.current_ratio(7) == 0


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"compaction.offpeak.start.hour": "5", "compaction.offpeak.end.hour": "5", "compaction.offpeak-ratio": "10"},
    ],
)
def test_off_peak_disabled_from_options(options: dict[str, str]) -> None:
    assert off_peak_hours_from_options(options) is None


@pytest.mark.parametrize(("start", "end"), [(-1, -1), (5, 5), (2, -1), (-1, 2)])
def test_off_peak_invalid_hours(start: int, end: int) -> None:
    assert OffPeakHours.create(start, end, RATIO) is None


@pytest.mark.parametrize(
    ("start", "end", "hour", "ratio"),
    [
        (2, 8, 1, 0), (2, 8, 2, RATIO), (2, 8, 5, RATIO), (2, 8, 7, RATIO), (2, 8, 8, 0), (2, 8, 9, 0),
        (22, 6, 21, 0), (22, 6, 22, RATIO), (22, 6, 23, RATIO), (22, 6, 0, RATIO), (22, 6, 5, RATIO),
        (22, 6, 6, 0), (22, 6, 10, 0),
    ],
)  # fmt: skip
def test_off_peak_current_ratio(start: int, end: int, hour: int, ratio: int) -> None:
    off_peak = OffPeakHours.create(start, end, RATIO)
    assert off_peak is not None
    assert off_peak.current_ratio(hour) == ratio


def test_current_hour_uses_clock_and_zone() -> None:
    clock = ManualClock(23 * 3_600_000 + 59 * 60_000)
    assert current_hour(clock, dt.UTC) == 23
    assert current_hour(clock, dt.timezone(dt.timedelta(hours=2))) == 1
