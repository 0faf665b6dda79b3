"""Watermark procedures: Flink's ``create_tag_from_watermark`` (``CreateTagFromWatermarkProcedure``)
and ``rollback_to_watermark`` (``RollbackToWatermarkProcedure``, Spark and Flink).

* :func:`create_tag_from_watermark` tags the oldest live snapshot whose watermark is >= the given
  one (``SnapshotManager.laterOrEqualWatermark``), or an earlier tagged snapshot (possibly
  expired) that also qualifies: Java walks the tags by snapshot id and takes the first tag
  whose watermark is >= the given one if its watermark is lower than the live snapshot's. The
  retention is ``time_retained`` as given (Java passes it through; unset: none).
* :func:`snapshot_for_rollback` finds the snapshot ``rollback_to_watermark`` rolls back to
  (destructively, the table's ``RollbackHelper``): the newest one whose watermark is <= the given
  one (``earlierOrEqualWatermark``).

A watermark is a Java ``long`` (epoch millis in practice); a snapshot without one (null or
``Long.MIN_VALUE``) is skipped as Java skips it (:mod:`paimon_core.snapshot.watermark_search`).
No qualifying snapshot: :class:`SnapshotNotFoundError` naming the watermark; nothing changes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, SnapshotNotFoundError, TagAlreadyExistsError
from paimon_core.snapshot.watermark_search import (
    LONG_MIN,
    earlier_or_equal_watermark,
    later_or_equal_watermark,
)
from paimon_core.tag.tag_manager import trim_to_snapshot
from paimon_core.tag.tag_operations import _validate_no_auto_tag
from paimon_core.utils.time_util import Duration, to_duration_millis

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

__all__ = ["check_watermark", "create_tag_from_watermark", "snapshot_for_rollback"]

logger = logging.getLogger(__name__)

_LONG_MAX = 2**63 - 1


def check_watermark(watermark: object) -> int:
    """``watermark`` as a Java ``long``; InvalidArgumentError for anything else."""
    if isinstance(watermark, str) and watermark.strip().lstrip("-").isdigit():
        watermark = int(watermark.strip())
    if isinstance(watermark, bool) or not isinstance(watermark, int):
        raise InvalidArgumentError(
            f"watermark must be an integer (a Java long, epoch millis), got {watermark!r}", argument="watermark"
        )
    if not LONG_MIN <= watermark <= _LONG_MAX:
        raise InvalidArgumentError(
            f"watermark must be from {LONG_MIN} to {_LONG_MAX} (a Java long), got {watermark}", argument="watermark"
        )
    return watermark


def snapshot_for_tag(store: FileStore, watermark: int) -> Snapshot | None:
    """The snapshot ``create_tag_from_watermark`` tags (Java's procedure body), or None."""
    snapshot = later_or_equal_watermark(store.snapshot_manager, watermark)
    for tagged, _ in store.tag_manager.tags_by_snapshot():
        if tagged.watermark is not None and watermark <= tagged.watermark:
            if snapshot is None or snapshot.watermark is None or tagged.watermark < snapshot.watermark:
                snapshot = tagged
            break
    return snapshot


def create_tag_from_watermark(
    store: FileStore,
    name: str,
    watermark: int,
    *,
    time_retained: Duration | None = None,
    dry_run: bool = False,
) -> Snapshot:
    """Tag the first snapshot whose watermark is >= ``watermark``; returns the tag (``dry_run``:
    the snapshot it would tag, after every check)."""
    store.tag_manager.validate_name(name)
    wm = check_watermark(watermark)
    retained = None if time_retained is None else to_duration_millis(time_retained, name="time_retained")
    snapshot = snapshot_for_tag(store, wm)
    if snapshot is None:
        raise SnapshotNotFoundError(
            f"Could not find any snapshot whose watermark later than {wm} in {store.name}; nothing was tagged",
            watermark=wm,
        )
    _validate_no_auto_tag(store, name, snapshot)
    if dry_run:
        if store.tag_manager.exists(name):
            raise TagAlreadyExistsError(f"Tag '{name}' already exists in {store.name}", tag=name)
        return trim_to_snapshot(snapshot)
    tag = store.tag_manager.create(name, snapshot, time_retained_ms=retained)
    logger.info("Tagged snapshot %d (watermark %s) of %s as %s", snapshot.id, snapshot.watermark, store.name, name)
    return tag


def snapshot_for_rollback(store: FileStore, watermark: int) -> Snapshot:
    """The snapshot ``rollback_to_watermark`` rolls back to: the newest whose watermark is <=
    ``watermark`` (Java's ``RollbackToWatermarkProcedure``); the table layer rolls back to it
    (:meth:`~paimon_core.table.maintenance.MaintenanceTable.rollback_to_watermark`)."""
    wm = check_watermark(watermark)
    if store.snapshot_manager.latest_snapshot_id() is None:
        raise SnapshotNotFoundError(f"Latest snapshot is null, can not rollback {store.name}.", watermark=wm)
    snapshot = earlier_or_equal_watermark(store.snapshot_manager, wm)
    if snapshot is None:
        raise SnapshotNotFoundError(
            f"Can not find snapshot earlier than {wm} in {store.name} (no snapshot has a watermark <= {wm}); "
            "nothing was rolled back",
            watermark=wm,
        )
    return snapshot
