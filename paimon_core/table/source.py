"""Splits and plans: what a read is made of (Paimon's DataSplit / Plan)."""

from __future__ import annotations

from dataclasses import dataclass, field

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta


@dataclass(frozen=True)
class DataSplit:
    """Files of one (partition, bucket) to read together. Picklable."""

    snapshot_id: int
    partition: bytes
    bucket: int
    bucket_path: str
    files: tuple[DataFileMeta, ...]
    #: True when the files can be read as they are (no key merging needed).
    raw_convertible: bool = True
    #: Set for incremental reads: rows are what these files added.
    incremental: bool = False
    #: Deletion vectors of ``files``, aligned with them (None: nothing deleted in that file).
    #: Empty when the table has no deletion vectors (Java's ``dataDeletionFiles``).
    deletion_files: tuple[DeletionFile | None, ...] = ()
    #: The changes of an overwrite (Java's ``beforeFiles`` of ``readChanges``): the bucket's files
    #: before it, read merged and diffed against ``files`` merged (-D, -U/+U, +I by key).
    before_files: tuple[DataFileMeta, ...] = ()
    #: True for such a diff split (``files`` or ``before_files`` may then be empty).
    diff: bool = False
    #: ``postpone.merge-on-read`` (postpone-bucket tables): the partition's ``bucket-postpone``
    #: files in replay order; their rows hashed to this bucket (of ``postpone_num_buckets``) are
    #: merged after ``files`` (Java's ``MergeFileSplitRead.createPostponeMergeReader``).
    postpone_files: tuple[DataFileMeta, ...] = ()
    postpone_bucket_path: str = ""
    postpone_num_buckets: int = 0

    def __post_init__(self) -> None:
        if self.deletion_files and len(self.deletion_files) != len(self.files):
            raise InvalidArgumentError(f"{len(self.deletion_files)} deletion files for {len(self.files)} data files")

    def deletion_file(self, index: int) -> DeletionFile | None:
        """The deletion vector location of ``files[index]``, if any."""
        return self.deletion_files[index] if self.deletion_files else None

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)

    @property
    def file_size(self) -> int:
        return sum(f.file_size for f in self.files)


@dataclass(frozen=True)
class Plan:
    """The result of planning a scan."""

    snapshot_id: int | None
    splits: list[DataSplit] = field(default_factory=list)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.splits)

    def __len__(self) -> int:
        return len(self.splits)
