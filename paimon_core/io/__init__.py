"""Storage access: one small FileIO interface, local and fsspec implementations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paimon_core.io.file_io import FileIO, FileStatus, join, strip_scheme
from paimon_core.io.local_io import LocalFileIO
from paimon_core.io.resolve import load_file_io, scheme_of

if TYPE_CHECKING:
    from paimon_core.io.fsspec_io import FsspecFileIO

__all__ = [
    "FileIO",
    "FileStatus",
    "FsspecFileIO",
    "LocalFileIO",
    "join",
    "load_file_io",
    "scheme_of",
    "strip_scheme",
]


def __getattr__(name: str) -> Any:
    # fsspec (~0.1-0.4 s to import) only when a remote FileIO is asked for: a job on local
    # tables (e.g. an expiry) never pays for it.
    if name == "FsspecFileIO":
        from paimon_core.io.fsspec_io import FsspecFileIO

        return FsspecFileIO
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
