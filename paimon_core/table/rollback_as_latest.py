"""Non-destructive rollback (Java's ``RollbackToAsLatestProcedure`` and
``FileStoreCommitImpl.rollbackToAsLatest``, Paimon PR #8139).

A new OVERWRITE snapshot ``latest + 1`` gets the target's content: its base manifest list is one
fresh manifest of the latest state's live files (as Java writes it) and its delta deletes every
live file the target does not have and re-adds every target file the latest does not have. Schema id, index manifest (deletion vectors), watermark,
statistics and properties are the target's; ``nextRowId`` never moves back. Later snapshots and
tags stay. When the target is given by snapshot id, it is first tagged
``rollback-to-as-latest-<id>-<uuid>`` so that snapshot expiry cannot delete its files while the
rollback runs (Java keeps that tag; it is removed again if the commit fails).

The publish is a no-overwrite create of ``snapshot-(latest+1)``: a commit landing meanwhile makes
the rollback fail with :class:`CommitConflictError` (as Java's does), with its manifests removed.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflictError, SnapshotNotFoundError
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.manifest_file import write_manifest_file
from paimon_core.operation.commit.changes import row_delta
from paimon_core.operation.commit.replace_manifest_list import delete_manifests, replace_manifest_list
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.rollback_helper import RollbackResult

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)

ROLLBACK_TO_AS_LATEST_TAG_PREFIX = "rollback-to-as-latest-"


def rollback_to_as_latest(
    table: FileStoreTable, target: Snapshot, target_tag: str | None, *, dry_run: bool = False
) -> RollbackResult:
    """Commit the target's content as a new latest snapshot (see the module docstring)."""
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        raise SnapshotNotFoundError(f"Cannot roll back {table.name}: it has no snapshot")
    result = RollbackResult(
        table=table.name,
        previous_snapshot_id=latest.id,
        current_snapshot_id=latest.id + 1,
        target_snapshot_id=target.id,
        target_tag=target_tag,
        dry_run=dry_run,
    )
    if dry_run:
        return result
    created_tag = None
    if target_tag is None:
        created_tag = f"{ROLLBACK_TO_AS_LATEST_TAG_PREFIX}{target.id}-{uuid.uuid4()}"
        table.tag_manager.create(created_tag, target)
    try:
        new_id = _commit(table, latest, target)
    except BaseException:
        if created_tag is not None:
            table.tag_manager.delete(created_tag)
        raise
    logger.info("Rolled back %s to snapshot %d as new latest snapshot %d", table.name, target.id, new_id)
    return RollbackResult(
        table=table.name,
        previous_snapshot_id=latest.id,
        current_snapshot_id=new_id,
        target_snapshot_id=target.id,
        target_tag=target_tag,
        created_tag=created_tag,
        dry_run=False,
    )


def _commit(table: FileStoreTable, latest: Snapshot, target: Snapshot) -> int:
    scan = table.new_file_store_scan()
    latest_entries = {e.identifier(): e for e in scan.live_entries(latest)}
    target_entries = {e.identifier(): e for e in scan.live_entries(target)}
    delta = [_as(FileKind.DELETE, e) for k, e in latest_entries.items() if k not in target_entries]
    delta += [_as(FileKind.ADD, e) for k, e in target_entries.items() if k not in latest_entries]

    file_io, paths = table.file_io, table.paths
    commit_user = f"{ROLLBACK_TO_AS_LATEST_TAG_PREFIX}{uuid.uuid4()}"
    written: list[str] = []

    def write(entries: list[ManifestEntry]) -> list[ManifestFileMeta]:
        if not entries:
            return []
        name = paths.new_manifest_name()
        written.append(name)
        meta = write_manifest_file(
            file_io,
            paths.manifest_path(name),
            entries,
            partition_stats=table.partition_codec.stats([e.partition for e in entries]),
            schema_id=target.schema_id,
        )
        return [meta]

    try:
        delta_metas = write(delta)
        # As Java: the base is a fresh manifest of the latest live files (ADDs only), not the latest
        # snapshot's manifests, whose DELETE entries of re-added files would hide them from readers
        # that cancel ADD/DELETE pairs regardless of order (pypaimon).
        base_metas = write(list(latest_entries.values()))
    except BaseException:
        delete_manifests(table.store, written)  # nothing was published yet
        raise
    added, deleted = row_delta(delta)
    published = replace_manifest_list(
        table.store,
        latest,
        base_metas,
        delta_manifests=delta_metas,
        delta_record_count=added - deleted,
        like=target,
        commit_user=commit_user,
        total_record_count=target.total_record_count,
        next_row_id=_max_or_none(latest.next_row_id, target.next_row_id),
        written=written,
        purpose=f"rollback to {target.id} as latest",
    )
    if not published:
        raise CommitConflictError(
            f"Rollback of {table.name} to snapshot {target.id} as latest failed: snapshot {latest.id + 1} was "
            "committed meanwhile; nothing was changed, retry",
            snapshot_id=latest.id + 1,
        )
    return latest.id + 1


def _as(kind: FileKind, e: ManifestEntry) -> ManifestEntry:
    return ManifestEntry(kind, e.partition, e.bucket, e.total_buckets, e.file)


def _max_or_none(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


