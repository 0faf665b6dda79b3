"""Shared planning and deleting of snapshot expiry, changelog expiry and tag deletion.

Mirrors Java's ``FileDeletionBase``: what a snapshot (or tag, or changelog) marked deleted,
which files a neighbouring tag or snapshot still uses (the *skippers*), and which manifests,
index files and statistics nothing retained references any more. Two rules decide here:

* **Never force.** Reads that decide what to *keep* (a tag's file set, the manifest skipping
  set) are strict: when they fail the caller skips the deletion. Reads that only find what
  to delete are tolerant: a manifest already deleted (by a concurrent or crashed run) leaves
  nothing to delete through it. A failed delete (other than "already gone") propagates, so
  the run stops before the next, dependent step and a re-run finishes the job.
* **Never outside the table.** Every name becomes a path through the table's
  :class:`~paimon_core.paths.PathFactory`, which refuses names and external paths that point
  outside the table (:class:`UnsafePathError`). That error is never taken for "delete less":
  it propagates from every tolerant read, and callers plan before they delete.
* **Outside the table only what the table wrote.** A DELETE entry naming a file under a
  ``data-file.external-paths`` root (outside the table directory) is deleted only when the
  snapshot's base has that path as an ADD entry (the table wrote the file there); the option is
  metadata, and a hand-written schema must not turn the confinement off; nor when that root lies
  inside another Paimon table (whose live files forged metadata could otherwise name). Any file
  under an external root must sit in Java's layout, ``<root>/<partition>/bucket-N/.../<name>``.
* **Never through a link.** A symbolic link below the table directory (a ``bucket-N``, partition,
  ``manifest/`` or ``index/`` directory that is a link) is never deleted through: the files
  there stay, a warning names the link (:attr:`FileDeleter.skipped_links`). A data file that is
  itself a link is deleted as a link (its target stays).
* **Bounded memory.** Paths stream through :class:`FileDeleter`, which deletes in batches on
  a small thread pool; nothing holds every path of a run.
"""

from __future__ import annotations

import logging
import posixpath
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.io.file_io import FileIO, join
from paimon_core.manifest.entries import FileKind, IndexFileMeta, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.path_confinement import canonical, check_file_name, confine, link_below, naming_snapshot
from paimon_core.paths import enclosing_table
from paimon_core.snapshot.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

Category = Literal[
    "data", "changelog", "manifest", "index", "statistics", "snapshot", "changelog_meta", "tag"
]
FileKey = tuple[bytes, int, str]  # (partition, bucket, file name): level-agnostic, for skippers
EntrySkipper = Callable[[ManifestEntry], bool]

DEFAULT_BATCH_SIZE = 1000
#: Categories living in the table's shared directories, which other branches may reference.
_SHARED: frozenset[str] = frozenset({"data", "changelog", "manifest", "index", "statistics"})
SAMPLE_LIMIT = 20


def check_int_argument(value: object, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``, else InvalidArgumentError naming ``name``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidArgumentError(f"{name} must be an integer >= {minimum}, got {value!r}", argument=name)
    return value


def _under(path: str, root: str) -> bool:
    """Whether the confined ``path`` lies under ``root`` (both normalised by the one parser)."""
    try:
        confine(path, [root], kind="data file")
    except UnsafePathError:
        return False
    return True


class FileDeleter:
    """Deletes paths in batches (or only counts them in a dry run), tallying per category.

    ``counts``/``bytes`` cover files this run really removed (a file already gone does not
    count), or in a dry run every file it would remove. ``sample`` keeps the first
    ``SAMPLE_LIMIT`` paths so a dry run can show what it would do without holding them all.
    """

    def __init__(
        self, file_io: FileIO, *, dry_run: bool, batch_size: int = DEFAULT_BATCH_SIZE, parallelism: int = 8
    ) -> None:
        self.file_io = file_io
        self.dry_run = dry_run
        self.batch_size = max(1, batch_size)
        self.parallelism = max(1, parallelism)
        self.counts: Counter[str] = Counter()
        self.bytes = 0
        self.sample: list[str] = []
        self._pending: list[tuple[Category, str, int]] = []
        self._pool: ThreadPoolExecutor | None = None
        #: Names of files other branches reference: never deleted here (set by FileDeletionBase).
        self.keep: frozenset[str] | None = None
        #: The table's directory and external roots (set by FileDeletionBase): nothing is deleted
        #: through a symbolic link below them (:func:`~paimon_core.path_confinement.link_below`).
        self.roots: tuple[str, ...] = ()
        #: Paths not deleted because a directory on the way is a symbolic link (logged, reported).
        self.skipped_links: list[str] = []
        self._dir_link: dict[str, str | None] = {}

    def __enter__(self) -> FileDeleter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def add(self, category: Category, path: str, size: int | None = 0) -> None:
        self._pending.append((category, path, size or 0))
        if len(self._pending) >= self.batch_size:
            self.flush()

    def add_all(self, items: Iterable[tuple[Category, str, int | None]]) -> None:
        for category, path, size in items:
            self.add(category, path, size)

    def delete_now(self, category: Category, path: str, size: int | None = 0) -> bool:
        """Delete one file immediately (after flushing what is pending, to keep the order)."""
        self.flush()
        self.add(category, path, size)
        before = self.counts[category]
        self.flush()
        return self.counts[category] > before

    def _delete_one(self, path: str) -> bool:
        try:
            return self.file_io.delete(path)
        except FileNotFoundError:
            return False

    def _through_link(self, path: str) -> bool:
        """Whether ``path`` lies below a symbolic link under the roots (cached per directory)."""
        parent = posixpath.dirname(path.rstrip("/"))
        if parent not in self._dir_link:
            link = link_below(self.file_io, parent, self.roots, include_self=True)
            self._dir_link[parent] = link
            if link is not None:
                logger.warning(
                    "Not deleting files in %s: %s is a symbolic link, and deleting through it would delete "
                    "files of the directory it points to (remove or replace the link by hand)",
                    parent,
                    link,
                )
        if self._dir_link[parent] is None:
            return False
        if len(self.skipped_links) < SAMPLE_LIMIT:
            self.skipped_links.append(path)
        return True

    def flush(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        if self.keep:
            batch = [b for b in batch if b[0] not in _SHARED or posixpath.basename(b[1]) not in self.keep]
        if self.roots:
            batch = [b for b in batch if not self._through_link(b[1])]
        if not batch:
            return
        if self.dry_run:
            done: Iterable[bool] = [True] * len(batch)
        elif len(batch) == 1 or self.parallelism == 1:
            done = [self._delete_one(path) for _, path, _ in batch]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.parallelism, thread_name_prefix="paimon-delete"
                )
            # A few futures per worker at a time: a future costs far more than a path.
            step = self.parallelism * 4
            done = []
            for i in range(0, len(batch), step):
                done += self._pool.map(self._delete_one, [path for _, path, _ in batch[i : i + step]])
        for (category, path, size), ok in zip(batch, done, strict=True):
            if ok:
                self.counts[category] += 1
                self.bytes += size
                if len(self.sample) < SAMPLE_LIMIT:
                    self.sample.append(path)
                logger.debug("%s %s file %s", "Would delete" if self.dry_run else "Deleted", category, path)


class RecentNames:
    """Names handled for this snapshot or the previous one.

    Manifests live over a contiguous run of snapshots, so remembering two generations
    de-duplicates consecutive snapshots' shared manifests without remembering the whole run.
    """

    def __init__(self) -> None:
        self._prev: set[str] = set()
        self._cur: set[str] = set()

    def first(self, name: str) -> bool:
        if name in self._cur or name in self._prev:
            return False
        self._cur.add(name)
        return True

    def advance(self) -> None:
        self._prev, self._cur = self._cur, set()


def read_tagged_snapshots(
    store: FileStore, *, exclude: Iterable[str] = ()
) -> list[tuple[Snapshot, list[str]]]:
    """Tagged snapshots by id with their tag names, minus ``exclude`` (Java's ``TagManager.tags()``).

    A tag deleted while listing is skipped; any other read failure raises, because a tag
    that cannot be read must never be treated as absent by a caller that deletes.
    """
    excluded = set(exclude)
    pairs = [
        (snap, [n for n in names if n not in excluded])
        for snap, names in store.tag_manager.tags_by_snapshot()
    ]
    return [(snap, names) for snap, names in pairs if names]


def find_previous(sorted_snapshots: Sequence[Snapshot], target_id: int, *, or_equal: bool = False) -> int:
    """Index of the last snapshot with id < target (<= with ``or_equal``), or -1."""
    for i in range(len(sorted_snapshots) - 1, -1, -1):
        sid = sorted_snapshots[i].id
        if sid < target_id or (or_equal and sid == target_id):
            return i
    return -1


def find_skipping_tags(sorted_tags: Sequence[Snapshot], begin: int, end_exclusive: int) -> list[Snapshot]:
    """Tags whose manifests expiring [begin, end) must keep (Java's ``findSkippingTags``)."""
    right = find_previous(sorted_tags, end_exclusive)
    if right < 0:
        return []
    left = max(find_previous(sorted_tags, begin, or_equal=True), 0)
    return list(sorted_tags[left : right + 1])


class FileDeletionBase:
    """Planning helpers over one table; subclasses decide which lists a deletion may touch."""

    def __init__(self, store: FileStore, deleter: FileDeleter) -> None:
        self.store = store
        self.file_io = store.file_io
        self.paths = store.paths
        self.deleter = deleter
        if deleter.keep is None:  # files other branches reference stay: read before any change
            from paimon_core.branch.branch_files import files_of_other_branches

            deleter.keep = files_of_other_branches(store)
        if not deleter.roots:
            deleter.roots = tuple(self.paths.roots)
        self.clean_empty_dirs = store.options.snapshot_clean_empty_directories
        self._deletion_buckets: set[tuple[bytes, int]] = set()
        self.bucket_dir = lru_cache(maxsize=4096)(store.bucket_path)
        self._external_add_cache: dict[str, frozenset[str]] = {}
        self._root_tables: dict[str, str | None] = {}
        self._canonical_roots: list[str] | None = None

    # --- paths ---------------------------------------------------------------------
    def data_file_path(self, e: ManifestEntry) -> str:
        """Where a data (or changelog) file is; under an external root only in the layout Java's
        ``ExternalPathProvider`` writes: ``<root>/<partition>/bucket-N/[entropy dirs/]<file name>``."""
        bucket_dir = self.bucket_dir(e.partition, e.bucket)
        path = self.paths.file_in_dir(bucket_dir, e.file.file_name, e.file.external_path)
        if e.file.external_path and self._outside_table(path):
            relative = bucket_dir[len(self.paths.table_path.rstrip("/")) + 1 :]
            if not any(path.startswith(f"{root}/{relative}/") for root in self._external_roots()):
                raise UnsafePathError(
                    f"Refusing data file path {e.file.external_path!r} from metadata: under an external data "
                    f"path a file lies in its partition's and bucket's directory ({relative}/)",
                    path=e.file.external_path,
                    kind="data file",
                )
        return path

    def _external_roots(self) -> list[str]:
        if self._canonical_roots is None:
            roots = []
            for root in self.paths.roots[1:]:
                try:
                    roots.append(canonical(root).rstrip("/"))
                except UnsafePathError:
                    continue  # another host: nothing is ever confined under it
            self._canonical_roots = roots
        return self._canonical_roots

    def data_file_paths(self, e: ManifestEntry) -> list[str]:
        """The data file and its extra files (which sit next to it: Java's ``toAlignedPath``)."""
        path = self.data_file_path(e)
        parent = posixpath.dirname(path)
        return [path, *(self.paths.file_in_dir(parent, x, kind="extra file") for x in e.file.extra_files)]

    def manifest_path(self, name: str) -> str:
        return self.paths.manifest_path(name)

    def index_file_path(self, meta: IndexFileMeta) -> str:
        if meta.external_path:
            return self.paths.confine(meta.external_path, kind="index file")
        return self.paths.index_file_path(meta.file_name)

    def statistics_path(self, name: str) -> str:
        return self.paths.statistics_path(name)

    # --- reading -------------------------------------------------------------------
    def read_manifest_list(self, name: str) -> list[ManifestFileMeta]:
        return read_manifest_list(self.file_io, self.manifest_path(name))

    def try_read_manifest_list(self, name: str) -> list[ManifestFileMeta]:
        """The list's manifests, or [] when it cannot be read (a crashed or concurrent run
        may have deleted it: there is then nothing left to delete through it)."""
        try:
            return self.read_manifest_list(name)
        except UnsafePathError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure only means "delete less"
            logger.warning("Cannot read manifest list %s of %s: %s", name, self.paths.table_path, e)
            return []

    def read_manifest(self, name: str) -> list[ManifestEntry]:
        return read_manifest_file(self.file_io, self.manifest_path(name))

    def live_file_keys(self, snapshot: Snapshot) -> set[FileKey]:
        """Every data file of a snapshot or tag; raises when any of its manifests is unreadable."""
        live: set[tuple[bytes, int, int, str]] = set()
        with naming_snapshot(snapshot.id):
            for list_name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
                for meta in self.read_manifest_list(list_name):
                    for e in self.read_manifest(meta.file_name):
                        key = (e.partition, e.bucket, e.file.level, e.file.file_name)
                        if e.kind == FileKind.ADD:
                            live.add(key)
                        else:
                            live.discard(key)
        return {(p, b, name) for p, b, _, name in live}

    def data_file_skipper(self, snapshots: Iterable[Snapshot]) -> EntrySkipper:
        """Skip files any of these snapshots uses (strict: raises when one cannot be read)."""
        keys: set[FileKey] = set()
        for snap in snapshots:
            keys |= self.live_file_keys(snap)
        return lambda e: (e.partition, e.bucket, e.file.file_name) in keys

    def manifest_skipping_set(
        self, snapshots: Iterable[Snapshot], *, tolerate_missing: bool = False
    ) -> set[str]:
        """Names of every manifest list, manifest, index manifest, index file and statistics
        file these snapshots use. Strict; ``tolerate_missing`` only forgives lists that are
        gone (Java's ``ChangelogDeletion.manifestSkippingSet``)."""
        skipping: set[str] = set()
        for snap in snapshots:
            with naming_snapshot(snap.id):
                self._add_skipping(snap, skipping, tolerate_missing)
        return skipping

    def _add_skipping(self, snap: Snapshot, skipping: set[str], tolerate_missing: bool) -> None:
        for list_name in (snap.base_manifest_list, snap.delta_manifest_list):
            try:
                metas = self.read_manifest_list(list_name)
            except FileNotFoundError:
                if not tolerate_missing:
                    raise
                continue
            skipping.add(list_name)
            skipping.update(m.file_name for m in metas)
        if snap.index_manifest is not None:
            try:
                index_entries = read_index_manifest(self.file_io, self.manifest_path(snap.index_manifest))
            except FileNotFoundError:
                if not tolerate_missing:
                    raise
                index_entries = []
            skipping.add(snap.index_manifest)
            skipping.update(e.index_file.file_name for e in index_entries)
        if snap.statistics is not None:
            skipping.add(check_file_name(snap.statistics, kind="statistics file"))

    # --- planning --------------------------------------------------------------------
    def plan_deleted_in_delta(
        self, snapshot: Snapshot, skip: EntrySkipper
    ) -> list[tuple[Category, str, int]]:
        """Data files the snapshot's delta marked DELETE (and did not re-ADD, e.g. a level
        upgrade), minus skipped ones. Any read failure cancels the snapshot's deletions."""
        deleted: dict[str, ManifestEntry] = {}
        added: set[str] = set()
        try:
            for meta in self.try_read_manifest_list(snapshot.delta_manifest_list):
                for entry in self.read_manifest(meta.file_name):
                    path = self.data_file_path(entry)
                    if entry.kind == FileKind.ADD:
                        added.add(path)
                    else:
                        deleted[path] = entry
        except UnsafePathError:
            raise
        except Exception as err:  # noqa: BLE001 - cancel rather than guess
            logger.warning(
                "Cannot read the delta of snapshot %d of %s, not deleting its files: %s",
                snapshot.id,
                self.paths.table_path,
                err,
            )
            return []
        out: list[tuple[Category, str, int]] = []
        external = [p for p, e in deleted.items() if p not in added and self._outside_table(p)]
        unconfirmed = self._check_written_by_table(snapshot, external) if external else set()
        for key, e in deleted.items():
            if key in added or key in unconfirmed or skip(e):
                continue
            self._deletion_buckets.add((e.partition, e.bucket))
            path, *extras = self.data_file_paths(e)
            out.append(("data", path, e.file.file_size))
            out.extend(("data", extra, 0) for extra in extras)
        return out

    def _outside_table(self, path: str) -> bool:
        """Whether ``path`` (confined: under the table or an external root) is under an external root."""
        return not path.startswith(self.paths.table_path.rstrip("/") + "/") and path != self.paths.table_path

    def _external_adds(self, manifest_name: str) -> frozenset[str]:
        """Paths of the ADD entries of one manifest that lie under an external root (cached:
        manifests never change, and consecutive snapshots share most of their base)."""
        cached = self._external_add_cache.get(manifest_name)
        if cached is None:
            cached = frozenset(
                p
                for e in self.read_manifest(manifest_name)
                if e.kind == FileKind.ADD and e.file.external_path
                for p in (self.data_file_path(e),)
                if self._outside_table(p)
            )
            if len(self._external_add_cache) >= 4096:
                self._external_add_cache.clear()
            self._external_add_cache[manifest_name] = cached
        return cached

    def _check_root_of(self, path: str) -> None:
        """:class:`UnsafePathError` when the external root ``path`` lies under is inside another
        Paimon table (a directory with ``schema/schema-N``, at the root or an ancestor): metadata
        naming such a root would delete that table's live files."""
        for root in self.paths.roots[1:]:
            if not _under(path, root):
                continue
            if root not in self._root_tables:
                self._root_tables[root] = enclosing_table(self.file_io, root)
            table = self._root_tables[root]
            if table is not None:
                raise UnsafePathError(
                    f"Refusing to delete {path}: its external data path {root} lies inside the Paimon table at "
                    f"{table}, whose files this table never owns",
                    path=path,
                    kind="data file",
                )
            return

    def _check_written_by_table(self, snapshot: Snapshot, paths: Sequence[str]) -> set[str]:
        """A DELETE entry naming a file under an external root (outside the table directory) is
        deleted only when the snapshot's base (the table as the previous snapshot left it) has
        that very path as an ADD: the table wrote it there. The ``data-file.external-paths``
        option is metadata, so a hand-written schema plus a DELETE entry would otherwise delete
        any file of any directory. A path the readable base does not name is
        :class:`UnsafePathError` (nothing deleted); when the base cannot be read the paths are
        returned: kept (not deleting is always safe), with a warning."""
        written: set[str] = set()
        with naming_snapshot(snapshot.id):
            for path in paths:
                self._check_root_of(path)
            try:
                for meta in self.read_manifest_list(snapshot.base_manifest_list):
                    written |= self._external_adds(meta.file_name)
                    if all(p in written for p in paths):
                        return set()
            except UnsafePathError:
                raise
            except Exception as err:  # noqa: BLE001 - unproven: keep the files
                logger.warning(
                    "Cannot read the base of snapshot %d of %s, not deleting its %d file(s) outside the table "
                    "directory: %s",
                    snapshot.id,
                    self.paths.table_path,
                    len(paths),
                    err,
                )
                return set(paths)
            missing = [p for p in paths if p not in written]
            raise UnsafePathError(
                f"Refusing to delete {len(missing)} data file(s) outside the table directory, e.g. {missing[0]}: "
                "no ADD entry of the table's previous snapshot names it, so the table did not write it there",
                path=missing[0],
                kind="data file",
            )

    def plan_added_in_changelog(self, snapshot: Snapshot) -> Iterator[tuple[Category, str, int]]:
        """The changelog files a snapshot (or changelog) added; unreadable manifests are skipped."""
        if snapshot.changelog_manifest_list is None:
            return
        for meta in self.try_read_manifest_list(snapshot.changelog_manifest_list):
            try:
                entries = self.read_manifest(meta.file_name)
            except UnsafePathError:
                raise
            except Exception as e:  # noqa: BLE001 - already deleted: nothing to do through it
                logger.info("Cannot read changelog manifest %s: %s", meta.file_name, e)
                continue
            for entry in entries:
                if entry.kind == FileKind.ADD:
                    self._deletion_buckets.add((entry.partition, entry.bucket))
                    path, *extras = self.data_file_paths(entry)
                    yield ("changelog", path, entry.file.file_size)
                    yield from (("changelog", extra, 0) for extra in extras)

    def plan_unused_list(
        self, list_name: str, list_size: int | None, skipping: set[str], recent: RecentNames
    ) -> tuple[list[tuple[Category, str, int | None]], list[tuple[Category, str, int | None]]]:
        """(manifests, the list itself) not in ``skipping`` and not handled just before."""
        children: list[tuple[Category, str, int | None]] = []
        for meta in self.try_read_manifest_list(list_name):
            if meta.file_name not in skipping and recent.first(meta.file_name):
                children.append(("manifest", self.manifest_path(meta.file_name), meta.file_size))
        parent: list[tuple[Category, str, int | None]] = []
        if list_name not in skipping and recent.first(list_name):
            parent.append(("manifest", self.manifest_path(list_name), list_size))
        return children, parent

    def plan_unused_index_and_statistics(
        self, snapshot: Snapshot, skipping: set[str], recent: RecentNames
    ) -> tuple[list[tuple[Category, str, int | None]], list[tuple[Category, str, int | None]]]:
        """(index files and statistics, the index manifest) nothing retained uses."""
        children: list[tuple[Category, str, int | None]] = []
        parent: list[tuple[Category, str, int | None]] = []
        name = snapshot.index_manifest
        if name is not None:
            try:
                entries = read_index_manifest(self.file_io, self.manifest_path(name))
            except UnsafePathError:
                raise
            except Exception as e:  # noqa: BLE001 - gone or unreadable: delete nothing through it
                logger.info("Cannot read index manifest %s of %s: %s", name, self.paths.table_path, e)
                entries = None
            if entries is not None:
                for entry in entries:
                    f = entry.index_file
                    if f.file_name not in skipping and recent.first(f.file_name):
                        children.append(("index", self.index_file_path(f), f.file_size))
                if name not in skipping and recent.first(name):
                    parent.append(("manifest", self.manifest_path(name), None))
        stats = snapshot.statistics
        if stats is not None and stats not in skipping and recent.first(stats):
            children.append(("statistics", self.statistics_path(stats), None))
        return children, parent

    # --- directories -------------------------------------------------------------------
    def clean_empty_directories(self) -> None:
        """Remove bucket and partition directories emptied by this run
        (``snapshot.clean-empty-directories``; Java's ``cleanEmptyDirectories``)."""
        buckets, self._deletion_buckets = self._deletion_buckets, set()
        if not self.clean_empty_dirs or self.deleter.dry_run or not buckets:
            return
        partitions: set[str] = set()
        for partition, bucket in buckets:
            self._try_delete_empty_dir(self.bucket_dir(partition, bucket))
            parts = self.store.partition_path(partition).split("/")
            partitions.update("/".join(parts[: i + 1]) for i in range(len(parts)) if parts[0])
        for rel in sorted(partitions, key=lambda p: p.count("/"), reverse=True):
            self._try_delete_empty_dir(join(self.paths.table_path, rel))

    def _try_delete_empty_dir(self, path: str) -> None:
        try:
            if link_below(self.file_io, path, self.paths.roots, include_self=True) is not None:
                return  # a link (or a directory below one) is left alone: never deleted through
            if not self.file_io.list_status(path) and self.file_io.exists(path):
                self.file_io.delete(path)
        except OSError as e:  # not empty after all (a writer raced us), or a store without dirs
            logger.debug("Did not delete directory %s: %s", path, e)
