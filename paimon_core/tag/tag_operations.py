"""Manual tag procedures over a table (Java's ``AbstractFileStoreTable.createTag / replaceTag /
renameTag`` and the Flink ``create_tag_from_timestamp`` procedure).

* The snapshot to tag may have expired as long as a tag still holds it (Java's ``findSnapshot``).
* ``create_tag`` and ``create_tag_from_timestamp`` default the retention to
  ``tag.default-time-retained`` (Java's ``Table.createTag(name, snapshotId)``); ``replace_tag``
  writes exactly the retention it is given, as Java does.
* When automatic tags are on (``process-time``/``watermark``), a name that parses as an auto-tag
  name cannot be put on a snapshot that already carries an auto tag (Java's validateNoAutoTag).

Every error leaves the table unchanged. ``dry_run`` runs every check (name, snapshot, existing
tag) and returns the snapshot the tag would hold, writing nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, SnapshotNotFoundError, TagAlreadyExistsError
from paimon_core.tag.tag_manager import trim_to_snapshot
from paimon_core.tag.tag_period import TagPeriodHandler, TagTimeExtractor
from paimon_core.utils.time_util import Duration, TimePoint, to_duration_millis, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)


def create_tag(
    store: FileStore, name: str, snapshot_id: int | None = None, *, time_retained: Duration | None = None
) -> Snapshot:
    """Tag ``snapshot_id`` (the latest snapshot by default); returns the tag written."""
    store.tag_manager.validate_name(name)
    retained = _retained(store, time_retained, default=True)
    snapshot = find_snapshot(store, snapshot_id, action="create tag")
    _validate_no_auto_tag(store, name, snapshot)
    return store.tag_manager.create(name, snapshot, time_retained_ms=retained)


def create_tag_from_timestamp(
    store: FileStore,
    name: str,
    timestamp: TimePoint,
    *,
    time_retained: Duration | None = None,
    dry_run: bool = False,
) -> Snapshot:
    """Tag the earliest snapshot committed at or after ``timestamp``.

    As Java's procedure: the first live snapshot with ``timeMillis >= timestamp``, or an
    earlier tagged (possibly expired) snapshot that also qualifies.
    """
    store.tag_manager.validate_name(name)
    ts = to_epoch_millis(timestamp, name="timestamp")
    retained = _retained(store, time_retained, default=True)
    snapshot = later_or_equal_time_millis(store, ts)
    for tagged, _ in store.tag_manager.tags_by_snapshot():
        if ts <= tagged.time_millis:
            if snapshot is None or tagged.time_millis < snapshot.time_millis:
                snapshot = tagged
            break
    if snapshot is None:
        raise SnapshotNotFoundError(
            f"Cannot create tag '{name}' on {store.name}: no snapshot was committed at or after {ts}",
            timestamp=ts,
        )
    _validate_no_auto_tag(store, name, snapshot)
    if dry_run:
        if store.tag_manager.exists(name):
            raise TagAlreadyExistsError(f"Tag '{name}' already exists in {store.name}", tag=name)
        return trim_to_snapshot(snapshot)
    return store.tag_manager.create(name, snapshot, time_retained_ms=retained)


def replace_tag(
    store: FileStore,
    name: str,
    snapshot_id: int | None = None,
    *,
    time_retained: Duration | None = None,
    dry_run: bool = False,
) -> Snapshot:
    """Point the existing tag ``name`` at ``snapshot_id`` (latest by default); TagNotFoundError if absent."""
    store.tag_manager.validate_name(name)
    store.tag_manager.get(name)  # TagNotFoundError before anything else
    retained = _retained(store, time_retained, default=False)
    snapshot = find_snapshot(store, snapshot_id, action="replace tag")
    _validate_no_auto_tag(store, name, snapshot, replacing=name)
    if dry_run:
        return trim_to_snapshot(snapshot)
    return store.tag_manager.replace(name, snapshot, time_retained_ms=retained)


def rename_tag(store: FileStore, name: str, target: str, *, dry_run: bool = False) -> Snapshot:
    """Rename tag ``name`` to ``target`` (TagNotFoundError / TagAlreadyExistsError)."""
    if dry_run:
        tm = store.tag_manager
        tm.validate_name(target)
        tag = tm.get(name)  # validates the name; TagNotFoundError
        if name == target or tm.exists(target):
            raise TagAlreadyExistsError(f"Tag '{target}' already exists in {store.name}", tag=target)
        return tag
    return store.tag_manager.rename(name, target)


# --- helpers -----------------------------------------------------------------------------
def find_snapshot(store: FileStore, snapshot_id: int | None, *, action: str) -> Snapshot:
    """The live snapshot ``snapshot_id``, else a tag's copy of it (Java's findSnapshot)."""
    sm = store.snapshot_manager
    if snapshot_id is None:
        latest = sm.latest_snapshot()
        if latest is None:
            raise SnapshotNotFoundError(f"Cannot {action} on {store.name}: the table has no snapshot yet")
        return latest
    if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
        raise InvalidArgumentError(f"snapshot_id must be an integer, got {snapshot_id!r}", argument="snapshot_id")
    snap = sm.try_snapshot(snapshot_id)
    if snap is not None:
        return snap
    for tagged, _ in store.tag_manager.tags_by_snapshot():
        if tagged.id == snapshot_id:
            return tagged
    return sm.snapshot(snapshot_id)  # raises SnapshotNotFoundError naming the live range


def later_or_equal_time_millis(store: FileStore, ts: int) -> Snapshot | None:
    """The first live snapshot with ``timeMillis >= ts`` (Java's laterOrEqualTimeMills)."""
    sm = store.snapshot_manager
    ids = sm.list_snapshot_ids()
    lo, hi = 0, len(ids) - 1
    found: Snapshot | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        snap = sm.try_snapshot(ids[mid])
        if snap is None:  # expired while searching: start again on a fresh listing
            return later_or_equal_time_millis(store, ts)
        if snap.time_millis >= ts:
            found = snap
            hi = mid - 1
        else:
            lo = mid + 1
    return found


def _retained(store: FileStore, value: Duration | None, *, default: bool) -> int | None:
    if value is not None:
        return to_duration_millis(value, name="time_retained")
    return store.options.tag_default_time_retained_ms if default else None


def _validate_no_auto_tag(store: FileStore, name: str, snapshot: Snapshot, *, replacing: str | None = None) -> None:
    if TagTimeExtractor.for_auto_tag(store.options) is None:
        return
    handler = TagPeriodHandler.create(store.options)
    if not handler.is_auto_tag(name):
        return
    for tagged, names in store.tag_manager.tags_by_snapshot():
        if tagged.id == trim_to_snapshot(snapshot).id:
            auto = [n for n in names if handler.is_auto_tag(n) and n != replacing]
            if auto:
                raise InvalidArgumentError(
                    f"Snapshot {snapshot.id} of {store.name} is already auto-tagged with {auto}", tag=name
                )
