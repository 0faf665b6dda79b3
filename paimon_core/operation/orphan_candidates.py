"""Candidate directories and files of an orphan clean (Java ``OrphanFilesClean#listPaimonFileDirs``,
``listFileDirs``, ``tryBestListingDirs``, ``tryCleanDataDirectory``).

Candidates are every file under

* the data directories: ``<partition dirs>/bucket-N`` at the table's partition depth, also under
  each ``data-file.external-paths`` root;
* ``manifest/``, ``index/`` and ``statistics/``;
* each branch's ``snapshot/`` and ``changelog/``, except ``snapshot-N`` / ``changelog-N`` and the
  ``EARLIEST`` / ``LATEST`` hints (left-over temp files of a crashed commit are candidates);
* every directory under ``_staging/`` (files an engine staged and never moved in: a write that
  crashed; nothing there is ever referenced), emptied directories removed up to ``_staging``.

A directory that cannot be listed is skipped (not deleting is always safe). Plain data, so Spark
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
from paimon_core.io.resolve import load_file_io, scheme_of
from paimon_core.operation.referenced_files import branch_path, is_changelog_file, is_snapshot_file
from paimon_core.paths import BUCKET_PREFIX, EARLIEST, LATEST, PathFactory

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["CandidateDir", "list_candidate_files", "plan_candidate_dirs", "prune_empty_dirs"]

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


def plan_candidate_dirs(table: FileStoreTable, branches: Sequence[str]) -> list[CandidateDir]:
    """Every directory whose files are candidates (lists the partition tree on this node)."""
    io, paths = table.file_io, table.paths
    out = [
        CandidateDir(d, "metadata", io) for d in (paths.manifest_dir, paths.index_dir, paths.statistics_dir)
    ]
    for branch in branches:
        bp = PathFactory(branch_path(table.path, branch))
        out.append(CandidateDir(bp.snapshot_dir, "snapshot", io))
        out.append(CandidateDir(bp.changelog_dir, "changelog", io))
    depth = len(table.schema.partition_keys)
    out.extend(_data_dirs(io, table.path, depth))
    out.extend(_staging_dirs(io, paths.staging_dir))
    for root in _external_roots(table):
        ext_io = io if scheme_of(root) == scheme_of(table.path) else load_file_io(root)
        out.extend(_data_dirs(ext_io, root, depth))
    return out


def _external_roots(table: FileStoreTable) -> list[str]:
    value = table.options.get("data-file.external-paths") or ""
    return [p.strip().rstrip("/") for p in value.split(",") if p.strip()]


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
    statuses = [s for s in _try_list(file_io, root) if s.is_dir]
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
        if s.is_dir:
            out.append(CandidateDir(s.path, "data", file_io, level, s.mtime_millis))
            out.extend(_staging_dirs(file_io, s.path, level + 1))
    return out


def _protected(kind: DirKind, name: str) -> bool:
    if kind == "snapshot":
        return is_snapshot_file(name) or name in _HINTS
    if kind == "changelog":
        return is_changelog_file(name) or name in _HINTS
    return False


def list_candidate_files(d: CandidateDir) -> list[FileStatus]:
    """The candidate files directly in one directory (never directories, never snapshot-N,
    changelog-N or hint files)."""
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
        if file_io.list_status(path):
            return False
        return file_io.delete(path, recursive=False)
    except Exception as e:  # noqa: BLE001 - cleanup of empty directories never fails the clean
        logger.debug("Could not remove empty directory %s: %s", path, e)
        return False
