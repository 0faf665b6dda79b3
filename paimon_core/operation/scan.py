"""FileStoreScan: snapshot -> manifests -> live file entries, with pruning.

Pruning happens at three levels, cheapest first:
1. manifest files, by their partition min/max stats;
2. manifest entries, by exact partition values and bucket;
3. data files, by their value (append) or key (primary-key) min/max stats.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.manifest.merger import merge_entries
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.paths import PathFactory
from paimon_core.predicate import Predicate
from paimon_core.snapshot.snapshot import Snapshot

logger = logging.getLogger(__name__)

EntryFilter = Callable[[ManifestEntry], bool]


@dataclass(frozen=True)
class ScanFilter:
    """What a scan keeps. All parts optional; they combine with AND."""

    partition_predicate: Predicate | None = None  # over the partition fields
    partitions: frozenset[bytes] | None = None  # exact partition BinaryRows
    buckets: frozenset[int] | None = None
    file_filter: EntryFilter | None = None  # e.g. value-stats pruning


class FileStoreScan:
    """Reads the manifests of a snapshot into live entries."""

    def __init__(self, file_io: FileIO, paths: PathFactory, partition_codec: PartitionCodec, *, parallelism: int = 8):
        self.file_io = file_io
        self.paths = paths
        self.codec = partition_codec
        self.parallelism = parallelism

    # --- manifest lists ----------------------------------------------------------
    def read_list(self, name: str) -> list[ManifestFileMeta]:
        return read_manifest_list(self.file_io, self.paths.manifest_path(name))

    def data_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        """Base + delta manifests: the whole state of the snapshot."""
        return self.read_list(snapshot.base_manifest_list) + self.read_list(snapshot.delta_manifest_list)

    def delta_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        return self.read_list(snapshot.delta_manifest_list)

    def read_manifest(self, meta: ManifestFileMeta) -> list[ManifestEntry]:
        return read_manifest_file(self.file_io, self.paths.manifest_path(meta.file_name))

    # --- pruning -------------------------------------------------------------------
    def _keep_manifest(self, meta: ManifestFileMeta, flt: ScanFilter) -> bool:
        if flt.buckets is not None and meta.min_bucket is not None and meta.max_bucket is not None:
            if not any(meta.min_bucket <= b <= meta.max_bucket for b in flt.buckets):
                return False
        pred = flt.partition_predicate
        if pred is None or not self.codec.types:
            return True
        stats = meta.partition_stats
        try:
            mins = self.codec.decode(stats.min_values)
            maxs = self.codec.decode(stats.max_values)
        except Exception:  # stats we cannot decode never prune
            return True
        if len(mins) != len(self.codec.types):
            return True
        nulls = list(stats.null_counts) if stats.null_counts else None
        return pred.test_stats(meta.num_added_files + meta.num_deleted_files, mins, maxs, nulls)

    def _keep_entry(self, e: ManifestEntry, flt: ScanFilter) -> bool:
        if flt.buckets is not None and e.bucket not in flt.buckets:
            return False
        if flt.partitions is not None and e.partition not in flt.partitions:
            return False
        if flt.partition_predicate is not None and not flt.partition_predicate.test_values(
            self.codec.decode(e.partition)
        ):
            return False
        return flt.file_filter is None or flt.file_filter(e)

    # --- reading -------------------------------------------------------------------
    def read_entries(self, metas: Sequence[ManifestFileMeta], flt: ScanFilter | None = None) -> list[ManifestEntry]:
        """All entries (ADD and DELETE) of the manifests that pass the filter, in order."""
        flt = flt or ScanFilter()
        kept = [m for m in metas if self._keep_manifest(m, flt)]

        def load(m: ManifestFileMeta) -> list[ManifestEntry]:
            return [e for e in self.read_manifest(m) if self._keep_entry(e, flt)]

        if len(kept) <= 1 or self.parallelism <= 1:
            chunks: Iterable[list[ManifestEntry]] = [load(m) for m in kept]
        else:
            with ThreadPoolExecutor(max_workers=min(self.parallelism, len(kept))) as pool:
                chunks = list(pool.map(load, kept))
        return [e for chunk in chunks for e in chunk]

    def live_entries(self, snapshot: Snapshot | None, flt: ScanFilter | None = None) -> list[ManifestEntry]:
        """The files that make up the snapshot (ADD entries after cancelling deletes)."""
        if snapshot is None:
            return []
        entries = merge_entries(self.read_entries(self.data_manifests(snapshot), flt))
        deletes = [e for e in entries if e.kind == FileKind.DELETE]
        if deletes:
            raise CorruptFileError(
                f"Snapshot {snapshot.id} of {self.paths.table_path} deletes {len(deletes)} file(s) it never "
                f"added (first: {deletes[0].file.file_name}); its manifests are inconsistent",
                snapshot_id=snapshot.id,
            )
        return entries

    def max_sequence_numbers(
        self, snapshot: Snapshot | None, flt: ScanFilter | None = None
    ) -> dict[tuple[bytes, int], int]:
        """The highest sequence number of each (partition, bucket) of the snapshot's live files:
        where a writer of that bucket continues (Java's ``restoreMaxSeqNumber``)."""
        out: dict[tuple[bytes, int], int] = {}
        for e in self.live_entries(snapshot, flt):
            key = (e.partition, e.bucket)
            out[key] = max(out.get(key, -1), e.file.max_sequence_number)
        return out

    def delta_entries(self, snapshot: Snapshot, flt: ScanFilter | None = None) -> list[ManifestEntry]:
        """What one snapshot changed (ADD and DELETE entries of its delta list)."""
        return self.read_entries(self.delta_manifests(snapshot), flt)
