"""Drop the manifests the latest snapshot names that are gone (Flink's ``remove_unexisting_manifests``
procedure, ``RemoveUnexistingManifestsAction``): a repair for a table whose manifest file was lost.

As Java: the manifests of the latest snapshot (base and delta lists) are checked; if none is
missing nothing happens. Otherwise one new OVERWRITE snapshot ``latest + 1`` is published
(``FileStoreCommitImpl.replaceManifestList``) whose base manifest list holds every manifest that
still exists, whose delta list is empty, and whose record count is what those manifests add up to
(ADD rows minus DELETE rows); schema, index manifest, watermark, statistics, properties and
``nextRowId`` are the latest snapshot's. The rows the lost manifests held are no longer in the
table (they could not be read anyway). Older snapshots and tags are unchanged.

``dry_run`` lists the missing manifests and changes nothing. A manifest list that is itself
missing cannot be repaired this way (Java fails too): :class:`MetadataFileNotFoundError`. A commit
landing meanwhile makes it fail with :class:`CommitConflictError` ("snapshot conflict") and
nothing changed.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflictError, MetadataFileNotFoundError
from paimon_core.manifest.entries import FileKind
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.operation.commit.replace_manifest_list import replace_manifest_list
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import CommitKind, Snapshot

if TYPE_CHECKING:
    from paimon_core.manifest.entries import ManifestEntry, ManifestFileMeta
    from paimon_core.operation.scan import FileStoreScan
    from paimon_core.store.file_store import FileStore

__all__ = ["RemoveUnexistingManifests", "RemoveUnexistingManifestsResult"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemoveUnexistingManifestsResult(_ToDict):
    """What ``remove_unexisting_manifests`` dropped (``dry_run``: would drop)."""

    table: str
    dry_run: bool
    latest_snapshot_id: int | None = None  # the snapshot checked
    manifests: int = 0  # manifests it names
    missing_manifests: tuple[str, ...] = ()
    lost_records: int = 0  # records of the latest snapshot the missing manifests held
    snapshot_id: int | None = None  # the new OVERWRITE snapshot; None: nothing missing, or dry run
    commit_kind: str | None = None
    result: str = "Success"  # Java's procedure output


class RemoveUnexistingManifests:
    """Repairs the latest snapshot of one table (see the module docstring)."""

    def __init__(self, store: FileStore) -> None:
        self.store = store

    def _lists(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        scan = self.store.new_scan()
        out: list[ManifestFileMeta] = []
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            path = self.store.paths.manifest_path(name)
            try:
                out += scan.read_list(name)
            except FileNotFoundError:
                raise MetadataFileNotFoundError(
                    f"Manifest list {path} of snapshot {snapshot.id} of {self.store.name} is missing: "
                    "remove_unexisting_manifests can only drop missing manifests (nothing changed)",
                    path=path,
                    snapshot_id=snapshot.id,
                ) from None
        return out

    def run(self, *, dry_run: bool = False) -> RemoveUnexistingManifestsResult:
        store = self.store
        latest = store.snapshot_manager.latest_snapshot()
        if latest is None:
            return RemoveUnexistingManifestsResult(store.name, dry_run)
        metas = self._lists(latest)
        file_io, paths = store.file_io, store.paths
        present = [file_io.exists(paths.manifest_path(m.file_name)) for m in metas]
        in_trash: dict[str, str] = {}  # a dry run leaves an orphan clean's moved manifests where they lie
        if not all(present):  # an orphan clean may only have moved them aside: not missing
            from paimon_core.operation.orphan_trash import find_in_trash, not_missing

            gone = [paths.manifest_path(m.file_name) for m, ok in zip(metas, present, strict=True) if not ok]
            if dry_run:
                in_trash = {p[p.rfind("/") + 1 :]: t.trash for p, t in find_in_trash(file_io, (store.path,), gone).items()}
                back = {paths.manifest_path(n) for n in in_trash} | {p for p in gone if file_io.exists(p)}
            else:
                back = not_missing(file_io, (store.path,), gone, dry_run=False)
            present = [ok or paths.manifest_path(m.file_name) in back for m, ok in zip(metas, present, strict=True)]
        existing = [m for m, ok in zip(metas, present, strict=True) if ok]
        missing = tuple(m.file_name for m, ok in zip(metas, present, strict=True) if not ok)
        scan = store.new_scan()
        records = 0
        for m in existing:
            for e in _read(scan, m, in_trash.get(m.file_name)):
                records += e.file.row_count if e.kind == FileKind.ADD else -e.file.row_count
        result = RemoveUnexistingManifestsResult(
            table=store.name,
            dry_run=dry_run,
            latest_snapshot_id=latest.id,
            manifests=len(metas),
            missing_manifests=missing,
            lost_records=max(0, (latest.total_record_count or 0) - records) if missing else 0,
        )
        if dry_run or not missing:
            return result
        for name in missing:
            logger.warning("Drop manifest file: %s (of %s)", name, store.name)
        new_id = self._commit(latest, existing, records)
        return RemoveUnexistingManifestsResult(
            table=store.name,
            dry_run=False,
            latest_snapshot_id=latest.id,
            manifests=len(metas),
            missing_manifests=missing,
            lost_records=result.lost_records,
            snapshot_id=new_id,
            commit_kind=CommitKind.OVERWRITE.value,
        )

    def _commit(self, latest: Snapshot, existing: list[ManifestFileMeta], records: int) -> int:
        store = self.store
        published = replace_manifest_list(
            store,
            latest,
            existing,
            commit_user=f"Repair-table-{uuid.uuid4()}",
            total_record_count=records,
            next_row_id=latest.next_row_id,
            purpose="remove_unexisting_manifests",
        )
        if not published:
            raise CommitConflictError(
                f"Failed, snapshot conflict, maybe multiple jobs is running to commit snapshots: snapshot "
                f"{latest.id + 1} of {store.name} was committed meanwhile; nothing was changed, retry",
                snapshot_id=latest.id + 1,
            )
        logger.info("Committed snapshot %d of %s without its missing manifests", latest.id + 1, store.name)
        return latest.id + 1


def _read(scan: FileStoreScan, meta: ManifestFileMeta, trash: str | None) -> list[ManifestEntry]:
    """A manifest's entries, from where an orphan clean moved it if it lies there."""
    if trash is not None:
        try:
            return read_manifest_file(scan.file_io, trash)
        except FileNotFoundError:
            pass  # moved back meanwhile
    return scan.read_manifest(meta)
