"""Long-lived changelogs in ``changelog/changelog-N`` (Java's ``ChangelogManager``).

When the changelog lifecycle is decoupled from snapshots (a ``changelog.*`` retention above
the ``snapshot.*`` one), snapshot expiry first copies each expiring ``snapshot-N`` to
``changelog/changelog-N`` (same JSON: Java's ``Changelog`` is a ``Snapshot``), so streaming
readers can still read its changes; :class:`~paimon_core.operation.expire_changelogs.
ExpireChangelogs` removes them later. The directory has its own EARLIEST/LATEST hints,
which, as for snapshots, are only hints: every lookup checks them against the files.
"""

from __future__ import annotations

import logging

from paimon_core.io.file_io import FileIO, join
from paimon_core.paths import CHANGELOG_PREFIX, EARLIEST, LATEST, PathFactory
from paimon_core.snapshot.snapshot import Snapshot

logger = logging.getLogger(__name__)


class ChangelogManager:
    """The long-lived changelog files of one table."""

    def __init__(self, file_io: FileIO, paths: PathFactory) -> None:
        self.file_io = file_io
        self.paths = paths

    @property
    def changelog_dir(self) -> str:
        return self.paths.changelog_dir

    def changelog_path(self, changelog_id: int) -> str:
        return join(self.changelog_dir, f"{CHANGELOG_PREFIX}{changelog_id}")

    def exists(self, changelog_id: int) -> bool:
        return self.file_io.exists(self.changelog_path(changelog_id))

    def try_changelog(self, changelog_id: int) -> Snapshot | None:
        """``changelog-N``, or None when it does not exist (never written or expired)."""
        path = self.changelog_path(changelog_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        return Snapshot.from_json(data, path=path)

    def list_ids(self) -> list[int]:
        """Ids of every changelog file present, ascending."""
        ids = []
        for st in self.file_io.list_files(self.changelog_dir):
            suffix = st.name[len(CHANGELOG_PREFIX) :]
            if st.name.startswith(CHANGELOG_PREFIX) and suffix.isdigit():
                ids.append(int(suffix))
        return sorted(ids)

    # --- hints (Java's HintFileUtils.findLatest / findEarliest) ---------------------
    def _read_hint(self, name: str) -> int | None:
        try:
            text = self.file_io.read_text(join(self.changelog_dir, name)).strip()
        except FileNotFoundError:
            return None
        return int(text) if text.isdigit() else None

    def latest_id(self) -> int | None:
        hint = self._read_hint(LATEST)
        if hint is not None and hint > 0 and self.exists(hint) and not self.exists(hint + 1):
            return hint
        ids = self.list_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> int | None:
        hint = self._read_hint(EARLIEST)
        if hint is not None and self.exists(hint) and not self.exists(hint - 1):
            return hint
        ids = self.list_ids()
        return ids[0] if ids else None

    def commit_latest_hint(self, changelog_id: int) -> None:
        self.file_io.overwrite_text(join(self.changelog_dir, LATEST), str(changelog_id))

    def commit_earliest_hint(self, changelog_id: int) -> None:
        self.file_io.overwrite_text(join(self.changelog_dir, EARLIEST), str(changelog_id))

    def delete_hints(self) -> None:
        for name in (EARLIEST, LATEST):
            self.file_io.delete(join(self.changelog_dir, name))

    # --- writing ---------------------------------------------------------------------
    def commit_changelog(self, snapshot: Snapshot) -> None:
        """Write ``changelog-<id>`` from a snapshot about to expire, then move LATEST.

        Overwrites: a re-run after a crash between this write and the snapshot's deletion
        writes the same content again (Java writes with overwrite too).
        """
        data = snapshot.copy(tag_create_time=None, tag_time_retained=None).to_json().encode()
        self.file_io.write_bytes(self.changelog_path(snapshot.id), data, overwrite=True)
        self.commit_latest_hint(snapshot.id)
        logger.debug("Wrote long-lived changelog %d of %s", snapshot.id, self.paths.table_path)

    def delete(self, changelog_id: int) -> bool:
        return self.file_io.delete(self.changelog_path(changelog_id))
