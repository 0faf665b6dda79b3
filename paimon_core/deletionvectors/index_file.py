"""Read deletion vectors out of ``DELETION_VECTORS`` index files (Java ``DeletionVectorsIndexFile``).

An index file is one version byte (1) followed by serialized deletion vectors, one per data
file, back to back; the index manifest gives each one's offset and length.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.deletionvectors.deletion_vector import (
    CRC_SIZE,
    LENGTH_SIZE,
    MAGIC_SIZE,
    DeletionVector,
    deserialize_deletion_vector,
)
from paimon_core.exceptions import CorruptFileError
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DeletionVectorMeta

#: ``DeletionVectorsIndexFile.VERSION_ID_V1``: the first byte of every DV index file.
DV_INDEX_VERSION = 1


def _check_version(first: bytes, path: str) -> None:
    if first[:1] != bytes([DV_INDEX_VERSION]):
        found = first[0] if first else "nothing"
        raise CorruptFileError(
            f"corrupt deletion vector index file {path}: version byte {found}, expected {DV_INDEX_VERSION}",
            path=path,
        )


def _checked(dv: DeletionVector, cardinality: int | None, path: str) -> DeletionVector:
    if cardinality is not None and cardinality != dv.cardinality:
        raise CorruptFileError(
            f"corrupt deletion vector in {path}: {dv.cardinality} positions, the index manifest says {cardinality}",
            path=path,
        )
    return dv


def read_deletion_vector(file_io: FileIO, deletion_file: DeletionFile) -> DeletionVector:
    """Read one deletion vector (a ranged read: the version byte, then just its bytes)."""
    path = deletion_file.path
    with file_io.open_input(path) as f:
        _check_version(f.read(1), path)
        f.seek(deletion_file.offset)
        head = f.read(LENGTH_SIZE + MAGIC_SIZE)
        if len(head) < LENGTH_SIZE + MAGIC_SIZE:
            raise CorruptFileError(
                f"corrupt deletion vector in {path}: file ends before offset {deletion_file.offset} + 8", path=path
            )
        (length,) = struct.unpack_from(">i", head, 0)
        rest = f.read(max(length - MAGIC_SIZE, 0) + CRC_SIZE)
    dv = deserialize_deletion_vector(head + rest, path=path, range_length=deletion_file.length)
    return _checked(dv, deletion_file.cardinality, path)


def read_all_deletion_vectors(
    file_io: FileIO, path: str, ranges: Iterable[DeletionVectorMeta]
) -> dict[str, DeletionVector]:
    """Every deletion vector of one index file: {data file name: vector} (reads the file once)."""
    blob = file_io.read_bytes(path)
    _check_version(blob, path)
    view = memoryview(blob)
    out: dict[str, DeletionVector] = {}
    for r in ranges:
        if not 0 < r.offset < len(blob):
            raise CorruptFileError(
                f"corrupt deletion vector in {path}: offset {r.offset} outside the {len(blob)}-byte file", path=path
            )
        dv = deserialize_deletion_vector(view[r.offset :], path=path, range_length=r.length)
        out[r.data_file_name] = _checked(dv, r.cardinality, path)
    return out
