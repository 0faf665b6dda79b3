"""What a writer hands to the committer: plain, picklable data (Paimon's CommitMessageImpl)."""

from __future__ import annotations

from dataclasses import dataclass, field

from paimon_core.manifest.entries import DataFileMeta, IndexFileMeta


@dataclass(frozen=True)
class CommitMessage:
    """Files one writer added or removed in one (partition, bucket).

    As Java's ``CommitMessageImpl``, the message has two increments. The data increment
    (``new_files``, ``deleted_files``, ``changelog_files``, ``new_index_files``,
    ``deleted_index_files``) lands in the APPEND (or OVERWRITE) snapshot; the compact increment
    (``compact_before``, ``compact_after``, ``compact_changelog_files``,
    ``compact_new_index_files``, ``compact_deleted_index_files``) lands in the COMPACT snapshot.
    """

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
    #: changelog a compaction produced (lookup / full-compaction producers): COMPACT snapshot
    compact_changelog_files: tuple[DataFileMeta, ...] = ()
    #: index files (deletion vectors) a compaction wrote or replaced: COMPACT snapshot
    compact_new_index_files: tuple[IndexFileMeta, ...] = field(default=())
    compact_deleted_index_files: tuple[IndexFileMeta, ...] = field(default=())

    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.deleted_files
            or self.changelog_files
            or self.compact_before
            or self.compact_after
            or self.new_index_files
            or self.deleted_index_files
            or self.compact_changelog_files
            or self.compact_new_index_files
            or self.compact_deleted_index_files
        )
