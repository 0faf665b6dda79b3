"""Pick a FileIO for a warehouse path or URL."""

from __future__ import annotations

from typing import Any

from paimon_core.io.file_io import FileIO
from paimon_core.io.local_io import LocalFileIO
from paimon_core.io.uri import parse_path, scheme_of

__all__ = ["load_file_io", "scheme_of"]


def load_file_io(path: str, options: dict[str, Any] | None = None) -> FileIO:
    """Local paths and ``file:`` URIs get :class:`LocalFileIO` (confined to the warehouse
    ``path``'s tables: no change through a symbolic link inside one); anything else goes to fsspec.

    ``options`` are fsspec storage options (e.g. ``{"endpoint_url": ..., "key": ...}``
    for S3), passed through to the fsspec filesystem.
    """
    scheme = scheme_of(path)
    if scheme == "file":
        parse_path(path)  # ForeignHostError now for file://otherhost/..., not at the first read
        return LocalFileIO(path)  # no change through a link inside one of its tables
    from paimon_core.io.fsspec_io import FsspecFileIO  # fsspec only for remote storage

    return FsspecFileIO(scheme, options)
