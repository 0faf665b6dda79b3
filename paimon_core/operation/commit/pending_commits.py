"""Pending commits: what a commit in flight announces so an orphan clean never takes its files.

A commit's files exist before the snapshot naming them: data files a writer wrote long before,
manifests the commit writes just before it publishes. An orphan clean that read the references
just before the publish and deletes just after used to delete them (issue 27: with ``force`` and
an ``older_than`` shorter than a write, 5 of 101 commits that reported success lost their rows).

Protocol (both sides are sequences of single file operations; a store that shows every finished
write to every later read, as a local file system and S3 do, is all it needs):

* a commit writes ``<table>/_pending_commits/<uuid>`` naming the files it adds and the name
  prefixes of the manifests it will write, *then* checks that its files exist, publishes, and
  removes the announcement;
* an orphan clean moves its candidates aside (into ``_orphan_trash/<run>``,
  :mod:`paimon_core.operation.orphan_trash`), *then* reads the announcements, *then* the
  snapshots, tags and branches, restores every moved file either of them names, and only then
  deletes the rest.

If the clean's read missed the announcement, the announcement was written after the move, so
the commit's existence check (after its announcement) finds the file gone and the commit fails
before publishing (:class:`CommitFilesMissingError`). If the announcement was already removed,
the snapshot was published before, and the clean's snapshot read sees it. Either way no commit
that returns success loses a file. Manifests are written after the announcement, so the same
argument covers them without a check.

Announcements are removed in a ``finally``; one is left only by a process that died in a commit.
The next clean deletes it when its writer is provably dead: the announcement names the process
(pid, start time, Linux boot id and pid namespace), and a clean in the same pid namespace of the
same boot finds no such process. Otherwise (another machine or container) it is deleted once
older than :data:`PENDING_TTL_MILLIS`, so a crashed remote commit's files stay a day at most; a
commit that stalls that long between announcing and publishing is left to its own check after
publishing (:mod:`.commit_guard`).

Cost per commit: one small write (no ``fsync``) and one delete (0.5 ms together on a loaded
2-core machine's local disk); on an object store a PUT and a DELETE. The directory starts with
``_``: not a partition (``k=v``) or bucket directory, so neither Paimon readers nor the orphan
listing look at it; on a file system it is removed with its last announcement, so an idle
table's layout is Paimon's.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import OrphanCleanAbortedError
from paimon_core.io.file_io import FileIO, join
from paimon_core.io.local_io import LocalFileIO

__all__ = [
    "PENDING_DIR",
    "PENDING_TTL_MILLIS",
    "PendingFiles",
    "announce",
    "read_pending",
    "withdraw",
]

logger = logging.getLogger(__name__)

PENDING_DIR = "_pending_commits"
#: an announcement older than this belongs to a commit that crashed (a day: Java's orphan cutoff)
PENDING_TTL_MILLIS = 86_400_000


@dataclass(frozen=True)
class PendingFiles:
    """File names that commits in flight add (exact names and name prefixes)."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()

    def holds(self, name: str) -> bool:
        """Whether a commit in flight may reference ``name``."""
        return name in self.names or (bool(self.prefixes) and name.startswith(self.prefixes))

    def __bool__(self) -> bool:
        return bool(self.names or self.prefixes)


def pending_dir(table_path: str) -> str:
    return join(table_path, PENDING_DIR)


def announce(
    file_io: FileIO, table_path: str, *, names: Iterable[str], prefixes: Sequence[str], commit_user: str
) -> str:
    """Write an announcement for one commit; returns its path (for :func:`withdraw`)."""
    path = join(pending_dir(table_path), f"{uuid.uuid4()}.json")
    body = {
        "commitUser": commit_user,
        "timeMillis": int(time.time() * 1000),
        "process": _this_process(),
        "files": sorted(set(names)),
        "prefixes": list(prefixes),
    }
    # Visibility, not durability, is what the protocol needs: a crash before the publish makes the
    # commit fail anyway. write_hint writes atomically without forcing the file to disk.
    text = json.dumps(body, separators=(",", ":"))
    for attempt in range(10):
        try:
            file_io.write_hint(path, text)
            break
        except (FileNotFoundError, FileExistsError):
            # another commit removed the empty directory just now: between our mkdir and our write
            # (not found), or between our mkdir's EEXIST and its check that the directory is there
            # (os.makedirs then raises FileExistsError although exist_ok is set)
            if attempt == 9:
                raise
    return path


def withdraw(file_io: FileIO, path: str) -> None:
    """Remove an announcement (best effort: a left-over one only delays a clean, by a day at most),
    and on a file system its directory once empty (the table's layout stays Paimon's)."""
    try:
        file_io.delete(path)
    except Exception as e:  # noqa: BLE001 - never fails the commit it belongs to
        logger.warning("Could not remove the pending-commit announcement %s: %s", path, e)
        return
    if isinstance(file_io, LocalFileIO):  # an object store has no directories to leave behind
        try:
            file_io.delete(path[: path.rfind("/")], recursive=False)
        except Exception:  # noqa: BLE001, S110 - not empty: another commit's announcement is there
            pass


def read_pending(file_io: FileIO, table_path: str, *, now_millis: int | None = None) -> PendingFiles:
    """Every file name a commit in flight announced. Announcements older than
    :data:`PENDING_TTL_MILLIS` are deleted (their commit crashed); an unreadable fresh one raises
    :class:`OrphanCleanAbortedError` (nothing may be deleted without knowing what it names)."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    names: set[str] = set()
    prefixes: set[str] = set()
    for st in file_io.list_files(pending_dir(table_path)):
        if not st.name.endswith(".json"):
            continue  # a temporary file of an announcement being written
        if now - st.mtime_millis > PENDING_TTL_MILLIS:
            logger.warning("Removing the announcement of a commit that never finished: %s", st.path)
            withdraw(file_io, st.path)
            continue
        try:
            body = json.loads(file_io.read_bytes(st.path))
            if _died(body.get("process")):
                logger.warning("Removing the announcement of a commit whose process died: %s", st.path)
                withdraw(file_io, st.path)
                continue
            names.update(str(n) for n in body["files"])
            prefixes.update(str(p) for p in body["prefixes"] if p)
        except FileNotFoundError:
            continue  # its commit finished meanwhile: the snapshot read that follows sees it
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise OrphanCleanAbortedError(
                f"Orphan clean of {table_path} aborted: the pending-commit announcement {st.path} cannot be "
                f"read ({type(e).__name__}: {e}); remove it by hand if no commit is running",
                path=st.path,
            ) from e
    return PendingFiles(frozenset(names), tuple(sorted(prefixes)))


# --- the announcing process -------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/<pid>/stat field 22)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _namespace() -> tuple[str, str] | None:
    """(boot id, pid namespace) of this process; None off Linux."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return (boot, ns) if boot else None


def _this_process() -> dict[str, object] | None:
    where, pid = _namespace(), os.getpid()
    start = _start_time(pid)
    if where is None or start is None:
        return None
    return {"pid": pid, "start": start, "bootId": where[0], "pidNamespace": where[1]}


def _died(process: object) -> bool:
    """Whether the announcing process provably no longer runs: it ran in this boot's pid
    namespace (so its pid means the same here) and no process with its pid and start time exists.
    Anything else (another machine or container, no identity) is not proof."""
    if not isinstance(process, dict):
        return False
    where = _namespace()
    if where is None or [process.get("bootId"), process.get("pidNamespace")] != list(where):
        return False
    pid, start = process.get("pid"), process.get("start")
    if not isinstance(pid, int) or not isinstance(start, str):
        return False
    return _start_time(pid) != start
