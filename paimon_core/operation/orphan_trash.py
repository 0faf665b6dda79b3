"""Where an orphan clean puts its candidates before it deletes them: ``<root>/_orphan_trash/<run>/``.

An orphan clean never deletes a file where it lies. It moves each unreferenced candidate to
``<table>/_orphan_trash/<run-id>/<path below the table directory>`` (orphan cleanup lists
nothing outside the table directory, so the trash is always inside it; the functions take the
roots to look in), reads the pending commits and the
references again, moves back every file that something now names, and deletes the rest from
the trash (see :mod:`paimon_core.operation.commit.pending_commits` for why that order makes it
impossible for a successful commit to lose a file).

* A run that dies between the move and the delete leaves its trash: the next run treats every
  file of an earlier run's trash as moved by itself (listed before its own reference read, so the
  same verdict applies), restores what is referenced and deletes the rest.
* A commit that finds a file gone after it published (:func:`restore_from_trash`) looks for it
  here and moves it back.
* The directory starts with ``_``: it is not a partition (``k=v``) or bucket directory, so
  neither Paimon readers (Java, pypaimon) nor the orphan listing ever look into it. A trash
  directory that is a symbolic link is refused, and no link inside it is followed.

Cost: a rename per candidate on a file system. On an object store ``FileIO.rename`` is a
server-side copy and a delete, so a deleted orphan costs a copy and two deletes instead of one
delete (no bytes pass through this process; a copy of a file over 5 GB is a multipart copy).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import OrphanCleanAbortedError, PaimonError
from paimon_core.io.file_io import FileIO, join

__all__ = [
    "TRASH_DIR",
    "Trashed",
    "check_trash_root",
    "find_in_trash",
    "list_trash",
    "move_to_trash",
    "new_run_id",
    "not_missing",
    "prune_trash",
    "purge",
    "purge_run",
    "restore",
    "restore_from_trash",
    "root_of",
    "trash_path",
]

logger = logging.getLogger(__name__)

TRASH_DIR = "_orphan_trash"


@dataclass(frozen=True, slots=True)
class Trashed:
    """One file in the trash: where it lies now and where it came from."""

    trash: str
    original: str
    size: int

    @property
    def name(self) -> str:
        return self.original[self.original.rfind("/") + 1 :]


def new_run_id(now_millis: int | None = None) -> str:
    """A fresh run directory name: ``<epoch millis>-<random>`` (sorts by start time)."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    return f"{now}-{uuid.uuid4().hex[:12]}"


def trash_root(root: str) -> str:
    return join(root, TRASH_DIR)


def root_of(path: str, roots: Sequence[str]) -> str | None:
    """The longest of ``roots`` that ``path`` lies under (None: under none of them)."""
    best: str | None = None
    for r in roots:
        r = r.rstrip("/")
        if path.startswith(r + "/") and (best is None or len(r) > len(best)):
            best = r
    return best


def trash_path(root: str, run_id: str, original: str) -> str:
    """Where ``original`` (a file under ``root``) goes in run ``run_id``'s trash."""
    return join(trash_root(root), run_id, original[len(root.rstrip("/")) + 1 :])


def check_trash_root(file_io: FileIO, root: str) -> None:
    """Refuse a trash directory that is a symbolic link (nothing is moved or deleted through it)."""
    base = trash_root(root)
    if file_io.is_symlink(base):
        raise OrphanCleanAbortedError(
            f"Orphan clean aborted, nothing deleted: {base} is a symbolic link; remove it by hand",
            path=base,
        )


def move_to_trash(file_io: FileIO, original: str, trash: str) -> bool:
    """Move one candidate aside; True when it lies at ``trash`` now (also when an earlier attempt
    of the same move did it: a retried Spark task), False when it is gone or cannot be moved."""
    try:
        file_io.rename(original, trash)
        return True
    except FileNotFoundError:
        return file_io.exists(trash)
    except (OSError, PaimonError) as e:
        logger.warning("Could not move orphan file %s aside: %s", original, e)
        return False


def restore(file_io: FileIO, item: Trashed) -> bool:
    """Move a file back from the trash. True when it is back (also when it already was:
    a move that died between its link and its unlink leaves both names)."""
    try:
        file_io.rename(item.trash, item.original)
        return True
    except FileExistsError:
        purge(file_io, item)
        return True
    except FileNotFoundError:
        return file_io.exists(item.original)
    except (OSError, PaimonError) as e:  # left in the trash: the next run or the commit moves it back
        logger.error("Could not move %s back from the orphan trash (%s): %s", item.original, item.trash, e)
        return False


def purge(file_io: FileIO, item: Trashed) -> bool:
    """Delete a file from the trash (False: gone already, or it cannot be deleted now)."""
    try:
        return file_io.delete(item.trash)
    except (OSError, PaimonError) as e:
        logger.warning("Could not delete %s from the orphan trash: %s", item.trash, e)
        return False


def purge_run(file_io: FileIO, root: str, run_id: str) -> bool:
    """Delete a run's whole trash directory (every file in it must be found unreferenced);
    False when that failed (the caller deletes file by file)."""
    try:
        file_io.delete(join(trash_root(root), run_id), recursive=True)
        return True
    except (OSError, PaimonError) as e:
        logger.warning("Could not delete the orphan trash of run %s at once: %s", run_id, e)
        return False


def _walk(file_io: FileIO, directory: str) -> Iterable[tuple[str, int]]:
    """(path, size) of every file below ``directory``; symbolic links are never followed."""
    for st in file_io.list_status(directory):
        if file_io.is_symlink(st.path):
            logger.warning("Ignoring symbolic link %s in the orphan trash", st.path)
            continue
        if st.is_dir:
            yield from _walk(file_io, st.path)
        else:
            yield st.path, st.size


def list_trash(file_io: FileIO, root: str, *, exclude_run: str | None = None) -> list[Trashed]:
    """Every file in ``root``'s trash except run ``exclude_run``'s (left by runs that died)."""
    base = trash_root(root)
    check_trash_root(file_io, root)
    out: list[Trashed] = []
    for run in file_io.list_dirs(base):
        if run.name == exclude_run:
            continue
        prefix = join(base, run.name) + "/"
        for path, size in _walk(file_io, run.path):
            out.append(Trashed(path, join(root, path[len(prefix) :]), size))
    return out


def prune_trash(file_io: FileIO, root: str, run_ids: Iterable[str] | None = None) -> None:
    """Remove the empty directories of ``root``'s trash runs (``run_ids``; None: every run)
    and the trash directory itself when it is empty. Never removes a file."""
    base = trash_root(root)
    runs = [s.path for s in file_io.list_dirs(base)] if run_ids is None else [join(base, r) for r in run_ids]
    for run in runs:
        _prune_tree(file_io, run)
    _remove_if_empty(file_io, base)


def _prune_tree(file_io: FileIO, directory: str) -> None:
    for st in file_io.list_dirs(directory):
        if not file_io.is_symlink(st.path):
            _prune_tree(file_io, st.path)
    _remove_if_empty(file_io, directory)


def _remove_if_empty(file_io: FileIO, directory: str) -> None:
    try:
        if not file_io.list_status(directory):
            file_io.delete(directory, recursive=False)
    except Exception as e:  # noqa: BLE001 - an empty directory left over is harmless
        logger.debug("Could not remove empty directory %s: %s", directory, e)


def find_in_trash(file_io: FileIO, roots: Sequence[str], paths: Sequence[str]) -> dict[str, Trashed]:
    """Where ``paths`` lie in any orphan-clean run's trash (those found)."""
    found: dict[str, Trashed] = {}
    runs: dict[str, list[str]] = {}
    for path in paths:
        root = root_of(path, roots)
        if root is None:
            continue
        if root not in runs:
            try:
                runs[root] = [s.name for s in file_io.list_dirs(trash_root(root))]
            except (OSError, PaimonError) as e:
                logger.warning("Could not list the orphan trash of %s: %s", root, e)
                runs[root] = []
        for run in runs[root]:
            item = Trashed(trash_path(root, run, path), path, 0)
            if file_io.exists(item.trash):
                found[path] = item
                break
    return found


def restore_from_trash(file_io: FileIO, roots: Sequence[str], paths: Sequence[str]) -> list[str]:
    """Move ``paths`` (files the latest snapshot needs) back from any orphan-clean run's trash;
    returns the paths that are back."""
    back: list[str] = []
    for path, item in find_in_trash(file_io, roots, paths).items():
        if restore(file_io, item):
            logger.warning("Moved %s back from the orphan trash (%s)", path, item.trash)
            back.append(path)
    return back


def not_missing(file_io: FileIO, roots: Sequence[str], paths: Sequence[str], *, dry_run: bool) -> set[str]:
    """Of ``paths`` (files the latest snapshot names that were found missing), those an orphan
    clean only moved aside: moved back now (``dry_run``: only found in the trash), or back already
    (the clean moved them back between the caller's check and this look). For the repairs that
    drop missing files (``remove_unexisting_files``, ``remove_unexisting_manifests``)."""
    if not paths:
        return set()
    found = set(find_in_trash(file_io, roots, paths) if dry_run else restore_from_trash(file_io, roots, paths))
    return found | {p for p in paths if p not in found and file_io.exists(p)}
