"""Min/max/null-count of partition values over a set of manifest entries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from paimon_core.data.binary_row import deserialize_binary_row, serialize_binary_row
from paimon_core.manifest.entries import SimpleStats
from paimon_core.schema.data_types import DataType


class PartitionCodec:
    """Converts partition BinaryRow bytes to internal value tuples and back (cached)."""

    def __init__(self, types: Sequence[DataType]) -> None:
        self.types = list(types)
        self._decode = lru_cache(maxsize=65536)(self._decode_uncached)

    def _decode_uncached(self, data: bytes) -> tuple[object | None, ...]:
        return tuple(deserialize_binary_row(data, self.types))

    def decode(self, data: bytes) -> tuple[object | None, ...]:
        return self._decode(data)

    def encode(self, values: Sequence[object | None]) -> bytes:
        return serialize_binary_row(list(values), self.types)

    def stats(self, partitions: Sequence[bytes]) -> SimpleStats:
        """Per-field min, max and null count over the given (possibly repeated) partitions."""
        n = len(self.types)
        if n == 0 or not partitions:
            empty = serialize_binary_row([], [])
            return SimpleStats(empty, empty, () if n == 0 else tuple(0 for _ in range(n)))
        counts = Counter(partitions)
        mins: list[object | None] = [None] * n
        maxs: list[object | None] = [None] * n
        nulls = [0] * n
        for data, cnt in counts.items():
            values = self.decode(data)
            for i, v in enumerate(values):
                if v is None:
                    nulls[i] += cnt
                    continue
                if mins[i] is None or v < mins[i]:  # type: ignore[operator]
                    mins[i] = v
                if maxs[i] is None or v > maxs[i]:  # type: ignore[operator]
                    maxs[i] = v
        return SimpleStats(self.encode(mins), self.encode(maxs), tuple(nulls))
