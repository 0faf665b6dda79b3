"""Reads snapshots and the LATEST / EARLIEST hints (Paimon's SnapshotManager).

Hints are only hints: they may be missing (pypaimon never writes EARLIEST) or
stale (a crash between publishing ``snapshot-N`` and updating LATEST, or an
expiry that deleted the snapshot EARLIEST names). Every lookup verifies the
hint against the files and falls back to listing the directory.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from paimon_core.exceptions import SnapshotNotFoundError
from paimon_core.io.file_io import FileIO
from paimon_core.paths import EARLIEST, LATEST, SNAPSHOT_PREFIX, PathFactory
from paimon_core.snapshot.snapshot import Snapshot

logger = logging.getLogger(__name__)


class SnapshotManager:
    """Snapshot files of one table (or branch)."""

    def __init__(self, file_io: FileIO, paths: PathFactory) -> None:
        self.file_io = file_io
        self.paths = paths

    # --- single snapshots ------------------------------------------------------
    def snapshot_path(self, snapshot_id: int) -> str:
        return self.paths.snapshot_path(snapshot_id)

    def snapshot_exists(self, snapshot_id: int) -> bool:
        return self.file_io.exists(self.snapshot_path(snapshot_id))

    def snapshot(self, snapshot_id: int) -> Snapshot:
        """Read ``snapshot-N``; SnapshotNotFoundError if it does not exist (or expired)."""
        path = self.snapshot_path(snapshot_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            earliest = self.earliest_snapshot_id()
            latest = self.latest_snapshot_id()
            raise SnapshotNotFoundError(
                f"Snapshot {snapshot_id} does not exist in {self.paths.table_path} "
                f"(available: {_range_text(earliest, latest)})",
                snapshot_id=snapshot_id,
            ) from None
        return Snapshot.from_json(data, path=path)

    def try_snapshot(self, snapshot_id: int) -> Snapshot | None:
        try:
            return self.snapshot(snapshot_id)
        except SnapshotNotFoundError:
            return None

    # --- listing ----------------------------------------------------------------
    def list_snapshot_ids(self) -> list[int]:
        """Ids of all snapshot files present, ascending (gaps possible)."""
        ids: list[int] = []
        for st in self.file_io.list_files(self.paths.snapshot_dir):
            name = st.name
            if name.startswith(SNAPSHOT_PREFIX):
                suffix = name[len(SNAPSHOT_PREFIX) :]
                if suffix.isdigit():
                    ids.append(int(suffix))
        ids.sort()
        return ids

    def snapshots(self) -> Iterator[Snapshot]:
        """All snapshots, ascending; ones deleted while iterating are skipped."""
        for sid in self.list_snapshot_ids():
            snap = self.try_snapshot(sid)
            if snap is not None:
                yield snap

    # --- hints ------------------------------------------------------------------
    def _read_hint(self, name: str) -> int | None:
        path = f"{self.paths.snapshot_dir}/{name}"
        try:
            text = self.file_io.read_bytes(path).decode("ascii", errors="replace").strip()
        except FileNotFoundError:
            return None
        # A hint that is not a number is ignored (Java falls back to listing the directory).
        return int(text) if text.isascii() and text.isdigit() else None

    def latest_snapshot_id(self) -> int | None:
        """The newest snapshot id, or None for an empty table."""
        hint = self._read_hint(LATEST)
        if hint is not None and self.snapshot_exists(hint):
            nxt = hint + 1
            if not self.snapshot_exists(nxt):
                # A hint below EARLIEST names a snapshot an expiry had passed: a commit that raced
                # the expiry re-created its id (a ghost, see commit_guard.is_ghost) and wrote the
                # hint; the snapshots after it were expired too. The listing has the true latest.
                earliest = self._read_hint(EARLIEST)
                if earliest is None or hint >= earliest:
                    return hint
            else:
                # Stale hint: walk forward while consecutive snapshots exist.
                while self.snapshot_exists(nxt + 1):
                    nxt += 1
                return nxt
        ids = self.list_snapshot_ids()
        return ids[-1] if ids else None

    def earliest_snapshot_id(self) -> int | None:
        """The oldest readable snapshot id, or None for an empty table.

        The EARLIEST hint wins while its snapshot exists (Java's ``findEarliest``): expiry
        moves the hint past a chunk *before* deleting anything of it, so snapshot files left
        below the hint by an interrupted expiry are half-deleted and never offered to readers.
        """
        hint = self._read_hint(EARLIEST)
        if hint is not None and self.snapshot_exists(hint):
            return hint
        return self.earliest_snapshot_file_id()

    def earliest_snapshot_file_id(self) -> int | None:
        """The smallest id with a snapshot file, including leftovers of an interrupted expiry."""
        hint = self._read_hint(EARLIEST)
        if hint is not None and self.snapshot_exists(hint) and not self.snapshot_exists(hint - 1):
            return hint  # the usual case: two existence checks instead of a listing
        ids = self.list_snapshot_ids()
        return ids[0] if ids else None

    def latest_snapshot(self) -> Snapshot | None:
        """The newest snapshot (retrying if it is expired while being read)."""
        for _ in range(3):
            sid = self.latest_snapshot_id()
            if sid is None:
                return None
            snap = self.try_snapshot(sid)
            if snap is not None:
                return snap
        sid = self.latest_snapshot_id()
        return None if sid is None else self.snapshot(sid)

    def earliest_snapshot(self) -> Snapshot | None:
        for _ in range(3):
            sid = self.earliest_snapshot_id()
            if sid is None:
                return None
            snap = self.try_snapshot(sid)
            if snap is not None:
                return snap
        return None

    def commit_latest_hint(self, snapshot_id: int) -> None:
        # LATEST is only a hint (verified against the files, walked forward when stale): it
        # need not be durable. EARLIEST is durable: expiry relies on it before deleting.
        self._write_hint(LATEST, snapshot_id, durable=False)

    def commit_earliest_hint(self, snapshot_id: int) -> None:
        self._write_hint(EARLIEST, snapshot_id)

    def _write_hint(self, name: str, snapshot_id: int, *, durable: bool = True) -> None:
        # Hints are advisory: a failure to write one must never fail a commit.
        path = f"{self.paths.snapshot_dir}/{name}"
        try:
            if durable:
                self.file_io.overwrite_text(path, str(snapshot_id))
            else:
                self.file_io.write_hint(path, str(snapshot_id))
        except OSError as e:  # pragma: no cover - depends on storage failures
            logger.warning("Could not update %s hint to %d: %s", name, snapshot_id, e)

    # --- lookups --------------------------------------------------------------
    def latest_snapshot_of_user(self, commit_user: str) -> Snapshot | None:
        """The newest snapshot committed by ``commit_user`` (for idempotent retries)."""
        latest = self.latest_snapshot_id()
        earliest = self.earliest_snapshot_id()
        if latest is None or earliest is None:
            return None
        for sid in range(latest, earliest - 1, -1):
            snap = self.try_snapshot(sid)
            if snap is not None and snap.commit_user == commit_user:
                return snap
        return None

    def earlier_or_equal_time_millis(self, timestamp_millis: int) -> Snapshot | None:
        """The newest snapshot whose ``timeMillis`` <= timestamp (binary search), or None."""
        ids = self.list_snapshot_ids()
        lo, hi = 0, len(ids) - 1
        found: Snapshot | None = None
        while lo <= hi:
            mid = (lo + hi) // 2
            snap = self.try_snapshot(ids[mid])
            if snap is None:  # expired concurrently: restart on a fresh listing
                return self.earlier_or_equal_time_millis(timestamp_millis)
            if snap.time_millis <= timestamp_millis:
                found = snap
                lo = mid + 1
            else:
                hi = mid - 1
        return found


def _range_text(earliest: int | None, latest: int | None) -> str:
    if earliest is None or latest is None:
        return "none, the table is empty"
    return f"{earliest}..{latest}"
