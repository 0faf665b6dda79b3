"""Split files into key-disjoint sections of sorted runs: Java's ``IntervalPartition``.

Files are sorted by (min key, max key) and cut into sections whose key ranges do not overlap
each other; within a section files are greedily packed into as few sorted runs as possible
(each file goes to the run whose last file ends first, if it starts after that end). A
compaction merges each section on its own.

Which run a file joins when several runs end on the same key, and the order of a section's
runs, follow ``java.util.PriorityQueue`` (emulated below), so sections match Java's exactly.
"""

from __future__ import annotations

from collections.abc import Iterable

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.keys import Key, KeyOf
from paimon_core.mergetree.sorted_run import SortedRun

__all__ = ["interval_partition"]


def interval_partition(files: Iterable[DataFileMeta], key_of: KeyOf) -> list[list[SortedRun]]:
    """Sections (outer list, ascending key order) of sorted runs (inner list, Java's order)."""
    ordered = sorted(files, key=lambda f: (key_of(f.min_key), key_of(f.max_key)))
    sections: list[list[SortedRun]] = []
    section: list[DataFileMeta] = []
    bound: Key | None = None
    for f in ordered:
        if section and bound is not None and key_of(f.min_key) > bound:
            sections.append(_partition_section(section, key_of))
            section = []
            bound = None
        section.append(f)
        max_key = key_of(f.max_key)
        if bound is None or max_key > bound:
            bound = max_key
    if section:
        sections.append(_partition_section(section, key_of))
    return sections


def _partition_section(files: list[DataFileMeta], key_of: KeyOf) -> list[SortedRun]:
    queue = _JavaPriorityQueue(key_of)
    queue.add([files[0]])
    for f in files[1:]:
        top = queue.poll()
        if key_of(f.min_key) > key_of(top[-1].max_key):
            top.append(f)
        else:
            queue.add([f])
        queue.add(top)
    return [SortedRun.from_sorted(run) for run in queue.items]


class _JavaPriorityQueue:
    """``java.util.PriorityQueue`` of runs ordered by their last file's max key.

    Same sift-up/sift-down as the JDK, so ties between equal keys resolve as in Java and
    :attr:`items` is the JDK's internal array order (what ``queue.stream()`` yields).
    """

    def __init__(self, key_of: KeyOf) -> None:
        self._key_of = key_of
        self.items: list[list[DataFileMeta]] = []

    def _key(self, run: list[DataFileMeta]) -> Key:
        return self._key_of(run[-1].max_key)

    def add(self, run: list[DataFileMeta]) -> None:
        q = self.items
        q.append(run)
        k, key = len(q) - 1, self._key(run)
        while k > 0:
            parent = (k - 1) >> 1
            if key >= self._key(q[parent]):
                break
            q[k] = q[parent]
            k = parent
        q[k] = run

    def poll(self) -> list[DataFileMeta]:
        q = self.items
        result = q[0]
        last = q.pop()
        n = len(q)
        if n > 0:
            k, key, half = 0, self._key(last), n >> 1
            while k < half:
                child = 2 * k + 1
                right = child + 1
                if right < n and self._key(q[child]) > self._key(q[right]):
                    child = right
                if key <= self._key(q[child]):
                    break
                q[k] = q[child]
                k = child
            q[k] = last
        return result
