"""Compaction planning for unaware-bucket append tables (Java ``AppendCompactCoordinator``).

A file is a *candidate* when it is small (``file_size < compaction_file_size``, i.e. below
``target-file-size × compaction.small-file-ratio``) or, with deletion vectors enabled, when its
deletion vector deletes more than ``compaction.delete-ratio-threshold`` of its rows (or the
count is unknown). Each partition's candidates are sorted by size and packed into bins: a bin
is emitted as soon as it has more than one file and ``Σ(file_size + source.split.open-file-cost)
≥ 2 × target-file-size``; what is left is emitted if it holds at least
``compaction.min.file-num`` files. With deletion vectors, files are first grouped by the DV
index file that holds their vector (compacting them rewrites that index file, so one index
file must belong to one task); those groups are packed the same way and their leftover is
always emitted; files without a vector are packed as above.

:func:`plan_unaware_bucket_compaction` is Spark's ``CALL sys.compact`` path (one batch run over
the latest snapshot). :class:`AppendCompactCoordinator` is the streaming coordinator: it keeps
each partition's leftovers between runs; after ``COMPACT_AGE`` runs in a row without a task a
partition's leftovers (two files or more) are compacted anyway, and after ``REMOVE_AGE`` they
are forgotten. Java ages partitions only on runs that found new files; so does :meth:`run`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.exceptions import InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry
from paimon_core.options import CoreOptions, parse_memory_size

__all__ = [
    "COMPACT_AGE",
    "REMOVE_AGE",
    "AppendCompactConfig",
    "AppendCompactCoordinator",
    "AppendCompactTask",
    "plan_unaware_bucket_compaction",
]

logger = logging.getLogger(__name__)

#: Empty plans after which a partition's leftovers are compacted anyway (Java ``COMPACT_AGE``).
COMPACT_AGE = 5
#: Empty plans after which a partition's leftovers are forgotten (Java ``REMOVE_AGE``).
REMOVE_AGE = 10

COMPACTION_MIN_FILE_NUM = "compaction.min.file-num"
COMPACTION_MIN_FILE_NUM_DEFAULT = 5
COMPACTION_FILE_NUM_LIMIT = "compaction.file-num-limit"
COMPACTION_FILE_NUM_LIMIT_DEFAULT = 100_000
COMPACTION_SMALL_FILE_RATIO = "compaction.small-file-ratio"
COMPACTION_SMALL_FILE_RATIO_DEFAULT = 0.7
COMPACTION_DELETE_RATIO_THRESHOLD = "compaction.delete-ratio-threshold"
COMPACTION_DELETE_RATIO_THRESHOLD_DEFAULT = 0.2
COMPACTION_FORCE_REWRITE_ALL_FILES = "compaction.force-rewrite-all-files"
SOURCE_SPLIT_OPEN_FILE_COST = "source.split.open-file-cost"
SOURCE_SPLIT_OPEN_FILE_COST_DEFAULT = 4 * 1024 * 1024
DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"

#: {partition: {data file name: its deletion vector}}; None: deletion vectors disabled.
PartitionDeletionFiles = Mapping[bytes, Mapping[str, DeletionFile]]


@dataclass(frozen=True, slots=True)
class AppendCompactTask:
    """Files of one partition to rewrite together (Java ``AppendCompactTask``'s compactBefore)."""

    partition: bytes
    files: tuple[DataFileMeta, ...]


@dataclass(frozen=True, slots=True)
class AppendCompactConfig:
    """The options append compaction reads (Java ``CoreOptions`` accessors, append defaults)."""

    target_file_size: int
    compaction_file_size: int
    open_file_cost: int = SOURCE_SPLIT_OPEN_FILE_COST_DEFAULT
    min_file_num: int = COMPACTION_MIN_FILE_NUM_DEFAULT
    delete_ratio_threshold: float = COMPACTION_DELETE_RATIO_THRESHOLD_DEFAULT
    file_num_limit: int = COMPACTION_FILE_NUM_LIMIT_DEFAULT
    force_rewrite_all_files: bool = False
    deletion_vectors_enabled: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> AppendCompactConfig:
        """Read the table's options; ``target-file-size`` defaults to 256 MB (append tables)."""
        core = CoreOptions(options)
        target = core.target_file_size(has_primary_key=False)

        def number(key: str, default: float) -> float:
            raw = options.get(key)
            try:
                return default if raw is None else float(raw)
            except ValueError as e:
                raise InvalidOptionError(f"Option '{key}' must be a number, got {raw!r}", key=key) from e

        ratio = number(COMPACTION_SMALL_FILE_RATIO, COMPACTION_SMALL_FILE_RATIO_DEFAULT)
        cost = options.get(SOURCE_SPLIT_OPEN_FILE_COST)
        return cls(
            target_file_size=target,
            compaction_file_size=int(target * ratio),  # Java: (long) (target * ratio)
            open_file_cost=SOURCE_SPLIT_OPEN_FILE_COST_DEFAULT
            if cost is None
            else parse_memory_size(cost, key=SOURCE_SPLIT_OPEN_FILE_COST),
            min_file_num=int(number(COMPACTION_MIN_FILE_NUM, COMPACTION_MIN_FILE_NUM_DEFAULT)),
            delete_ratio_threshold=number(COMPACTION_DELETE_RATIO_THRESHOLD, COMPACTION_DELETE_RATIO_THRESHOLD_DEFAULT),
            file_num_limit=int(number(COMPACTION_FILE_NUM_LIMIT, COMPACTION_FILE_NUM_LIMIT_DEFAULT)),
            force_rewrite_all_files=options.get(COMPACTION_FORCE_REWRITE_ALL_FILES, "false").lower() == "true",
            deletion_vectors_enabled=options.get(DELETION_VECTORS_ENABLED, "false").lower() == "true",
        )


def is_candidate(file: DataFileMeta, config: AppendCompactConfig, deletion: DeletionFile | None) -> bool:
    """Java ``shouldCompact``: small, or (deletion vectors enabled) too many rows deleted."""
    if file.file_size < config.compaction_file_size:
        return True
    if not config.deletion_vectors_enabled or deletion is None:
        return False
    card = deletion.cardinality
    return card is None or card > file.row_count * config.delete_ratio_threshold


class _FileBin:
    """Java ``FileBin``: files collected until they are worth one compaction."""

    def __init__(self, config: AppendCompactConfig) -> None:
        self.config = config
        self.files: list[DataFileMeta] = []
        self.weight = 0

    def add(self, file: DataFileMeta) -> None:
        self.weight += file.file_size + self.config.open_file_cost
        self.files.append(file)

    def enough_content(self) -> bool:
        return len(self.files) > 1 and self.weight >= self.config.target_file_size * 2

    def enough_input_files(self) -> bool:
        return len(self.files) >= self.config.min_file_num

    def drain(self) -> list[DataFileMeta]:
        out, self.files, self.weight = self.files, [], 0
        return out


def _pack(files: Iterable[DataFileMeta], config: AppendCompactConfig) -> list[list[DataFileMeta]]:
    """Java ``pack``: smallest first; full bins, then the rest if there are enough files."""
    result = []
    fb = _FileBin(config)
    for f in sorted(files, key=lambda f: f.file_size):  # stable: ties keep their arrival order
        fb.add(f)
        if fb.enough_content():
            result.append(fb.drain())
    if fb.enough_input_files():
        result.append(fb.drain())
    return result


def _pack_with_deletion_vectors(
    files: Sequence[DataFileMeta], config: AppendCompactConfig, deletions: Mapping[str, DeletionFile]
) -> list[list[DataFileMeta]]:
    """Java ``packInDeletionVectorVMode``: files sharing a DV index file stay together."""
    groups: dict[str, list[DataFileMeta]] = {}
    rest = []
    for f in files:
        d = deletions.get(f.file_name)
        if d is None:
            rest.append(f)
        else:
            groups.setdefault(d.path, []).append(f)
    result = []
    fb = _FileBin(config)
    for group in sorted(groups.values(), key=lambda g: sum(f.file_size for f in g)):
        for f in group:
            fb.add(f)
        if fb.enough_content():
            result.append(fb.drain())
    if fb.files:  # files with deletion vectors must be compacted
        result.append(fb.drain())
    if len(rest) > 1:
        result += _pack(rest, config)
    return result


class _PartitionCoordinator:
    """Java ``SubCoordinator``: the candidates of one partition and their age."""

    def __init__(self, partition: bytes) -> None:
        self.partition = partition
        self.to_compact: dict[DataFileMeta, None] = {}  # an insertion-ordered set
        self.age = 0

    def add_files(self, files: Iterable[DataFileMeta]) -> None:
        self.age = 0
        self.to_compact.update(dict.fromkeys(files))

    def plan(self, config: AppendCompactConfig, deletions: Mapping[str, DeletionFile] | None) -> list[AppendCompactTask]:
        files = list(self.to_compact)
        packed = _pack(files, config) if deletions is None else _pack_with_deletion_vectors(files, config, deletions)
        for group in packed:
            for f in group:
                del self.to_compact[f]
        if not packed:
            self.age += 1
            if self.age > COMPACT_AGE and len(self.to_compact) > 1:
                packed = [list(self.to_compact)]
                self.to_compact.clear()
        return [AppendCompactTask(self.partition, tuple(g)) for g in packed]

    def ready_to_remove(self) -> bool:
        return not self.to_compact or self.age > REMOVE_AGE


class AppendCompactCoordinator:
    """The streaming planner: feed it each new snapshot's files, get compaction tasks back.

    ``run`` takes the ADD entries of the table's first scan and then of each new snapshot
    (DELETE entries are skipped, as Java's ``FilesIterator`` does). At most ``file_num_limit``
    candidates are taken per run; the rest wait for the next run. ``deletion_files`` (with
    deletion vectors enabled) is the latest snapshot's DV index by partition, refreshed per run
    as Java refreshes its DV maintainer cache per snapshot.
    """

    def __init__(self, config: AppendCompactConfig) -> None:
        self.config = config
        self.partitions: dict[bytes, _PartitionCoordinator] = {}
        self._pending: deque[ManifestEntry] = deque()
        self._deletions: PartitionDeletionFiles = {}

    def _deletions_of(self, partition: bytes) -> Mapping[str, DeletionFile] | None:
        if not self.config.deletion_vectors_enabled:
            return None
        return self._deletions.get(partition, {})

    def notify_new_files(self, partition: bytes, files: Iterable[DataFileMeta]) -> None:
        """Add a partition's files; only candidates are kept (Java ``notifyNewFiles``)."""
        deletions = self._deletions_of(partition) or {}
        keep = [f for f in files if is_candidate(f, self.config, deletions.get(f.file_name))]
        sub = self.partitions.get(partition)
        if sub is None:
            sub = self.partitions[partition] = _PartitionCoordinator(partition)
        sub.add_files(keep)

    def compact_plan(self) -> list[AppendCompactTask]:
        """Plan every partition once, then drop empty or too old partitions (Java ``compactPlan``)."""
        tasks = [t for sub in self.partitions.values() for t in sub.plan(self.config, self._deletions_of(sub.partition))]
        for p in [p for p, sub in self.partitions.items() if sub.ready_to_remove()]:
            del self.partitions[p]
        return tasks

    def run(
        self, new_entries: Iterable[ManifestEntry], *, deletion_files: PartitionDeletionFiles | None = None
    ) -> list[AppendCompactTask]:
        """Take new files (up to ``file_num_limit`` candidates) and plan; no candidate: no plan."""
        if deletion_files is not None:
            self._deletions = deletion_files
        self._pending.extend(e for e in new_entries if e.kind == FileKind.ADD)
        found: dict[bytes, list[DataFileMeta]] = {}
        taken = 0
        while self._pending and taken < self.config.file_num_limit:
            e = self._pending.popleft()
            deletions = self._deletions_of(e.partition) or {}
            if is_candidate(e.file, self.config, deletions.get(e.file.file_name)):
                found.setdefault(e.partition, []).append(e.file)
                taken += 1
        if not found:
            return []
        for partition, files in found.items():
            self.notify_new_files(partition, files)
        tasks = self.compact_plan()
        logger.debug("Append compaction planned %d task(s) from %d new candidate file(s)", len(tasks), taken)
        return tasks

    def restored_files(self) -> set[DataFileMeta]:
        """Candidates waiting in any partition (Java ``listRestoredFiles``)."""
        return {f for sub in self.partitions.values() for f in sub.to_compact}


def plan_unaware_bucket_compaction(
    entries_by_partition: Mapping[bytes, Sequence[DataFileMeta]],
    *,
    target_file_size: int,
    compaction_file_size: int,
    open_file_cost: int = SOURCE_SPLIT_OPEN_FILE_COST_DEFAULT,
    min_file_num: int = COMPACTION_MIN_FILE_NUM_DEFAULT,
    delete_ratio_threshold: float = COMPACTION_DELETE_RATIO_THRESHOLD_DEFAULT,
    deletion_files: PartitionDeletionFiles | None = None,
    file_num_limit: int = COMPACTION_FILE_NUM_LIMIT_DEFAULT,
) -> list[AppendCompactTask]:
    """One batch plan over a snapshot's live files (Spark's ``CALL sys.compact`` on an
    unaware-bucket append table: ``new AppendCompactCoordinator(table, false).run()``).

    ``deletion_files``: None when deletion vectors are disabled; otherwise each partition's
    {data file name: DeletionFile} (files without one are absent). Only the first
    ``file_num_limit`` candidates (in the given order) are planned, as Java's single scan.
    """
    config = AppendCompactConfig(
        target_file_size=target_file_size,
        compaction_file_size=compaction_file_size,
        open_file_cost=open_file_cost,
        min_file_num=min_file_num,
        delete_ratio_threshold=delete_ratio_threshold,
        file_num_limit=file_num_limit,
        deletion_vectors_enabled=deletion_files is not None,
    )
    coordinator = AppendCompactCoordinator(config)
    entries = (
        ManifestEntry(FileKind.ADD, partition, 0, -1, f) for partition, files in entries_by_partition.items() for f in files
    )
    return coordinator.run(entries, deletion_files=deletion_files)
