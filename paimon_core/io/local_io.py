"""FileIO for the local file system with a true no-overwrite publish.

Snapshot files are published by writing a temporary file next to the target
and hard-linking it to the final name: ``link(2)`` fails when the name exists,
so two committers racing for ``snapshot-N`` can never both win, and a reader
never sees a half-written file.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO

import pyarrow.fs as pafs

from paimon_core.exceptions import UnsafePathError
from paimon_core.io.file_io import FileIO, FileStatus, wrap_io_error
from paimon_core.io.uri import local_path

#: ``<db>.db/<table>``: the directories below a warehouse that may be links; deeper is inside a table.
TABLE_DEPTH = 2
#: Per thread: the final paths written inside :meth:`LocalFileIO.durable_together`, to fsync at its end.
_DEFERRED = threading.local()
_SYNC_POOL: ThreadPoolExecutor | None = None
_SYNC_POOL_LOCK = threading.Lock()


def _fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_all(paths: list[str]) -> None:
    """``fsync`` every file of ``paths`` (concurrently when there are several: each call waits
    on the disk, not on the GIL, and the file system can commit them in one journal flush)."""
    global _SYNC_POOL
    if len(paths) <= 1:
        for path in paths:
            _fsync_path(path)
        return
    with _SYNC_POOL_LOCK:
        if _SYNC_POOL is None:
            _SYNC_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="paimon-fsync")
        pool = _SYNC_POOL
    for _ in pool.map(_fsync_path, paths):  # re-raises the first failure
        pass


class LocalFileIO(FileIO):
    """FileIO over the local file system: plain paths and every local ``file:`` form, parsed by
    :func:`paimon_core.io.uri.local_path` (``file:/x``, ``file:///x``, ``file://localhost/x``
    are ``/x``; another host or a remote scheme is an :class:`InvalidArgumentError`)."""

    atomic_publish_is_safe = True
    publish_taken_is_definite = True
    warehouse: str | None = None  # (subclasses that do not call __init__ stay unconfined)

    def __init__(self, warehouse: str | None = None) -> None:
        #: With a warehouse, nothing inside a table directory (``<warehouse>/<db>.db/<table>/...``)
        #: is written, deleted or moved through a symbolic link: following one would change the
        #: files of the directory it points to (another table's, anyone's). The warehouse, its
        #: database and table directories themselves may be links (mounted elsewhere).
        self.warehouse = os.path.abspath(local_path(warehouse)) if warehouse else None

    def __getstate__(self) -> dict[str, object]:
        return {"warehouse": self.warehouse}

    def __setstate__(self, state: dict[str, object]) -> None:
        warehouse = state.get("warehouse")
        self.warehouse = warehouse if isinstance(warehouse, str) else None

    @staticmethod
    def _p(path: str) -> str:
        return local_path(path)

    def _w(self, path: str, *, itself: bool = False) -> str:
        """:meth:`_p` for a change: :class:`UnsafePathError` when a directory inside a table on
        the way to ``path`` (and ``path`` itself with ``itself``: a directory written into, a file
        opened for writing) is a symbolic link. A file that is a link may be replaced or deleted:
        that changes the link, never its target."""
        p = local_path(path)
        if self.warehouse is None:
            return p
        rel = os.path.relpath(os.path.abspath(p), self.warehouse)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return p
        parts = rel.split(os.sep)
        current = os.path.join(self.warehouse, *parts[:TABLE_DEPTH])
        for part in parts[TABLE_DEPTH : len(parts) if itself else len(parts) - 1]:
            current = os.path.join(current, part)
            if os.path.islink(current):
                raise UnsafePathError(
                    f"Refusing to change {path}: {current} is a symbolic link inside a table directory, and "
                    "writing, deleting or moving through it would change the files it points to "
                    "(remove or replace the link by hand)",
                    path=path,
                    kind="symbolic link",
                )
        return p

    def arrow_path(self, path: str) -> str:
        return local_path(path)

    def _tmp_for(self, p: str) -> str:
        d, name = os.path.split(p)
        return os.path.join(d, f".{name}.{uuid.uuid4()}.tmp")

    def _write_tmp(self, p: str, data: bytes, *, sync: bool = True) -> str:
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        tmp = self._tmp_for(p)
        deferred: list[str] | None = getattr(_DEFERRED, "paths", None) if sync else None
        with open(tmp, "wb") as f:
            f.write(data)
            if sync and deferred is None:
                f.flush()
                os.fsync(f.fileno())
        if deferred is not None:
            deferred.append(p)  # its final name: the temp name is gone by the block's end
        return tmp

    @contextmanager
    def durable_together(self) -> Iterator[None]:
        """Writes in the block are ``fsync`` ed at its end, concurrently (nested blocks: the
        outermost one syncs). On an exception nothing is synced: the files are not referenced."""
        if getattr(_DEFERRED, "paths", None) is not None:
            yield
            return
        paths: list[str] = []
        _DEFERRED.paths = paths
        try:
            yield
        finally:
            _DEFERRED.paths = None
        _fsync_all(paths)

    def write_hint(self, path: str, text: str) -> None:
        """Temp file + rename, no fsync: readers verify the hint (see ``SnapshotManager``)."""
        if type(self).write_bytes is not LocalFileIO.write_bytes:  # a subclass watching its writes
            super().write_hint(path, text)
            return
        p = self._w(path)
        tmp = self._write_tmp(p, text.encode("utf-8"), sync=False)
        try:
            os.replace(tmp, p)
        except BaseException:
            _silent_unlink(tmp)
            raise

    @wrap_io_error("read")
    def read_bytes(self, path: str) -> bytes:
        with open(self._p(path), "rb") as f:
            return f.read()

    @wrap_io_error("write")
    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        p = self._w(path)
        if not overwrite:
            if not self.try_write_atomic(path, data):
                raise FileExistsError(errno.EEXIST, "File exists", p)
            return
        tmp = self._write_tmp(p, data)
        try:
            os.replace(tmp, p)
        except BaseException:
            _silent_unlink(tmp)
            raise

    @wrap_io_error("publish")
    def try_write_atomic(self, path: str, data: bytes) -> bool:
        p = self._w(path)
        tmp = self._write_tmp(p, data)
        try:
            os.link(tmp, p)
        except FileExistsError:
            return False
        finally:
            _silent_unlink(tmp)
        return True

    @wrap_io_error("exists")
    def exists(self, path: str) -> bool:
        return os.path.exists(self._p(path))

    @wrap_io_error("delete")
    def delete(self, path: str, *, recursive: bool = False) -> bool:
        p = self._w(path)
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                if recursive:
                    shutil.rmtree(p)
                else:
                    os.rmdir(p)
            else:
                os.unlink(p)
        except FileNotFoundError:
            return False
        return True

    @wrap_io_error("stat")
    def is_symlink(self, path: str) -> bool:
        return os.path.islink(self._p(path))

    @wrap_io_error("list")
    def list_status(self, path: str) -> list[FileStatus]:
        p = self._p(path)
        out: list[FileStatus] = []
        try:
            it = os.scandir(p)
        except (FileNotFoundError, NotADirectoryError):
            return []
        base = path.rstrip("/")
        with it:
            for e in it:
                try:
                    st = e.stat()
                except FileNotFoundError:
                    continue  # removed since listed (e.g. another committer's temp file)
                out.append(
                    FileStatus(
                        path=f"{base}/{e.name}",
                        size=st.st_size,
                        mtime_millis=int(st.st_mtime * 1000),
                        is_dir=e.is_dir(),
                    )
                )
        return out

    @wrap_io_error("mkdirs")
    def mkdirs(self, path: str) -> None:
        os.makedirs(self._w(path, itself=True), exist_ok=True)

    @wrap_io_error("open")
    def open_input(self, path: str) -> IO[bytes]:
        return open(self._p(path), "rb")

    @wrap_io_error("create")
    def open_output(self, path: str) -> IO[bytes]:
        p = self._w(path, itself=True)
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        return open(p, "wb")

    @wrap_io_error("stat")
    def get_file_size(self, path: str) -> int:
        return os.path.getsize(self._p(path))

    @wrap_io_error("rename")
    def rename(self, src: str, dst: str) -> None:
        s, d = self._w(src), self._w(dst)
        os.makedirs(os.path.dirname(d) or ".", exist_ok=True)
        os.link(s, d)  # FileExistsError if taken: never replaces a file
        os.unlink(s)

    def arrow_filesystem(self) -> pafs.FileSystem:
        return pafs.LocalFileSystem()


def _silent_unlink(p: str) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass
