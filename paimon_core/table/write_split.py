"""Split one input batch of a table write into its (partition, bucket) groups.

The part of Java's ``TableWriteImpl``/``FileStoreWrite`` that finds each row's writer, done
once per batch with whole-array operations. Groups come in the order of their first row (as
Arrow's single-threaded ``group_by``), each with its rows in input order. Fast paths, with the
same groups: a batch whose rows all share one (partition, bucket) -- what a routed Spark task
hands over -- is one group without any grouping work, and bucket-only keys are grouped with
numpy instead of an Arrow hash aggregation.

``check_buckets`` validates buckets a caller computed already (Spark's routing computes each
row's bucket to shuffle by it, see ``spark_jobs.datasource.routing``): cheap checks of type,
range and nulls, plus a spot check of a few rows against paimon_core's own bucket function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.bucket import compute_buckets
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.index.bucket_assigner import group_indices
from paimon_core.schema.data_types import DataField

__all__ = ["SPOT_CHECK_ROWS", "RowGroup", "check_buckets", "split_rows"]

I32 = npt.NDArray[np.int32]

_ROW_INDEX = "__paimon_row_index"
_BUCKET_COL = "__paimon_bucket"
#: Rows of a batch whose given bucket is recomputed (evenly spread, first and last included).
SPOT_CHECK_ROWS = 16


@dataclass(frozen=True)
class RowGroup:
    """One (partition, bucket) group of a batch: its first row and its rows (None: every row)."""

    first: int
    rows: pa.Array | None


def check_buckets(
    buckets: pa.Array | pa.ChunkedArray,
    num_rows: int,
    num_buckets: int,
    key_columns: Sequence[pa.Array | pa.ChunkedArray],
    key_fields: Sequence[DataField],
    *,
    function: str = "default",
) -> I32:
    """Buckets given with the rows, as a numpy int32 array, or InvalidArgumentError.

    They must be INT (int32), one per row, non-null and in ``[0, num_buckets)``; a few rows
    (:data:`SPOT_CHECK_ROWS`) are recomputed from ``key_columns`` and must agree, so buckets
    computed by another function (or for another bucket count) are refused, not written.
    """
    if not isinstance(buckets, (pa.Array, pa.ChunkedArray)):
        raise InvalidArgumentError(f"buckets must be an Arrow int32 array, got {type(buckets).__name__}")
    if buckets.type != pa.int32():
        raise InvalidArgumentError(f"buckets must be int32, got {buckets.type}")
    if len(buckets) != num_rows:
        raise InvalidArgumentError(f"buckets has {len(buckets)} values for {num_rows} rows")
    if buckets.null_count:
        raise InvalidArgumentError(f"buckets has {buckets.null_count} null value(s)")
    values = np.asarray(buckets.to_numpy(), dtype=np.int32)
    if num_rows == 0:
        return values
    lo, hi = int(values.min()), int(values.max())
    if lo < 0 or hi >= num_buckets:
        raise InvalidArgumentError(f"buckets must be in [0, {num_buckets}), got values in [{lo}, {hi}]")
    sample = np.unique(np.linspace(0, num_rows - 1, num=min(num_rows, SPOT_CHECK_ROWS)).astype(np.int64))
    idx = pa.array(sample)
    expected = compute_buckets(
        [c.take(idx) for c in key_columns], [f.type for f in key_fields], num_buckets, function=function
    )
    bad = np.flatnonzero(expected != values[sample])
    if len(bad):
        row = int(sample[bad[0]])
        raise InvalidArgumentError(
            f"buckets disagree with the table's bucket function (row {row}: given {int(values[row])}, "
            f"bucket key {[f.name for f in key_fields]} hashes to {int(expected[bad[0]])} of {num_buckets})"
        )
    return values


def split_rows(table: pa.Table, key_names: Sequence[str], buckets: I32 | None) -> list[RowGroup]:
    """The groups of ``table`` by the columns ``key_names`` (partition fields) and ``buckets``."""
    n = table.num_rows
    if all(_constant(table.column(k)) for k in key_names) and (
        buckets is None or not len(buckets) or bool((buckets == buckets[0]).all())
    ):
        return [RowGroup(0, None)]
    if not key_names and buckets is not None:
        return _bucket_groups(buckets)
    work = table.select(list(key_names))
    keys = list(key_names)
    if buckets is not None:
        work = work.append_column(_BUCKET_COL, pa.array(buckets, pa.int32()))
        keys.append(_BUCKET_COL)
    indexed = work.append_column(_ROW_INDEX, pa.array(np.arange(n, dtype=np.int64)))
    groups = indexed.group_by(keys, use_threads=False).aggregate([(_ROW_INDEX, "list")])
    if groups.num_rows == 1:
        return [RowGroup(0, None)]
    lists = groups.column(f"{_ROW_INDEX}_list")
    out = []
    for g in range(groups.num_rows):
        rows = lists[g].values
        out.append(RowGroup(int(rows[0].as_py()), rows))
    return out


def _bucket_groups(buckets: I32) -> list[RowGroup]:
    """Rows by bucket (:func:`group_indices`: rows in input order), groups by first row."""
    groups = sorted((rows for _, rows in group_indices(buckets)), key=lambda rows: int(rows[0]))
    return [RowGroup(int(rows[0]), pa.array(rows)) for rows in groups]


def _constant(column: pa.ChunkedArray) -> bool:
    """Whether every value equals the first (exact equality only: False for floats, whose
    hash grouping tells -0.0 from 0.0 and NaN payloads apart)."""
    n = len(column)
    if n < 2 or column.null_count == n:
        return True
    t = column.type
    if column.null_count or pa.types.is_floating(t) or pa.types.is_nested(t) or pa.types.is_dictionary(t):
        return False
    try:
        return bool(pc.all(pc.equal(column, column[0])).as_py())
    except pa.ArrowNotImplementedError:
        return False
