"""The deletion vectors of one primary-key bucket while a compaction changes them (Java
``BucketedDvMaintainer``).

A lookup compaction (:mod:`paimon_core.mergetree.compact.lookup_merge_tree_compact_rewriter`)
marks the rows it supersedes in files it does not rewrite (:meth:`notify_new_deletion`) and drops
the vectors of the files it rewrites (:meth:`remove_deletion_vector_of`: their deleted rows are
not written again). :meth:`write_index` then does what Java's ``writeDeletionVectorsIndex`` does
when something changed: every DV index file of the bucket is deleted and all the bucket's
remaining vectors go into one new index file. Unchanged vectors are copied byte for byte (their
32- or 64-bit encoding kept); changed ones are the old positions plus the new, serialized as
Java writes them (``deletion-vectors.bitmap64`` picks the kind of a new vector).
"""

from __future__ import annotations

import logging
import struct
import zlib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap, BitMap64

from paimon_core.append.append_deletion_index import DeletionIndex, DeletionIndexChanges
from paimon_core.deletionvectors.deletion_file import DELETION_VECTORS_INDEX, DeletionFile
from paimon_core.deletionvectors.deletion_vector import (
    BITMAP32_MAGIC,
    BITMAP64_MAGIC,
    CRC_SIZE,
    LENGTH_SIZE,
    DeletionVector,
)
from paimon_core.deletionvectors.index_file import DV_INDEX_VERSION, read_deletion_vector
from paimon_core.exceptions import CorruptFileError
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DeletionVectorMeta, IndexFileMeta

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["BucketedDvMaintainer", "serialize_deletion_vector"]

logger = logging.getLogger(__name__)

BITMAP64_OPTION = "deletion-vectors.bitmap64"


def serialize_deletion_vector(dv: DeletionVector) -> tuple[bytes, int]:
    """``dv`` as it sits in a DV index file (length, magic + portable bitmap, CRC) and the range
    length the index manifest records for it (``L`` for 32-bit bitmaps, the whole blob for 64-bit)."""
    positions = dv.deleted_positions()
    if dv.bitmap64:
        bm64 = BitMap64(positions.astype(np.uint64))
        data = struct.pack("<I", BITMAP64_MAGIC) + bm64.serialize()
    else:
        if positions.size and int(positions[-1]) > 0x7FFFFFFF:
            raise ValueError(f"row position {int(positions[-1])} needs a 64-bit deletion vector")
        bm = BitMap(positions.astype(np.uint32))
        bm.run_optimize()
        data = struct.pack(">I", BITMAP32_MAGIC) + bm.serialize()
    blob = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    return blob, len(blob) if dv.bitmap64 else len(data)


class BucketedDvMaintainer:
    """The deletion vectors of one (partition, bucket), changed in memory until :meth:`write_index`."""

    def __init__(self, store: FileStore, index: DeletionIndex) -> None:
        self.store = store
        self.index = index
        self.bitmap64 = (store.options.get(BITMAP64_OPTION) or "false").strip().lower() == "true"
        self._new: dict[str, npt.NDArray[np.int64]] = {}  # data file -> positions deleted now
        self._removed: set[str] = set()

    @classmethod
    def load(cls, store: FileStore, partition: bytes, bucket: int) -> BucketedDvMaintainer:
        """The bucket's vectors in the latest snapshot."""
        return cls(store, DeletionIndex.load(store, partition, bucket))

    @property
    def modified(self) -> bool:
        removed = any(name in self.index.deletion_files for name in self._removed)
        return bool(self._new) or removed

    def deletion_file(self, data_file: str) -> DeletionFile | None:
        """The committed vector of ``data_file`` (what reads of it apply)."""
        return self.index.deletion_files.get(data_file)

    def deletion_files(self) -> Mapping[str, DeletionFile]:
        return self.index.deletion_files

    def notify_new_deletion(self, data_file: str, positions: npt.NDArray[np.int64]) -> None:
        """Mark ``positions`` (row ordinals) of ``data_file`` deleted."""
        if positions.size == 0:
            return
        old = self._new.get(data_file)
        self._new[data_file] = positions if old is None else np.concatenate([old, positions])

    def remove_deletion_vector_of(self, data_files: Collection[str]) -> None:
        """Drop the vectors of rewritten files (Java ``removeDeletionVectorOf``)."""
        self._removed.update(data_files)
        for name in data_files:
            self._new.pop(name, None)

    def write_index(self) -> DeletionIndexChanges:
        """Replace the bucket's DV index files by one holding every remaining vector (nothing
        when nothing changed). The new file is written here; the caller commits the changes or
        deletes ``written_paths``."""
        if not self.modified:
            return DeletionIndexChanges()
        store, index = self.store, self.index
        blobs: dict[str, bytes] = {}
        out = bytearray([DV_INDEX_VERSION])
        ranges: list[DeletionVectorMeta] = []
        names = sorted((set(index.deletion_files) | set(self._new)) - self._removed)
        for name in names:
            old = index.deletion_files.get(name)
            new = self._new.get(name)
            if new is None and old is not None:
                blob, length, cardinality = self._copy(old, blobs)
            else:
                positions = new if new is not None else np.empty(0, np.int64)
                bitmap64 = self.bitmap64
                if old is not None:
                    old_dv = read_deletion_vector(store.file_io, old)
                    positions = np.concatenate([old_dv.deleted_positions(), positions])
                    bitmap64 = old_dv.bitmap64
                dv = DeletionVector.of(positions, bitmap64=bitmap64)
                blob, length = serialize_deletion_vector(dv)
                cardinality = dv.cardinality
            ranges.append(DeletionVectorMeta(name, len(out), length, cardinality))
            out += blob
        changes_deleted = tuple(index.index_files)
        if not ranges:
            return DeletionIndexChanges((), changes_deleted, ())
        file_name = store.paths.new_index_file_name()
        path = index_file_path(store, index.partition, index.bucket, file_name)
        store.file_io.write_bytes(path, bytes(out))
        meta = IndexFileMeta(DELETION_VECTORS_INDEX, file_name, len(out), len(ranges), tuple(ranges))
        logger.debug(
            "Bucket %d: %d deletion vector(s) (%d with new deletions) into %s, replacing %d index file(s)",
            index.bucket,
            len(ranges),
            len(self._new),
            file_name,
            len(changes_deleted),
        )
        return DeletionIndexChanges((meta,), changes_deleted, (path,))

    def _copy(self, old: DeletionFile, blobs: dict[str, bytes]) -> tuple[bytes, int, int]:
        """An unchanged vector's bytes (length field to CRC), its range length and cardinality."""
        blob = blobs.get(old.path)
        if blob is None:
            blob = blobs[old.path] = self.store.file_io.read_bytes(old.path)
        if not 0 < old.offset <= len(blob) - LENGTH_SIZE:
            raise CorruptFileError(f"corrupt deletion vector index file {old.path}: offset {old.offset}", path=old.path)
        (length,) = struct.unpack_from(">i", blob, old.offset)
        end = old.offset + LENGTH_SIZE + length + CRC_SIZE
        if length < 0 or end > len(blob):
            raise CorruptFileError(f"corrupt deletion vector index file {old.path}: length {length}", path=old.path)
        cardinality = old.cardinality
        if cardinality is None:
            cardinality = read_deletion_vector(self.store.file_io, old).cardinality
        return blob[old.offset : end], old.length, cardinality
