"""Sort keys and range partitioning for sort compaction (Java ``TableSorter`` / ``OrderSorter`` /
``ZorderSorter`` / ``HilbertSorter`` and Flink's ``RangeShuffle``).

:class:`SortSpec` names the strategy and columns (validated against the table as Paimon does);
:meth:`SortSpec.keys` turns rows into an Arrow table of sort keys (``order``: the columns
themselves, ascending with nulls first as Spark's ``sortWithinPartitions``; ``zorder`` /
``hilbert``: one ``fixed_size_binary`` key) and :func:`sort_indices` orders rows by them.

Range partitioning (so each output file gets an even share): :func:`cut_by_weight` cuts rows
already in key order into ``ranges`` runs of equal weight (exact, used when one process sorts a
whole partition); :func:`range_boundaries` picks ``ranges - 1`` boundary keys from a weighted
sample (Java ``RangeShuffle.allocateRangeBaseSize``) and :func:`assign_ranges` gives each row its
range, for a distributed sort. The weight of a row is its share of its input file's bytes
(``sort-compaction.range-strategy = size``, the default) or 1 (``quantity``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.schema.data_types import DataField
from paimon_core.sort.hilbert import HilbertIndexer
from paimon_core.sort.zorder import ZIndexer

__all__ = [
    "ORDER_STRATEGIES",
    "RangeStrategy",
    "SortSpec",
    "assign_ranges",
    "cut_by_weight",
    "range_boundaries",
    "sort_indices",
]

OrderStrategy = Literal["order", "zorder", "hilbert"]
RangeStrategy = Literal["size", "quantity"]
ORDER_STRATEGIES: tuple[str, ...] = ("order", "zorder", "hilbert")
KEY_COLUMN = "_SORT_KEY"

SORT_RANGE_STRATEGY = "sort-compaction.range-strategy"
SORT_RANGE_STRATEGY_DEFAULT = "size"
SORT_SAMPLE_MAGNIFICATION = "sort-compaction.local-sample.magnification"
SORT_SAMPLE_MAGNIFICATION_DEFAULT = 1000
ZORDER_VAR_LENGTH_CONTRIBUTION = "zorder.var-length-contribution"
ZORDER_VAR_LENGTH_CONTRIBUTION_DEFAULT = 8


@dataclass(frozen=True)
class SortSpec:
    """How a sort compaction orders rows: ``strategy`` over ``columns`` (Paimon's ``order_strategy``
    and ``order_by``), plus the options that shape keys and ranges."""

    strategy: OrderStrategy
    columns: tuple[str, ...]
    var_length: int = ZORDER_VAR_LENGTH_CONTRIBUTION_DEFAULT
    range_strategy: RangeStrategy = "size"
    sample_magnification: int = SORT_SAMPLE_MAGNIFICATION_DEFAULT

    @staticmethod
    def of(strategy: str, columns: str | Sequence[str], options: Mapping[str, str]) -> SortSpec:
        """Parse ``order_strategy``/``order_by`` and the table's sort options (clear errors)."""
        name = strategy.strip().lower()
        if name not in ORDER_STRATEGIES:
            raise InvalidArgumentError(f"order_strategy must be one of {list(ORDER_STRATEGIES)}, got {strategy!r}")
        cols = tuple(c.strip() for c in (columns.split(",") if isinstance(columns, str) else columns) if c.strip())
        if not cols:
            raise InvalidArgumentError(f"order_strategy {name!r} needs order_by columns")
        if len(set(cols)) != len(cols):
            raise InvalidArgumentError(f"order_by names a column twice: {list(cols)}")
        rng = options.get(SORT_RANGE_STRATEGY, SORT_RANGE_STRATEGY_DEFAULT).strip().lower()
        if rng not in ("size", "quantity"):
            raise InvalidOptionError(f"{SORT_RANGE_STRATEGY} must be 'size' or 'quantity', got {rng!r}")
        mag = _int_option(options, SORT_SAMPLE_MAGNIFICATION, SORT_SAMPLE_MAGNIFICATION_DEFAULT)
        if mag < 20:  # Flink's SortCompactAction check
            raise InvalidOptionError(
                f"the config '{SORT_SAMPLE_MAGNIFICATION}={mag}' should not be set too small, "
                "greater than or equal to 20 is needed."
            )
        var = _int_option(options, ZORDER_VAR_LENGTH_CONTRIBUTION, ZORDER_VAR_LENGTH_CONTRIBUTION_DEFAULT)
        return SortSpec(name, cols, var, rng, mag)  # type: ignore[arg-type]  # validated above

    def validate(self, fields: Sequence[DataField], partition_keys: Sequence[str]) -> None:
        """Columns exist, are not partition columns, and have a type the strategy can key."""
        names = [f.name for f in fields]
        missing = [c for c in self.columns if c not in names]
        if missing:
            raise InvalidArgumentError(f"Can't find column(s) {missing} in table columns. Possible columns are {names}")
        in_partition = [c for c in self.columns if c in partition_keys]
        if in_partition:
            raise InvalidArgumentError(
                f"order_by should not contain partition cols, because it is meaningless, your order_by cols are "
                f"{list(self.columns)}, and partition cols are {list(partition_keys)}"
            )
        self._indexer(fields)

    def _indexer(self, fields: Sequence[DataField]) -> ZIndexer | HilbertIndexer | None:
        if self.strategy == "zorder":
            return ZIndexer(fields, self.columns, var_length=self.var_length)
        if self.strategy == "hilbert":
            return HilbertIndexer(fields, self.columns)
        by_name = {f.name: f for f in fields}
        for c in self.columns:
            t = by_name[c].type
            if type(t).__name__ in ("ArrayType", "MapType", "RowType"):
                raise InvalidArgumentError(f"Column {c} of type {t} cannot be used in an order sort")
        return None

    def keys(self, data: pa.Table, fields: Sequence[DataField]) -> pa.Table:
        """The sort keys of ``data``'s rows: a table whose lexicographic order (nulls first) is
        the sort order."""
        indexer = self._indexer(fields)
        if indexer is None:
            return data.select(list(self.columns))
        return pa.table({KEY_COLUMN: indexer.index(data)})


def _int_option(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidOptionError(f"{key} must be an integer, got {raw!r}") from None


def _binary_words(keys: pa.Table) -> list[np.ndarray] | None:
    """A single fixed-size binary key as big-endian uint64 words (most significant first)."""
    if keys.num_columns != 1 or not pa.types.is_fixed_size_binary(keys.schema.field(0).type):
        return None
    col = keys.column(0)
    arr = pa.concat_arrays(col.chunks) if col.num_chunks != 1 else col.chunk(0)
    width = arr.type.byte_width
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * width : (arr.offset + len(arr)) * width]
    padded_width = -(-width // 8) * 8
    mat = np.zeros((len(arr), padded_width), dtype=np.uint8)
    mat[:, :width] = raw.reshape(len(arr), width)
    words = mat.view(">u8").astype(np.uint64)
    return [words[:, i] for i in range(words.shape[1])]


def sort_indices(keys: pa.Table) -> np.ndarray:
    """Row positions in ascending key order (stable; nulls first)."""
    words = _binary_words(keys)
    if words is not None:
        return np.lexsort(words[::-1]) if words else np.arange(keys.num_rows)
    sort_keys = [(name, "ascending", "at_start") for name in keys.column_names]
    return np.asarray(pc.sort_indices(keys, sort_keys=sort_keys))


def cut_by_weight(sorted_weights: np.ndarray, ranges: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` row spans cutting rows (already in key order) into ``ranges`` runs of about
    equal total weight; empty runs are dropped."""
    n = len(sorted_weights)
    if n == 0:
        return []
    ranges = max(1, min(ranges, n))
    cum = np.cumsum(sorted_weights, dtype=np.float64)
    targets = cum[-1] * np.arange(1, ranges) / ranges
    cuts = np.searchsorted(cum, targets, side="left") + 1
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n), [n]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def range_boundaries(sample_keys: pa.Table, sample_weights: np.ndarray, ranges: int) -> pa.Table:
    """``ranges - 1`` boundary keys from a sample (Java ``allocateRangeBaseSize``): walk the sorted
    sample taking weight until each range holds its share of what is left. Fewer boundaries when
    the sample is small; none for one range or an empty sample."""
    if ranges <= 1 or sample_keys.num_rows == 0:
        return sample_keys.slice(0, 0)
    order = sort_indices(sample_keys)
    weights = np.asarray(sample_weights, dtype=np.float64)[order]
    rest = float(weights.sum())
    step = rest / ranges
    picks: list[int] = []
    index, n = 0, len(order)
    for i in range(ranges - 1):
        current = 0.0
        last = -1
        while current < step and index < n:
            last = index
            current += weights[index]
            rest -= weights[index]
            index += 1
        if last >= 0:
            picks.append(last)
        step = rest / (ranges - i - 1)
    picked = sorted(set(picks))
    return sample_keys.take(pa.array(order[picked], pa.int64()))


def assign_ranges(keys: pa.Table, boundaries: pa.Table) -> np.ndarray:
    """Range of each row: the number of boundaries strictly below its key (a key equal to a
    boundary goes to that boundary's range), int32."""
    n = keys.num_rows
    b = boundaries.num_rows
    if b == 0:
        return np.zeros(n, dtype=np.int32)
    words, bwords = _binary_words(keys), _binary_words(boundaries)
    if words is not None and bwords is not None and len(words) == 1:
        return np.searchsorted(bwords[0], words[0], side="left").astype(np.int32)
    # rows and boundaries sorted together, boundaries after equal rows: a row's range is the
    # count of boundaries before it
    both = pa.concat_tables([keys.combine_chunks(), boundaries.cast(keys.schema).combine_chunks()])
    tag = np.concatenate([np.zeros(n, dtype=np.int8), np.ones(b, dtype=np.int8)])
    both = both.append_column("_boundary", pa.array(tag))
    order = sort_indices(both)
    is_boundary = tag[order]
    before = np.cumsum(is_boundary) - is_boundary
    out = np.empty(n, dtype=np.int32)
    rows = order[is_boundary == 0]
    out[rows] = before[is_boundary == 0]
    return out
