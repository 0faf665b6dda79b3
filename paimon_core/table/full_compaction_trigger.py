"""When a writer must fully compact a bucket: ``full-compaction.delta-commits`` for batch writers.

Java (Flink's ``GlobalFullCompactionSinkWrite``) fully compacts every bucket written since its
last full compaction when the checkpoint id is a multiple of ``full-compaction.delta-commits``
(always at the end of a bounded job); with ``changelog-producer = full-compaction`` and no
``delta-commits`` that is every checkpoint (``max(N, 1)``, Flink's ``StoreSinkWrite``). Flink keeps
the written buckets in its operator state.

Our writers are batch writers with no state between processes, so the count comes from the
table's own metadata, per bucket: the bucket's last full compaction is marked by its max-level
files (only a full compaction writes the max level), whose largest sequence number ``M`` is above
every row written before it and below every row written after. The commits since are the APPEND
and OVERWRITE snapshots, newest first, whose delta adds files to the bucket with sequence numbers
above ``M``; the walk stops at the first such snapshot whose files are older, once ``N - 1``
commits are found, or at the earliest snapshot (after :data:`MAX_SNAPSHOTS_READ` commits the
bucket counts as due). A writer's commit is the ``N``-th when ``N - 1``
were found: its buckets are then compacted fully. A bucket is compacted when it is written (never
behind another writer's back); one not written for a while waits, or the dedicated job
(``compact_strategy full``) compacts it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.manifest.entries import DataFileMeta, FileKind
from paimon_core.operation.scan import ScanFilter
from paimon_core.snapshot.snapshot import CommitKind, Snapshot

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["DELTA_COMMITS", "FullCompactionTrigger", "full_compaction_delta_commits"]

logger = logging.getLogger(__name__)

DELTA_COMMITS = "full-compaction.delta-commits"
#: commits read back at most; a written bucket not resolved by then is due (compacting early is safe)
MAX_SNAPSHOTS_READ = 1000
BucketKey = tuple[bytes, int]


def full_compaction_delta_commits(options: Mapping[str, str]) -> int | None:
    """N, the commits between full compactions by writers (None: no such schedule).

    ``full-compaction.delta-commits`` when set; with ``changelog-producer = full-compaction``
    at least 1 (every commit), as Flink's ``StoreSinkWrite`` does.
    """
    raw = options.get(DELTA_COMMITS)
    n = int(raw) if raw is not None and raw.strip() else None
    producer = (options.get("changelog-producer") or "none").strip().lower()
    if producer == "full-compaction":
        return max(n or 1, 1)
    return n


@dataclass(frozen=True)
class FullCompactionTrigger:
    """Which written buckets are due for a full compaction on this commit."""

    delta_commits: int
    #: per written bucket: commits that wrote it since its last full compaction (before this one)
    commits_since: Mapping[BucketKey, int] = field(default_factory=dict)
    snapshots_read: int = 0

    @property
    def due(self) -> frozenset[BucketKey]:
        return frozenset(k for k, n in self.commits_since.items() if n + 1 >= self.delta_commits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "delta_commits": self.delta_commits,
            "due_buckets": len(self.due),
            "written_buckets": len(self.commits_since),
            "snapshots_read": self.snapshots_read,
        }

    @staticmethod
    def compute(
        table: FileStoreTable,
        latest: Snapshot | None,
        delta_commits: int,
        bucket_files: Mapping[BucketKey, Sequence[DataFileMeta]],
        max_level: Mapping[BucketKey, int],
    ) -> FullCompactionTrigger:
        """``bucket_files``: the committed files of each written bucket; ``max_level``: its max level."""
        need = delta_commits - 1
        counts = dict.fromkeys(bucket_files, 0)
        if need <= 0 or latest is None:
            return FullCompactionTrigger(delta_commits, counts)
        marks = {k: _full_compaction_mark(files, max_level[k]) for k, files in bucket_files.items()}
        open_ = set(counts)
        scan = table.new_file_store_scan()
        flt = ScanFilter(partitions=frozenset(p for p, _ in bucket_files))
        earliest = table.snapshot_manager.earliest_snapshot_id() or 1
        read = 0
        sid = latest.id
        while open_ and sid >= earliest:
            snap = latest if sid == latest.id else table.snapshot_manager.try_snapshot(sid)
            sid -= 1
            if snap is None or snap.commit_kind not in (CommitKind.APPEND, CommitKind.OVERWRITE):
                continue
            if read >= MAX_SNAPSHOTS_READ:  # a long way back: count the rest as due
                counts.update(dict.fromkeys(open_, need))
                break
            read += 1
            for key, min_seq in _added(scan.delta_entries(snap, flt), open_).items():
                if min_seq > marks[key]:
                    counts[key] += 1
                    if counts[key] >= need:
                        open_.discard(key)
                else:  # written before the bucket's last full compaction
                    open_.discard(key)
        return FullCompactionTrigger(delta_commits, counts, read)


def _full_compaction_mark(files: Iterable[DataFileMeta], max_level: int) -> int:
    """The largest sequence number of the bucket's max-level files (-1: never fully compacted)."""
    return max((f.max_sequence_number for f in files if f.level == max_level), default=-1)


def _added(entries: Iterable[Any], keys: set[BucketKey]) -> dict[BucketKey, int]:
    """Per bucket of ``keys`` the snapshot added files to: the smallest sequence number added."""
    out: dict[BucketKey, int] = {}
    for e in entries:
        key = (e.partition, e.bucket)
        if e.kind == FileKind.ADD and key in keys:
            out[key] = min(out.get(key, e.file.min_sequence_number), e.file.min_sequence_number)
    return out
