"""Compaction picking for fixed-bucket append tables (Java ``BucketedAppendCompactManager``).

A bucket's files are considered oldest first (ascending ``min_sequence_number``, Java's
priority queue), so a rewrite keeps the bucket's row order.

* :func:`pick_compact_before` is the writer's best-effort pick (``pickCompactBefore``): take
  files oldest first; as soon as ``compaction.min.file-num`` files are taken they are the unit;
  whenever the taken files reach ``2 × target-file-size`` bytes the oldest one leaves the window
  and is *released* (it will not be considered again by this writer).
* :func:`pick_full_compaction` is a full compaction (``triggerFullCompaction`` +
  ``FullCompactTask``): nothing below 3 files unless deletion vectors are enabled or
  ``compaction.force-rewrite-all-files``; leading files that are already big
  (``≥ target × compaction.small-file-ratio``) and have no deletion vector are kept; without
  deletion vectors the rest is rewritten only if small files outnumber big ones.

Both are pure functions; the caller applies the result.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from paimon_core.manifest.entries import DataFileMeta

__all__ = [
    "FULL_COMPACT_MIN_FILE",
    "BucketPick",
    "order_by_sequence",
    "pick_compact_before",
    "pick_full_compaction",
]

logger = logging.getLogger(__name__)

#: Java ``FULL_COMPACT_MIN_FILE``: files a full compaction needs (without deletion vectors).
FULL_COMPACT_MIN_FILE = 3


@dataclass(frozen=True, slots=True)
class BucketPick:
    """Result of :func:`pick_compact_before`.

    ``picked``: the files to rewrite together, oldest first, or None when nothing is due.
    ``remaining``: the files still waiting (Java's ``toCompact`` after the pick), oldest first;
    files that slid out of the window are in neither.
    """

    picked: tuple[DataFileMeta, ...] | None
    remaining: tuple[DataFileMeta, ...]


def order_by_sequence(files: Iterable[DataFileMeta]) -> list[DataFileMeta]:
    """Oldest first (Java compares ``minSequenceNumber`` only); warns about overlapping ranges,
    which mean several jobs wrote the bucket (Java's ``fileComparator`` warning)."""
    ordered = sorted(files, key=lambda f: f.min_sequence_number)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.min_sequence_number <= a.max_sequence_number:
            logger.warning(
                "There should be no overlap in append files, but Range1(%d, %d), Range2(%d, %d): "
                "check whether several jobs write this bucket",
                a.min_sequence_number,
                a.max_sequence_number,
                b.min_sequence_number,
                b.max_sequence_number,
            )
    return ordered


def pick_compact_before(files: Iterable[DataFileMeta], *, min_file_num: int, target_file_size: int) -> BucketPick:
    """Java ``pickCompactBefore`` over a bucket's files waiting for compaction."""
    queue = deque(order_by_sequence(files))
    candidates: deque[DataFileMeta] = deque()
    total = 0
    while queue:
        f = queue.popleft()
        candidates.append(f)
        total += f.file_size
        if len(candidates) >= min_file_num:
            return BucketPick(tuple(candidates), tuple(queue))
        if total >= target_file_size * 2:
            total -= candidates.popleft().file_size  # slide the window: the oldest is released
    return BucketPick(None, tuple(candidates))


def pick_full_compaction(
    files: Iterable[DataFileMeta],
    *,
    compaction_file_size: int,
    deletion_vectors_enabled: bool = False,
    with_deletion_vector: Collection[str] = frozenset(),
    force_rewrite_all_files: bool = False,
) -> tuple[DataFileMeta, ...]:
    """The files a full compaction of one bucket rewrites (empty: nothing to do).

    ``with_deletion_vector``: names of the files that have a deletion vector (they are always
    rewritten). ``compaction_file_size`` is ``target-file-size × compaction.small-file-ratio``.
    """
    ordered = order_by_sequence(files)
    if not force_rewrite_all_files and (
        not ordered or (not deletion_vectors_enabled and len(ordered) < FULL_COMPACT_MIN_FILE)
    ):
        return ()
    start = 0
    if not force_rewrite_all_files:
        while start < len(ordered):
            f = ordered[start]
            if f.file_size >= compaction_file_size and f.file_name not in with_deletion_vector:
                start += 1
                continue
            break
    rest = ordered[start:]
    if deletion_vectors_enabled:
        return tuple(rest)
    small = sum(1 for f in rest if f.file_size < compaction_file_size)
    big = len(rest) - small
    if force_rewrite_all_files or (small > big and len(rest) >= FULL_COMPACT_MIN_FILE):
        return tuple(rest)
    return ()
