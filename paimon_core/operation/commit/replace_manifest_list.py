"""Publish the latest snapshot's files under a new base manifest list (Java
``FileStoreCommitImpl.replaceManifestList``).

The repairs and rewrites that keep a snapshot's content but not its manifests
(``remove_unexisting_manifests``: without the lost ones; ``reassign_row_id``: entries with new
``first_row_id``; ``rollback_to_as_latest``: an old snapshot's files, with the change from the
latest as its delta) publish one OVERWRITE snapshot ``latest + 1`` whose base and delta lists are
the given manifests; schema, index manifest, watermark, statistics and properties are those of
``like`` (default: the latest snapshot). Nothing is checked against other commits but the snapshot id
itself: the caller planned on ``latest`` and a commit landing first makes the publish lose.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitStateUnknownError
from paimon_core.manifest.manifest_list import write_manifest_list
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot
from paimon_core.version import WRITER_VERSION

if TYPE_CHECKING:
    from paimon_core.manifest.entries import ManifestFileMeta
    from paimon_core.store.file_store import FileStore

__all__ = ["delete_manifests", "replace_manifest_list"]

logger = logging.getLogger(__name__)


def replace_manifest_list(
    store: FileStore,
    latest: Snapshot,
    base_manifests: Sequence[ManifestFileMeta],
    *,
    commit_user: str,
    total_record_count: int,
    next_row_id: int | None,
    delta_manifests: Sequence[ManifestFileMeta] = (),
    delta_record_count: int = 0,
    like: Snapshot | None = None,
    written: Sequence[str] = (),
    purpose: str,
) -> bool:
    """Publish snapshot ``latest.id + 1`` (see the module docstring); ``written``: the manifest
    files the caller wrote for it, deleted with the lists when the publish loses.

    Returns:
        True when the snapshot is published (also when the publish failed but it landed), False
        when another commit took the id first (nothing of this publish is left behind).

    Raises:
        CommitStateUnknownError: the publish failed and the snapshot is not there (it may still
            land: its files are kept). ``purpose`` names the operation in its message.
    """
    names = list(written)
    try:
        base_list = store.paths.new_manifest_list_name()
        names.append(base_list)
        base_size = write_manifest_list(store.file_io, store.paths.manifest_path(base_list), base_manifests)
        delta_list = store.paths.new_manifest_list_name()
        names.append(delta_list)
        delta_size = write_manifest_list(store.file_io, store.paths.manifest_path(delta_list), delta_manifests)
    except BaseException:
        delete_manifests(store, names)
        raise
    source = latest if like is None else like
    snapshot = Snapshot(
        id=latest.id + 1,
        schema_id=source.schema_id,
        base_manifest_list=base_list,
        base_manifest_list_size=base_size,
        delta_manifest_list=delta_list,
        delta_manifest_list_size=delta_size,
        index_manifest=source.index_manifest,
        commit_user=commit_user,
        writer_version=WRITER_VERSION,
        commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_kind=CommitKind.OVERWRITE,
        time_millis=store.clock.now_millis(),
        total_record_count=total_record_count,
        delta_record_count=delta_record_count,
        watermark=source.watermark,
        statistics=source.statistics,
        properties=dict(source.properties) if source.properties else None,
        next_row_id=next_row_id,
    )
    try:
        published = store.new_commit(commit_user).snapshot_commit.commit(snapshot)
    except Exception as e:
        landed = store.snapshot_manager.try_snapshot(snapshot.id)
        if landed is not None and landed.commit_user == commit_user:
            return True
        if landed is not None:
            delete_manifests(store, names)
            return False
        raise CommitStateUnknownError(
            f"Publishing snapshot {snapshot.id} of {store.name} ({purpose}) failed: {type(e).__name__}: {e}; "
            "it may still land: its manifest lists were kept, check the table",
            snapshot_id=snapshot.id,
        ) from e
    if not published:
        delete_manifests(store, names)
    return bool(published)


def delete_manifests(store: FileStore, names: Sequence[str]) -> None:
    """Delete manifest files or lists no snapshot names (best effort: orphan clean removes leftovers)."""
    for name in names:
        try:
            store.file_io.delete(store.paths.manifest_path(name))
        except OSError as e:  # pragma: no cover - best effort
            logger.warning("Could not delete unused manifest file %s: %s", name, e)
