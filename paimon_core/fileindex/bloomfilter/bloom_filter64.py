"""A bloom filter over 64-bit hashes (Java's ``org.apache.paimon.utils.BloomFilter64``).

A hash sets ``k`` bits: with ``h1`` its low and ``h2`` its high 32 bits (Java ``int`` s), bit
``i`` (1..k) is ``h1 + i * h2`` (``int`` arithmetic), flipped (``~``) when negative, modulo the
bit count. Bit ``n`` is bit ``n & 7`` of byte ``n >> 3``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from paimon_core.fileindex.java_compat import to_int32

__all__ = ["BloomFilter64"]

_2_31 = 1 << 31
_2_32 = 1 << 32


class BloomFilter64:
    """``num_hash_functions`` and a bit set (``bits``: the bytes, bit order little-endian)."""

    def __init__(self, num_hash_functions: int, bits: npt.NDArray[np.uint8]) -> None:
        self.num_hash_functions = num_hash_functions
        self.bits = bits
        self.num_bits = len(bits) * 8

    @classmethod
    def for_items(cls, items: int, fpp: float) -> BloomFilter64:
        """Sized as Java's ``BloomFilter64(items, fpp)`` (the bit count rounded up to whole bytes)."""
        nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
        num_bits = nb + (8 - (nb % 8))
        k = max(1, int(math.floor(num_bits / items * math.log(2) + 0.5)))  # Java's Math.round
        return cls(k, np.zeros(num_bits // 8, dtype=np.uint8))

    def _positions(self, hashes: npt.NDArray[np.int64], i: int) -> npt.NDArray[np.int64]:
        h1 = ((hashes & 0xFFFFFFFF) ^ _2_31) - _2_31  # (int) hash64
        h2 = (((hashes >> 32) & 0xFFFFFFFF) ^ _2_31) - _2_31  # (int) (hash64 >>> 32)
        combined = (((h1 + i * h2) & 0xFFFFFFFF) ^ _2_31) - _2_31
        combined = np.where(combined < 0, ~combined, combined)
        return combined % self.num_bits

    def add_hashes(self, hashes: npt.NDArray[np.int64]) -> None:
        """Java's ``addHash`` for each hash."""
        if len(hashes) == 0:
            return
        for i in range(1, self.num_hash_functions + 1):
            pos = self._positions(hashes, i)
            np.bitwise_or.at(self.bits, pos >> 3, (1 << (pos & 7)).astype(np.uint8))

    def test_hash(self, hash64: int) -> bool:
        """Java's ``testHash``: False only when the value was never added."""
        h1 = to_int32(hash64)
        h2 = to_int32(hash64 >> 32)
        for i in range(1, self.num_hash_functions + 1):
            combined = to_int32(h1 + i * h2)
            if combined < 0:
                combined = ~combined
            pos = combined % self.num_bits
            if not (int(self.bits[pos >> 3]) >> (pos & 7)) & 1:
                return False
        return True
