"""HASH index files of dynamic-bucket tables, and their upkeep during a write.

A HASH index file holds the key hashes of one (partition, bucket): raw 4-byte big-endian
int32 values, one per key, no header (Java's ``HashIndexFile``). The index manifest lists
one file per (partition, bucket).

:class:`HashIndexMaintainer` is what a dynamic-bucket :class:`TableWrite` uses: it loads a
partition's index once (Java's ``HashBucketAssigner.loadIndex``), assigns buckets to key
hashes with :class:`DynamicBucketAssigner`, and at ``prepare_commit`` writes one complete
new file per bucket that gained keys (Java's ``DynamicBucketIndexMaintainer``). In overwrite
mode it starts every partition empty (Java's ``SimpleHashBucketAssigner`` plus
``ignorePreviousFiles``): the commit drops the overwritten partitions' old index files.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.bucket import bucket_hashes, hash_bytes_by_words
from paimon_core.exceptions import CorruptFileError
from paimon_core.index.bucket_assigner import DynamicBucketAssigner, PartitionIndex
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import IndexFileMeta, IndexManifestEntry
from paimon_core.manifest.index_manifest import read_index_manifest
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager

HASH_INDEX = "HASH"

IndexChange = tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]


def read_hash_index(file_io: FileIO, path: str) -> npt.NDArray[np.int32]:
    """The hashes of a HASH index file as int32 (CorruptFileError if the size is not 4*n)."""
    data = file_io.read_bytes(path)
    if len(data) % 4:
        raise CorruptFileError(f"Corrupt HASH index file {path}: {len(data)} bytes is not a multiple of 4", path=path)
    return np.frombuffer(data, dtype=">i4").astype(np.int32)


def write_hash_index(file_io: FileIO, path: str, hashes: npt.NDArray[np.int32]) -> IndexFileMeta:
    """Write hashes (any order) as a new HASH index file and describe it."""
    data = np.asarray(hashes, dtype=np.int32).astype(">i4").tobytes()
    file_io.write_bytes(path, data)
    return IndexFileMeta(HASH_INDEX, path.rsplit("/", 1)[-1], len(data), int(len(hashes)))


def partition_hash(partition: bytes) -> int:
    """Java's ``BinaryRow.hashCode()`` of a serialized partition row (skips the arity prefix)."""
    return hash_bytes_by_words(partition[4:])


class HashIndexMaintainer:
    """Bucket assignment plus HASH index upkeep for the partitions one writer touches."""

    def __init__(
        self,
        *,
        file_io: FileIO,
        paths: PathFactory,
        snapshot_manager: SnapshotManager,
        key_fields: Sequence[DataField],
        assigner: DynamicBucketAssigner,
        overwrite: bool = False,
        table_name: str = "",
    ) -> None:
        self.file_io = file_io
        self.paths = paths
        self.snapshot_manager = snapshot_manager
        self.key_fields = list(key_fields)
        self.assigner = assigner
        self.overwrite = overwrite
        self._indexes: dict[bytes, PartitionIndex] = {}
        self._files: dict[tuple[bytes, int], IndexFileMeta] = {}
        self.table_name = table_name
        #: the snapshot the writer restores from (the latest at its first partition; a newer one
        #: once that snapshot is expired under it) and its HASH entries by partition
        self._restored: Snapshot | None = None
        self._entries: dict[bytes, list[IndexManifestEntry]] | None = None

    def _hash_entries(self, snapshot: Snapshot | None) -> dict[bytes, list[IndexManifestEntry]]:
        """HASH entries of ``snapshot`` by partition, read once per snapshot."""
        if self._entries is None or snapshot is not self._restored:
            entries: dict[bytes, list[IndexManifestEntry]] = {}
            if snapshot is not None and snapshot.index_manifest and not self.overwrite:
                for e in read_index_manifest(self.file_io, self.paths.manifest_path(snapshot.index_manifest)):
                    if e.index_file.index_type == HASH_INDEX:
                        entries.setdefault(e.partition, []).append(e)
            self._restored, self._entries = snapshot, entries
        return self._entries

    def partition_index(self, partition: bytes) -> PartitionIndex:
        """The partition's index, loaded at first use from the snapshot the writer restores from.

        A concurrent commit plus expiry may delete that snapshot's index manifest or HASH files
        before they are read: the load then starts again from the latest snapshot
        (:func:`~paimon_core.operation.stale_snapshot.read_from_latest`).
        """
        index = self._indexes.get(partition)
        if index is not None:
            return index
        from paimon_core.operation.stale_snapshot import read_from_latest

        def load(snapshot: Snapshot | None) -> dict[int, tuple[IndexFileMeta, npt.NDArray[np.int32]]]:
            return {
                e.bucket: (e.index_file, read_hash_index(self.file_io, self.paths.index_file_path(e.index_file.file_name)))
                for e in self._hash_entries(snapshot).get(partition, [])
            }

        restored = self._entries is not None  # later partitions start from the same snapshot
        files = read_from_latest(
            self.snapshot_manager,
            load,
            table=self.table_name,
            what="Restoring the dynamic bucket index",
            first=self._restored,
            start_from_latest=not restored,
        )
        for bucket, (meta, _) in files.items():
            self._files[(partition, bucket)] = meta
        index = PartitionIndex.load({bucket: hashes for bucket, (_, hashes) in files.items()})
        self._indexes[partition] = index
        return index

    def assign(self, partition: bytes, rows: pa.Table) -> npt.NDArray[np.int32]:
        """Bucket of every row of ``rows`` (all of ``partition``), by its trimmed primary key."""
        hashes = bucket_hashes([rows.column(f.name) for f in self.key_fields], [f.type for f in self.key_fields])
        phash = partition_hash(partition) if self.assigner.num_assigners > 1 else 0
        return self.assigner.assign(self.partition_index(partition), hashes, partition_hash=phash)

    def prepare_commit(self) -> dict[tuple[bytes, int], IndexChange]:
        """A complete new HASH file for every bucket that gained keys (and the file it replaces)."""
        out: dict[tuple[bytes, int], IndexChange] = {}
        for partition, index in self._indexes.items():
            for bucket in sorted(index.added):
                name = self.paths.new_index_file_name()
                meta = write_hash_index(self.file_io, self.paths.index_file_path(name), index.bucket_hashes(bucket))
                old = self._files.get((partition, bucket))
                out[(partition, bucket)] = ((meta,), (old,) if old is not None else ())
                self._files[(partition, bucket)] = meta
            index.added.clear()
        return out
