"""Which snapshot(s) a read sees: latest, or time travel / incremental options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from paimon_core.exceptions import InvalidArgumentError, SnapshotNotFoundError
from paimon_core.options import (
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
)
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.tag.tag_manager import TagManager


@dataclass(frozen=True)
class ScanTarget:
    """A full read of ``snapshot``, or an incremental read of what (start, end] added."""

    snapshot: Snapshot | None
    start: Snapshot | None = None  # the start tag, for tag-to-tag reads
    end: Snapshot | None = None
    start_id: int = 0  # exclusive start snapshot id for incremental reads
    tags: bool = False  # incremental between two tags: diff of their file sets

    @property
    def incremental(self) -> bool:
        return self.end is not None


def resolve(options: Mapping[str, str], snapshots: SnapshotManager, tags: TagManager) -> ScanTarget:
    """Interpret ``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``,
    ``incremental-between`` and ``incremental-between-timestamp`` (at most one of them)."""
    given = [
        k
        for k in (SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP)
        if options.get(k) not in (None, "")
    ]
    if len(given) > 1:
        raise InvalidArgumentError(f"Options {given} are mutually exclusive: set only one of them")
    if not given:
        return ScanTarget(snapshots.latest_snapshot())
    key = given[0]
    value = str(options[key]).strip()
    if key == SCAN_SNAPSHOT_ID:
        return ScanTarget(snapshots.snapshot(_int(value, key)))
    if key == SCAN_TAG_NAME:
        return ScanTarget(tags.get(value))
    if key == SCAN_TIMESTAMP_MILLIS:
        ts = _int(value, key)
        snap = snapshots.earlier_or_equal_time_millis(ts)
        if snap is None:
            raise SnapshotNotFoundError(f"No snapshot at or before timestamp {ts} in {snapshots.paths.table_path}")
        return ScanTarget(snap)
    start_s, end_s = _pair(value, key)
    if key == INCREMENTAL_BETWEEN_TIMESTAMP:
        t0, t1 = _int(start_s, key), _int(end_s, key)
        if t0 > t1:
            raise InvalidArgumentError(f"{key}: start {t0} is after end {t1}")
        start = snapshots.earlier_or_equal_time_millis(t0)
        end = snapshots.earlier_or_equal_time_millis(t1)
        if end is None:
            return ScanTarget(None)
        return ScanTarget(end, end=end, start_id=start.id if start is not None else 0)
    if start_s.isdigit() and end_s.isdigit():
        a, b = int(start_s), int(end_s)
        if a > b:
            raise InvalidArgumentError(f"{key}: start snapshot {a} is after end snapshot {b}")
        end = snapshots.snapshot(b)
        return ScanTarget(end, end=end, start_id=a)
    start_tag, end_tag = tags.get(start_s), tags.get(end_s)
    return ScanTarget(end_tag, start=start_tag, end=end_tag, tags=True)


def _pair(value: str, key: str) -> tuple[str, str]:
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(parts):
        raise InvalidArgumentError(f"Option '{key}' must be 'start,end'; got {value!r}")
    return parts[0], parts[1]


def _int(value: str, key: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidArgumentError(f"Option '{key}' must be an integer; got {value!r}") from None
