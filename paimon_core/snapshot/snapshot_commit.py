"""Atomic publish of ``snapshot-N`` (Paimon's SnapshotCommit / RenamingSnapshotCommit).

Publishing never overwrites: the first committer to create ``snapshot-N`` wins and
every other one sees False and retries on top of it. How "never overwrites" is
achieved depends on the storage (see :attr:`FileIO.atomic_publish_is_safe`):

* local file systems: temp file + ``link(2)`` (fails if the name exists);
* S3 (s3fs with conditional writes), GCS, in-memory: exclusive create (``xb``);
* other object stores: only safe with a single committer, or with a lock
  (:class:`LockedSnapshotCommit` and a lock implementation).
"""

from __future__ import annotations

import threading
from typing import Protocol

from paimon_core.io.file_io import FileIO
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager


class SnapshotCommit(Protocol):
    """Publishes a snapshot file if, and only if, its id is still free."""

    def commit(self, snapshot: Snapshot) -> bool:
        """True when this call published the snapshot; False when the id was taken."""
        ...


class RenamingSnapshotCommit:
    """Exclusive-create publish through the FileIO, then update the LATEST hint."""

    def __init__(self, snapshot_manager: SnapshotManager) -> None:
        self.snapshot_manager = snapshot_manager

    def commit(self, snapshot: Snapshot) -> bool:
        file_io: FileIO = self.snapshot_manager.file_io
        path = self.snapshot_manager.snapshot_path(snapshot.id)
        if not file_io.try_write_atomic(path, snapshot.to_json().encode("utf-8")):
            return False
        self.snapshot_manager.commit_latest_hint(snapshot.id)
        return True


class Lock(Protocol):
    """A mutual-exclusion lock spanning committers (e.g. a database row lock)."""

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> None: ...


class LockedSnapshotCommit:
    """Publish under an external lock, for stores without an atomic exclusive create."""

    def __init__(self, snapshot_manager: SnapshotManager, lock: Lock | None = None) -> None:
        self.inner = RenamingSnapshotCommit(snapshot_manager)
        self.lock: Lock = lock if lock is not None else threading.Lock()  # type: ignore[assignment]

    def commit(self, snapshot: Snapshot) -> bool:
        with self.lock:
            if self.inner.snapshot_manager.snapshot_exists(snapshot.id):
                return False
            return self.inner.commit(snapshot)
