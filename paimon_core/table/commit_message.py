"""What a writer hands to the committer: plain, picklable data (Paimon's CommitMessageImpl)."""

from __future__ import annotations

from dataclasses import dataclass, field

from paimon_core.manifest.entries import DataFileMeta, IndexFileMeta


@dataclass(frozen=True)
class CommitMessage:
    """Files one writer added or removed in one (partition, bucket)."""

    partition: bytes
    bucket: int
    total_buckets: int
    new_files: tuple[DataFileMeta, ...] = ()
    deleted_files: tuple[DataFileMeta, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    compact_before: tuple[DataFileMeta, ...] = ()
    compact_after: tuple[DataFileMeta, ...] = ()
    new_index_files: tuple[IndexFileMeta, ...] = field(default=())
    deleted_index_files: tuple[IndexFileMeta, ...] = field(default=())

    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.deleted_files
            or self.changelog_files
            or self.compact_before
            or self.compact_after
            or self.new_index_files
            or self.deleted_index_files
        )
