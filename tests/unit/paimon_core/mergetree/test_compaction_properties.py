"""Properties of universal / force-up-level-0 picking over random level layouts.

A pick is a prefix of the runs into a valid output level; applying it (as one file, or through
:func:`plan_compact_task` with a fake rewriter) keeps every level >= 1 a valid sorted run; picking
and applying repeatedly ends with at most ``trigger`` sorted runs (and, forcing level 0 up, an
empty level 0).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_strategy import CompactStrategy, filter_trivial_unit
from paimon_core.mergetree.compact.compact_task_plan import RewriteStep, UpgradeStep, plan_compact_task
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.compact.force_up_level0 import ForceUpLevel0Compaction
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction
from paimon_core.mergetree.levels import Levels
from paimon_core.mergetree.sorted_run import LevelSortedRun

from .compaction_helpers import KEY_OF, data_file, key_range

_seq = itertools.count(1_000_000)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, list[DataFileMeta]]:
    num_levels = draw(st.integers(2, 6))
    files: list[DataFileMeta] = []
    for level in range(1, num_levels):
        n = draw(st.integers(0, 4))
        points = sorted(draw(st.sets(st.integers(0, 200), min_size=2 * n, max_size=2 * n)))
        for j in range(0, 2 * n, 2):
            size = draw(st.integers(1, 1000))
            files.append(data_file(size, level=level, min_key=points[j], max_key=points[j + 1], max_seq=level))
    for i in range(draw(st.integers(0, 7))):
        lo = draw(st.integers(0, 200))
        hi = draw(st.integers(lo, 200))
        size = draw(st.integers(1, 1000))
        files.append(data_file(size, level=0, min_key=lo, max_key=hi, min_seq=100 + i, max_seq=100 + i))
    return num_levels, files


strategies = st.builds(
    lambda amp, ratio, trigger, force: (
        ForceUpLevel0Compaction(UniversalCompaction(amp, ratio, trigger))
        if force
        else UniversalCompaction(amp, ratio, trigger)
    ),
    st.sampled_from([0, 25, 100, 200, 400]),
    st.integers(0, 20),
    st.integers(1, 6),
    st.booleans(),
)


def _trigger(strategy: CompactStrategy) -> int:
    universal = strategy.universal if isinstance(strategy, ForceUpLevel0Compaction) else strategy
    assert isinstance(universal, UniversalCompaction)
    return universal.num_run_compaction_trigger


def check_unit(unit: CompactUnit, runs: Sequence[LevelSortedRun], num_levels: int) -> int:
    """Assert the unit is a prefix of ``runs`` into a valid level; return the number of runs picked."""
    picked = 0
    files: list[DataFileMeta] = []
    while len(files) < len(unit.files):
        files.extend(runs[picked].run.files)
        picked += 1
    assert tuple(files) == unit.files, "a unit is a prefix of the runs"
    assert 0 < unit.output_level < num_levels
    assert all(r.level <= unit.output_level for r in runs[:picked])
    if picked < len(runs):
        assert unit.output_level < runs[picked].level, "the output does not land on an unpicked run"
    else:
        assert unit.output_level == num_levels - 1
    return picked


def merged_file(files: Sequence[DataFileMeta], level: int) -> DataFileMeta:
    lo, hi = key_range(files)
    return data_file(
        sum(f.file_size for f in files), level=level, min_key=lo, max_key=hi, max_seq=next(_seq)
    )


@settings(max_examples=300, deadline=None)
@given(layouts(), strategies)
def test_pick_is_a_valid_prefix_and_applies_cleanly(
    layout: tuple[int, list[DataFileMeta]], strategy: CompactStrategy
) -> None:
    num_levels, files = layout
    levels = Levels(KEY_OF, files, num_levels)
    runs = levels.level_sorted_runs()
    unit = strategy.pick(levels.number_of_levels, runs)
    if unit is None:
        assert levels.number_of_sorted_runs() <= _trigger(strategy)
        return
    check_unit(unit, runs, num_levels)
    levels.update(unit.files, [merged_file(unit.files, unit.output_level)])  # raises on overlap
    assert len(levels.all_files()) == len(files) - len(unit.files) + 1


@settings(max_examples=200, deadline=None)
@given(layouts(), strategies, st.integers(1, 1200))
def test_repeated_compaction_converges(
    layout: tuple[int, list[DataFileMeta]], strategy: CompactStrategy, min_file_size: int
) -> None:
    num_levels, files = layout
    levels = Levels(KEY_OF, files, num_levels)
    for _ in range(100):
        runs = levels.level_sorted_runs()
        unit = filter_trivial_unit(strategy.pick(levels.number_of_levels, runs))
        if unit is None:
            break
        check_unit(unit, runs, num_levels)
        steps = plan_compact_task(
            unit,
            KEY_OF,
            max_level=levels.max_level,
            min_file_size=min_file_size,
            non_empty_highest_level=levels.non_empty_highest_level(),
        )
        before: list[DataFileMeta] = []
        after: list[DataFileMeta] = []
        for step in steps:
            if isinstance(step, UpgradeStep):
                assert step.file.level < step.output_level
                before.append(step.file)
                after.append(step.upgraded)
            else:
                assert isinstance(step, RewriteStep) and step.output_level == unit.output_level
                before.extend(step.files)
                after.append(merged_file(step.files, step.output_level))
        unchanged = set(unit.files) - set(before)
        assert all(f.level == unit.output_level for f in unchanged), "only files on the output level stay"
        assert len(before) == len(set(before))
        levels.update(before, after)  # raises if outputs overlap on their level
    else:
        raise AssertionError("compaction did not converge in 100 rounds")
    assert levels.number_of_sorted_runs() <= _trigger(strategy)
    if isinstance(strategy, ForceUpLevel0Compaction):
        assert levels.level0 == ()
