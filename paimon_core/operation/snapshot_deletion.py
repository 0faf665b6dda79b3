"""What expiring one snapshot may delete (Java's ``SnapshotDeletion``).

On top of :class:`FileDeletionBase` it applies the decoupled changelog lifecycle: when
changelogs outlive snapshots and the table has no changelog producer, the changelog *is*
the appended level-0 data, so those files and the data manifest lists stay for
:class:`~paimon_core.operation.changelog_deletion.ChangelogDeletion`; and changelog
manifests always stay for it when decoupled.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.manifest.entries import FileSource, ManifestEntry
from paimon_core.operation.file_deletion_base import (
    Category,
    EntrySkipper,
    FileDeleter,
    FileDeletionBase,
    RecentNames,
)
from paimon_core.snapshot.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

Planned = list[tuple[Category, str, int | None]]


def produces_changelog(store: FileStore) -> bool:
    return (store.options.get("changelog-producer") or "none").strip().lower() != "none"


class SnapshotDeletion(FileDeletionBase):
    """Deletion rules for snapshots that expire."""

    def __init__(self, store: FileStore, deleter: FileDeleter, *, changelog_decoupled: bool) -> None:
        super().__init__(store, deleter)
        self.changelog_decoupled = changelog_decoupled
        self.produce_changelog = produces_changelog(store)

    def plan_deleted_data(self, snapshot: Snapshot, skip: EntrySkipper) -> list[tuple[Category, str, int]]:
        """Data files the snapshot marked deleted and no tag needs."""
        if self.changelog_decoupled and not self.produce_changelog:

            def keep_appends(e: ManifestEntry) -> bool:
                # Unknown source (older writers) counts as APPEND, as in Java.
                source = FileSource.APPEND if e.file.file_source is None else e.file.file_source
                return skip(e) or source == FileSource.APPEND

            return self.plan_deleted_in_delta(snapshot, keep_appends)
        return self.plan_deleted_in_delta(snapshot, skip)

    def plan_manifests(
        self, snapshot: Snapshot, skipping: set[str], recent: RecentNames
    ) -> tuple[Planned, Planned]:
        """(children, parents): manifests, index files and statistics first; the lists and
        the index manifest that name them after, so a crash never hides a child from a re-run."""
        children: Planned = []
        parents: Planned = []
        lists: list[tuple[str, int | None]] = []
        if not self.changelog_decoupled or self.produce_changelog:
            lists.append((snapshot.base_manifest_list, snapshot.base_manifest_list_size))
            lists.append((snapshot.delta_manifest_list, snapshot.delta_manifest_list_size))
        if not self.changelog_decoupled and snapshot.changelog_manifest_list is not None:
            lists.append((snapshot.changelog_manifest_list, snapshot.changelog_manifest_list_size))
        for name, size in lists:
            c, p = self.plan_unused_list(name, size, skipping, recent)
            children += c
            parents += p
        c, p = self.plan_unused_index_and_statistics(snapshot, skipping, recent)
        return children + c, parents + p
