"""Repair the EARLIEST hint (Java's ``SnapshotManager.repairEarliestSnapshot``, procedure
``repair_earliest_snapshot(table, snapshot_id)``).

An interrupted expiry or a hand-deleted snapshot can leave snapshot files below a gap, and the
EARLIEST hint on one of them; readers and expiry then start from a snapshot whose files may be half
deleted. The repair moves the hint to ``snapshot_id``, the start of the contiguous run of
snapshots ending at the latest one. As Java, it refuses (nothing changed):

* an empty table ("Cannot repair earliest snapshot for an empty table.");
* ``snapshot_id`` earlier than the current earliest snapshot, or later than the latest;
* a missing snapshot in ``snapshot_id..latest`` ("Snapshot N does not exist.");
* ``snapshot_id`` that is not the current earliest and does not follow a gap (snapshot
  ``snapshot_id - 1`` exists): the hint would hide a readable snapshot.

Returns the previous and the new earliest snapshot id (Java's procedure output). Only the hint
file is written; no snapshot file is deleted (``expire_snapshots`` or ``remove_orphan_files``
clean what lies below it). ``dry_run`` runs every check and writes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, SnapshotNotFoundError
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot_manager import SnapshotManager

__all__ = ["RepairEarliestSnapshotResult", "repair_earliest_snapshot"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepairEarliestSnapshotResult(_ToDict):
    """Java's output row: the earliest snapshot id before and after."""

    table: str
    previous_earliest_snapshot_id: int
    current_earliest_snapshot_id: int
    dry_run: bool = False


def repair_earliest_snapshot(
    sm: SnapshotManager, snapshot_id: int, *, table: str, dry_run: bool = False
) -> RepairEarliestSnapshotResult:
    """Point EARLIEST at ``snapshot_id`` (see the module docstring)."""
    if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
        raise InvalidArgumentError(f"snapshot_id must be an integer, got {snapshot_id!r}", argument="snapshot_id")
    previous = sm.earliest_snapshot_id()
    latest = sm.latest_snapshot_id()
    if previous is None or latest is None:
        raise SnapshotNotFoundError(f"Cannot repair earliest snapshot for an empty table ({table}).")
    if snapshot_id < previous:
        raise InvalidArgumentError(
            f"Snapshot {snapshot_id} must not be earlier than current earliest snapshot {previous} ({table}).",
            argument="snapshot_id",
        )
    if snapshot_id > latest:
        raise InvalidArgumentError(
            f"Snapshot {snapshot_id} must not be later than latest snapshot {latest} ({table}).",
            argument="snapshot_id",
        )
    present = {i for i in sm.list_snapshot_ids() if snapshot_id <= i <= latest}
    for sid in range(snapshot_id, latest + 1):
        if sid not in present:
            raise SnapshotNotFoundError(f"Snapshot {sid} does not exist ({table}).", snapshot_id=sid)
    if snapshot_id != previous and sm.snapshot_exists(snapshot_id - 1):
        raise InvalidArgumentError(
            f"Snapshot {snapshot_id} does not immediately follow a snapshot gap ({table}): snapshot "
            f"{snapshot_id - 1} exists.",
            argument="snapshot_id",
        )
    if not dry_run:
        sm.commit_earliest_hint(snapshot_id)
        logger.info("Repaired the EARLIEST hint of %s: %d -> %d", table, previous, snapshot_id)
    return RepairEarliestSnapshotResult(table, previous, snapshot_id, dry_run)
