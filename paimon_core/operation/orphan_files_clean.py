"""Delete files no snapshot, tag or long-lived changelog of any branch references.

Mirrors Java's ``OrphanFilesClean`` (the age cutoff, branch validation) and
``LocalOrphanFilesClean`` (the single-process run); ``spark_jobs.remove_orphan_files`` reuses the
pieces for its distributed run. Candidates (see :mod:`orphan_candidates`) are the files of the
data, manifest, index, statistics directories and the non-snapshot files of each branch's
snapshot and changelog directories; references are read by :mod:`referenced_files`.

A candidate is an orphan when nothing references it, no commit in flight announced it
(:mod:`paimon_core.operation.commit.pending_commits`) and its modification time is older than the
cutoff. Candidates are listed *before* the references are read, so a commit that lands meanwhile
is seen by the reference read (Paimon issue #3074), and files newer than the cutoff are never
touched. A commit that lands after the read is handled by the delete, which never deletes a file
where it lies (:mod:`orphan_trash`): orphans are moved into ``_orphan_trash/<run>``, the pending
commits and the references of every snapshot, tag and branch that appeared since are read again,
files now referenced are moved back, and only the rest is deleted. So no commit that returns
success loses a file, whatever ``older_than`` and ``force`` say (the cutoff still keeps files of
writes in progress from being moved, which would fail their commit). A root file that vanished
while being read is skipped; any other failure to read what is referenced raises
:class:`OrphanCleanAbortedError` before anything is deleted (after the move: everything moved is
moved back first). Directories are never deleted, except data directories left empty.

Memory: the old-enough candidates of the table (one ``FileStatus`` each) and the referenced
names among them; for tables with millions of files use the Spark job.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from paimon_core.exceptions import InvalidArgumentError, OrphanCleanAbortedError, PaimonError
from paimon_core.io.file_io import FileIO, FileStatus
from paimon_core.io.resolve import scheme_of
from paimon_core.operation.commit.pending_commits import PendingFiles, read_pending
from paimon_core.operation.orphan_candidates import (
    CandidateDir,
    list_candidate_files,
    plan_candidate_dirs,
    prune_empty_dirs,
)
from paimon_core.operation.orphan_trash import (
    Trashed,
    check_trash_root,
    list_trash,
    move_to_trash,
    new_run_id,
    prune_trash,
    purge,
    purge_run,
    restore,
    root_of,
    trash_path,
)
from paimon_core.operation.referenced_files import (
    MAIN_BRANCH,
    ReferenceReader,
    RootRefs,
    branch_path,
    collect_roots,
    list_branches,
    parallel_map,
)
from paimon_core.paths import PathFactory
from paimon_core.results import _ToDict
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
    from paimon_core.store.file_store import FileStore

__all__ = [
    "DEFAULT_OLDER_THAN_MILLIS",
    "DEFAULT_REMOTE_PARALLELISM",
    "MAX_REPORTED_PATHS",
    "SAFE_MIN_AGE_MILLIS",
    "OrphanFilesClean",
    "OrphanFilesCleanResult",
    "clean_database",
    "ReadState",
    "combine_results",
    "resolve_older_than",
    "valid_branches",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_OLDER_THAN_MILLIS = 86_400_000  # 1 day, as Java
SAFE_MIN_AGE_MILLIS = 3_600_000  # a cutoff closer to now than this needs force=True
MAX_REPORTED_PATHS = 1000
#: Threads for listing and reading on an object store (latency-bound). On a local file system
#: the work is CPU-bound under the GIL (stat, Avro decoding), and threads only contend: one.
DEFAULT_REMOTE_PARALLELISM = 8


@dataclass(frozen=True)
class OrphanFilesCleanResult(_ToDict):
    """Outcome of one orphan clean (``deleted_*`` count what would go in a dry run)."""

    table: str
    deleted_paths: tuple[str, ...]  # sorted, the first MAX_REPORTED_PATHS only
    deleted_file_count: int
    deleted_bytes: int
    candidates_scanned: int  # files listed in the candidate directories
    older_than_millis: int
    dry_run: bool


@dataclass
class ReadState:
    """What a reference read covered: the roots (by content) and the manifests it read, so a
    second read only reads what appeared since."""

    root_keys: set[tuple[tuple[str, ...], str | None, str | None]] = field(default_factory=set)
    manifests: set[str] = field(default_factory=set)


# --- arguments and branches -----------------------------------------------------------------


def resolve_older_than(older_than: TimePoint | None, now_millis: int, *, force: bool = False) -> int:
    """The cutoff in epoch millis: ``now - 1 day`` by default; a cutoff that is not in the past
    is refused, one less than an hour ago only with ``force``."""
    if older_than is None:
        return now_millis - DEFAULT_OLDER_THAN_MILLIS
    cutoff = to_epoch_millis(older_than, name="older_than")
    if cutoff >= now_millis:
        raise InvalidArgumentError(
            f"older_than ({older_than!r}) must be in the past (now is {now_millis}): files being "
            "written right now are not referenced yet and would be deleted",
            argument="older_than",
        )
    if now_millis - cutoff < SAFE_MIN_AGE_MILLIS and not force:
        raise InvalidArgumentError(
            f"older_than ({older_than!r}) is less than 1 hour ago: in-flight writes could lose files; "
            "pass force=True (--force) if no job writes to the table",
            argument="older_than",
        )
    return cutoff


def default_parallelism(table_path: str) -> int:
    """Threads of a clean when none is given: 1 on a local file system, else
    :data:`DEFAULT_REMOTE_PARALLELISM`."""
    return 1 if scheme_of(table_path) in ("file", "local") else DEFAULT_REMOTE_PARALLELISM


def valid_branches(file_io: FileIO, table_path: str) -> list[str]:
    """``main`` plus every branch; aborts when a branch has no schema (Java's validBranches)."""
    branches = list_branches(file_io, table_path)
    broken = [
        b for b in branches if not SchemaManager(file_io, PathFactory(branch_path(table_path, b))).list_ids()
    ]
    if broken:
        raise OrphanCleanAbortedError(
            f"Branches {broken} of {table_path} have no schema: orphan clean aborted, nothing deleted. "
            "Check these branches by hand.",
            branches=broken,
        )
    return [MAIN_BRANCH, *branches]


# --- the local run --------------------------------------------------------------------------


class OrphanFilesClean:
    """Single-process orphan clean of one table (threads for listing and reading on object
    stores: ``parallelism``, default :func:`default_parallelism`).

    ``clean()`` first lists the candidates (only the old enough ones are kept, as
    ``FileStatus``), then reads the pending commits and the references into a set of file names
    restricted to the candidates' names, then deletes the difference through the trash
    (:meth:`delete_safely`).
    """

    def __init__(
        self,
        store: FileStore,
        *,
        parallelism: int | None = None,
        clean_empty_dirs: bool = True,
        vanish_checks: int = 3,
        vanish_wait_seconds: float = 0.5,
    ) -> None:
        if parallelism is not None and parallelism < 1:
            raise InvalidArgumentError(f"parallelism must be >= 1, got {parallelism}", argument="parallelism")
        self.store = store
        self.parallelism = parallelism or default_parallelism(store.path)
        self.clean_empty_dirs = clean_empty_dirs
        self.reader = ReferenceReader(
            store.file_io, store.path, vanish_checks=vanish_checks, vanish_wait_seconds=vanish_wait_seconds
        )

    def clean(
        self, *, older_than: TimePoint | None = None, dry_run: bool = False, force: bool = False
    ) -> OrphanFilesCleanResult:
        """Delete (or, with ``dry_run``, only report) the orphan files older than ``older_than``."""
        store = self.store
        cutoff = resolve_older_than(older_than, store.clock.now_millis(), force=force)
        started = time.monotonic()
        branches = valid_branches(store.file_io, store.path)
        dirs = plan_candidate_dirs(store, branches)
        # 1. candidates first ...
        listed = parallel_map(list_candidate_files, dirs, self.parallelism)
        listed_count = [len(x) for x in listed]
        scanned = sum(listed_count)
        empty = {i for i, x in enumerate(listed) if not x and dirs[i].mtime_millis < cutoff}
        candidates = [
            (i, s) for i, statuses in enumerate(listed) for s in statuses if s.mtime_millis < cutoff
        ]
        del listed
        names = [s.path[s.path.rfind("/") + 1 :] for _, s in candidates]  # FileStatus.name, without its strip
        ios = None if dry_run else self.trash_ios(dirs)
        leftovers = [] if ios is None else self.leftovers(ios)
        # 2. ... then what commits in flight add and what is referenced: a commit that landed
        # meanwhile is seen here.
        pending = self.pending()
        state = ReadState()
        referenced = self.referenced_names(
            branches, keep=set(names).union(t.name for t, _ in leftovers), state=state
        )
        orphans = sorted(
            (c for c, name in zip(candidates, names, strict=True) if name not in referenced and not pending.holds(name)),
            key=lambda x: x[1].path,
        )
        needed = [(t, io) for t, io in leftovers if t.name in referenced or pending.holds(t.name)]
        for t, io in needed:
            logger.warning("Orphan clean of %s: moving %s back from an earlier run's trash", store.name, t.original)
            restore(io, t)
        del candidates, referenced, names
        # 3. delete: moved aside, checked again, then deleted
        if dry_run:
            deleted = orphans
        else:
            moved_back = {t.trash for t, _ in needed}
            rest = [x for x in leftovers if x[0].trash not in moved_back]
            deleted = self.delete_safely(dirs, orphans, state, leftovers=rest, ios=ios)
        if not dry_run and self.clean_empty_dirs:
            # Only a directory all of whose listed files are gone now can have become empty (one
            # still holding a file it listed is not re-listed just to find that out).
            deleted_in = Counter(i for i, _ in deleted if i >= 0)
            prune = empty | {i for i, n in deleted_in.items() if n == listed_count[i]}
            prune_empty_dirs(dirs[i] for i in sorted(prune))
        result = OrphanFilesCleanResult(
            table=store.name,
            deleted_paths=tuple(s.path for _, s in deleted[:MAX_REPORTED_PATHS]),
            deleted_file_count=len(deleted),
            deleted_bytes=sum(s.size for _, s in deleted),
            candidates_scanned=scanned,
            older_than_millis=cutoff,
            dry_run=dry_run,
        )
        logger.info(
            "Orphan clean of %s%s: %d of %d files (%d bytes) older than %d %s in %.1fs",
            store.name,
            " (dry run)" if dry_run else "",
            result.deleted_file_count,
            scanned,
            result.deleted_bytes,
            cutoff,
            "found" if dry_run else "deleted",
            time.monotonic() - started,
        )
        return result

    def pending(self) -> PendingFiles:
        """The files commits in flight announced (see :mod:`.commit.pending_commits`)."""
        return read_pending(self.store.file_io, self.store.path)

    def referenced_names(
        self,
        branches: Sequence[str],
        *,
        keep: Callable[[str], bool] | Set[str] | None = None,
        state: ReadState | None = None,
    ) -> set[str]:
        """Names of every file any root of ``branches`` references (only those ``keep`` accepts,
        or, a set, contains). ``state``: roots and manifests already read (skipped), updated
        with those read now.

        Raises :class:`OrphanCleanAbortedError` when something referenced cannot be read.
        """
        store = self.store
        try:
            roots = collect_roots(store.file_io, store.path, branches, parallelism=self.parallelism)
            if state is not None:
                roots = [r for r in roots if r.key not in state.root_keys]
                state.root_keys.update(r.key for r in roots)
            return self._referenced(roots, keep, state)
        except OrphanCleanAbortedError:
            raise
        except Exception as e:
            raise OrphanCleanAbortedError(
                f"Orphan clean of {store.name} aborted, nothing deleted: cannot read what the table "
                f"references: {type(e).__name__}: {e}",
                table=store.name,
            ) from e

    def _referenced(
        self, roots: list[RootRefs], keep: Callable[[str], bool] | Set[str] | None, state: ReadState | None = None
    ) -> set[str]:
        referenced: set[str] = set()
        # The last (most durable) root naming a manifest is re-checked if it is missing.
        manifest_root: dict[str, int] = {}
        for start, named in self._chunks(self.reader.root_files, roots):
            for offset, refs in enumerate(named):
                for name, is_manifest in refs or ():
                    if is_manifest:
                        manifest_root[name] = start + offset
                referenced.update(_kept([name for name, _ in refs or ()], keep))
        if state is not None:
            for name in state.manifests.intersection(manifest_root):
                del manifest_root[name]  # read before: its files are in the earlier answer
            state.manifests.update(manifest_root)

        def data_files(item: tuple[str, int]) -> list[str] | None:
            return self.reader.manifest_files(item[0], roots[item[1]])

        for _, chunk in self._chunks(data_files, list(manifest_root.items())):
            for files in chunk:
                referenced.update(_kept(files or (), keep))
        return referenced

    def _chunks(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, list[R]]]:
        """``fn`` over ``items`` in parallel, one bounded chunk of results in memory at a time."""
        size = max(64, self.parallelism * 8)
        for start in range(0, len(items), size):
            yield start, parallel_map(fn, items[start : start + size], self.parallelism)

    def trash_ios(self, dirs: Sequence[CandidateDir]) -> dict[str, FileIO]:
        """The trash's root (the table directory: candidates are never elsewhere) and FileIO;
        refuses a trash directory that is a link."""
        ios = {self.store.path: candidate_io(dirs, self.store.path, self.store.file_io)}
        for root, io in ios.items():
            check_trash_root(io, root)
        return ios

    def leftovers(self, ios: dict[str, FileIO]) -> list[tuple[Trashed, FileIO]]:
        """Files earlier runs left in the trash (they died between moving and deleting). Listed
        before the reference reads, whose verdict then holds for them as for this run's moves."""
        return [(t, io) for root, io in ios.items() for t in list_trash(io, root)]

    def delete_safely(
        self,
        dirs: Sequence[CandidateDir],
        orphans: list[tuple[int, FileStatus]],
        state: ReadState,
        *,
        leftovers: Sequence[tuple[Trashed, FileIO]] = (),
        ios: dict[str, FileIO] | None = None,
    ) -> list[tuple[int, FileStatus]]:
        """Move ``orphans`` into this run's trash, read again, move back what is referenced or
        announced now, delete the rest; returns what was deleted (index -1: ``leftovers``, files
        an earlier run left in the trash that the first read did not find referenced).
        ``state``: what the first reference read covered."""
        store = self.store
        ios = ios if ios is not None else self.trash_ios(dirs)
        roots = tuple(ios)
        run_id = new_run_id()
        items: list[tuple[int, Trashed, FileIO]] = [(-1, t, io) for t, io in leftovers]

        def move(item: tuple[int, FileStatus]) -> tuple[int, Trashed, FileIO] | None:
            i, status = item
            if status.is_dir:  # never: candidates are files; kept as a last guard
                logger.error("Refusing to delete directory %s in orphan clean", status.path)
                return None
            root = root_of(status.path, roots)
            if root is None:
                logger.error("Refusing to delete %s in orphan clean: not under %s", status.path, list(roots))
                return None
            trashed = Trashed(trash_path(root, run_id, status.path), status.path, status.size)
            return (i, trashed, dirs[i].file_io) if move_to_trash(dirs[i].file_io, status.path, trashed.trash) else None

        items += [m for m in parallel_map(move, orphans, self.parallelism) if m is not None]
        if not items:
            for root in roots:
                prune_trash(ios[root], root)
            return []
        # Read again, after the move: what commits in flight announce, then every root that
        # appeared since the first read (a commit, tag or branch landed meanwhile).
        try:
            pending = self.pending()
            branches = [MAIN_BRANCH, *list_branches(store.file_io, store.path)]
            again = self.referenced_names(branches, keep={t.name for _, t, _ in items}, state=state)
        except Exception:
            undone = sum(restore(io, t) for _, t, io in items)
            logger.error("Orphan clean of %s: the second reference read failed; moved %d files back", store.name, undone)
            prune_trash(store.file_io, store.path, [run_id])
            raise
        back = [(t, io) for _, t, io in items if t.name in again or pending.holds(t.name)]
        stuck = [t for t, io in back if not restore(io, t)]  # logged; left for the next run
        if back:
            logger.warning(
                "Orphan clean of %s: %d moved files became referenced meanwhile (a commit landed); moved back",
                store.name,
                len(back),
            )
        restored = {t.trash for t, _ in back}
        rest = [(i, t, io) for i, t, io in items if t.trash not in restored]
        own = [x for x in rest if x[0] >= 0]
        if own and not stuck and purge_run(ios[store.path], store.path, run_id):
            # This run's directory holds only files found unreferenced now: one recursive delete
            # (on an object store: a listing and bulk deletes instead of one request per file).
            ok = [x[0] >= 0 or purge(x[2], x[1]) for x in rest]
        else:
            ok = parallel_map(lambda x: purge(x[2], x[1]), rest, self.parallelism)
        for root in roots:
            prune_trash(ios[root], root)
        deleted = [(i, FileStatus(t.original, t.size, 0, False)) for (i, t, _), done in zip(rest, ok, strict=True) if done]
        return sorted(deleted, key=lambda x: x[1].path)


def candidate_io(dirs: Sequence[CandidateDir], root: str, default: FileIO) -> FileIO:
    """The FileIO of the candidate directories under ``root`` (an external root may have its own)."""
    for d in dirs:
        if d.path.startswith(root.rstrip("/") + "/"):
            return d.file_io
    return default


def _kept(names: Iterable[str], keep: Callable[[str], bool] | Set[str] | None) -> Iterable[str]:
    """The names ``keep`` accepts (a set: contains, in C for a built-in set)."""
    if keep is None:
        return names
    if isinstance(keep, (set, frozenset)):
        return keep.intersection(names)
    if isinstance(keep, Set):
        return [n for n in names if n in keep]
    return [n for n in names if keep(n)]


# --- several tables -------------------------------------------------------------------------


def combine_results(results: Sequence[OrphanFilesCleanResult], *, table: str) -> OrphanFilesCleanResult:
    """One result over several tables (``db.*``): sums, and the first paths in path order."""
    paths = sorted(p for r in results for p in r.deleted_paths)[:MAX_REPORTED_PATHS]
    return OrphanFilesCleanResult(
        table=table,
        deleted_paths=tuple(paths),
        deleted_file_count=sum(r.deleted_file_count for r in results),
        deleted_bytes=sum(r.deleted_bytes for r in results),
        candidates_scanned=sum(r.candidates_scanned for r in results),
        older_than_millis=results[0].older_than_millis if results else 0,
        dry_run=results[0].dry_run if results else True,
    )


def clean_database(
    catalog: FileSystemCatalog,
    database: str,
    *,
    older_than: TimePoint | None = None,
    dry_run: bool = False,
    force: bool = False,
    parallelism: int | None = None,
) -> list[OrphanFilesCleanResult]:
    """Orphan clean of every table of a database (``db.*``), one cutoff for all.

    A table whose clean aborts does not stop the others; afterwards the first failure is
    raised as :class:`OrphanCleanAbortedError` naming every failed table.
    """
    cutoff = resolve_older_than(older_than, catalog.clock.now_millis(), force=force)
    results: list[OrphanFilesCleanResult] = []
    failed: dict[str, PaimonError] = {}
    for name in catalog.list_tables(database):
        identifier = f"{database}.{name}"
        try:
            table = catalog.get_table(identifier)
            results.append(
                OrphanFilesClean(table.store, parallelism=parallelism).clean(
                    older_than=cutoff, dry_run=dry_run, force=True
                )
            )
        except PaimonError as e:
            logger.error("Orphan clean of %s failed: %s", identifier, e)
            failed[identifier] = e
    if failed:
        done = combine_results(results, table=f"{database}.*")
        raise OrphanCleanAbortedError(
            f"Orphan clean failed for {sorted(failed)} (nothing deleted in those); "
            f"{len(results)} other table(s) cleaned ({done.deleted_file_count} files): "
            + "; ".join(f"{t}: {e}" for t, e in sorted(failed.items())),
            tables=sorted(failed),
        ) from next(iter(failed.values()))
    return results
