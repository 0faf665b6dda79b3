"""StrictModeChecker: ``commit.strict-mode.last-safe-snapshot`` (Java's ``StrictModeChecker``).

A job that read the table at snapshot S and rewrites what it read (a rescale's partition
overwrite) sets the option to S. Before each commit attempt, every snapshot after S by another
commit user is looked at: a COMPACT or OVERWRITE that touched a partition this commit changes, or
(when this commit is an OVERWRITE) an APPEND that added files there, means the commit would drop
or duplicate rows the job never saw, so it fails with :class:`CommitConflictError` instead. After
a successful commit the safe snapshot moves to the new one (the writer's own commits are safe).
"""

from __future__ import annotations

from collections.abc import Iterable

from paimon_core.exceptions import CommitConflictError
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.operation.scan import FileStoreScan
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager

__all__ = ["StrictModeChecker"]

OPTION = "commit.strict-mode.last-safe-snapshot"


class StrictModeChecker:
    """Checks the snapshots between the last safe one and a new commit (see the module doc)."""

    def __init__(
        self, snapshot_manager: SnapshotManager, scan: FileStoreScan, commit_user: str, last_safe_snapshot: int
    ) -> None:
        self.snapshot_manager = snapshot_manager
        self.scan = scan
        self.commit_user = commit_user
        self.last_safe_snapshot = last_safe_snapshot

    def check(self, new_snapshot_id: int, kind: CommitKind, partitions: Iterable[bytes]) -> None:
        """Raise :class:`CommitConflictError` if a snapshot by another user in
        ``(last_safe_snapshot, new_snapshot_id)`` changed ``partitions`` as described above."""
        changed = frozenset(partitions)
        if not changed:
            return
        for sid in range(self.last_safe_snapshot + 1, new_snapshot_id):
            snap = self.snapshot_manager.snapshot(sid)
            if snap.commit_user == self.commit_user:
                continue
            rewrites = snap.commit_kind in (CommitKind.COMPACT, CommitKind.OVERWRITE)
            appends = snap.commit_kind == CommitKind.APPEND and kind == CommitKind.OVERWRITE
            if (rewrites or appends) and self._touches(snap, changed, index_too=rewrites):
                what = "files" if appends else "the same partition"
                raise CommitConflictError(
                    f"Snapshot {sid} ({snap.commit_kind.value}) by commit user {snap.commit_user} changed "
                    f"{what} after snapshot {self.last_safe_snapshot}, which this commit was planned on; "
                    f"giving up committing snapshot {new_snapshot_id} as {OPTION} is set (re-run the job)",
                    snapshot_id=sid,
                )

    def update(self, new_safe_snapshot: int) -> None:
        self.last_safe_snapshot = new_safe_snapshot

    def _touches(self, snap: Snapshot, partitions: frozenset[bytes], *, index_too: bool) -> bool:
        if any(e.partition in partitions for e in self.scan.delta_entries(snap)):
            return True
        if not index_too or snap.index_manifest is None:
            return False
        previous = self.snapshot_manager.try_snapshot(snap.id - 1)
        if previous is not None and previous.index_manifest == snap.index_manifest:
            return False  # no index file added or removed by this commit
        entries = read_index_manifest(self.scan.file_io, self.scan.paths.manifest_path(snap.index_manifest))
        return any(e.partition in partitions for e in entries)
