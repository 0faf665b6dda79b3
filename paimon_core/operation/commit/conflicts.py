"""Conflict detection before a snapshot is published (Java's ``ConflictDetection``).

Five checks, each failing the commit with a :class:`CommitConflictError` that names the files:

* **File deletion conflicts**: a DELETE entry (compaction input, overwrite, delete) whose file
  the base snapshot no longer has, or an ADD of a file that is already live.
* **Bucket count**: the commit writes a partition with another total bucket count than the
  partition's live files have (a rescale that is not an overwrite).
* **LSM conflicts** (primary-key tables): after the changes, two files of one partition and bucket
  at the same level >= 1 overlap in key range. Levels >= 1 are sorted runs; an overlap means two
  compactions of the same bucket raced and both landed on top of the same base.
* **Row-id ranges** (COMPACT commits of data-evolution tables): overlapping files must span the
  same row-id range (:func:`check_row_id_range_conflicts`).
* **Deletion vectors** (tables with ``deletion-vectors.enabled``): a data file the commit removes
  still has a vector in an index file the commit keeps (:func:`check_deletion_vector_conflicts`),
  and DV index changes that race another commit's (:func:`check_index_conflicts`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from paimon_core.exceptions import CommitConflictError
from paimon_core.manifest.entries import FileKind, IndexManifestEntry, ManifestEntry

#: the index type of deletion vector index files (``DeletionVectorsIndexFile.DELETION_VECTORS_INDEX``)
DELETION_VECTORS = "DELETION_VECTORS"
HASH = "HASH"

KeyOf = Callable[[bytes], tuple[object, ...]]


def check_no_conflicts(
    base: Sequence[ManifestEntry],
    changes: Sequence[ManifestEntry],
    *,
    snapshot_id: int | None,
    key_of: KeyOf | None = None,
    check_buckets: bool = True,
    check_row_id_ranges: bool = False,
) -> None:
    """Fail if the changes conflict with the base snapshot's live entries ``base`` (see module doc).

    ``key_of`` (primary-key tables) turns a file's BinaryRow min/max key into a comparable tuple and
    enables the LSM check. ``check_buckets=False`` for overwrites, which may change the bucket count.
    ``check_row_id_ranges`` (COMPACT commits of data-evolution tables): the row-id range check.
    """
    merged = _apply(base, changes, snapshot_id)
    if check_buckets:
        _check_bucket_count(base, changes, snapshot_id)
    if key_of is not None:
        _check_key_ranges(merged, changes, snapshot_id, key_of)
    if check_row_id_ranges:
        check_row_id_range_conflicts(merged, snapshot_id=snapshot_id)


def check_row_id_range_conflicts(merged: Sequence[ManifestEntry], *, snapshot_id: int | None) -> None:
    """Java ``DataEvolutionConflictDetection.checkRowIdRangeConflicts``: after the commit, the
    data files of a data-evolution table that overlap in row-id range must all span the same
    range. A compaction merging ranges [0, 99] and [100, 199] into one file conflicts with an
    update that landed meanwhile over [0, 99] alone: committed, the table could not be read."""
    ranged = sorted(
        (
            (e.file.first_row_id, e.file.first_row_id + e.file.row_count - 1, e)
            for e in merged
            if e.file.first_row_id is not None and not _dedicated(e.file.file_name)
        ),
        key=lambda r: (r[0], r[1]),
    )
    groups: list[list[tuple[int, int, ManifestEntry]]] = []
    end = 0
    for start, stop, e in ranged:
        if groups and start <= end:
            groups[-1].append((start, stop, e))
            end = max(end, stop)
        else:
            groups.append([(start, stop, e)])
            end = stop
    for group in groups:
        if len({(a, b) for a, b, _ in group}) > 1:
            files = ", ".join(f"{g.file.file_name} (rows {a}..{b})" for a, b, g in group)
            raise CommitConflictError(
                "For Data Evolution table, multiple 'MERGE INTO' and 'COMPACT' operations have encountered "
                f"conflicts, data files: {files} (latest snapshot {snapshot_id}); this commit is abandoned and the "
                "table is unchanged",
                file_name=group[-1][2].file.file_name,
                snapshot_id=snapshot_id,
                conflict="row-id-range",
            )


def _dedicated(file_name: str) -> bool:
    """Blob and vector-store files cover sub-ranges of a data file (Java ``dedicatedStorageFile``)."""
    return file_name.endswith(".blob") or ".vector." in file_name


def _apply(base: Sequence[ManifestEntry], changes: Sequence[ManifestEntry], snapshot_id: int | None) -> list[ManifestEntry]:
    live = {e.identifier(): e for e in base}
    for e in changes:
        ident = e.identifier()
        if e.kind == FileKind.DELETE:
            if ident not in live:
                raise CommitConflictError(
                    f"File deletion conflicts detected: file {e.file.file_name} (bucket {e.bucket}, level "
                    f"{e.file.level}) was already removed by a concurrent commit (latest snapshot {snapshot_id}); "
                    "this commit is abandoned and the table is unchanged",
                    file_name=e.file.file_name,
                    snapshot_id=snapshot_id,
                    conflict="file-deletion",
                )
            del live[ident]
        elif ident in live:
            raise CommitConflictError(
                f"File {e.file.file_name} (bucket {e.bucket}) is already part of snapshot {snapshot_id}",
                file_name=e.file.file_name,
                snapshot_id=snapshot_id,
                conflict="file-deletion",
            )
        else:
            live[ident] = e
    return list(live.values())


def _check_bucket_count(base: Sequence[ManifestEntry], changes: Sequence[ManifestEntry], snapshot_id: int | None) -> None:
    """Java's ``checkBucketKeepSame``: a partition keeps its total bucket count unless overwritten."""
    existing: dict[bytes, int] = {}
    for e in base:
        existing.setdefault(e.partition, e.total_buckets)
    for e in changes:
        if e.kind != FileKind.ADD:
            continue
        have = existing.get(e.partition)
        # fixed buckets only: engines record unaware/dynamic buckets differently (-1 or 0)
        if have is not None and have > 0 and e.total_buckets > 0 and have != e.total_buckets:
            raise CommitConflictError(
                f"Total buckets of a partition changed from {have} to {e.total_buckets} without an overwrite "
                f"(file {e.file.file_name}, latest snapshot {snapshot_id}): the table was rescaled concurrently; "
                "give up committing",
                file_name=e.file.file_name,
                snapshot_id=snapshot_id,
                conflict="bucket-count",
            )


def _check_key_ranges(
    merged: Sequence[ManifestEntry], changes: Sequence[ManifestEntry], snapshot_id: int | None, key_of: KeyOf
) -> None:
    """No two files of one (partition, bucket, level >= 1) may overlap in key range."""
    touched = {(e.partition, e.bucket) for e in changes}
    levels: dict[tuple[bytes, int, int], list[ManifestEntry]] = defaultdict(list)
    for e in merged:
        if e.file.level >= 1 and (e.partition, e.bucket) in touched:
            levels[(e.partition, e.bucket, e.file.level)].append(e)
    for (_, bucket, level), entries in levels.items():
        if len(entries) < 2:
            continue
        ranges = sorted(((key_of(e.file.min_key), key_of(e.file.max_key), e) for e in entries), key=lambda r: r[0])
        for (_, a_max, a), (b_min, _, b) in zip(ranges, ranges[1:], strict=False):
            if a_max >= b_min:
                raise CommitConflictError(
                    f"LSM conflicts detected: files {a.file.file_name} and {b.file.file_name} of bucket {bucket} "
                    f"at level {level} overlap in key range after this commit (latest snapshot {snapshot_id}); "
                    "another compaction of the same bucket landed first. Give up committing",
                    file_name=b.file.file_name,
                    snapshot_id=snapshot_id,
                    conflict="lsm",
                )


def check_index_conflicts(
    previous: Sequence[IndexManifestEntry], changes: Sequence[IndexManifestEntry], *, snapshot_id: int | None
) -> None:
    """Deletion-vector index conflicts: a DELETE of a DV index file the base no longer has (a
    concurrent compaction replaced it), or, after the changes, one data file with vectors in two
    live index files of its bucket (both compactions' vectors would not apply). Either would lose
    deleted-row marks, so the commit is abandoned."""
    live = {e.index_file.file_name for e in previous}
    deleted = {e.index_file.file_name for e in changes if e.kind == FileKind.DELETE}
    for e in changes:
        if e.kind == FileKind.DELETE and e.index_file.index_type == DELETION_VECTORS and e.index_file.file_name not in live:
            raise CommitConflictError(
                f"Deletion vector index conflicts detected: index file {e.index_file.file_name} (bucket {e.bucket}) "
                f"was already replaced by a concurrent commit (latest snapshot {snapshot_id}); this commit is "
                "abandoned and the table is unchanged",
                file_name=e.index_file.file_name,
                snapshot_id=snapshot_id,
                conflict="index-deletion",
            )
    # Data file names are unique within a partition; a partition's vectors may sit in any bucket's
    # index files (an unaware-bucket append table writes them all under one bucket).
    owner: dict[tuple[bytes, str], str] = {}
    after = [e for e in previous if e.index_file.file_name not in deleted]
    after += [e for e in changes if e.kind == FileKind.ADD]
    for e in after:
        if e.index_file.index_type != DELETION_VECTORS:
            continue
        for r in e.index_file.dv_ranges or ():
            key = (e.partition, r.data_file_name)
            other = owner.setdefault(key, e.index_file.file_name)
            if other != e.index_file.file_name:
                raise CommitConflictError(
                    f"Deletion vector index conflicts detected: data file {r.data_file_name} (bucket {e.bucket}) has "
                    f"vectors in index files {other} and {e.index_file.file_name} after a concurrent commit (latest "
                    f"snapshot {snapshot_id}); this commit is abandoned and the table is unchanged",
                    file_name=r.data_file_name,
                    snapshot_id=snapshot_id,
                    conflict="index-deletion",
                )
    check_hash_index_conflicts(previous, changes, snapshot_id=snapshot_id)


def check_hash_index_conflicts(
    previous: Sequence[IndexManifestEntry], changes: Sequence[IndexManifestEntry], *, snapshot_id: int | None
) -> None:
    """A new HASH index file of a dynamic bucket must replace every live HASH file of its
    (partition, bucket): the writer restored that file and its new file holds those keys plus its
    own. A live file it does not replace was committed by a concurrent writer of the same partition
    since the restore; publishing would drop that writer's keys from the index (later upserts of
    them would land in a second bucket), so the commit is abandoned (Java supports one writer per
    dynamic-bucket partition)."""
    replaced = {(e.partition, e.bucket, e.index_file.file_name) for e in changes if e.kind == FileKind.DELETE}
    written = {(e.partition, e.bucket) for e in changes if e.kind == FileKind.ADD and e.index_file.index_type == HASH}
    for e in previous:
        key = (e.partition, e.bucket)
        if e.index_file.index_type == HASH and key in written and (*key, e.index_file.file_name) not in replaced:
            raise CommitConflictError(
                f"Dynamic bucket index conflict: HASH index file {e.index_file.file_name} (bucket {e.bucket}) was "
                f"committed by a concurrent writer of the same partition (latest snapshot {snapshot_id}) after this "
                "writer restored the index; this commit is abandoned and the table is unchanged. Write each "
                "partition of a dynamic-bucket table from one writer at a time, then retry",
                file_name=e.index_file.file_name,
                snapshot_id=snapshot_id,
                conflict="hash-index",
            )


def check_deletion_vector_conflicts(
    latest_index: Sequence[IndexManifestEntry],
    changes: Sequence[ManifestEntry],
    index_changes: Sequence[IndexManifestEntry],
    *,
    snapshot_id: int | None,
) -> None:
    """A data file this commit removes (a compaction's input) must not have a deletion vector in
    the latest snapshot's index that this commit leaves behind: such a vector was added by a
    concurrent commit (a writer's lookup marked a row of the file superseded) after this commit's
    plan read the file, so the rewritten rows would bring the superseded row back. The commit is
    abandoned (a compaction re-plans on the new latest snapshot)."""
    removed = {(e.partition, e.file.file_name) for e in changes if e.kind == FileKind.DELETE}
    if not removed:
        return
    dropped = {e.index_file.file_name for e in index_changes if e.kind == FileKind.DELETE}
    live: dict[str, IndexManifestEntry] = {}
    for e in latest_index:
        if e.index_file.index_type != DELETION_VECTORS:
            continue
        if e.kind == FileKind.ADD:
            live[e.index_file.file_name] = e
        else:
            live.pop(e.index_file.file_name, None)
    for name, e in live.items():
        if name in dropped:
            continue
        for r in e.index_file.dv_ranges or ():
            if (e.partition, r.data_file_name) in removed:
                raise CommitConflictError(
                    f"Deletion vector conflicts detected: data file {r.data_file_name} (bucket {e.bucket}) is removed "
                    f"by this commit but has a deletion vector in index file {name} that a concurrent commit added "
                    f"(latest snapshot {snapshot_id}); the rows it deletes would come back. This commit is abandoned "
                    "and the table is unchanged",
                    file_name=r.data_file_name,
                    snapshot_id=snapshot_id,
                    conflict="deletion-vector",
                )
