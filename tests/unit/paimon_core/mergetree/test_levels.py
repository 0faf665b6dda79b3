"""Java's ``LevelsTest`` and ``LevelsOrderingFixTest``, plus Levels/SortedRun invariants."""

from __future__ import annotations

import pytest

from paimon_core.data.binary_row import serialize_binary_row
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.keys import binary_key_of
from paimon_core.mergetree.levels import Levels
from paimon_core.mergetree.sorted_run import SortedRun
from paimon_core.schema.data_types import DoubleType, IntType, VarCharType

from .compaction_helpers import KEY_OF, data_file, interval


def new_file(level: int) -> DataFileMeta:
    """Java ``LevelsTest.newFile``: random name, key 0, sequence 0..1."""
    return data_file(0, level=level, min_seq=0, max_seq=1)


@pytest.mark.parametrize(
    ("levels", "expected"),
    [((), -1), ((0, 0), 0), ((0, 1), 1), ((0, 1, 2), 2)],
)
def test_non_empty_highest_level(levels: tuple[int, ...], expected: int) -> None:
    assert Levels(KEY_OF, [new_file(level) for level in levels], 3).non_empty_highest_level() == expected


def test_level0_with_same_sequence_numbers() -> None:
    assert len(Levels(KEY_OF, [new_file(0), new_file(0)], 3).all_files()) == 2


def test_issue5872_deterministic_ordering() -> None:
    earlier = data_file(1024, name="z-file.parquet", min_seq=98, max_seq=100, creation_time=1000)
    later = data_file(1024, name="a-file.parquet", min_seq=99, max_seq=100, creation_time=1001)
    ordered = Levels(KEY_OF, [earlier, later], 2).all_files()
    assert ordered[0].file_name == "z-file.parquet"
    assert ordered[0].min_sequence_number == 98
    assert Levels(KEY_OF, [later, earlier], 2).all_files() == ordered


def test_level0_order_matches_java_comparator() -> None:
    files = [
        data_file(name="b", min_seq=1, max_seq=5, creation_time=2),
        data_file(name="a", min_seq=1, max_seq=5, creation_time=2),
        data_file(name="c", min_seq=1, max_seq=5, creation_time=1),
        data_file(name="d", min_seq=0, max_seq=5, creation_time=9),
        data_file(name="e", min_seq=6, max_seq=9, creation_time=0),
    ]
    assert [f.file_name for f in Levels(KEY_OF, files, 3).level0] == ["e", "d", "c", "a", "b"]


def test_restored_levels_extend_num_levels_as_java() -> None:
    """Java's ``Levels`` grows to ``max(file level) + 1`` levels (``MergeTreeCompactManagerTest.testNoCompaction``)."""
    levels = Levels(KEY_OF, [interval(3, 1, 3)], 3)
    assert levels.number_of_levels == 4
    assert levels.max_level == 3


@pytest.mark.parametrize("num_levels", [0, 1])
def test_fewer_than_two_levels_rejected(num_levels: int) -> None:
    with pytest.raises(InvalidArgumentError, match="at least 2"):
        Levels(KEY_OF, [], num_levels)


def test_overlapping_files_on_one_level_rejected() -> None:
    with pytest.raises(InvalidArgumentError, match="overlapping"):
        Levels(KEY_OF, [interval(1, 1, 5), interval(1, 5, 8)], 3)


def test_runs_and_sizes() -> None:
    files = [interval(0, 1, 3, 5), interval(0, 2, 9, 7), interval(1, 6, 7), interval(1, 1, 5), interval(2, 1, 9)]
    levels = Levels(KEY_OF, files, 4)
    runs = levels.level_sorted_runs()
    assert [r.level for r in runs] == [0, 0, 1, 2]
    assert runs[0].run.files == (files[1],)  # larger max sequence number first
    assert runs[2].run.files == (files[3], files[2])  # sorted by min key
    assert levels.number_of_sorted_runs() == 4
    assert levels.total_file_size() == sum(f.file_size for f in files)
    assert levels.run_of_level(3).is_empty()
    with pytest.raises(InvalidArgumentError):
        levels.run_of_level(0)


def test_update_removes_by_name_and_level_and_reports_dropped() -> None:
    a, b, c = interval(0, 1, 3, 1), interval(0, 4, 6, 2), interval(1, 1, 9)
    levels = Levels(KEY_OF, [a, b, c], 3)
    merged = interval(2, 1, 9)
    upgraded = b.with_level(1)
    dropped = levels.update([a, b, c], [merged, upgraded])
    assert dropped == {a.file_name, c.file_name}
    assert levels.level0 == ()
    assert levels.run_of_level(1).files == (upgraded,)
    assert levels.run_of_level(2).files == (merged,)


def test_update_rejects_level_above_max() -> None:
    levels = Levels(KEY_OF, [], 3)
    with pytest.raises(InvalidArgumentError, match="levels are 0..2"):
        levels.update([], [interval(3, 1, 2)])


def test_sorted_run_validate() -> None:
    SortedRun.from_unsorted([interval(1, 5, 8), interval(1, 1, 4)], KEY_OF).validate(KEY_OF)
    with pytest.raises(InvalidArgumentError):
        SortedRun.from_sorted([interval(1, 1, 4), interval(1, 4, 8)]).validate(KEY_OF)


def test_binary_key_of_orders_like_java() -> None:
    types = [VarCharType(VarCharType.MAX_LENGTH), IntType(), DoubleType()]
    key_of = binary_key_of(types)

    def k(*values: object) -> object:
        return key_of(serialize_binary_row(list(values), types))

    # strings by UTF-8 bytes (= code points), then ints, then Double.compare (-0.0 < 0.0, NaN last)
    assert k("a", 2, 0.0) < k("b", 1, 0.0) < k("\uffff", 0, 0.0) < k("\U0001f600", 0, 0.0)
    assert k("a", -1, 0.0) < k("a", 1, 0.0)
    assert k("a", 1, -0.0) < k("a", 1, 0.0) < k("a", 1, float("inf")) < k("a", 1, float("nan"))
    assert k(None, 9, 0.0) < k("", 0, 0.0)  # nulls first
