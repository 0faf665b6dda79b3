"""Which speculative lanes of :mod:`paimon_core.manifest.avro_vector` are the true records.

Every candidate start of a record was decoded as if a record began there; the true
records are the chain that starts at each block's first byte and follows "the next
record starts where this one ends", with each block's record count and end checked.
Anything that does not fit raises :class:`Unsupported`, and the caller decodes
sequentially.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

__all__ = ["Unsupported", "_chain"]


class Unsupported(Exception):
    """The writer schema or the data is outside what the vectorized path handles."""


def _chain(cand: I64, ends: I64, alive: npt.NDArray[np.bool_], bounds: I64, counts: Sequence[int]) -> I64:
    """Lane indices of the true records: from each block's first byte, end to start.

    Pointer doubling over "the lane starting where this one ends" (within a block),
    so the chains of every block are followed in O(log n) numpy steps.
    """
    live = np.flatnonzero(alive)
    if not len(live):
        raise Unsupported("no decodable record")
    m = len(live)
    starts = cand[live]
    live_ends = ends[live]
    block = np.searchsorted(bounds, starts, side="right") - 1
    at_end = live_ends == bounds[block + 1]
    if _all_chained(starts, live_ends, block, at_end, bounds, counts):
        return live
    at = np.minimum(np.searchsorted(starts, live_ends), m - 1)
    nxt = np.where(~at_end & (starts[at] == live_ends), at, -1)
    counts_a = np.asarray(counts, dtype=np.int64)
    nonempty = np.flatnonzero(counts_a > 0)
    first = np.minimum(np.searchsorted(starts, bounds[nonempty]), m - 1)
    if np.any(starts[first] != bounds[nonempty]):
        raise Unsupported("a block does not start with a decodable record")
    reach = np.zeros(m, dtype=bool)
    reach[first] = True
    jump = nxt
    while True:
        src = np.flatnonzero(reach & (jump >= 0))
        if not src.size:
            break
        reach[jump[src]] = True
        jump = np.where(jump >= 0, jump[np.maximum(jump, 0)], -1)
    if np.any(reach & (nxt < 0) & ~at_end):
        raise Unsupported("record chain broken")
    got = np.bincount(block[reach], minlength=len(counts_a))
    if not np.array_equal(got[: len(counts_a)], counts_a):
        raise Unsupported("records do not fill their blocks")
    return live[reach]


def _all_chained(starts: I64, ends: I64, block: I64, at_end: npt.NDArray[np.bool_], bounds: I64,
                 counts: Sequence[int]) -> bool:
    """Whether every live lane is a record (the usual case, in one pass): each block's lanes
    start at the block's first byte and each ends where the next starts, the last at the
    block's end, and the blocks hold as many as their counts."""
    counts_a = np.asarray(counts, dtype=np.int64)
    if not np.array_equal(np.bincount(block, minlength=len(counts_a)), counts_a):
        return False
    last = np.ones(len(starts), dtype=bool)
    last[:-1] = block[1:] != block[:-1]
    if not np.array_equal(last, at_end):
        return False
    first = np.ones(len(starts), dtype=bool)
    first[1:] = last[:-1]
    inner = ~last[:-1]
    return np.array_equal(starts[first], bounds[block[first]]) and np.array_equal(ends[:-1][inner], starts[1:][inner])
