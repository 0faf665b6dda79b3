"""A unit of compaction work: Java's ``CompactUnit`` (org.apache.paimon.compact)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.sorted_run import LevelSortedRun

__all__ = ["CompactUnit"]


@dataclass(frozen=True, slots=True)
class CompactUnit:
    """Files to compact into ``output_level``.

    ``file_rewrite`` marks Java's file-rewrite units (``FileRewriteCompactTask``): every file
    is rewritten on its own, with no merging across files (full compaction of a table that
    already has a single max-level run).
    """

    output_level: int
    files: tuple[DataFileMeta, ...]
    file_rewrite: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))

    @staticmethod
    def from_level_runs(output_level: int, runs: Iterable[LevelSortedRun]) -> CompactUnit:
        """All files of ``runs``, in run order."""
        return CompactUnit(output_level, tuple(f for r in runs for f in r.run.files))

    @staticmethod
    def from_files(
        output_level: int, files: Iterable[DataFileMeta], *, file_rewrite: bool = False
    ) -> CompactUnit:
        return CompactUnit(output_level, tuple(files), file_rewrite=file_rewrite)
