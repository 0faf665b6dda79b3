"""Snapshots by watermark (Java's ``SnapshotManager.earlierOrEqualWatermark`` /
``laterOrEqualWatermark``), for ``rollback_to_watermark`` and ``create_tag_from_watermark``.

Both search the live snapshots ``EARLIEST..LATEST`` by binary search, as Java does. A snapshot
carries no watermark when its ``watermark`` is null or ``Long.MIN_VALUE`` (the sentinel engines
without watermarks write); such a snapshot takes the ordering position of the nearest earlier
snapshot in the search window that carries one, and the search starts at the first snapshot
that has a watermark.

* :func:`earlier_or_equal_watermark`: the newest snapshot whose watermark is <= the given one
  (None if the first watermark is already later);
* :func:`later_or_equal_watermark`: the oldest snapshot whose watermark is >= the given one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.snapshot.snapshot_manager import SnapshotManager

__all__ = ["LONG_MIN", "earlier_or_equal_watermark", "is_missing_watermark", "later_or_equal_watermark"]

#: Java's ``Long.MIN_VALUE``: the "no watermark" sentinel.
LONG_MIN = -(2**63)


def is_missing_watermark(watermark: int | None) -> bool:
    """Java's ``isMissingWatermark``: null and ``Long.MIN_VALUE`` mean no watermark."""
    return watermark is None or watermark == LONG_MIN


def _window(sm: SnapshotManager) -> tuple[int, int, Snapshot] | None:
    """(first id with a watermark, latest id, that snapshot), or None."""
    latest = sm.latest_snapshot_id()
    if latest is None:
        return None
    first = sm.earliest_snapshot()
    if first is None:
        return None
    earliest = first.id
    snapshot = first
    while is_missing_watermark(snapshot.watermark) and earliest < latest:
        earliest += 1
        snapshot = sm.snapshot(earliest)
    if is_missing_watermark(snapshot.watermark):
        return None
    return earliest, latest, snapshot


def _positioned(sm: SnapshotManager, mid: int, earliest: int) -> Snapshot:
    """Snapshot ``mid``, or the nearest earlier one in the window that carries a watermark."""
    pos = mid
    snapshot = sm.snapshot(pos)
    while is_missing_watermark(snapshot.watermark) and pos > earliest:
        pos -= 1
        snapshot = sm.snapshot(pos)
    return snapshot


def _search(sm: SnapshotManager, watermark: int, *, later: bool) -> Snapshot | None:
    """Java's binary search of both lookups: ``later`` keeps the candidates above ``watermark``
    (laterOrEqualWatermark), else those below (earlierOrEqualWatermark); an equal one wins."""
    window = _window(sm)
    if window is None:
        return None
    earliest, latest, first = window
    assert first.watermark is not None
    if later and first.watermark >= watermark:
        return first
    if not later and first.watermark > watermark:
        return None
    found: Snapshot | None = None
    while earliest <= latest:
        mid = earliest + (latest - earliest) // 2
        snapshot = _positioned(sm, mid, earliest)
        wm = snapshot.watermark
        if wm is None or is_missing_watermark(wm):
            earliest = mid + 1  # no watermark in [earliest, mid]: skip the range
        elif wm > watermark:
            latest = snapshot.id - 1
            found = snapshot if later else found
        elif wm < watermark:
            earliest = mid + 1
            found = found if later else snapshot
        else:
            return snapshot
    return found


def earlier_or_equal_watermark(sm: SnapshotManager, watermark: int) -> Snapshot | None:
    """The newest live snapshot whose watermark is <= ``watermark`` (Java's earlierOrEqualWatermark)."""
    return _search(sm, watermark, later=False)


def later_or_equal_watermark(sm: SnapshotManager, watermark: int) -> Snapshot | None:
    """The oldest live snapshot whose watermark is >= ``watermark`` (Java's laterOrEqualWatermark)."""
    return _search(sm, watermark, later=True)
