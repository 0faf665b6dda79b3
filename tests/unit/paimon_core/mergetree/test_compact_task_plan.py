"""``MergeTreeCompactTask`` planning: Java's ``MergeTreeCompactManagerTest`` cases, run through
Levels + strategy + :func:`plan_compact_task` + a fake rewriter, and the upgrade/rewrite rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_strategy import (
    CompactStrategy,
    filter_trivial_unit,
    pick_full_compaction,
)
from paimon_core.mergetree.compact.compact_task_plan import (
    CompactStep,
    RewriteStep,
    UpgradeStep,
    drop_delete,
    plan_compact_task,
)
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.levels import Levels
from paimon_core.mergetree.sorted_run import LevelSortedRun

from .compaction_helpers import KEY_OF, data_file, interval, key_range

LevelMinMax = tuple[int, int, int]


class FnStrategy:
    def __init__(self, fn: Callable[[int, Sequence[LevelSortedRun]], CompactUnit | None]) -> None:
        self._fn = fn

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        return self._fn(num_levels, runs)


ALL_TO_MAX: CompactStrategy = FnStrategy(lambda n, runs: CompactUnit.from_level_runs(n - 1, runs))


def fake_rewrite(step: RewriteStep) -> DataFileMeta:
    """Java's ``TestRewriter``: one output file spanning the inputs' key range."""
    lo, hi = key_range(step.files)
    return interval(step.output_level, lo, hi, max(f.max_sequence_number for f in step.files))


def apply(levels: Levels, steps: Sequence[CompactStep]) -> None:
    before: list[DataFileMeta] = []
    after: list[DataFileMeta] = []
    for step in steps:
        if isinstance(step, UpgradeStep):
            before.append(step.file)
            after.append(step.upgraded)
        else:
            before.extend(step.files)
            after.append(fake_rewrite(step))
    levels.update(before, after)


def compact(levels: Levels, strategy: CompactStrategy, *, min_file_size: int = 2) -> list[CompactStep]:
    """One ``MergeTreeCompactManager.triggerCompaction(false)`` + ``getCompactionResult``."""
    unit = filter_trivial_unit(strategy.pick(levels.number_of_levels, levels.level_sorted_runs()))
    if unit is None:
        return []
    steps = plan_compact_task(
        unit,
        KEY_OF,
        max_level=levels.max_level,
        min_file_size=min_file_size,
        non_empty_highest_level=levels.non_empty_highest_level(),
    )
    apply(levels, steps)
    return steps


def layout(levels: Levels) -> list[LevelMinMax]:
    return [(f.level, *key_range([f])) for f in levels.all_files()]


@pytest.mark.parametrize(
    ("inputs", "expected", "strategy", "expected_drop_delete"),
    [
        pytest.param(
            [(0, 1, 3), (0, 1, 5), (0, 1, 8)],
            [(0, 1, 8), (0, 1, 3)],
            FnStrategy(lambda n, runs: CompactUnit.from_level_runs(0, runs[:2])),
            False,
            id="output-to-zero-level",
        ),
        pytest.param(
            [(0, 1, 3), (0, 1, 5), (2, 1, 7)],
            [(1, 1, 5), (2, 1, 7)],
            FnStrategy(lambda n, runs: CompactUnit.from_level_runs(1, runs[:2])),
            False,
            id="compact-to-penultimate-layer",
        ),
        pytest.param([(3, 1, 3)], [(3, 1, 3)], ALL_TO_MAX, True, id="no-compaction"),
        pytest.param([(0, 1, 3), (1, 1, 5), (1, 6, 7)], [(2, 1, 5), (2, 6, 7)], ALL_TO_MAX, True, id="normal"),
        pytest.param([(0, 1, 3), (0, 1, 5), (0, 6, 8)], [(2, 1, 5), (2, 6, 8)], ALL_TO_MAX, True, id="upgrade"),
        pytest.param([(0, 1, 1), (0, 2, 2)], [(2, 1, 2)], ALL_TO_MAX, True, id="small-files"),
        pytest.param(
            [(0, 1, 5), (0, 6, 6), (1, 7, 8), (1, 9, 10)],
            [(2, 1, 5), (2, 6, 6), (2, 7, 8), (2, 9, 10)],
            ALL_TO_MAX,
            True,
            id="small-files-no-compact",
        ),
        pytest.param(
            [(0, 1, 5), (0, 6, 6), (1, 7, 7), (1, 9, 10)],
            [(2, 1, 5), (2, 6, 7), (2, 9, 10)],
            ALL_TO_MAX,
            True,
            id="small-files-cross-level",
        ),
        pytest.param(
            [(0, 1, 5), (0, 6, 6), (1, 1, 4), (1, 6, 8), (1, 10, 11), (2, 1, 3), (2, 4, 6)],
            [(2, 1, 8), (2, 10, 11)],
            ALL_TO_MAX,
            True,
            id="complex",
        ),
        pytest.param(
            [(0, 1, 5), (0, 6, 6), (1, 1, 4), (1, 6, 8), (1, 10, 10), (2, 1, 3), (2, 4, 6)],
            [(2, 1, 10)],
            ALL_TO_MAX,
            True,
            id="small-in-complex",
        ),
    ],
)
def test_merge_tree_compact_manager_cases(
    inputs: list[LevelMinMax], expected: list[LevelMinMax], strategy: CompactStrategy, expected_drop_delete: bool
) -> None:
    levels = Levels(KEY_OF, [interval(lvl, lo, hi, seq) for seq, (lvl, lo, hi) in enumerate(inputs)], 3)
    steps = compact(levels, strategy)
    assert all(s.drop_delete == expected_drop_delete for s in steps if isinstance(s, RewriteStep))
    assert layout(levels) == expected


def _unit(output_level: int, *files: DataFileMeta) -> CompactUnit:
    return CompactUnit(output_level, files)


def test_large_file_at_max_level_with_deletes_is_rewritten_alone() -> None:
    unknown = data_file(10, level=0, min_key=1, max_key=5, delete_row_count=None)
    deletes = data_file(10, level=0, min_key=6, max_key=9, delete_row_count=3)
    clean = data_file(10, level=0, min_key=10, max_key=12, delete_row_count=0)
    steps = plan_compact_task(
        _unit(3, unknown, deletes, clean), KEY_OF, max_level=3, min_file_size=5, non_empty_highest_level=3
    )
    assert [type(s).__name__ for s in steps] == ["RewriteStep", "RewriteStep", "UpgradeStep"]
    assert [s.files for s in steps if isinstance(s, RewriteStep)] == [[unknown], [deletes]]
    # below the max level, the same files are upgraded
    steps = plan_compact_task(
        _unit(2, unknown, deletes, clean), KEY_OF, max_level=3, min_file_size=5, non_empty_highest_level=3
    )
    assert [s.file for s in steps if isinstance(s, UpgradeStep)] == [unknown, deletes, clean]


def test_file_already_on_output_level_is_not_upgraded() -> None:
    f = data_file(10, level=2, min_key=1, max_key=5)
    assert plan_compact_task(_unit(2, f), KEY_OF, max_level=3, min_file_size=5, non_empty_highest_level=3) == []


@pytest.mark.parametrize("reason", ["force", "expired"])
def test_force_rewrite_and_expired_files_are_rewritten(reason: str) -> None:
    f = data_file(10, level=1, min_key=1, max_key=5)
    steps = plan_compact_task(
        _unit(2, f),
        KEY_OF,
        max_level=3,
        min_file_size=5,
        non_empty_highest_level=3,
        force_rewrite_all_files=reason == "force",
        is_expired_file=(lambda _: True) if reason == "expired" else None,
    )
    assert len(steps) == 1 and isinstance(steps[0], RewriteStep) and steps[0].files == [f]


def test_small_files_rewritten_with_neighbours_in_order() -> None:
    small1 = data_file(1, level=0, min_key=1, max_key=1)
    small2 = data_file(1, level=0, min_key=2, max_key=2)
    big = data_file(10, level=0, min_key=3, max_key=4)
    small3 = data_file(1, level=1, min_key=5, max_key=5)
    steps = plan_compact_task(
        _unit(2, small1, small2, big, small3), KEY_OF, max_level=3, min_file_size=5, non_empty_highest_level=2
    )
    assert isinstance(steps[0], RewriteStep) and steps[0].files == [small1, small2]
    assert len(steps[0].sections) == 2  # one section per small file
    assert steps[1] == UpgradeStep(big, 2)
    assert steps[2] == UpgradeStep(small3, 2)  # a lone pending small file is upgraded, not rewritten
    assert all(s.drop_delete for s in steps if isinstance(s, RewriteStep))


def test_file_rewrite_unit_rewrites_each_file() -> None:
    a, b = data_file(10, level=3, min_key=1, max_key=2), data_file(10, level=3, min_key=3, max_key=4)
    unit = CompactUnit(3, (a, b), file_rewrite=True)
    steps = plan_compact_task(unit, KEY_OF, max_level=3, min_file_size=5, non_empty_highest_level=3)
    assert [s.files for s in steps if isinstance(s, RewriteStep)] == [[a], [b]]


@pytest.mark.parametrize(
    ("output_level", "highest", "dv", "keep", "expected"),
    [
        (0, 0, False, False, False),
        (0, 0, True, False, False),
        (1, 2, False, False, False),
        (1, 2, True, False, True),
        (2, 2, False, False, True),
        (3, 2, False, False, True),
        (2, 2, False, True, False),
    ],
)
def test_drop_delete(output_level: int, highest: int, dv: bool, keep: bool, expected: bool) -> None:
    assert drop_delete(output_level, highest, dv_maintained=dv, force_keep_delete=keep) is expected


def test_pick_full_compaction() -> None:
    a, b = data_file(10, level=2, min_key=1, max_key=2), data_file(10, level=2, min_key=3, max_key=4)
    l0 = data_file(1, level=0)
    assert pick_full_compaction(3, []) is None
    levels = Levels(KEY_OF, [a, b, l0], 3)
    unit = pick_full_compaction(3, levels.level_sorted_runs())
    assert unit == CompactUnit(2, (l0, a, b))
    only_max = Levels(KEY_OF, [a, b], 3).level_sorted_runs()
    assert pick_full_compaction(3, only_max) is None
    assert pick_full_compaction(3, only_max, files_with_deletion_vectors={b.file_name}) == CompactUnit(
        2, (b,), file_rewrite=True
    )
    assert pick_full_compaction(3, only_max, is_expired_file=lambda f: f is a) == CompactUnit(
        2, (a,), file_rewrite=True
    )
    assert pick_full_compaction(3, only_max, force_rewrite_all_files=True) == CompactUnit(
        2, (a, b), file_rewrite=True
    )


def test_filter_trivial_unit() -> None:
    f = data_file(1, level=2)
    assert filter_trivial_unit(None) is None
    assert filter_trivial_unit(CompactUnit(2, ())) is None
    assert filter_trivial_unit(CompactUnit(2, (f,))) is None
    assert filter_trivial_unit(CompactUnit(3, (f,))) == CompactUnit(3, (f,))
