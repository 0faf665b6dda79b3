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

from paimon_core.exceptions import CommitConflictError, CommitStateUnknownError, SnapshotNotFoundError
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.manifest_file import write_manifest_file
from paimon_core.manifest.manifest_list import write_manifest_list
from paimon_core.operation.commit.changes import row_delta
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot
from paimon_core.table.rollback_helper import RollbackResult
from paimon_core.version import WRITER_VERSION

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
        base_list = paths.new_manifest_list_name()
        written.append(base_list)
        base_size = write_manifest_list(file_io, paths.manifest_path(base_list), base_metas)
        delta_list = paths.new_manifest_list_name()
        written.append(delta_list)
        delta_size = write_manifest_list(file_io, paths.manifest_path(delta_list), delta_metas)
        added, deleted = row_delta(delta)
        snapshot = Snapshot(
            id=latest.id + 1,
            schema_id=target.schema_id,
            base_manifest_list=base_list,
            base_manifest_list_size=base_size,
            delta_manifest_list=delta_list,
            delta_manifest_list_size=delta_size,
            index_manifest=target.index_manifest,
            commit_user=commit_user,
            writer_version=WRITER_VERSION,
            commit_identifier=BATCH_COMMIT_IDENTIFIER,
            commit_kind=CommitKind.OVERWRITE,
            time_millis=table.clock.now_millis(),
            total_record_count=target.total_record_count,
            delta_record_count=added - deleted,
            watermark=target.watermark,
            statistics=target.statistics,
            properties=dict(target.properties) if target.properties else None,
            next_row_id=_max_or_none(latest.next_row_id, target.next_row_id),
        )
    except BaseException:
        _cleanup(table, written)  # nothing was published yet
        raise
    try:
        published = table.new_file_store_commit(commit_user).snapshot_commit.commit(snapshot)
    except Exception as e:
        # The publish may still land (a slow PUT): keep the manifests unless another commit took the id.
        try:
            landed = table.snapshot_manager.try_snapshot(latest.id + 1)
        except Exception:  # noqa: BLE001 - cannot tell: keep everything
            landed = None
        else:
            if landed is not None and landed.commit_user != commit_user:
                _cleanup(table, written)
                raise
        if landed is not None:
            return snapshot.id  # ours, despite the error
        raise CommitStateUnknownError(
            f"Publishing snapshot {latest.id + 1} of {table.name} (rollback to {target.id} as latest) failed: "
            f"{type(e).__name__}: {e}; it may still land: its manifests were kept, check the table before retrying",
            snapshot_id=latest.id + 1,
        ) from e
    if not published:
        _cleanup(table, written)
        raise CommitConflictError(
            f"Rollback of {table.name} to snapshot {target.id} as latest failed: snapshot {latest.id + 1} was "
            "committed meanwhile; nothing was changed, retry",
            snapshot_id=latest.id + 1,
        )
    return snapshot.id


def _as(kind: FileKind, e: ManifestEntry) -> ManifestEntry:
    return ManifestEntry(kind, e.partition, e.bucket, e.total_buckets, e.file)


def _max_or_none(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


def _cleanup(table: FileStoreTable, names: list[str]) -> None:
    for name in names:
        try:
            table.file_io.delete(table.paths.manifest_path(name))
        except OSError as e:  # pragma: no cover - best effort; orphan clean removes leftovers
            logger.warning("Could not delete unused manifest %s: %s", name, e)
