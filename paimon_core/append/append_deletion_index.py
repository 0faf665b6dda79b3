"""The deletion vectors of the files an append compaction rewrites (Java
``AppendDeleteFileMaintainer`` for unaware buckets, ``BucketedDvMaintainer`` for fixed ones).

Rewriting a file applies its deletion vector (deleted rows are not written again), so the
vector must leave the table with the file: every DV index file holding a vector of a rewritten
file is deleted, and the vectors it holds for files *not* rewritten are carried over into a new
index file (Java ``writeUnchangedDeletionVector``). Carried-over vectors are copied byte for
byte, so 32-bit and 64-bit bitmaps keep their exact encoding and range lengths.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paimon_core.deletionvectors.deletion_file import DELETION_VECTORS_INDEX, DeletionFile
from paimon_core.deletionvectors.deletion_vector import CRC_SIZE, LENGTH_SIZE
from paimon_core.deletionvectors.index_file import DV_INDEX_VERSION
from paimon_core.exceptions import CorruptFileError
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.manifest.entries import DeletionVectorMeta, FileKind, IndexFileMeta
from paimon_core.manifest.index_manifest import read_index_manifest

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

__all__ = ["DeletionIndex", "DeletionIndexChanges"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class DeletionIndexChanges:
    """Index files a compaction adds (carried-over vectors) and deletes (touched files)."""

    new_index_files: tuple[IndexFileMeta, ...] = ()
    deleted_index_files: tuple[IndexFileMeta, ...] = ()
    written_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeletionIndex:
    """The live DV index files of one (partition, bucket), and where each data file's vector is.

    For an unaware-bucket table the whole partition's DV index files count (Java's
    ``forUnawareAppend`` filters by partition only).
    """

    partition: bytes
    bucket: int
    index_files: tuple[IndexFileMeta, ...] = ()
    paths: Mapping[str, str] = field(default_factory=dict)  # index file name -> its path
    deletion_files: Mapping[str, DeletionFile] = field(default_factory=dict)  # data file -> vector

    @classmethod
    def load(
        cls, store: FileStore, partition: bytes, bucket: int, *, snapshot: Snapshot | None = None
    ) -> DeletionIndex:
        """Read from ``snapshot``'s index manifest (default: the latest snapshot)."""
        snap = snapshot if snapshot is not None else store.latest_snapshot()
        if snap is None or snap.index_manifest is None:
            return cls(partition, bucket)
        # Only an append table without buckets keeps its vectors per partition (Java's
        # forUnawareAppend); a dynamic-bucket (bucket = -1) primary-key table's are per bucket.
        unaware = not store.schema.primary_keys and store.options.bucket == -1
        live: dict[str, tuple[int, IndexFileMeta]] = {}
        for e in read_index_manifest(store.file_io, store.paths.manifest_path(snap.index_manifest)):
            f = e.index_file
            if f.index_type != DELETION_VECTORS_INDEX or e.partition != partition:
                continue
            if not unaware and e.bucket != bucket:
                continue
            if e.kind == FileKind.ADD:
                live[f.file_name] = (e.bucket, f)
            else:
                live.pop(f.file_name, None)
        paths: dict[str, str] = {}
        deletions: dict[str, DeletionFile] = {}
        for name, (b, f) in live.items():
            path = index_file_path(store, partition, b, f)
            paths[name] = path
            for r in f.dv_ranges or ():
                deletions[r.data_file_name] = DeletionFile(path, r.offset, r.length, r.cardinality)
        return cls(partition, bucket, tuple(f for _, f in live.values()), paths, deletions)

    def index_file_of(self, data_file: str) -> IndexFileMeta | None:
        d = self.deletion_files.get(data_file)
        if d is None:
            return None
        return next((f for f in self.index_files if self.paths.get(f.file_name) == d.path), None)

    def remove(self, store: FileStore, data_files: Collection[str]) -> DeletionIndexChanges:
        """Drop the vectors of ``data_files``: delete each index file holding one, and write the
        vectors it holds for other files into a new index file (one per touched file)."""
        removed = set(data_files)
        touched = [f for f in self.index_files if any(r.data_file_name in removed for r in f.dv_ranges or ())]
        new: list[IndexFileMeta] = []
        written: list[str] = []
        try:
            for old in touched:
                keep = [r for r in old.dv_ranges or () if r.data_file_name not in removed]
                if keep:
                    meta, path = self._carry_over(store, old, keep)
                    new.append(meta)
                    written.append(path)
        except BaseException:
            for p in written:
                store.file_io.delete(p)
            raise
        if touched:
            logger.debug(
                "Compaction of %d file(s) deletes %d DV index file(s), carries vectors over into %d",
                len(removed),
                len(touched),
                len(new),
            )
        return DeletionIndexChanges(tuple(new), tuple(touched), tuple(written))

    def _carry_over(
        self, store: FileStore, old: IndexFileMeta, keep: list[DeletionVectorMeta]
    ) -> tuple[IndexFileMeta, str]:
        old_path = self.paths[old.file_name]
        blob = store.file_io.read_bytes(old_path)
        out = bytearray([DV_INDEX_VERSION])
        ranges = []
        for r in keep:
            if not 0 < r.offset <= len(blob) - LENGTH_SIZE:
                raise CorruptFileError(f"corrupt deletion vector index file {old_path}: offset {r.offset}", path=old_path)
            (length,) = struct.unpack_from(">i", blob, r.offset)
            end = r.offset + LENGTH_SIZE + length + CRC_SIZE
            if length < 0 or end > len(blob):
                raise CorruptFileError(f"corrupt deletion vector index file {old_path}: length {length}", path=old_path)
            ranges.append(DeletionVectorMeta(r.data_file_name, len(out), r.length, r.cardinality))
            out += blob[r.offset : end]
        name = store.paths.new_index_file_name()
        path = index_file_path(store, self.partition, self.bucket, name)
        store.file_io.write_bytes(path, bytes(out))
        return IndexFileMeta(DELETION_VECTORS_INDEX, name, len(out), len(ranges), tuple(ranges)), path
