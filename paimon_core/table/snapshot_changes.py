"""What a range of snapshots changed: commit kinds, users, partitions (metadata only).

Used by watchers of a table (Airflow's ``PaimonTableSnapshotTrigger``) to describe the commits
since the last one they reported. Reads each snapshot file of the range and, when asked, the
delta manifests of at most ``max_snapshots`` of them, so the cost is bounded whatever the gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.manifest.entries import FileKind
from paimon_core.operation.scan import ScanFilter
from paimon_core.results import _ToDict
from paimon_core.table.health import partition_text

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SnapshotInfo", "SnapshotRange", "new_partitions", "snapshot_range"]

#: Snapshot files read at most, per call (the newest of the range).
MAX_SNAPSHOTS_DEFAULT = 1000
#: Snapshots whose delta manifests are read at most, per call (the newest of the range).
MAX_PARTITION_SNAPSHOTS_DEFAULT = 20
#: Partitions listed at most; more are cut and ``partitions_truncated`` is set.
MAX_PARTITIONS_DEFAULT = 100


@dataclass(frozen=True)
class SnapshotInfo(_ToDict):
    """One snapshot's commit fields."""

    snapshot_id: int
    commit_kind: str
    time_millis: int
    commit_user: str
    commit_identifier: int


@dataclass(frozen=True)
class SnapshotRange(_ToDict):
    """The snapshots in ``(from_exclusive, to_inclusive]`` that still exist, oldest first."""

    from_exclusive: int | None
    to_inclusive: int
    snapshots: tuple[SnapshotInfo, ...]  # the last ``max_snapshots`` of the range
    snapshots_truncated: bool  # older snapshots of the range were skipped (or expired)
    changed_partitions: tuple[str, ...] | None  # None unless asked for
    partitions_truncated: bool  # more partitions than listed, or more snapshots than read for them


def snapshot_range(
    table: FileStoreTable,
    from_exclusive: int | None,
    to_inclusive: int,
    *,
    with_partitions: bool = False,
    max_snapshots: int = MAX_SNAPSHOTS_DEFAULT,
    max_partition_snapshots: int = MAX_PARTITION_SNAPSHOTS_DEFAULT,
    max_partitions: int = MAX_PARTITIONS_DEFAULT,
) -> SnapshotRange:
    """Describe the snapshots after ``from_exclusive`` up to ``to_inclusive``.

    ``from_exclusive=None`` means "just ``to_inclusive``". Only the newest ``max_snapshots`` are
    read; expired ones are skipped. ``with_partitions`` also reads the delta manifests of the
    newest ``max_partition_snapshots`` of them and lists the partitions they added or deleted
    files in (``k=v/k2=v2``, sorted).
    """
    start = to_inclusive if from_exclusive is None else from_exclusive + 1
    first = max(start, to_inclusive - max_snapshots + 1)
    snapshots = [
        s for s in (table.snapshot_manager.try_snapshot(i) for i in range(first, to_inclusive + 1)) if s
    ]
    truncated = first > start or len(snapshots) < to_inclusive - first + 1
    partitions: tuple[str, ...] | None = None
    parts_truncated = False
    if with_partitions:
        scan = table.new_file_store_scan()
        raw: set[bytes] = set()
        for snap in snapshots[-max_partition_snapshots:]:
            raw.update(e.partition for e in scan.delta_entries(snap))
        names = sorted(partition_text(table, p) for p in raw) if table.partition_keys else []
        parts_truncated = len(names) > max_partitions or len(snapshots) > max_partition_snapshots
        partitions = tuple(names[:max_partitions])
    return SnapshotRange(
        from_exclusive=from_exclusive,
        to_inclusive=to_inclusive,
        snapshots=tuple(
            SnapshotInfo(
                snapshot_id=s.id,
                commit_kind=str(s.commit_kind.value),
                time_millis=s.time_millis,
                commit_user=s.commit_user,
                commit_identifier=s.commit_identifier,
            )
            for s in snapshots
        ),
        snapshots_truncated=truncated,
        changed_partitions=partitions,
        partitions_truncated=parts_truncated,
    )


def new_partitions(
    table: FileStoreTable,
    from_exclusive: int | None,
    to_inclusive: int,
    *,
    max_snapshots: int = MAX_PARTITION_SNAPSHOTS_DEFAULT,
) -> tuple[str, ...]:
    """Partitions with live files at ``to_inclusive`` that had none at ``from_exclusive``.

    ``from_exclusive=None`` compares with the snapshot before ``to_inclusive``. Candidates are the
    partitions the range's delta manifests added files to (or, for a gap over ``max_snapshots``,
    every partition of ``to_inclusive``); each is then looked up in both snapshots' manifests.
    An expired ``from_exclusive`` snapshot is taken as empty. Unpartitioned tables have none.
    """
    if not table.partition_keys:
        return ()
    sm = table.snapshot_manager
    base_id = to_inclusive - 1 if from_exclusive is None else from_exclusive
    scan = table.new_file_store_scan()
    target = sm.snapshot(to_inclusive)
    if to_inclusive - base_id <= max_snapshots:
        candidates: set[bytes] = set()
        for sid in range(base_id + 1, to_inclusive + 1):
            snap = sm.try_snapshot(sid)
            if snap is not None:
                candidates.update(e.partition for e in scan.delta_entries(snap) if e.kind == FileKind.ADD)
    else:
        candidates = {e.partition for e in scan.live_entries(target)}
    if not candidates:
        return ()
    flt = ScanFilter(partitions=frozenset(candidates))
    live_now = {e.partition for e in scan.live_entries(target, flt)}
    base = sm.try_snapshot(base_id) if base_id >= 1 else None
    live_before = {e.partition for e in scan.live_entries(base, flt)} if base is not None else set()
    return tuple(sorted(partition_text(table, p) for p in live_now - live_before))
