"""Java's ``RoaringBitmap32.serialize()`` (``runOptimize`` then RoaringBitmap's portable format),
computed from the sorted row positions, so our bytes are Java's.

The format (RoaringBitmap's ``RoaringArray.serialize``, little-endian): a cookie (12346 and the
container count, or 12347 | (count - 1) << 16 and a bitset of run containers), per container its
16-bit key and cardinality - 1, the containers' offsets (unless there are runs and fewer than 4
containers), then each container: an array (sorted 16-bit values), a bitmap (1024 longs) or runs
(a count, then start and length - 1 pairs). A container holds at most 4096 values as an array,
else a bitmap; ``runOptimize`` makes it a run container when that is strictly smaller (array:
``2 * card > 2 + 4 * runs``; bitmap: ``8192 > 2 + 4 * runs``), exactly Java's rule (CRoaring's,
which pyroaring serializes with, differs at ``card == 2 * runs + 1``). Reading uses pyroaring,
which reads every container kind.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

__all__ = ["deserialize", "serialize"]

SERIAL_COOKIE_NO_RUNCONTAINER = 12346
SERIAL_COOKIE = 12347
NO_OFFSET_THRESHOLD = 4
ARRAY_MAX_SIZE = 4096


def serialize(rows: npt.NDArray[np.int64] | BitMap) -> bytes:
    """The bytes Java writes for the bitmap of ``rows`` (non-negative ints below 2**31)."""
    values = np.asarray(list(rows) if isinstance(rows, BitMap) else rows, dtype=np.int64)
    values = np.unique(values)
    highs = (values >> 16).astype(np.int64)
    lows = (values & 0xFFFF).astype(np.uint16)
    keys, starts = np.unique(highs, return_index=True)
    ends = [*starts[1:].tolist(), len(values)] if len(starts) else []
    kinds: list[str] = []
    bodies: list[bytes] = []
    cards: list[int] = []
    for start, end in zip(starts.tolist(), ends, strict=True):
        lo = lows[start:end]
        card = len(lo)
        breaks = np.flatnonzero(np.diff(lo.astype(np.int32)) != 1) + 1
        runs = len(breaks) + 1
        if card <= ARRAY_MAX_SIZE:
            kind = "run" if 2 * card > 2 + 4 * runs else "array"
        else:
            kind = "run" if 8192 > 2 + 4 * runs else "bitmap"
        if kind == "array":
            body = lo.astype("<u2").tobytes()
        elif kind == "bitmap":
            bits = np.zeros(65536, dtype=np.uint8)
            bits[lo] = 1
            body = np.packbits(bits, bitorder="little").tobytes()  # = 1024 little-endian longs
        else:
            run_starts = np.concatenate(([0], breaks))
            run_ends = np.concatenate((breaks, [card]))
            pairs = np.empty(2 * runs, dtype="<u2")
            pairs[0::2] = lo[run_starts]
            pairs[1::2] = (run_ends - run_starts - 1).astype(np.uint16)
            body = struct.pack("<H", runs) + pairs.tobytes()
        kinds.append(kind)
        bodies.append(body)
        cards.append(card)
    size = len(kinds)
    has_run = "run" in kinds
    out = bytearray()
    if has_run:
        out += struct.pack("<i", SERIAL_COOKIE | ((size - 1) << 16))
        run_bits = bytearray((size + 7) // 8)
        for i, kind in enumerate(kinds):
            if kind == "run":
                run_bits[i // 8] |= 1 << (i % 8)
        out += run_bits
        start_offset = 4 + (4 if size < NO_OFFSET_THRESHOLD else 8) * size + len(run_bits)
    else:
        out += struct.pack("<ii", SERIAL_COOKIE_NO_RUNCONTAINER, size)
        start_offset = 4 + 4 + 8 * size
    for key, card in zip(keys.tolist(), cards, strict=True):
        out += struct.pack("<HH", key, card - 1)
    if not has_run or size >= NO_OFFSET_THRESHOLD:
        for body in bodies:
            out += struct.pack("<i", start_offset)
            start_offset += len(body)
    for body in bodies:
        out += body
    return bytes(out)


def deserialize(data: bytes) -> BitMap:
    """A bitmap Java (or :func:`serialize`) wrote."""
    return BitMap.deserialize(data)
