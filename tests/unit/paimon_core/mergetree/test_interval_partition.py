"""Java's ``IntervalPartitionTest``, case for case; its random test as a hypothesis property."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.interval_partition import interval_partition
from paimon_core.mergetree.sorted_run import SortedRun

from .compaction_helpers import KEY_OF, data_file, interval

_PAIR = re.compile(r"\[(\d+), (\d+)]")


def parse_metas(text: str) -> list[DataFileMeta]:
    return [interval(0, int(lo), int(hi)) for lo, hi in _PAIR.findall(text)]


def ranges(run: SortedRun) -> tuple[tuple[int, int], ...]:
    return tuple((KEY_OF(f.min_key)[0][1], KEY_OF(f.max_key)[0][1]) for f in run.files)


def parse_expected(text: str) -> list[Counter[tuple[tuple[int, int], ...]]]:
    return [
        Counter(tuple((int(lo), int(hi)) for lo, hi in _PAIR.findall(part)) for part in line.split("|"))
        for line in text.split("\n")
    ]


@pytest.mark.parametrize(
    ("given_files", "expected"),
    [
        pytest.param(
            "[100, 200], [100, 400], [100, 300], [100, 500]",
            "[100, 200] | [100, 300] | [100, 400] | [100, 500]",
            id="same-min-key",
        ),
        pytest.param(
            "[100, 500], [300, 500], [200, 500], [400, 500]",
            "[100, 500] | [200, 500] | [300, 500] | [400, 500]",
            id="same-max-key",
        ),
        pytest.param(
            "[0, 9], [5, 7], [9, 15], [16, 22], [16, 28], [24, 32]",
            "[0, 9] | [5, 7], [9, 15]\n[16, 22], [24, 32] | [16, 28]",
            id="section-partitioning",
        ),
    ],
)
def test_partition(given_files: str, expected: str) -> None:
    sections = interval_partition(parse_metas(given_files), KEY_OF)
    for section in sections:
        for run in section:
            run.validate(KEY_OF)
    # the order of runs within a section does not matter: compare multisets
    assert [Counter(ranges(r) for r in section) for section in sections] == parse_expected(expected)


@st.composite
def sorted_run_intervals(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]]]:
    """Java's ``randomTest`` input: 1-10 runs of 1-10 disjoint intervals over distinct ints < 1000."""
    num_runs = draw(st.integers(1, 10))
    out: list[tuple[int, int]] = []
    for _ in range(num_runs):
        n = draw(st.integers(1, 10))
        points = sorted(draw(st.sets(st.integers(0, 999), min_size=2 * n, max_size=2 * n)))
        out.extend((points[j], points[j + 1]) for j in range(0, 2 * n, 2))
    return num_runs, out


@settings(max_examples=100, deadline=None)
@given(sorted_run_intervals())
def test_random_partition(case: tuple[int, list[tuple[int, int]]]) -> None:
    num_runs, intervals = case
    files = [interval(0, lo, hi) for lo, hi in intervals]
    sections = interval_partition(files, KEY_OF)
    assert sorted(f.file_name for s in sections for r in s for f in r.files) == sorted(f.file_name for f in files)
    previous_max: int | None = None
    for section in sections:
        assert len(section) <= num_runs
        for run in section:
            run.validate(KEY_OF)
        lo = min(ranges(r)[0][0] for r in section)
        hi = max(h for r in section for _, h in ranges(r))
        assert previous_max is None or lo > previous_max  # sections are key-disjoint, in order
        previous_max = hi


def test_runs_follow_java_priority_queue_order() -> None:
    """Ties and run order as ``java.util.PriorityQueue`` gives them (checked against the Java class)."""
    files = [
        data_file(10, name="f11", min_key=31, max_key=31),
        data_file(50, name="f5", min_key=11, max_key=19),
        data_file(2, level=1, name="f1", min_key=0, max_key=11),
        data_file(1, name="f10", min_key=12, max_key=40),
        data_file(50, level=1, name="f2", min_key=17, max_key=19),
    ]
    [section] = interval_partition(files, KEY_OF)
    assert [tuple(f.file_name for f in run.files) for run in section] == [("f5",), ("f1", "f10"), ("f2", "f11")]
