"""Postpone-bucket tables (``bucket = -2``): the bucket numbers their rows go to and the arguments
their compaction refuses (Java's ``PostponeUtils``: ``createPostponeBucketNumResolver``,
``computeBucketNum``; ``CompactAction.buildForPostponeBucketCompaction``'s checks).

Pure policy over options and manifest entries, shared by the compaction
(:mod:`paimon_core.table.postpone_bucket_compact`), the fixed-bucket batch write
(:mod:`paimon_core.table.fixed_bucket_commit`), ``postpone.merge-on-read`` reads and the dedicated
compaction's refusal of postpone tables (:mod:`paimon_core.operation.compact.table_compact`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import CorruptFileError, InvalidArgumentError
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.options import parse_memory_size
from paimon_core.paths import POSTPONE_BUCKET

if TYPE_CHECKING:
    from paimon_core.operation.compact.compact_planner import CompactRequest

__all__ = [
    "DEFAULT_BUCKET_NUM",
    "STRICT_MODE_LAST_SAFE_SNAPSHOT",
    "TARGET_ROW_NUM_PER_BUCKET",
    "TARGET_SIZE_PER_BUCKET",
    "check_postpone_compact_request",
    "check_postpone_request",
    "compute_bucket_num",
    "resolve_bucket_nums",
]

DEFAULT_BUCKET_NUM = "postpone.default-bucket-num"
TARGET_ROW_NUM_PER_BUCKET = "postpone.target-row-num-per-bucket"
TARGET_SIZE_PER_BUCKET = "postpone.target-size-per-bucket"
STRICT_MODE_LAST_SAFE_SNAPSHOT = "commit.strict-mode.last-safe-snapshot"
INT_MAX = 2**31 - 1


def check_postpone_request(
    table_name: str,
    *,
    partitions: object = None,
    where: str | None = None,
    buckets: object = None,
    partition_idle_time_ms: int | None = None,
    streaming: bool = False,
    order_strategy: str | None = None,
) -> None:
    """Refuse what Java's postpone compaction refuses (``CompactAction.buildForPostponeBucketCompaction``:
    batch only, no partitions, no predicates) and what it has no meaning for here (buckets: they
    are assigned by it; idle partitions; sort compaction), naming the argument."""
    what = None
    if streaming:
        what = "streaming mode (Postpone bucket compaction currently only supports batch mode)"
    elif partitions:
        what = "partitions (Postpone bucket compaction currently does not support specifying partitions)"
    elif where:
        what = "where (Postpone bucket compaction currently does not support predicates)"
    elif buckets is not None:
        what = "buckets (the compaction of a postpone-bucket table assigns the buckets)"
    elif partition_idle_time_ms is not None:
        what = "partition_idle_time (Postpone bucket compaction compacts every partition with postpone files)"
    elif order_strategy and order_strategy.strip().lower() != "none":
        what = "order_strategy (sort compaction is for unaware-bucket append tables)"
    if what is not None:
        raise InvalidArgumentError(f"Table {table_name} has postpone buckets (bucket = -2); its compaction does not take {what}")


def check_postpone_compact_request(table_name: str, request: CompactRequest, *, streaming: bool = False) -> None:
    """:func:`check_postpone_request` of a compaction request."""
    check_postpone_request(
        table_name,
        partitions=request.partitions,
        where=request.where,
        buckets=request.buckets,
        partition_idle_time_ms=request.partition_idle_time_ms,
        streaming=streaming,
    )


def compute_bucket_num(value: int, target_per_bucket: int, option: str) -> int:
    """Java's ``PostponeUtils.computeBucketNum``: ``ceil(value / target)``, at least 1."""
    if target_per_bucket <= 0:
        raise InvalidArgumentError(f"Option '{option}' must be greater than 0.")
    n = 1 if value <= 0 else (value - 1) // target_per_bucket + 1
    if n > INT_MAX:
        raise InvalidArgumentError(
            f"Computed postpone bucket number {n} exceeds the maximum integer value (Integer.MAX_VALUE = "
            f"{INT_MAX}). Consider increasing '{option}' to reduce the bucket count."
        )
    return n


def _positive_int(options: Mapping[str, str], key: str) -> int | None:
    text = options.get(key)
    if text is None or not str(text).strip():
        return None
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InvalidArgumentError(f"Option '{key}' must be an integer, got {text!r}") from None
    if value <= 0:
        raise InvalidArgumentError(f"Option '{key}' must be greater than 0.")
    return value


def resolve_bucket_nums(
    options: Mapping[str, str], entries: Sequence[ManifestEntry], *, describe: Callable[[bytes], str] = repr
) -> dict[bytes, int]:
    """Per partition of ``entries`` (a snapshot's live files) holding postpone files or real
    buckets: the bucket count its postpone rows go to (Java's ``PostponeBucketNumResolver``;
    see the module docstring). Real buckets of one partition with two counts are an error."""
    known: dict[bytes, int] = {}
    for e in entries:
        if e.bucket < 0 or e.total_buckets < 0:
            continue
        old = known.setdefault(e.partition, e.total_buckets)
        if old != e.total_buckets:
            raise CorruptFileError(
                f"Partition {describe(e.partition)} has different totalBuckets {old} and {e.total_buckets}"
            )
    default = _positive_int(options, DEFAULT_BUCKET_NUM)
    out = dict(known)
    postpone = [e for e in entries if e.bucket == POSTPONE_BUCKET and e.partition not in known]
    if default is not None:
        for e in postpone:
            out[e.partition] = default
        return out
    rows_target = options.get(TARGET_ROW_NUM_PER_BUCKET)
    totals: dict[bytes, int] = {}
    if rows_target is not None and str(rows_target).strip():
        try:
            target = int(str(rows_target).strip())
        except ValueError:
            raise InvalidArgumentError(f"Option '{TARGET_ROW_NUM_PER_BUCKET}' must be an integer, got {rows_target!r}") from None
        option = TARGET_ROW_NUM_PER_BUCKET
        for e in postpone:
            totals[e.partition] = totals.get(e.partition, 0) + e.file.row_count
    else:
        target = parse_memory_size(options.get(TARGET_SIZE_PER_BUCKET, "1 gb"), key=TARGET_SIZE_PER_BUCKET)
        option = TARGET_SIZE_PER_BUCKET
        for e in postpone:
            totals[e.partition] = totals.get(e.partition, 0) + e.file.file_size
    if target <= 0:
        raise InvalidArgumentError(f"Option '{option}' must be greater than 0.")
    for partition, value in totals.items():
        out[partition] = compute_bucket_num(value, target, option)
    return out
