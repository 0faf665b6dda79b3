"""FileIO over any fsspec filesystem (s3://, gs://, abfs://, memory://, ...)."""

from __future__ import annotations

import threading
from typing import IO, Any

import fsspec
import pyarrow.fs as pafs

from paimon_core.io.file_io import FileIO, FileStatus, strip_scheme

# Stores whose fsspec driver implements mode="xb" as a real conditional create
# (If-None-Match on S3 since s3fs 2024.x, memory within one process). Others get a
# check-then-write publish that is only safe with a single committer.
_SAFE_EXCLUSIVE_CREATE = {"memory", "s3", "s3a", "gcs", "gs", "file", "local"}


class FsspecFileIO(FileIO):
    """FileIO backed by an fsspec filesystem chosen by URL scheme."""

    def __init__(self, protocol: str, storage_options: dict[str, Any] | None = None) -> None:
        self.protocol = protocol
        self.storage_options = dict(storage_options or {})
        self._local = threading.local()
        self.atomic_publish_is_safe = protocol in _SAFE_EXCLUSIVE_CREATE

    # fsspec filesystems are cached per thread and rebuilt after unpickling.
    def __getstate__(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "storage_options": self.storage_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["protocol"], state["storage_options"])  # type: ignore[misc]

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        fs = getattr(self._local, "fs", None)
        if fs is None:
            fs = fsspec.filesystem(self.protocol, **self.storage_options)
            self._local.fs = fs
        return fs

    def _p(self, path: str) -> str:
        return strip_scheme(path) if self.protocol not in ("memory",) else "/" + strip_scheme(path).lstrip("/")

    def read_bytes(self, path: str) -> bytes:
        data = self.fs.cat_file(self._p(path))
        return bytes(data)

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        p = self._p(path)
        if not overwrite:
            with self.fs.open(p, "xb") as f:
                f.write(data)
            return
        self.fs.pipe_file(p, data)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        try:
            with self.fs.open(self._p(path), "xb") as f:
                f.write(data)
        except FileExistsError:
            return False
        return True

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._p(path)))

    def delete(self, path: str, *, recursive: bool = False) -> bool:
        p = self._p(path)
        try:
            self.fs.rm(p, recursive=recursive)
        except FileNotFoundError:
            return False
        return True

    def list_status(self, path: str) -> list[FileStatus]:
        p = self._p(path)
        try:
            entries = self.fs.ls(p, detail=True)
        except FileNotFoundError:
            return []
        prefix = path.split("://", 1)[0] + "://" if "://" in path else ""
        out: list[FileStatus] = []
        for e in entries:
            name = str(e["name"])
            if name.rstrip("/") == p.rstrip("/"):
                continue
            mtime = e.get("mtime") or e.get("LastModified") or e.get("created") or 0
            if hasattr(mtime, "timestamp"):
                mtime = mtime.timestamp()
            full = prefix + name.lstrip("/") if prefix and self.protocol == "memory" else prefix + name
            out.append(
                FileStatus(
                    path=full,
                    size=int(e.get("size") or 0),
                    mtime_millis=int(float(mtime) * 1000),
                    is_dir=e.get("type") == "directory",
                )
            )
        return out

    def mkdirs(self, path: str) -> None:
        self.fs.makedirs(self._p(path), exist_ok=True)

    def open_input(self, path: str) -> IO[bytes]:
        return self.fs.open(self._p(path), "rb")

    def open_output(self, path: str) -> IO[bytes]:
        return self.fs.open(self._p(path), "wb")

    def get_file_size(self, path: str) -> int:
        return int(self.fs.size(self._p(path)))

    def arrow_filesystem(self) -> pafs.FileSystem:
        return pafs.PyFileSystem(pafs.FSSpecHandler(self.fs))

    def arrow_path(self, path: str) -> str:
        return self._p(path)
