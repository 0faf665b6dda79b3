"""Sorted runs of an LSM tree: Java's ``SortedRun`` and ``LevelSortedRun`` (org.apache.paimon.mergetree).

A sorted run is a list of data files ordered by min key whose key ranges do not overlap
(``files[i].min_key > files[i - 1].max_key``). Level 0 holds one run per file; every other level
is a single run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.keys import Key, KeyOf, binary_key_of

__all__ = ["Key", "KeyOf", "LevelSortedRun", "SortedRun", "binary_key_of"]


@dataclass(frozen=True, slots=True)
class SortedRun:
    """Files sorted by min key with non-overlapping key ranges (Java ``SortedRun``).

    Equality compares the files, as in Java. Build one with :meth:`from_single`,
    :meth:`from_sorted` (trusted order) or :meth:`from_unsorted` (sorts and validates).
    """

    files: tuple[DataFileMeta, ...]
    total_size: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))
        object.__setattr__(self, "total_size", sum(f.file_size for f in self.files))

    @staticmethod
    def empty() -> SortedRun:
        return _EMPTY

    @staticmethod
    def from_single(file: DataFileMeta) -> SortedRun:
        return SortedRun((file,))

    @staticmethod
    def from_sorted(sorted_files: Iterable[DataFileMeta]) -> SortedRun:
        """A run of files the caller guarantees are sorted and non-overlapping (not checked)."""
        return SortedRun(tuple(sorted_files))

    @staticmethod
    def from_unsorted(files: Iterable[DataFileMeta], key_of: KeyOf) -> SortedRun:
        """Sort ``files`` by min key and check that their key ranges do not overlap."""
        run = SortedRun(tuple(sorted(files, key=lambda f: key_of(f.min_key))))
        run.validate(key_of)
        return run

    def is_empty(self) -> bool:
        return not self.files

    def non_empty(self) -> bool:
        return bool(self.files)

    def validate(self, key_of: KeyOf) -> None:
        """Raise :class:`InvalidArgumentError` unless each file starts after the previous one ends."""
        for prev, cur in zip(self.files, self.files[1:], strict=False):
            if not key_of(cur.min_key) > key_of(prev.max_key):
                raise InvalidArgumentError(
                    "SortedRun is not sorted and may contain overlapping key intervals: "
                    f"{cur.file_name} starts at or before the end of {prev.file_name}",
                    files=(prev.file_name, cur.file_name),
                )

    def __repr__(self) -> str:
        return "SortedRun[" + ", ".join(f"{f.file_name}(L{f.level}, {f.file_size}B)" for f in self.files) + "]"


_EMPTY = SortedRun(())


@dataclass(frozen=True, slots=True)
class LevelSortedRun:
    """A sorted run and the level it sits on (Java ``LevelSortedRun``)."""

    level: int
    run: SortedRun

    @property
    def total_size(self) -> int:
        return self.run.total_size

