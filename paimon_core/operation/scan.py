"""FileStoreScan: snapshot -> manifests -> live file entries, with pruning.

Pruning happens at three levels, cheapest first:
1. manifest files, by their partition min/max stats;
2. manifest entries, by exact partition values and bucket;
3. data files, by their value (append) or key (primary-key) min/max stats.

Manifests are decoded in bulk into columns (:mod:`paimon_core.manifest.manifest_decode`,
cached per process), entries are pruned and merged on those columns
(:class:`~paimon_core.manifest.entry_set.EntrySet`), and objects are made only for
what is returned; ``*_entry_set`` methods return the columns themselves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.file_io import FileIO
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.entry_set import EntrySet, merge_live
from paimon_core.manifest.manifest_batch import decode_cached, read_manifest_batch
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.paths import PathFactory
from paimon_core.predicate import Predicate
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.utils.gc_pause import gc_paused

logger = logging.getLogger(__name__)

EntryFilter = Callable[[ManifestEntry], bool]

#: A manifest read slower than this (seconds) makes the scan read the others in parallel.
PARALLEL_READ_LATENCY_S = 0.002


@dataclass(frozen=True)
class ScanFilter:
    """What a scan keeps. All parts optional; they combine with AND."""

    partition_predicate: Predicate | None = None  # over the partition fields
    partitions: frozenset[bytes] | None = None  # exact partition BinaryRows
    buckets: frozenset[int] | None = None
    file_filter: EntryFilter | None = None  # e.g. value-stats pruning
    #: the bucket count ``buckets`` were computed for (from a predicate's keys): they then only
    #: apply to files of that count, as Java's (bucket, totalBuckets) filter; a partition written
    #: with another count (rescaled) is not pruned by bucket, nor are manifests. None: ``buckets``
    #: are bucket ids as such (e.g. compaction of given buckets).
    bucket_count: int | None = None
    #: only files of real buckets (bucket >= 0): Java's ``onlyReadRealBuckets``, which batch reads
    #: of postpone-bucket tables (``bucket = -2``) use to skip the ``bucket-postpone`` files
    only_real_buckets: bool = False


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
        return read_manifest_batch(self.file_io, self.paths.manifest_path(meta.file_name)).entries()

    # --- pruning -------------------------------------------------------------------
    def _keep_manifest(self, meta: ManifestFileMeta, flt: ScanFilter) -> bool:
        if flt.only_real_buckets and meta.max_bucket is not None and meta.max_bucket < 0:
            return False  # Java's ManifestsReader: a manifest of postpone files only
        if (
            flt.buckets is not None
            and flt.bucket_count is None
            and meta.min_bucket is not None
            and meta.max_bucket is not None
        ):
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

    def _filter_set(self, entries: EntrySet, flt: ScanFilter) -> EntrySet:
        """The rows passing the filter's bucket, partition and file parts (in that order)."""
        if (
            flt.buckets is not None
            or flt.partitions is not None
            or flt.partition_predicate is not None
            or flt.only_real_buckets
        ):
            mask = np.ones(len(entries), dtype=bool)
            if flt.only_real_buckets:
                mask &= np.asarray(entries.bucket, dtype=np.int64) >= 0
            if flt.buckets is not None:
                in_buckets = np.isin(np.asarray(entries.bucket, dtype=np.int64), np.fromiter(flt.buckets, np.int64))
                if flt.bucket_count is not None:
                    totals = np.asarray(entries.total_buckets, dtype=np.int64)
                    in_buckets |= (totals > 0) & (totals != flt.bucket_count)
                mask &= in_buckets
            parts = entries.partition
            if flt.partitions is not None:
                wanted = flt.partitions
                mask &= np.fromiter((p in wanted for p in parts), bool, len(parts))
            pred = flt.partition_predicate
            if pred is not None:
                decode = self.codec.decode
                ok = {p: pred.test_values(decode(p)) for p in set(parts)}
                mask &= np.fromiter((ok[p] for p in parts), bool, len(parts))
            entries = entries.filter(mask)
        if flt.file_filter is not None and len(entries):
            keep = flt.file_filter
            entries = entries.filter([keep(e) for e in entries.entries()])
        return entries

    # --- reading -------------------------------------------------------------------
    def read_entry_set(self, metas: Sequence[ManifestFileMeta], flt: ScanFilter | None = None) -> EntrySet:
        """The entries (ADD and DELETE) of the manifests that pass the filter, in order, as columns."""
        flt = flt or ScanFilter()
        paths = [self.paths.manifest_path(m.file_name) for m in metas if self._keep_manifest(m, flt)]
        items = list(zip(paths, self._read_all(paths), strict=True))  # I/O with the collector on
        with gc_paused():  # columns of many small objects, none cyclic
            return self._filter_set(EntrySet(decode_cached(items)), flt)

    def _read_all(self, paths: Sequence[str]) -> list[bytes]:
        """The bytes of ``paths``. Threads only pay off when a read waits (an object store):
        local files are read in turn; otherwise the first file is read alone, and the rest in
        parallel only if that took a while."""
        read = self.file_io.read_bytes
        if not paths:
            return []
        if isinstance(self.file_io, LocalFileIO):
            return [read(p) for p in paths]
        t0 = time.perf_counter()
        first = read(paths[0])
        rest = paths[1:]
        if len(rest) <= 1 or self.parallelism <= 1 or time.perf_counter() - t0 < PARALLEL_READ_LATENCY_S:
            return [first, *(read(p) for p in rest)]
        with ThreadPoolExecutor(max_workers=min(self.parallelism, len(rest))) as pool:
            return [first, *pool.map(read, rest)]

    def read_entries(self, metas: Sequence[ManifestFileMeta], flt: ScanFilter | None = None) -> list[ManifestEntry]:
        """All entries (ADD and DELETE) of the manifests that pass the filter, in order."""
        return self.read_entry_set(metas, flt).entries()

    def live_entry_set(self, snapshot: Snapshot | None, flt: ScanFilter | None = None) -> EntrySet:
        """The files that make up the snapshot (ADD entries after cancelling deletes), as columns."""
        if snapshot is None:
            return EntrySet([])
        read = self.read_entry_set(self.data_manifests(snapshot), flt)
        with gc_paused():
            entries = merge_live(read)
        kinds = entries.kind
        if int(FileKind.DELETE) in kinds:
            deletes = [i for i, k in enumerate(kinds) if k == FileKind.DELETE]
            raise CorruptFileError(
                f"Snapshot {snapshot.id} of {self.paths.table_path} deletes {len(deletes)} file(s) it never "
                f"added (first: {entries.column('file_name')[deletes[0]]}); its manifests are inconsistent",
                snapshot_id=snapshot.id,
            )
        return entries

    def live_entries(self, snapshot: Snapshot | None, flt: ScanFilter | None = None) -> list[ManifestEntry]:
        """The files that make up the snapshot (ADD entries after cancelling deletes)."""
        return self.live_entry_set(snapshot, flt).entries()

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
