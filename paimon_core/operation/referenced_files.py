"""The files a table's snapshots, tags and long-lived changelogs reference, in every branch.

Mirrors the "used files" half of Java's ``OrphanFilesClean`` (``safelyGetAllSnapshots``,
``collectWithoutDataFileWithManifestFlag``, ``getUsedFiles``) and the branch layout of
``BranchManager`` / ``FileSystemBranchManager``: a branch lives in ``branch/branch-<name>/``
with its own ``snapshot/``, ``schema/``, ``tag/`` and ``changelog/`` directories, while the
manifests, index files and data files stay in the table's own directories (branches share them).

A *root* is one snapshot, tag or changelog file. From a root we reach its manifest lists
(base, delta, changelog), their manifests, the index manifest and its index files, and the
statistics file; a manifest then names data files (and their extra files). Everything is
returned as bare file names: Paimon file names are unique (a uuid and a counter).

Failure rules (so a live file is never taken for unreferenced):

* a root file that is gone when read (``FileNotFoundError``: expiry, tag deletion or rollback
  running concurrently) is skipped;
* a file a root names that is missing is accepted only if every file of that root has vanished
  by then (the root was expired while being read); while the root still exists the table is
  corrupt, or an expiry is half done, and :class:`CorruptFileError` is raised;
* any other read failure is retried a few times, then raised.

The functions are picklable-friendly (plain data in, plain data out) so Spark executors can run
the per-root and per-manifest steps.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from paimon_core.exceptions import CorruptFileError, TransientError
from paimon_core.io.file_io import FileIO, join
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.manifest.manifest_batch import ManifestBatch
from paimon_core.manifest.manifest_decode import decode_manifest_batches
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.path_confinement import check_file_name
from paimon_core.paths import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    CHANGELOG_PREFIX,
    INDEX_DIR,
    MAIN_BRANCH,
    MANIFEST_DIR,
    SNAPSHOT_PREFIX,
    STATISTICS_DIR,
    TAG_PREFIX,
    PathFactory,
    branch_path,
)
from paimon_core.snapshot.snapshot import Snapshot

__all__ = [
    "MAIN_BRANCH",
    "ReferenceReader",
    "RootRefs",
    "branch_path",
    "collect_roots",
    "is_changelog_file",
    "is_snapshot_file",
    "list_branches",
    "parallel_map",
    "read_root",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_SNAPSHOT_FILE = re.compile(rf"^{re.escape(SNAPSHOT_PREFIX)}\d+$")
_CHANGELOG_FILE = re.compile(rf"^{re.escape(CHANGELOG_PREFIX)}\d+$")

# Root kinds in the order collect_roots returns them: the most durable last (a tag outlives
# the snapshots expiry removes), so "the last root naming a manifest" is the one to re-check.
_CHANGELOG, _SNAPSHOT, _TAG = 0, 1, 2


def is_snapshot_file(name: str) -> bool:
    """``snapshot-<id>`` exactly (temp files such as ``.snapshot-3.<uuid>.tmp`` are not)."""
    return bool(_SNAPSHOT_FILE.match(name))


def is_changelog_file(name: str) -> bool:
    """``changelog-<id>`` exactly: a long-lived changelog's metadata file."""
    return bool(_CHANGELOG_FILE.match(name))


# --- branches -------------------------------------------------------------------------


def list_branches(file_io: FileIO, table_path: str) -> list[str]:
    """Names of the table's branches (without ``main``), sorted."""
    return sorted(
        st.name[len(BRANCH_PREFIX) :]
        for st in file_io.list_dirs(join(table_path, BRANCH_DIR))
        if st.name.startswith(BRANCH_PREFIX) and len(st.name) > len(BRANCH_PREFIX)
    )


# --- roots ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RootRefs:
    """The metadata one or more root files (snapshot / tag / changelog) point at.

    ``sources`` are the root files with exactly this content (a tag and the snapshot it tags
    share one entry); the entry counts as vanished only when all of them are gone.
    """

    sources: tuple[str, ...]
    manifest_lists: tuple[str, ...]
    index_manifest: str | None
    statistics: str | None

    @staticmethod
    def of(snapshot: Snapshot, source: str) -> RootRefs:
        lists = [snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.changelog_manifest_list]
        return RootRefs(
            sources=(source,),
            manifest_lists=tuple(x for x in lists if x),
            index_manifest=snapshot.index_manifest or None,
            statistics=snapshot.statistics or None,
        )

    @property
    def key(self) -> tuple[tuple[str, ...], str | None, str | None]:
        return (self.manifest_lists, self.index_manifest, self.statistics)


def read_root(file_io: FileIO, path: str, *, retries: int = 3) -> Snapshot | None:
    """A snapshot, tag or changelog file; None when it no longer exists."""
    try:
        data = _retry(lambda: file_io.read_bytes(path), retries)
    except FileNotFoundError:
        logger.info("Skipping %s: it was removed while being read (expiry, tag deletion or rollback)", path)
        return None
    return Snapshot.from_json(data, path=path)


def _root_paths(file_io: FileIO, table_path: str, branch: str) -> list[tuple[int, int, str]]:
    """(kind, order, path) of every root file of one branch."""
    paths = PathFactory(branch_path(table_path, branch))
    out: list[tuple[int, int, str]] = []
    for st in file_io.list_files(paths.changelog_dir):
        if is_changelog_file(st.name):
            out.append((_CHANGELOG, int(st.name[len(CHANGELOG_PREFIX) :]), st.path))
    for st in file_io.list_files(paths.snapshot_dir):
        if is_snapshot_file(st.name):
            out.append((_SNAPSHOT, int(st.name[len(SNAPSHOT_PREFIX) :]), st.path))
    for st in file_io.list_files(paths.tag_dir):
        if st.name.startswith(TAG_PREFIX):
            out.append((_TAG, 0, st.path))
    return out


def collect_roots(
    file_io: FileIO, table_path: str, branches: Iterable[str], *, parallelism: int = 8, retries: int = 3
) -> list[RootRefs]:
    """Every snapshot, tag and long-lived changelog of ``branches`` (read in parallel).

    Roots removed while being read are skipped; an unreadable root raises. Roots with the
    same content are merged; changelogs come first, then snapshots by id, then tags.
    """
    located: list[tuple[int, int, str]] = []
    for branch in branches:
        located.extend(_root_paths(file_io, table_path, branch))
    located.sort(key=lambda x: (x[0], x[1], x[2]))

    def load(item: tuple[int, int, str]) -> Snapshot | None:
        return read_root(file_io, item[2], retries=retries)

    snapshots = parallel_map(load, located, parallelism)
    merged: dict[tuple[tuple[str, ...], str | None, str | None], RootRefs] = {}
    for (_kind, _order, path), snap in zip(located, snapshots, strict=True):
        if snap is None:
            continue
        refs = RootRefs.of(snap, path)
        prev = merged.pop(refs.key, None)  # re-insert: the entry moves to its most durable kind
        merged[refs.key] = refs if prev is None else RootRefs(prev.sources + refs.sources, *refs.key)
    return list(merged.values())


# --- reading references ------------------------------------------------------------------


class ReferenceReader:
    """Reads the files roots and manifests reference (picklable: holds only a FileIO and paths)."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        *,
        retries: int = 3,
        vanish_checks: int = 3,
        vanish_wait_seconds: float = 0.5,
    ) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self.manifest_dir = join(self.table_path, MANIFEST_DIR)
        self.index_dir = join(self.table_path, INDEX_DIR)
        self.statistics_dir = join(self.table_path, STATISTICS_DIR)
        self.retries = retries
        self.vanish_checks = vanish_checks
        self.vanish_wait_seconds = vanish_wait_seconds

    def root_files(self, root: RootRefs) -> list[tuple[str, bool]] | None:
        """``(name, is_manifest)`` of everything a root names except data files: manifest
        lists, manifests (``is_manifest``), the index manifest, index files and statistics.
        None when the root vanished while being read."""
        out: list[tuple[str, bool]] = []
        for name in root.manifest_lists:
            out.append((name, False))
            metas = self._read(read_manifest_list, name, root)
            if metas is None:
                return None
            out.extend((m.file_name, True) for m in metas)
        if root.index_manifest:
            out.append((root.index_manifest, False))
            entries = self._read(read_index_manifest, root.index_manifest, root)
            if entries is None:
                return None
            out.extend((e.index_file.file_name, False) for e in entries)
        if root.statistics:
            out.append((root.statistics, False))
        return out

    def manifest_files(self, manifest: str, root: RootRefs) -> list[str] | None:
        """Data files and their extra files named by one manifest (ADD and DELETE entries:
        a file a retained manifest still mentions is never an orphan). ``root`` is a root
        naming the manifest, re-checked when the manifest is missing; None if it vanished."""
        batch = self._read(_manifest_batch, manifest, root)
        if batch is None:
            return None
        out: list[str] = list(batch.cols["file_name"])
        for i, plain in enumerate(batch.plain_key):
            if not plain:  # extra files, an embedded index or an external path: decode the record
                out.extend(batch.file(i).extra_files)
        return out

    def vanished(self, root: RootRefs) -> bool:
        """Whether every file of the root is gone (re-checked a few times: an expiry deletes
        a snapshot's manifests moments before the snapshot file itself)."""
        for attempt in range(max(1, self.vanish_checks)):
            if not any(self.file_io.exists(s) for s in root.sources):
                return True
            if attempt + 1 < self.vanish_checks and self.vanish_wait_seconds > 0:
                time.sleep(self.vanish_wait_seconds)
        return False

    def _read(self, reader: Callable[[FileIO, str], T], name: str, root: RootRefs) -> T | None:
        """``reader(file_io, manifest_dir/name)``; None when it is missing because the root vanished."""
        path = join(self.manifest_dir, check_file_name(name, kind="manifest"))
        try:
            return _retry(lambda: reader(self.file_io, path), self.retries)
        except FileNotFoundError:
            if self.vanished(root):
                logger.info("Skipping %s: removed while being read", ", ".join(root.sources))
                return None
            raise CorruptFileError(
                f"{root.sources[0]} references {name}, which does not exist: the table is corrupt "
                "or an expiry is half done (retry later)",
                path=name,
            ) from None


def _manifest_batch(file_io: FileIO, path: str) -> ManifestBatch:
    """A manifest decoded in bulk (columns; not kept in the scan's cache of decoded manifests)."""
    return decode_manifest_batches([(path, file_io.read_bytes(path))])[0]


def _retry(fn: Callable[[], T], retries: int) -> T:
    """Run ``fn``; retry I/O failures other than a missing file (Java's retryReadingFiles)."""
    attempt = 0
    while True:
        try:
            return fn()
        except FileNotFoundError:
            raise
        except (OSError, TransientError) as e:
            attempt += 1
            if attempt >= max(1, retries):
                raise
            logger.debug("Read failed (%s), retrying (%d/%d)", e, attempt, retries)
            time.sleep(0.005 * attempt)


def parallel_map(fn: Callable[[T], R], items: Sequence[T], parallelism: int) -> list[R]:
    """``[fn(x) for x in items]`` on up to ``parallelism`` threads (I/O-bound reads), in order."""
    if len(items) <= 1 or parallelism <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(parallelism, len(items))) as pool:
        return list(pool.map(fn, items))
