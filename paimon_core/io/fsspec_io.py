"""FileIO over any fsspec filesystem (s3://, gs://, abfs://, memory://, ...).

Publishing ``snapshot-N`` relies on the driver's exclusive create (``mode="xb"``):

* S3 (s3fs >= 2024.12): ``PutObject`` with ``If-None-Match: *``, a conditional put the
  store evaluates atomically; a lost race is HTTP 412 (``FileExistsError``), or 409
  ``ConditionalRequestConflict`` while the other upload is in flight (treated as lost, so
  the committer re-reads the latest snapshot and retries). Proven against moto's S3 HTTP
  API in ``tests/unit/paimon_core/test_s3_warehouse.py``.
* GCS (gcsfs): upload with ``ifGenerationMatch=0`` (read in gcsfs' source, not tested here).
* memory: fsspec's exists-then-create, within one process only.

Other schemes get fsspec's check-then-write, safe only with one committer or a commit lock.
Object stores have no directories: :meth:`FsspecFileIO.mkdirs` writes an empty ``name/``
marker object on S3 (as Hadoop's S3A does), so an empty database directory exists.
"""

from __future__ import annotations

import threading
from importlib import metadata
from typing import IO, Any

import fsspec
import pyarrow.fs as pafs

from paimon_core.exceptions import StorageDriverMissingError
from paimon_core.io.file_io import FileIO, FileStatus, wrap_io_error
from paimon_core.io.uri import parse_path

_S3 = frozenset({"s3", "s3a"})
_LOCAL_EXCLUSIVE_CREATE = frozenset({"memory", "file", "local"})
_SAFE_EXCLUSIVE_CREATE = frozenset({"memory", "gcs", "gs", "file", "local"}) | _S3
#: fsspec storage options we default differently: s3fs caches directory listings per process,
#: so another process's new snapshot (or a deleted file) would stay invisible to ``exists``/``ls``.
_DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {p: {"use_listings_cache": False} for p in _S3}
_EXTRAS = {"s3": "s3", "s3a": "s3"}


def _s3fs_sends_if_none_match() -> bool:
    """s3fs turned ``mode="xb"`` into a conditional put (``If-None-Match: *``) in 2024.12."""
    try:
        year, month = (int(x) for x in metadata.version("s3fs").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (year, month) >= (2024, 12)


def _is_conditional_conflict(err: BaseException) -> bool:
    """S3's 409 ConditionalRequestConflict: a concurrent conditional write to the same key."""
    seen: BaseException | None = err
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict) and response.get("Error", {}).get("Code") == "ConditionalRequestConflict":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class FsspecFileIO(FileIO):
    """FileIO backed by an fsspec filesystem chosen by URL scheme."""

    def __init__(self, protocol: str, storage_options: dict[str, Any] | None = None) -> None:
        self.protocol = protocol
        self.storage_options = dict(storage_options or {})
        self._local = threading.local()
        try:
            fsspec.get_filesystem_class(protocol)
        except (ImportError, ValueError) as e:
            extra = _EXTRAS.get(protocol)
            hint = f" (pip install 'paimon-py[{extra}]')" if extra else ""
            raise StorageDriverMissingError(
                f"Cannot open '{protocol}://' storage: {e}{hint}", protocol=protocol
            ) from None
        safe = protocol in _SAFE_EXCLUSIVE_CREATE
        self.atomic_publish_is_safe = safe and (protocol not in _S3 or _s3fs_sends_if_none_match())
        # in-process exclusive creates never retry over a network: "exists" was someone else's file
        self.publish_taken_is_definite = protocol in _LOCAL_EXCLUSIVE_CREATE

    # fsspec filesystems are cached per thread and rebuilt after unpickling.
    def __getstate__(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "storage_options": self.storage_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["protocol"], state["storage_options"])  # type: ignore[misc]

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        fs = getattr(self._local, "fs", None)
        if fs is None:
            options = {**_DEFAULT_OPTIONS.get(self.protocol, {}), **self.storage_options}
            fs = fsspec.filesystem(self.protocol, **options)
            self._local.fs = fs
        return fs

    def _p(self, path: str) -> str:
        parsed = parse_path(path)  # the one parser (paimon_core.io.uri)
        p = parsed.authority + parsed.path
        return p if self.protocol not in ("memory",) else "/" + p.lstrip("/")

    @wrap_io_error("read")
    def read_bytes(self, path: str) -> bytes:
        data = self.fs.cat_file(self._p(path))
        return bytes(data)

    @wrap_io_error("write")
    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        p = self._p(path)
        if not overwrite:
            with self.fs.open(p, "xb") as f:
                f.write(data)
            return
        self.fs.pipe_file(p, data)

    @wrap_io_error("publish")
    def try_write_atomic(self, path: str, data: bytes) -> bool:
        try:
            with self.fs.open(self._p(path), "xb") as f:
                f.write(data)
        except FileExistsError:
            return False
        except OSError as e:
            if _is_conditional_conflict(e):
                return False  # the other upload may still fail: the committer re-reads and retries
            raise
        return True

    @wrap_io_error("exists")
    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._p(path)))

    @wrap_io_error("delete")
    def delete(self, path: str, *, recursive: bool = False) -> bool:
        p = self._p(path)
        try:
            self.fs.rm(p, recursive=recursive)
        except FileNotFoundError:
            return False
        return True

    @wrap_io_error("list")
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

    @wrap_io_error("mkdirs")
    def mkdirs(self, path: str) -> None:
        p = self._p(path)
        if self.protocol not in _S3:
            self.fs.makedirs(p, exist_ok=True)
            return
        if self.fs.isdir(p):  # one LIST: data writers call this for every file's bucket directory
            return
        self.fs.makedirs(p, exist_ok=True)  # creates the bucket if it is missing
        if "/" in p.strip("/"):
            bucket, key = p.strip("/").split("/", 1)
            self.fs.call_s3("put_object", Bucket=bucket, Key=key + "/", Body=b"")
            self.fs.invalidate_cache(p)

    @wrap_io_error("open")
    def open_input(self, path: str) -> IO[bytes]:
        return self.fs.open(self._p(path), "rb")

    @wrap_io_error("create")
    def open_output(self, path: str) -> IO[bytes]:
        return self.fs.open(self._p(path), "wb")

    @wrap_io_error("stat")
    def get_file_size(self, path: str) -> int:
        return int(self.fs.size(self._p(path)))

    @wrap_io_error("rename")
    def rename(self, src: str, dst: str) -> None:
        d = self._p(dst)
        if self.fs.exists(d):
            raise FileExistsError(d)
        self.fs.mv(self._p(src), d)

    def arrow_filesystem(self) -> pafs.FileSystem:
        return pafs.PyFileSystem(pafs.FSSpecHandler(self.fs))

    def arrow_path(self, path: str) -> str:
        return self._p(path)
