"""Storage access: one small FileIO interface, local and fsspec implementations."""

from __future__ import annotations

from paimon_core.io.file_io import FileIO, FileStatus, join, strip_scheme
from paimon_core.io.fsspec_io import FsspecFileIO
from paimon_core.io.local_io import LocalFileIO
from paimon_core.io.resolve import load_file_io, scheme_of

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
