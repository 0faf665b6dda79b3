"""The bucket count a postpone compaction gives each partition (Java's ``PostponeUtils``
``PostponeBucketNumResolver`` / ``computeBucketNum``), and the arguments it refuses."""

from __future__ import annotations

import pytest

from paimon_core.exceptions import CorruptFileError, InvalidArgumentError
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry, SimpleStats
from paimon_core.postpone.postpone_utils import (
    check_postpone_request,
    compute_bucket_num,
    resolve_bucket_nums,
)

GIB = 1024**3


def _entry(partition: bytes, bucket: int, total: int, *, rows: int = 10, size: int = 1000, name: str = "f") -> ManifestEntry:
    f = DataFileMeta(
        file_name=name,
        file_size=size,
        row_count=rows,
        min_key=b"",
        max_key=b"",
        key_stats=SimpleStats.empty(),
        value_stats=SimpleStats.empty(),
        min_sequence_number=0,
        max_sequence_number=rows - 1,
        schema_id=0,
        level=0,
    )
    return ManifestEntry(FileKind.ADD, partition, bucket, total, f)


def test_compute_bucket_num_is_a_ceiling_of_at_least_one() -> None:
    assert [compute_bucket_num(v, 40, "k") for v in (0, 1, 40, 41, 97, 120)] == [1, 1, 1, 2, 3, 3]
    with pytest.raises(InvalidArgumentError, match="'k' must be greater than 0"):
        compute_bucket_num(5, 0, "k")
    with pytest.raises(InvalidArgumentError, match="exceeds the maximum integer value"):
        compute_bucket_num(2**40, 1, "postpone.target-row-num-per-bucket")


def test_existing_buckets_win_then_the_default_then_the_estimate() -> None:
    entries = [
        _entry(b"a", 0, 3),
        _entry(b"a", -2, -2, rows=500),  # a: real buckets already -> 3
        _entry(b"b", -2, -2, rows=97, size=3 * GIB),
        _entry(b"b", -2, -2, rows=3, size=GIB // 2),
    ]
    assert resolve_bucket_nums({}, entries) == {b"a": 3, b"b": 4}  # ceil(3.5 GiB / 1 GiB)
    assert resolve_bucket_nums({"postpone.target-size-per-bucket": "2 gb"}, entries) == {b"a": 3, b"b": 2}
    # the row target takes precedence over the size target
    rows = {"postpone.target-row-num-per-bucket": "40", "postpone.target-size-per-bucket": "1 b"}
    assert resolve_bucket_nums(rows, entries) == {b"a": 3, b"b": 3}
    # postpone.default-bucket-num is used exactly for new partitions, never for existing ones
    assert resolve_bucket_nums({**rows, "postpone.default-bucket-num": "7"}, entries) == {b"a": 3, b"b": 7}


def test_bad_options_and_inconsistent_partitions_are_errors() -> None:
    entries = [_entry(b"b", -2, -2)]
    for options, message in [
        ({"postpone.default-bucket-num": "0"}, "'postpone.default-bucket-num' must be greater than 0"),
        ({"postpone.default-bucket-num": "x"}, "'postpone.default-bucket-num' must be an integer"),
        ({"postpone.target-row-num-per-bucket": "-1"}, "'postpone.target-row-num-per-bucket' must be greater than 0"),
        ({"postpone.target-size-per-bucket": "0 b"}, "'postpone.target-size-per-bucket' must be greater than 0"),
    ]:
        with pytest.raises(InvalidArgumentError, match=message):
            resolve_bucket_nums(options, entries)
    with pytest.raises(CorruptFileError, match="different totalBuckets 2 and 4"):
        resolve_bucket_nums({}, [_entry(b"a", 0, 2), _entry(b"a", 1, 4)])


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"streaming": True}, "only supports batch mode"),
        ({"partitions": "dt=a"}, "does not support specifying partitions"),
        ({"where": "dt = 'a'"}, "does not support predicates"),
        ({"buckets": frozenset({0})}, "buckets"),
        ({"partition_idle_time_ms": 0}, "partition_idle_time"),
        ({"order_strategy": "zorder"}, "order_strategy"),
    ],
)
def test_arguments_java_refuses_are_refused_by_name(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(InvalidArgumentError, match=named):
        check_postpone_request("db.t", **kwargs)  # type: ignore[arg-type]
    check_postpone_request("db.t", order_strategy="none")  # nothing to refuse


def test_decide_fixed_bucket_num_as_java_postpone_utils_test() -> None:
    """The cases of Java's ``PostponeUtilsTest.testDecideFixedBucketNum``."""
    from paimon_core.table.fixed_bucket_commit import FixedBucketDecision, decide_fixed_bucket_num

    opts = {
        "postpone.target-row-num-per-bucket": "1",
        "postpone.batch-write-fixed-bucket.max-parallelism": "16",
        "postpone.batch-write-fixed-bucket.rescale-load-factor": "32",
    }
    assert decide_fixed_bucket_num(3, 0, None, opts) == FixedBucketDecision(4, False)  # rounded
    assert decide_fixed_bucket_num(2**31, 0, None, opts) == FixedBucketDecision(16, False)  # capped
    assert decide_fixed_bucket_num(224, 0, 7, opts) == FixedBucketDecision(7, False)  # at the load factor
    assert decide_fixed_bucket_num(225, 0, 7, opts) == FixedBucketDecision(16, True)  # above it
    capped = {**opts, "postpone.batch-write-fixed-bucket.max-parallelism": "4"}
    assert decide_fixed_bucket_num(225, 0, 7, capped) == FixedBucketDecision(7, False)
    assert decide_fixed_bucket_num(257, 0, 8, opts) == FixedBucketDecision(16, True)
    lower = {**opts, "postpone.batch-write-fixed-bucket.rescale-load-factor": "4"}
    assert decide_fixed_bucket_num(29, 0, 7, lower) == FixedBucketDecision(16, True)
    default = {**opts, "postpone.default-bucket-num": "3"}
    assert decide_fixed_bucket_num(100, 0, None, default) == FixedBucketDecision(3, False)
    assert decide_fixed_bucket_num(225, 0, 7, default) == FixedBucketDecision(16, True)  # existing ignores it
    # sizes (no row target): ceil(bytes / postpone.target-size-per-bucket, default 1 gb)
    assert decide_fixed_bucket_num(10, 3 * GIB, None, {}) == FixedBucketDecision(4, False)
    with pytest.raises(InvalidArgumentError, match="'postpone.default-bucket-num' must be greater than 0"):
        decide_fixed_bucket_num(1, 0, None, {"postpone.default-bucket-num": "0"})
    with pytest.raises(InvalidArgumentError, match="rescale-load-factor' must be greater than 0"):
        decide_fixed_bucket_num(1, 0, 2, {"postpone.batch-write-fixed-bucket.rescale-load-factor": "0"})
