"""What expiring one long-lived changelog may delete (Java's ``ChangelogDeletion``).

A changelog with a changelog manifest list (a changelog producer) owns the changelog files
it added. Without one, the changelog is the appended level-0 data: snapshot expiry kept
those files and the data manifest lists (see ``SnapshotDeletion``), and they go here, the
data files through the delta's DELETE entries, minus what tags use. Index manifests and
statistics were already handled by snapshot expiry.
"""

from __future__ import annotations

from paimon_core.operation.file_deletion_base import (
    Category,
    EntrySkipper,
    FileDeletionBase,
    RecentNames,
)
from paimon_core.snapshot.snapshot import Snapshot

Planned = list[tuple[Category, str, int | None]]


class ChangelogDeletion(FileDeletionBase):
    """Deletion rules for long-lived changelogs that expire."""

    def plan_data(self, changelog: Snapshot, skip: EntrySkipper) -> Planned:
        if changelog.changelog_manifest_list is not None:
            return list(self.plan_added_in_changelog(changelog))
        if not self.file_io.exists(self.manifest_path(changelog.delta_manifest_list)):
            return []  # snapshot expiry removed it (a producer without changes here)
        return list(self.plan_deleted_in_delta(changelog, skip))

    def plan_manifests(
        self, changelog: Snapshot, skipping: set[str], recent: RecentNames
    ) -> tuple[Planned, Planned]:
        """(manifests, the lists naming them) that nothing retained uses."""
        if changelog.changelog_manifest_list is not None:
            lists = [(changelog.changelog_manifest_list, changelog.changelog_manifest_list_size)]
        else:
            lists = [
                (changelog.delta_manifest_list, changelog.delta_manifest_list_size),
                (changelog.base_manifest_list, changelog.base_manifest_list_size),
            ]
        children: Planned = []
        parents: Planned = []
        for name, size in lists:
            if not self.file_io.exists(self.manifest_path(name)):
                continue  # as Java: only lists that still exist
            c, p = self.plan_unused_list(name, size, skipping, recent)
            children += c
            parents += p
        return children, parents
