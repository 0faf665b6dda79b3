"""Compaction planning for data-evolution tables (Java ``DataEvolutionCompactCoordinator`` and its
``CompactPlanner``).

A data-evolution table (``data-evolution.enabled`` with ``row-tracking.enabled``, unaware bucket)
holds, for each row-id range, a base file and the partial-column files later updates wrote over
the same range (``write_cols``); a read merges them by row id
(:mod:`paimon_core.operation.data_evolution_split_read`). Compaction merges the files of
neighbouring ranges into one file holding every column, so later reads open fewer files, and
keeps every row's ``_ROW_ID``: the output's ``first_row_id`` is its first input range's and its
rows are in row-id order (:mod:`paimon_core.append.data_evolution_compact_task`).

The plan, per partition (Java ``CompactPlanner.compactPlan``):

* the partition's files are cut into *continuous* runs: ranges that overlap or follow on from
  each other (``[first_row_id, first_row_id + row_count]``, so adjacent ranges join); a gap in
  the row ids ends a run (the ids of another partition, or rows an earlier rewrite never had);
* within a run, files are grouped by overlapping row-id range; every file of a group must span
  the same range (else the table is corrupt: refused, nothing written);
* groups are added in range order to a bin weighing ``Σ max(file_size, source.split.open-file-cost)``;
  the bin becomes a task as soon as it weighs more than ``target-file-size``; a group weighing
  more than that alone first flushes the bin, then is a task by itself (its column files are
  merged); the run's leftover is a task too;
* a task is kept only with at least ``compaction.min.file-num`` files (Java's
  ``compactMinFileNum``): a lone big file, or a bin of a few files, stays as it is.

Unlike Java, the plan is made over the whole live file list at once (Java's
``DataEvolutionCompactRangePlanner`` streams candidate ranges out of the manifests in batches of
100,000 files and commits a snapshot per batch, to bound the coordinator's memory; our scan holds
the entries anyway). Blob and vector-store files (``DataEvolutionBlobCompactTask``) are refused
with the tables that hold them, and ``data-evolution.compaction.rewrite-row-ids = true`` with
Java's message (``validateOptions``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_core.append.append_compact_coordinator import AppendCompactConfig
from paimon_core.append.row_tracking import DATA_EVOLUTION_ENABLED
from paimon_core.exceptions import CorruptFileError, InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.data_evolution_split_read import row_id_range, same_range_groups

__all__ = [
    "REWRITE_ROW_IDS",
    "DataEvolutionCompactCoordinator",
    "DataEvolutionCompactTask",
    "check_contiguous_row_range",
    "validate_options",
]

logger = logging.getLogger(__name__)

#: Java ``CoreOptions.DATA_EVOLUTION_COMPACTION_REWRITE_ROW_IDS`` (no longer supported: refused).
REWRITE_ROW_IDS = "data-evolution.compaction.rewrite-row-ids"


def validate_options(options: Mapping[str, str]) -> None:
    """Java ``DataEvolutionCompactCoordinator.validateOptions``.

    Raises:
        InvalidOptionError: ``data-evolution.compaction.rewrite-row-ids`` is true.
    """
    if (options.get(REWRITE_ROW_IDS) or "false").strip().lower() == "true":
        raise InvalidOptionError(
            f"Option '{REWRITE_ROW_IDS}=true' is no longer supported. Data evolution compaction preserves "
            "row IDs and logical deletions. Use the 'materialize_deletion_vectors' procedure to apply deletion "
            "vectors to the latest table state and assign new row IDs.",
            key=REWRITE_ROW_IDS,
        )


def check_contiguous_row_range(files: Sequence[DataFileMeta]) -> tuple[int, int]:
    """The one row-id range ``[from, to]`` ``files`` cover together (Java
    ``DataEvolutionUtils.checkContiguousRowRange``).

    Raises:
        CorruptFileError: no files, or their ranges leave a gap.
    """
    if not files:
        raise CorruptFileError("Data evolution compact files should not be empty.")
    ranges = sorted(row_id_range(f) for f in files)
    lo, hi = ranges[0]
    for start, stop in ranges[1:]:
        if start > hi + 1:
            raise CorruptFileError(
                f"Data evolution compact files should have a contiguous row range, but rows {hi + 1}..{start - 1} "
                f"are missing between them ({', '.join(f.file_name for f in files)})"
            )
        hi = max(hi, stop)
    return lo, hi


@dataclass(frozen=True, slots=True)
class DataEvolutionCompactTask:
    """Files of one partition merged into one file (Java ``DataEvolutionNormalCompactTask``'s
    ``compactBefore``): whole row-id groups, contiguous, in range order."""

    partition: bytes
    files: tuple[DataFileMeta, ...]

    def __post_init__(self) -> None:
        check_contiguous_row_range(self.files)

    @property
    def row_range(self) -> tuple[int, int]:
        return check_contiguous_row_range(self.files)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.row_range
        return {"files": len(self.files), "first_row_id": lo, "row_count": hi - lo + 1}


class DataEvolutionCompactCoordinator:
    """Plans data-evolution compaction tasks from a table's live files (see the module docstring)."""

    def __init__(self, config: AppendCompactConfig) -> None:
        self.target_file_size = config.target_file_size
        self.open_file_cost = config.open_file_cost
        self.min_file_num = config.min_file_num

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> DataEvolutionCompactCoordinator:
        """The coordinator of a table with these resolved options (refused as :func:`validate_options`)."""
        if (options.get(DATA_EVOLUTION_ENABLED) or "false").strip().lower() != "true":
            raise InvalidOptionError(
                f"Data-evolution compaction needs '{DATA_EVOLUTION_ENABLED}' = true", key=DATA_EVOLUTION_ENABLED
            )
        validate_options(options)
        return cls(AppendCompactConfig.from_options(options))

    def plan(self, files_by_partition: Mapping[bytes, Sequence[DataFileMeta]]) -> list[DataEvolutionCompactTask]:
        """The tasks over each partition's live files, partitions in the given order (Java
        ``CompactPlanner.compactPlan``).

        Raises:
            UnsupportedTableKindError: a blob or vector-store file, or a file without ``first_row_id``.
            CorruptFileError: overlapping files that do not span the same row-id range.
        """
        tasks: list[DataEvolutionCompactTask] = []
        for partition, files in files_by_partition.items():
            for run in _continuous_runs(files):
                tasks += self._plan_run(partition, run)
        return tasks

    def _plan_run(self, partition: bytes, run: Sequence[DataFileMeta]) -> list[DataEvolutionCompactTask]:
        tasks: list[DataEvolutionCompactTask] = []
        bin_files: list[DataFileMeta] = []
        bin_weight = 0

        def trigger(files: list[DataFileMeta]) -> None:
            if files and len(files) >= self.min_file_num:
                tasks.append(DataEvolutionCompactTask(partition, tuple(files)))

        for group in same_range_groups(run):
            weight = sum(max(f.file_size, self.open_file_cost) for f in group)
            if weight > self.target_file_size:
                trigger(bin_files)
                bin_files, bin_weight = [], 0
                trigger(list(group))  # merge the column files of this big range
            else:
                bin_files += group
                bin_weight += weight
                if bin_weight > self.target_file_size:
                    trigger(bin_files)
                    bin_files, bin_weight = [], 0
        trigger(bin_files)
        return tasks


def _continuous_runs(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """``files`` cut where the row ids leave a gap (Java's ``RangeHelper`` over ``[first_row_id,
    first_row_id + row_count]``: adjacent ranges join), runs in range order, each in input order."""
    if not files:
        return []
    ranges = [row_id_range(f) for f in files]
    order = sorted(range(len(files)), key=lambda i: ranges[i])
    runs: list[list[int]] = [[order[0]]]
    end = ranges[order[0]][1] + 1
    for i in order[1:]:
        start, stop = ranges[i]
        if start <= end:
            runs[-1].append(i)
            end = max(end, stop + 1)
        else:
            runs.append([i])
            end = stop + 1
    return [[files[i] for i in sorted(r)] for r in runs]
