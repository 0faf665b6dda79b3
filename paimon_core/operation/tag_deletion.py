"""Deleting tags and the files only they used (Java's ``TagDeletion`` + ``TagManager.deleteTag``).

For each tag: when its snapshot still exists, only the tag file goes (snapshot expiry will
clean the files later). Otherwise its files are planned (every name checked: one pointing
outside the table raises ``UnsafePathError`` with nothing deleted), the tag file goes, then,
unless another tag names the same snapshot, the data files, manifests, index files and statistics that neither
neighbour uses: the nearest older tag or snapshot, and the nearest newer one (the next tag
or the earliest snapshot). A file's life is a contiguous run of snapshots, so anything a
farther tag or a live snapshot uses, a neighbour uses too. When a neighbour cannot be read,
only the tag file is deleted (issue #6479): leaking files to orphan cleanup is safe,
deleting a file a neighbour needs is not.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.operation.file_deletion_base import (
    Category,
    EntrySkipper,
    FileDeleter,
    FileDeletionBase,
    RecentNames,
    read_tagged_snapshots,
)
from paimon_core.path_confinement import check_snapshot_names, naming_snapshot
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

Planned = list[tuple[Category, str, int | None]]


@dataclass(frozen=True)
class DeleteTagResult(_ToDict):
    """What ``delete_tag`` removed (or, with ``dry_run``, would remove)."""

    table: str
    dry_run: bool
    deleted_tags: tuple[str, ...]
    deleted_data_files: int = 0
    deleted_manifest_files: int = 0  # manifests, manifest lists and index manifests
    deleted_index_files: int = 0
    deleted_statistics_files: int = 0
    deleted_bytes: int = 0
    kept_files_of: tuple[str, ...] = ()  # tags whose files were kept: a neighbour was unreadable
    sample_paths: tuple[str, ...] = ()


class TagDeletion(FileDeletionBase):
    """Plans the files of one tag that its neighbours do not use."""

    def plan_tag_data_files(self, tag: Snapshot, skip: EntrySkipper) -> Planned:
        """The tag's data files (strict: raises when its own manifests cannot be read)."""
        live: dict[tuple[bytes, int, int, str], ManifestEntry] = {}
        for list_name in (tag.base_manifest_list, tag.delta_manifest_list):
            for meta in self.read_manifest_list(list_name):
                for e in self.read_manifest(meta.file_name):
                    key = (e.partition, e.bucket, e.file.level, e.file.file_name)
                    if e.kind == FileKind.ADD:
                        live[key] = e
                    else:
                        live.pop(key, None)
        out: Planned = []
        for e in live.values():
            if skip(e):
                continue
            self._deletion_buckets.add((e.partition, e.bucket))
            path, *extras = self.data_file_paths(e)
            out.append(("data", path, e.file.file_size))
            out.extend(("data", extra, 0) for extra in extras)
        return out

    def plan_manifests(self, tag: Snapshot, skipping: set[str]) -> tuple[Planned, Planned]:
        """(children, parents) of the tag's data manifest lists, index manifest and statistics.
        Changelog manifests are not the tag's: snapshot expiry removed them."""
        recent = RecentNames()
        children: Planned = []
        parents: Planned = []
        for name, size in (
            (tag.base_manifest_list, tag.base_manifest_list_size),
            (tag.delta_manifest_list, tag.delta_manifest_list_size),
        ):
            c, p = self.plan_unused_list(name, size, skipping, recent)
            children += c
            parents += p
        c, p = self.plan_unused_index_and_statistics(tag, skipping, recent)
        return children + c, parents + p


def parse_tag_names(names: str | Sequence[str]) -> list[str]:
    """Tag names from ``"a,b"`` or ``["a", "b"]``; duplicates dropped, order kept."""
    raw = names.split(",") if isinstance(names, str) else list(names)
    out: list[str] = []
    for n in raw:
        if not isinstance(n, str) or not n.strip():
            raise InvalidArgumentError(
                f"Tag names must be non-empty strings, got {names!r}", argument="names"
            )
        if n.strip() not in out:
            out.append(n.strip())
    if not out:
        raise InvalidArgumentError("No tag name given", argument="names")
    return out


def delete_tags(
    store: FileStore, names: str | Sequence[str], *, dry_run: bool = False
) -> DeleteTagResult:
    """Delete tags and the files only they used. Every tag must exist (checked first:
    ``TagNotFoundError`` names the missing one and nothing is deleted), and a tag whose files
    may go must name none outside the table (``UnsafePathError``, nothing deleted)."""
    tag_names = parse_tag_names(names)
    tags = {}
    for name in tag_names:
        tags[name] = store.tag_manager.get(name)  # TagNotFoundError before anything changes
        if not store.snapshot_manager.snapshot_exists(tags[name].id):  # its files may go: names checked first
            check_snapshot_names(tags[name], what=f"tag '{name}' of snapshot")
    removed: list[str] = []
    kept: list[str] = []
    with FileDeleter(store.file_io, dry_run=dry_run) as deleter:
        deletion = TagDeletion(store, deleter)
        for name in tag_names:
            if not _delete_one(store, deletion, name, tags[name], removed):
                kept.append(name)
            removed.append(name)
    counts = deleter.counts
    result = DeleteTagResult(
        table=store.name,
        dry_run=dry_run,
        deleted_tags=tuple(removed),
        deleted_data_files=counts["data"],
        deleted_manifest_files=counts["manifest"],
        deleted_index_files=counts["index"],
        deleted_statistics_files=counts["statistics"],
        deleted_bytes=deleter.bytes,
        kept_files_of=tuple(kept),
        sample_paths=tuple(deleter.sample),
    )
    logger.info(
        "%s tags %s of %s: %d data files, %d manifest files, %d index files",
        "Dry-run deletion of" if dry_run else "Deleted",
        ",".join(removed),
        store.name,
        result.deleted_data_files,
        result.deleted_manifest_files,
        result.deleted_index_files,
    )
    return result


def _neighbours(store: FileStore, tag: Snapshot, tagged: list[Snapshot]) -> list[Snapshot]:
    """The nearest older and newer tag or existing snapshot (Java: left tag, and the earlier
    of the right tag and the earliest snapshot; snapshots below the tag only exist when the
    sequence has gaps, and then they are neighbours too)."""
    snapshot_ids = store.snapshot_manager.list_snapshot_ids()
    pos = bisect.bisect_left(snapshot_ids, tag.id)
    older = [s for s in tagged if s.id < tag.id][-1:]
    newer = [s for s in tagged if s.id > tag.id][:1]
    if pos > 0 and (not older or snapshot_ids[pos - 1] > older[0].id):
        older = [store.snapshot_manager.snapshot(snapshot_ids[pos - 1])]
    if pos < len(snapshot_ids) and (not newer or snapshot_ids[pos] < newer[0].id):
        newer = [store.snapshot_manager.snapshot(snapshot_ids[pos])]
    return older + newer


def _delete_one(
    store: FileStore, deletion: TagDeletion, name: str, tag: Snapshot, removed: list[str]
) -> bool:
    """Delete one tag; False when its files had to be kept (a neighbour was unreadable)."""
    deleter = deletion.deleter
    tag_path = store.tag_manager.tag_path(name)
    if store.snapshot_manager.snapshot_exists(tag.id):
        deleter.delete_now("tag", tag_path)
        return True
    # Read every tag before deleting this one's file (tags are found by their files).
    tagged = read_tagged_snapshots(store, exclude=removed)
    same_snapshot = [names for snap, names in tagged if snap.id == tag.id]
    if same_snapshot and len(same_snapshot[0]) > 1:
        deleter.delete_now("tag", tag_path)
        return True  # another tag still names this snapshot
    # Plan every file before deleting the tag file: a name that points outside the table
    # (UnsafePathError) stops here with nothing deleted.
    with naming_snapshot(tag.id, what=f"tag '{name}' of snapshot"):
        planned = _plan_files(store, deletion, name, tag, [snap for snap, _ in tagged if snap.id != tag.id])
    deleter.delete_now("tag", tag_path)
    if planned is None:
        return False
    data, children, parents = planned
    deleter.add_all(data)
    deleter.flush()
    deletion.clean_empty_directories()
    deleter.add_all(children)
    deleter.flush()
    deleter.add_all(parents)
    deleter.flush()
    return True


def _plan_files(
    store: FileStore, deletion: TagDeletion, name: str, tag: Snapshot, others: list[Snapshot]
) -> tuple[Planned, Planned, Planned] | None:
    """(data files, manifest children, manifest parents) only this tag used; None when a
    neighbour cannot be read (then every file is kept)."""
    try:
        neighbours = _neighbours(store, tag, others)
        skip = deletion.data_file_skipper(neighbours)
        skipping = deletion.manifest_skipping_set(neighbours)
    except UnsafePathError:
        raise
    except Exception as e:  # noqa: BLE001 - keep every file rather than guess
        logger.warning(
            "Deleting tag %s of %s but keeping its files: a neighbour cannot be read: %s", name, store.name, e
        )
        return None
    data: Planned = []
    try:
        data = deletion.plan_tag_data_files(tag, skip)
    except UnsafePathError:
        raise
    except Exception as e:  # noqa: BLE001 - its own manifests are gone: nothing to find
        logger.warning(
            "Cannot read the files of tag %s of %s, leaving them to orphan cleanup: %s", name, store.name, e
        )
    children, parents = deletion.plan_manifests(tag, skipping)
    return data, children, parents


__all__ = ["DeleteTagResult", "TagDeletion", "delete_tags", "parse_tag_names"]
