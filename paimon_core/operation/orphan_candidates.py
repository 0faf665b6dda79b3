"""Candidate directories and files of an orphan clean (Java ``OrphanFilesClean#listPaimonFileDirs``,
``listFileDirs``, ``tryBestListingDirs``, ``tryCleanDataDirectory``).

Candidates are every file under

* the data directories: ``<partition dirs>/bucket-N`` at the table's partition depth, in the
  table directory only. A ``data-file.external-paths`` root is never listed: the option is
  metadata (a hand-written ``schema-N`` can name any directory), so listing it would make any
  directory's old files candidates. Files the table wrote there are deleted by expiry, which
  deletes only what a snapshot's manifests name (:func:`skipped_external_roots`; logged);
* ``manifest/``, ``index/`` and ``statistics/``;
* each branch's ``snapshot/`` and ``changelog/``, except ``snapshot-N`` / ``changelog-N`` and the
  ``EARLIEST`` / ``LATEST`` hints (left-over temp files of a crashed commit are candidates);
* every directory under ``_staging/`` (files an engine staged and never moved in: a write that
  crashed; nothing there is ever referenced), emptied directories removed up to ``_staging``.

No symbolic link is followed: a directory that is a link (a ``bucket-N``, partition, ``index/``,
``_staging/<x>`` or branch directory, or one below such a link) is skipped with a warning and
never deleted (links are left alone); a file that is a link is a candidate like any file (deleting
it removes the link, not its target). A directory that cannot be listed is skipped (not deleting
is always safe). Plain data, so Spark
executors can list the directories the driver planned.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from paimon_core.exceptions import TransientError
from paimon_core.io.file_io import FileIO, FileStatus
from paimon_core.operation.referenced_files import branch_path, is_changelog_file, is_snapshot_file
from paimon_core.path_confinement import link_below
from paimon_core.paths import BUCKET_PREFIX, EARLIEST, LATEST, PathFactory

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = [
    "CandidateDir",
    "list_candidate_files",
    "plan_candidate_dirs",
    "prune_empty_dirs",
    "skipped_external_roots",
]

logger = logging.getLogger(__name__)

DirKind = Literal["data", "metadata", "snapshot", "changelog"]
_HINTS = frozenset({EARLIEST, LATEST})


@dataclass(frozen=True, slots=True)
class CandidateDir:
    """One directory whose files are candidates. ``prune_levels``: for data directories, how
    many directories (this one, then its parents) may be removed once empty."""

    path: str
    kind: DirKind
    file_io: FileIO
    prune_levels: int = 0
    mtime_millis: int = 0


def plan_candidate_dirs(store: FileStore, branches: Sequence[str]) -> list[CandidateDir]:
    """Every directory whose files are candidates (lists the partition tree on this node).

    Only directories inside the table directory: the ``data-file.external-paths`` roots are
    never listed (:func:`skipped_external_roots`), and no directory below a symbolic link is."""
    io, paths = store.file_io, store.paths
    fixed = [
        CandidateDir(d, "metadata", io) for d in (paths.manifest_dir, paths.index_dir, paths.statistics_dir)
    ]
    for branch in branches:
        bp = PathFactory(branch_path(store.path, branch))
        fixed.append(CandidateDir(bp.snapshot_dir, "snapshot", io))
        fixed.append(CandidateDir(bp.changelog_dir, "changelog", io))
    out = [d for d in fixed if not _below_link(io, d.path, store.path)]
    depth = len(store.schema.partition_keys)
    out.extend(_data_dirs(io, store.path, depth))
    if not _below_link(io, paths.staging_dir, store.path):
        out.extend(_staging_dirs(io, paths.staging_dir))
    for root in skipped_external_roots(store):
        logger.warning(
            "Not listing external data path %s of %s: orphan cleanup never lists a data-file.external-paths "
            "root (the option is metadata, and a schema file naming any directory would make that directory's "
            "files candidates); expiry deletes the files the table's snapshots wrote there",
            root,
            store.path,
        )
    return out


def skipped_external_roots(store: FileStore) -> list[str]:
    """The table's ``data-file.external-paths`` roots outside its directory: orphan cleanup never
    lists them (a root inside the table directory is listed with the table)."""
    table_root = store.path.rstrip("/") + "/"
    value = store.options.get("data-file.external-paths") or ""
    roots = [p.strip().rstrip("/") for p in value.split(",") if p.strip()]
    return [r for r in roots if not (r.rstrip("/") + "/").startswith(table_root)]


def _below_link(file_io: FileIO, path: str, root: str) -> bool:
    """Whether ``path`` or a directory between ``root`` and it is a symbolic link (logged)."""
    link = link_below(file_io, path, [root], include_self=True)
    if link is not None:
        logger.warning(
            "Not listing %s for orphan cleanup: %s is a symbolic link (links are never followed; "
            "remove or replace it by hand)",
            path,
            link,
        )
    return link is not None


def _try_list(file_io: FileIO, path: str) -> list[FileStatus]:
    """A listing failure skips the directory: not deleting is always safe (Java tryBestListingDirs)."""
    try:
        return file_io.list_status(path)
    except (OSError, TransientError) as e:
        logger.warning("Could not list %s, skipping it: %s", path, e)
        return []


def _data_dirs(file_io: FileIO, root: str, depth: int, level: int = 0) -> list[CandidateDir]:
    """Bucket directories ``depth`` partition levels below ``root`` (Java listFileDirs); a
    partition directory without bucket directories is returned itself (for empty-dir cleanup)."""
    statuses = [s for s in _try_list(file_io, root) if s.is_dir and not _is_link(file_io, s.path)]
    if level == depth:
        return [
            CandidateDir(s.path, "data", file_io, level + 1, s.mtime_millis)
            for s in statuses
            if s.name.startswith(BUCKET_PREFIX)
        ]
    out: list[CandidateDir] = []
    for s in statuses:
        if "=" not in s.name:
            continue  # not a partition directory (manifest/, snapshot/, ...)
        sub = _data_dirs(file_io, s.path, depth, level + 1)
        out.extend(sub or [CandidateDir(s.path, "data", file_io, level + 1, s.mtime_millis)])
    return out


def _staging_dirs(file_io: FileIO, root: str, level: int = 1) -> list[CandidateDir]:
    """Every directory below the staging root, each removable up to (not including) it."""
    out: list[CandidateDir] = []
    for s in _try_list(file_io, root):
        if s.is_dir and not _is_link(file_io, s.path):
            out.append(CandidateDir(s.path, "data", file_io, level, s.mtime_millis))
            out.extend(_staging_dirs(file_io, s.path, level + 1))
    return out


def _is_link(file_io: FileIO, path: str) -> bool:
    if file_io.is_symlink(path):
        logger.warning(
            "Not listing %s for orphan cleanup: it is a symbolic link (links are never followed)", path
        )
        return True
    return False


def _protected(kind: DirKind, name: str) -> bool:
    if kind == "snapshot":
        return is_snapshot_file(name) or name in _HINTS
    if kind == "changelog":
        return is_changelog_file(name) or name in _HINTS
    return False


def list_candidate_files(d: CandidateDir) -> list[FileStatus]:
    """The candidate files directly in one directory (never directories, never snapshot-N,
    changelog-N or hint files; nothing when the directory has become a symbolic link). A file
    that is itself a link is a candidate: deleting it removes the link, never its target."""
    if _is_link(d.file_io, d.path):
        return []
    return [s for s in _try_list(d.file_io, d.path) if not s.is_dir and not _protected(d.kind, s.name)]


def prune_empty_dirs(dirs: Iterable[CandidateDir]) -> int:
    """Remove data directories that are empty, then their parents that became empty, up to
    each directory's ``prune_levels``. Non-empty directories are never removed. Returns the
    number removed."""
    removed = 0
    level: dict[str, tuple[FileIO, int]] = {
        d.path: (d.file_io, d.prune_levels) for d in dirs if d.prune_levels > 0
    }
    while level:
        parents: dict[str, tuple[FileIO, int]] = {}
        for path, (io, levels) in level.items():
            if _remove_if_empty(io, path):
                removed += 1
                if levels > 1:
                    parents[posixpath.dirname(path.rstrip("/"))] = (io, levels - 1)
        level = parents
    return removed


def _remove_if_empty(file_io: FileIO, path: str) -> bool:
    """Best effort: a non-recursive delete of a directory that lists empty (object stores
    without real directories may refuse; a writer may have just added a file)."""
    try:
        if file_io.is_symlink(path) or file_io.list_status(path):
            return False
        return file_io.delete(path, recursive=False)
    except Exception as e:  # noqa: BLE001 - cleanup of empty directories never fails the clean
        logger.debug("Could not remove empty directory %s: %s", path, e)
        return False
