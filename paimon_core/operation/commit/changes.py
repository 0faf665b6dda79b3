"""Turn commit messages into manifest entries, and count what they change."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from paimon_core.manifest.entries import FileKind, IndexManifestEntry, ManifestEntry
from paimon_core.operation.commit.commit_message import CommitMessage


@dataclass
class Changes:
    """Manifest entries of one commit, split by snapshot kind."""

    append: list[ManifestEntry] = field(default_factory=list)
    compact: list[ManifestEntry] = field(default_factory=list)
    changelog: list[ManifestEntry] = field(default_factory=list)
    index: list[IndexManifestEntry] = field(default_factory=list)
    #: the compact increments (Java's ``CompactIncrement``): they go with the COMPACT snapshot
    compact_changelog: list[ManifestEntry] = field(default_factory=list)
    compact_index: list[IndexManifestEntry] = field(default_factory=list)

    @property
    def partitions(self) -> set[bytes]:
        return {e.partition for e in self.append + self.compact}


def collect_changes(messages: Sequence[CommitMessage]) -> Changes:
    ch = Changes()
    for m in messages:
        for f in m.new_files:
            ch.append.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
        for f in m.deleted_files:
            ch.append.append(ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f))
        for f in m.compact_before:
            ch.compact.append(ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f))
        for f in m.compact_after:
            ch.compact.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
        for f in m.changelog_files:
            ch.changelog.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
        for f in m.compact_changelog_files:
            ch.compact_changelog.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
        for i in m.deleted_index_files:
            ch.index.append(IndexManifestEntry(FileKind.DELETE, m.partition, m.bucket, i))
        for i in m.new_index_files:
            ch.index.append(IndexManifestEntry(FileKind.ADD, m.partition, m.bucket, i))
        for i in m.compact_deleted_index_files:
            ch.compact_index.append(IndexManifestEntry(FileKind.DELETE, m.partition, m.bucket, i))
        for i in m.compact_new_index_files:
            ch.compact_index.append(IndexManifestEntry(FileKind.ADD, m.partition, m.bucket, i))
    return ch


def row_delta(entries: Sequence[ManifestEntry]) -> tuple[int, int]:
    """(rows added, rows deleted) by ADD and DELETE entries (physical rows)."""
    added = sum(e.file.row_count for e in entries if e.kind == FileKind.ADD)
    deleted = sum(e.file.row_count for e in entries if e.kind == FileKind.DELETE)
    return added, deleted
