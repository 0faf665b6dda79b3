"""The levels of one bucket's LSM tree: Java's ``Levels`` (org.apache.paimon.mergetree).

Level 0 holds files that may overlap, each its own sorted run, ordered newest first (Java's
``TreeSet`` comparator: max sequence number descending, then min sequence number, creation time
and file name ascending). Levels 1..n-1 are one :class:`SortedRun` each. ``update(before, after)``
applies a compaction result or a new file.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.keys import KeyOf
from paimon_core.mergetree.sorted_run import LevelSortedRun, SortedRun

__all__ = ["Levels", "level0_order"]

logger = logging.getLogger(__name__)


def level0_order(file: DataFileMeta) -> tuple[int, int, tuple[int, int], str]:
    """Sort key of a level-0 file, exactly Java's ``Levels`` level-0 comparator.

    Larger max sequence number first; ties broken by smaller min sequence number, earlier
    creation time (unknown sorts first), then file name.
    """
    created = (0, 0) if file.creation_time is None else (1, file.creation_time)
    return (-file.max_sequence_number, file.min_sequence_number, created, file.file_name)


class Levels:
    """Files of one bucket by level (Java ``Levels``).

    ``num_levels`` is the configured number of levels; as in Java, it grows to
    ``max(file.level) + 1`` when restored files sit on a higher level, and must be at least 2.
    Not thread-safe: one owner mutates it through :meth:`update`.
    """

    def __init__(self, key_of: KeyOf, input_files: Sequence[DataFileMeta], num_levels: int) -> None:
        self._key_of = key_of
        restored = max(num_levels, max((f.level for f in input_files), default=-1) + 1)
        if restored <= 1:
            raise InvalidArgumentError(
                f"Number of levels must be at least 2, got {num_levels}", num_levels=num_levels
            )
        if any(f.level < 0 for f in input_files):
            raise InvalidArgumentError("Data files must not have a negative level")
        self._level0: dict[tuple[int, int, tuple[int, int], str], DataFileMeta] = {}
        self._level0_sorted: tuple[DataFileMeta, ...] | None = ()
        self._runs: list[SortedRun] = [SortedRun.empty() for _ in range(1, restored)]
        by_level: dict[int, list[DataFileMeta]] = {}
        for f in input_files:
            by_level.setdefault(f.level, []).append(f)
        for level, files in by_level.items():
            self._update_level(level, (), files)
        stored = len(self._level0) + sum(len(r.files) for r in self._runs)
        if stored != len(input_files):
            raise InvalidArgumentError(
                f"Levels holds {stored} files but {len(input_files)} were given: two level-0 files "
                "share max/min sequence number, creation time and file name",
            )

    # --- views ------------------------------------------------------------------------------

    @property
    def key_of(self) -> KeyOf:
        return self._key_of

    @property
    def level0(self) -> tuple[DataFileMeta, ...]:
        """Level-0 files, newest (largest max sequence number) first."""
        if self._level0_sorted is None:
            self._level0_sorted = tuple(self._level0[k] for k in sorted(self._level0))
        return self._level0_sorted

    def run_of_level(self, level: int) -> SortedRun:
        if level <= 0:
            raise InvalidArgumentError("Level 0 does not have one single sorted run.", level=level)
        if level > self.max_level:
            raise InvalidArgumentError(f"Level {level} exceeds max level {self.max_level}", level=level)
        return self._runs[level - 1]

    @property
    def number_of_levels(self) -> int:
        return len(self._runs) + 1

    @property
    def max_level(self) -> int:
        return len(self._runs)

    def number_of_sorted_runs(self) -> int:
        return len(self._level0) + sum(1 for r in self._runs if r.non_empty())

    def non_empty_highest_level(self) -> int:
        """The highest level holding a file, or -1 when every level is empty."""
        for i in range(len(self._runs) - 1, -1, -1):
            if self._runs[i].non_empty():
                return i + 1
        return 0 if self._level0 else -1

    def total_file_size(self) -> int:
        return sum(f.file_size for f in self._level0.values()) + sum(r.total_size for r in self._runs)

    def level_sorted_runs(self) -> list[LevelSortedRun]:
        """Each level-0 file as its own run (newest first), then one run per non-empty level."""
        runs = [LevelSortedRun(0, SortedRun.from_single(f)) for f in self.level0]
        runs.extend(LevelSortedRun(i + 1, r) for i, r in enumerate(self._runs) if r.non_empty())
        return runs

    def all_files(self) -> list[DataFileMeta]:
        return [f for lsr in self.level_sorted_runs() for f in lsr.run.files]

    # --- mutation -----------------------------------------------------------------------------

    def add_level0_file(self, file: DataFileMeta) -> None:
        if file.level != 0:
            raise InvalidArgumentError(f"{file.file_name} is on level {file.level}, not 0", file=file.file_name)
        self._update_level(0, (), (file,))

    def update(self, before: Iterable[DataFileMeta], after: Iterable[DataFileMeta]) -> frozenset[str]:
        """Remove ``before`` and add ``after`` (Java ``Levels.update``).

        Files are matched by level and file name; a ``before`` file that is not present is
        ignored, as in Java. Returns the names of dropped files (in ``before`` but not in
        ``after``: an upgrade keeps its file), what Java passes to its drop-file callbacks.
        Unlike Java, which silently ignores them, ``after`` files above the max level raise.
        """
        before = list(before)
        after = list(after)
        for f in after:
            if not 0 <= f.level <= self.max_level:
                raise InvalidArgumentError(
                    f"Cannot add {f.file_name} at level {f.level}: levels are 0..{self.max_level}",
                    file=f.file_name,
                )
        for level in range(self.number_of_levels):
            self._update_level(
                level,
                [f for f in before if f.level == level],
                [f for f in after if f.level == level],
            )
        dropped = frozenset(f.file_name for f in before) - {f.file_name for f in after}
        if dropped:
            logger.debug("Levels dropped files %s", sorted(dropped))
        return dropped

    def _update_level(
        self, level: int, before: Sequence[DataFileMeta], after: Sequence[DataFileMeta]
    ) -> None:
        if not before and not after:
            return
        if level == 0:
            names = {f.file_name for f in before}
            for k in [k for k, f in self._level0.items() if f.file_name in names]:
                del self._level0[k]
            for f in after:
                self._level0.setdefault(level0_order(f), f)  # a TreeSet keeps the first equal element
            self._level0_sorted = None
            return
        names = {f.file_name for f in before}
        files = [f for f in self.run_of_level(level).files if f.file_name not in names]
        files.extend(after)
        self._runs[level - 1] = SortedRun.from_unsorted(files, self._key_of)

    def __repr__(self) -> str:
        return f"Levels({self.level_sorted_runs()!r})"
