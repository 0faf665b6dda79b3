"""Java's ``UniversalCompactionTest`` and ``ForceUpLevel0CompactionTest``, case for case."""

from __future__ import annotations

import datetime as dt

import pytest

from paimon_core.mergetree.compact.early_full_compaction import EarlyFullCompaction
from paimon_core.mergetree.compact.force_up_level0 import ForceUpLevel0Compaction
from paimon_core.mergetree.compact.off_peak_hours import OffPeakHours
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction
from paimon_core.mergetree.sorted_run import LevelSortedRun
from paimon_core.utils.clock import ManualClock

from .compaction_helpers import level0, run, sizes_of


def of_testing(max_size_amp: int, size_ratio: int, trigger: int) -> UniversalCompaction:
    return UniversalCompaction(max_size_amp, size_ratio, trigger)


def runs_at(*levels: int) -> list[LevelSortedRun]:
    """Java ``createLevels``: one size-1 run per given level."""
    return [run(level, 1) for level in levels]


@pytest.mark.parametrize(("run_count", "output_level"), [(1, 1), (2, 1), (3, 2), (4, 3), (5, 5)])
def test_output_level(run_count: int, output_level: int) -> None:
    unit = of_testing(25, 1, 3).create_unit(runs_at(0, 0, 1, 3, 4), 5, run_count)
    assert unit.output_level == output_level


@pytest.mark.parametrize(
    ("num_levels", "runs", "expected"),
    [
        pytest.param(3, level0(1, 2, 3, 3), [1, 2, 3, 3], id="size-amplification"),
        pytest.param(4, [run(0, 1), run(1, 1), run(2, 1), run(3, 50)], [1, 1, 1], id="size-ratio"),
        pytest.param(4, [run(0, 1), run(1, 2), run(2, 3), run(3, 50)], [1, 2, 3], id="file-num"),
    ],
)
def test_pick(num_levels: int, runs: list[LevelSortedRun], expected: list[int]) -> None:
    assert sizes_of(of_testing(25, 1, 3).pick(num_levels, runs)) == expected


def test_optimized_compaction_interval() -> None:
    clock = ManualClock(0)
    trigger = EarlyFullCompaction(full_compaction_interval_ms=1000, clock=clock)
    compaction = UniversalCompaction(100, 1, 3, early_full_compaction=trigger, clock=clock)

    def pick(*sizes: int) -> list[int] | None:
        return sizes_of(compaction.pick(3, [run(0, sizes[0]), run(1, sizes[1]), run(2, sizes[2])]))

    assert pick(1, 3, 5) == [1, 3, 5]  # first time: forced optimized compaction
    clock.set(1001)
    assert pick(1, 3, 5) == [1, 3, 5]  # interval elapsed
    assert pick(1, 3, 5) is None  # third time: nothing
    clock.set(1500)
    assert pick(3, 3, 5) == [3, 3, 5]  # size amplification, which also resets the interval
    clock.set(2001)
    assert pick(1, 3, 5) is None


def test_total_size_threshold() -> None:
    trigger = EarlyFullCompaction(total_size_threshold=10)
    compaction = UniversalCompaction(100, 1, 3, early_full_compaction=trigger)
    assert sizes_of(compaction.pick(3, [run(0, 1), run(1, 3), run(2, 5)])) == [1, 3, 5]
    assert compaction.pick(3, [run(0, 2), run(1, 6), run(2, 10)]) is None
    assert compaction.pick(3, [run(3, 5)]) is None  # one sorted run


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ([run(0, 1), run(0, 1), run(1, 1), run(2, 50)], [1, 1, 1]),
        ([run(0, 1), run(0, 2), run(1, 3), run(2, 50)], [1, 2, 3]),
    ],
)
def test_no_output_level0(runs: list[LevelSortedRun], expected: list[int]) -> None:
    assert sizes_of(of_testing(25, 1, 3).pick(3, runs)) == expected


def test_file_num_compaction_considers_level2() -> None:
    unit = of_testing(200, 1, 3).pick(3, [run(0, 10), run(0, 20), run(1, 97), run(2, 100)])
    assert unit is not None
    assert len(unit.files) == 4
    assert unit.output_level == 2


def test_extreme_case_no_output_level0() -> None:
    unit = of_testing(200, 1, 5).pick(6, level0(1, 1, 1, 1024, 1024 * 1024))
    assert sizes_of(unit) == [1, 1, 1, 1024, 1024 * 1024]
    assert unit is not None and unit.output_level == 5


def _add_size(sizes: list[int]) -> list[int]:
    return [1, *sizes]


def append_and_pick_for_size_amp(compaction: UniversalCompaction, sizes: list[int]) -> list[int]:
    sizes = _add_size(sizes)
    unit = compaction.pick_for_size_amp(3, level0(*sizes))
    return sizes if unit is None else [sum(f.file_size for f in unit.files)]


def pick_for_size_ratio(compaction: UniversalCompaction, sizes: list[int]) -> list[int]:
    runs = [run(i, s) for i, s in enumerate(sizes)]
    unit = compaction.pick_for_size_ratio(len(sizes), runs)
    if unit is None:
        return sizes
    picked = [f.file_size for f in unit.files]
    rest = list(sizes)
    for s in picked:
        rest.remove(s)
    return [sum(picked), *rest]


SIZE_AMP_CHAIN = [[1], [2], [3], [4], [1, 4], [6], [1, 6], [8], [1, 8], [1, 1, 8], [11], [1, 11], [1, 1, 11],
                  [14], [1, 14], [1, 1, 14], [1, 1, 1, 14], [18]]  # fmt: skip
SIZE_RATIO_CHAIN = [[1, 1, 1, 1], [5], [1, 5], [1, 1, 5], [1, 1, 1, 5], [4, 5], [1, 4, 5], [1, 1, 4, 5], [3, 4, 5],
                    [1, 3, 4, 5], [2, 3, 4, 5], [1, 2, 3, 4, 5], [16], [1, 16], [1, 1, 16], [1, 1, 1, 16], [4, 16],
                    [1, 4, 16], [1, 1, 4, 16], [3, 4, 16], [1, 3, 4, 16], [2, 3, 4, 16], [1, 2, 3, 4, 16],
                    [11, 16]]  # fmt: skip


@pytest.mark.parametrize("step", range(1, len(SIZE_AMP_CHAIN)))
def test_size_amplification(step: int) -> None:
    compaction = of_testing(25, 0, 1)
    assert append_and_pick_for_size_amp(compaction, SIZE_AMP_CHAIN[step - 1]) == SIZE_AMP_CHAIN[step]


@pytest.mark.parametrize("step", range(1, len(SIZE_RATIO_CHAIN)))
def test_size_ratio(step: int) -> None:
    compaction = of_testing(25, 1, 5)
    assert pick_for_size_ratio(compaction, _add_size(SIZE_RATIO_CHAIN[step - 1])) == SIZE_RATIO_CHAIN[step]


@pytest.mark.parametrize(("size_ratio", "expected"), [(10, [8, 9, 10]), (20, [27])])
def test_size_ratio_threshold(size_ratio: int, expected: list[int]) -> None:
    assert pick_for_size_ratio(of_testing(25, size_ratio, 2), [8, 9, 10]) == expected


def test_off_peak_ratio_widens_size_ratio() -> None:
    """``testSizeRatioThreshold``'s second case reached through off-peak hours instead of size-ratio 20."""
    off_peak = OffPeakHours.create(22, 6, 10)
    clock = ManualClock(23 * 3_600_000)  # 23:00 UTC
    compaction = UniversalCompaction(25, 10, 2, off_peak_hours=off_peak, clock=clock, zone=dt.UTC)
    assert pick_for_size_ratio(compaction, [8, 9, 10]) == [27]
    clock.set(12 * 3_600_000)  # noon: peak hours, only size-ratio 10
    assert pick_for_size_ratio(compaction, [8, 9, 10]) == [8, 9, 10]


@pytest.mark.parametrize(
    ("runs", "expected", "output_level"),
    [
        pytest.param(level0(1, 2, 2, 2), [1, 2, 2, 2], 2, id="level0-to-max-level"),
        pytest.param([run(0, 1), run(1, 2), run(2, 2)], [1, 2, 2], 2, id="level0-force-pick"),
        pytest.param([run(0, 1), run(2, 2)], [1], 1, id="level0-to-empty-level"),
    ],
)
def test_lookup(runs: list[LevelSortedRun], expected: list[int], output_level: int) -> None:
    unit = ForceUpLevel0Compaction(of_testing(25, 1, 3)).pick(3, runs)
    assert sizes_of(unit) == expected
    assert unit is not None and unit.output_level == output_level


def test_force_pick_l0_gentle() -> None:
    max_interval = 5
    compaction = ForceUpLevel0Compaction(UniversalCompaction(25, 1, 5), max_compact_interval=max_interval)
    cases = [
        (level0(1, 2, 2, 2), [1, 2, 2, 2], 2),
        ([run(0, 2), run(1, 2), run(2, 2)], [2, 2, 2], 2),
        ([run(0, 1), run(2, 2)], [1], 1),
    ]
    for runs, expected, output_level in cases:
        for i in range(1, max_interval + 1):
            unit = compaction.pick(3, runs)
            if i < max_interval:
                assert unit is None, f"skipped until the interval ({i})"
            else:
                assert sizes_of(unit) == expected
                assert unit is not None and unit.output_level == output_level


# --- ForceUpLevel0CompactionTest ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs", "output_level"),
    [
        ([run(0, 1), run(0, 1)], 2),
        ([run(0, 1), run(1, 10)], 2),
        ([run(0, 1), run(0, 5), run(2, 10)], 1),
        ([run(2, 10)], None),
        ([run(0, 1), run(0, 5), run(0, 10), run(0, 20)], 2),
    ],
)
def test_force_compaction0(runs: list[LevelSortedRun], output_level: int | None) -> None:
    unit = ForceUpLevel0Compaction(of_testing(200, 1, 5)).pick(3, runs)
    assert (None if unit is None else unit.output_level) == output_level


@pytest.mark.parametrize(
    ("level2_size", "file_count", "output_level"),
    [(100, 3, 2), (102, 2, 1)],
)
def test_force_compaction0_considers_level2(level2_size: int, file_count: int, output_level: int) -> None:
    unit = ForceUpLevel0Compaction(of_testing(200, 1, 5)).pick(3, [run(0, 1), run(1, 99), run(2, level2_size)])
    assert unit is not None
    assert len(unit.files) == file_count
    assert unit.output_level == output_level
