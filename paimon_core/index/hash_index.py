"""HASH index files: the key hashes of one (partition, bucket) of a dynamic-bucket table.

The file is the raw 4-byte big-endian int32 hashes, one per key, no header (Java's
HashIndexFile). The index manifest lists one file per (partition, bucket).
"""

from __future__ import annotations

import numpy as np

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import IndexFileMeta

HASH_INDEX = "HASH"


def read_hash_index(file_io: FileIO, path: str) -> np.ndarray:
    """The hashes of a HASH index file as int32 (CorruptFileError if the size is not 4*n)."""
    data = file_io.read_bytes(path)
    if len(data) % 4:
        raise CorruptFileError(f"Corrupt HASH index file {path}: {len(data)} bytes is not a multiple of 4", path=path)
    return np.frombuffer(data, dtype=">i4").astype(np.int32)


def write_hash_index(file_io: FileIO, path: str, hashes: np.ndarray) -> IndexFileMeta:
    """Write hashes (any order) as a new HASH index file and describe it."""
    data = np.asarray(hashes, dtype=np.int32).astype(">i4").tobytes()
    file_io.write_bytes(path, data)
    return IndexFileMeta(HASH_INDEX, path.rsplit("/", 1)[-1], len(data), int(len(hashes)))
