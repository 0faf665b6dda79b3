"""Sort keys for sort compaction: order, z-order and Hilbert (Java ``org.apache.paimon.sort``)."""

from __future__ import annotations

from paimon_core.sort.hilbert import HilbertIndexer
from paimon_core.sort.table_sorter import (
    SortSpec,
    assign_ranges,
    cut_by_weight,
    range_boundaries,
    sort_indices,
)
from paimon_core.sort.zorder import ZIndexer

__all__ = ["HilbertIndexer", "SortSpec", "ZIndexer", "assign_ranges", "cut_by_weight", "range_boundaries", "sort_indices"]
