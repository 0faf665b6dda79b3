"""Reads of a snapshot that a concurrent expiry may delete under the reader.

A writer restores its state (HASH index of a dynamic bucket, sequence numbers, the levels its
inline compaction starts from, a cross-partition key index) from the latest snapshot, and a
commit builds on the latest snapshot's manifests. Another process may commit after that read
and expire the snapshot (or roll it back) before its files are read: the files are gone and the
read fails with ``FileNotFoundError``. Java re-reads on conflict; so does this:

* the snapshot read is no longer the latest (a newer one exists, or it was removed): the read
  starts again from the new latest snapshot, at most ``max_rereads`` times, then
  :class:`SnapshotExpiredWhileReadingError` (transient: the caller retries the whole operation);
* the snapshot read is still the latest: the file is missing from a live snapshot, the table
  is damaged (a data file keeps its :class:`DataFileNotFoundError`, a metadata file becomes a
  :class:`CorruptFileError` naming it), never a raw OS error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from paimon_core.exceptions import (
    CorruptFileError,
    FileIOError,
    PaimonError,
    SnapshotExpiredWhileReadingError,
    is_explained,
)
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: how many times a read starts again from a newer snapshot before giving up
MAX_REREADS = 5


def missing_path(error: BaseException) -> str:
    """The path a ``FileNotFoundError`` (or a typed error wrapping one) names."""
    path: object = None
    if isinstance(error, PaimonError):
        path = error.path
    if path is None and isinstance(error, OSError):
        path = error.filename
    if path is None and isinstance(error.__cause__, OSError):
        path = error.__cause__.filename
    return str(path) if path is not None else "?"


def is_superseded(snapshot_manager: SnapshotManager, snapshot_id: int) -> bool:
    """Whether ``snapshot_id`` is no longer the latest snapshot (a newer one landed, or it was
    expired or rolled back): its files may then be deleted by a concurrent maintenance job."""
    return snapshot_manager.latest_snapshot_id() != snapshot_id or not snapshot_manager.snapshot_exists(snapshot_id)


def damaged_error(error: FileNotFoundError, *, table: str, snapshot_id: int, what: str) -> PaimonError:
    """The typed error for a file missing from the latest snapshot (the table is damaged)."""
    if isinstance(error, PaimonError) and is_explained(error):
        return error
    path = missing_path(error)
    return CorruptFileError(
        f"{what} of {table}: file {path} of the latest snapshot {snapshot_id} does not exist; the table is "
        "damaged (removed by hand, or by an orphan clean with a cutoff shorter than a commit); "
        "roll back to an earlier snapshot or tag",
        path=path,
        snapshot_id=snapshot_id,
    )


def expired_error(
    error: FileNotFoundError, *, table: str, snapshot_id: int, what: str, rereads: list[int]
) -> SnapshotExpiredWhileReadingError:
    path = missing_path(error)
    return SnapshotExpiredWhileReadingError(
        f"{what} of {table}: file {path} of snapshot {snapshot_id} is gone: the snapshot was expired by a "
        f"concurrent process while it was read. Snapshots {rereads} were read in turn and each was expired "
        "before its files were; retry the operation (it starts from the latest snapshot)",
        path=path,
        snapshot_id=snapshot_id,
        table=table,
        snapshot_ids=tuple(rereads),
    )


def read_from_latest(
    snapshot_manager: SnapshotManager,
    read: Callable[[Snapshot | None], T],
    *,
    table: str,
    what: str,
    first: Snapshot | None = None,
    start_from_latest: bool = True,
    max_rereads: int = MAX_REREADS,
) -> T:
    """``read(snapshot)``, starting again from the latest snapshot while a file it needs is gone
    because the snapshot was superseded and expired under it (see the module docstring).

    The snapshot starts as the latest one, or ``first`` when ``start_from_latest`` is False.
    ``read`` must be free of side effects that a second call would repeat (or undo them itself
    before raising).
    """
    snapshot = snapshot_manager.latest_snapshot() if start_from_latest else first
    rereads: list[int] = []
    while True:
        try:
            return read(snapshot)
        except FileNotFoundError as e:
            if snapshot is None:  # nothing of a snapshot was read: not a race with expiry
                if is_explained(e):
                    raise
                raise FileIOError(f"{what} of {table}: {e}", path=missing_path(e)) from e
            if not is_superseded(snapshot_manager, snapshot.id):
                if is_explained(e):
                    raise
                raise damaged_error(e, table=table, snapshot_id=snapshot.id, what=what) from e
            rereads.append(snapshot.id)
            if len(rereads) > max_rereads:
                raise expired_error(e, table=table, snapshot_id=snapshot.id, what=what, rereads=rereads) from e
            logger.info(
                "%s of %s: snapshot %d was expired while read (%s gone); re-reading from the latest snapshot",
                what,
                table,
                snapshot.id,
                missing_path(e),
            )
            snapshot = snapshot_manager.latest_snapshot()


__all__ = ["MAX_REREADS", "damaged_error", "expired_error", "is_superseded", "missing_path", "read_from_latest"]
