"""The bloom-filter file index (Java's ``BloomFilterFileIndex``).

Serialized as the number of hash functions (4 bytes, big-endian) and the bit set's bytes. Per
column options: ``items`` (expected distinct values per file, default 1,000,000) and ``fpp``
(false positive probability, default 0.1). Nulls are not added; an equality on null, or on any
value the filter may hold, keeps the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import CorruptFileError, InvalidOptionError
from paimon_core.fileindex.bloomfilter.bloom_filter64 import BloomFilter64
from paimon_core.fileindex.bloomfilter.fast_hash import hash_array, hash_value
from paimon_core.fileindex.file_index_result import REMAIN, SKIP, FileIndexResult
from paimon_core.fileindex.file_indexer import FileIndexer, FileIndexReader, FileIndexWriter
from paimon_core.schema.data_types import DataType

__all__ = ["DEFAULT_FPP", "DEFAULT_ITEMS", "BloomFilterFileIndex"]

DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1


def _option(options: Mapping[str, str], key: str, default: float, kind: type) -> Any:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = kind(raw.strip())
    except ValueError:
        raise InvalidOptionError(
            f"Bloom filter option '{key}' = '{raw}' is not a valid {kind.__name__}", key=key, value=raw
        ) from None
    if key == "items" and value <= 0 or key == "fpp" and not 0 < value < 1:
        raise InvalidOptionError(
            f"Bloom filter option '{key}' = '{raw}' is out of range (items > 0, 0 < fpp < 1)",
            key=key,
            value=raw,
        )
    return value


class BloomFilterFileIndex(FileIndexer):
    """A bloom filter over one column's values in one data file."""

    def __init__(self, data_type: DataType, options: Mapping[str, str]) -> None:
        self.data_type = data_type
        self.items: int = _option(options, "items", DEFAULT_ITEMS, int)
        self.fpp: float = _option(options, "fpp", DEFAULT_FPP, float)

    def create_writer(self) -> FileIndexWriter:
        return _Writer(self.data_type, self.items, self.fpp)

    def create_reader(self, data: bytes) -> FileIndexReader:
        return _Reader(self.data_type, data)


class _Writer(FileIndexWriter):
    def __init__(self, data_type: DataType, items: int, fpp: float) -> None:
        super().__init__()
        self.data_type = data_type
        self.items = items
        self.fpp = fpp
        self._filter: BloomFilter64 | None = None  # allocated at the first record

    def write(self, values: pa.Array | pa.ChunkedArray) -> None:
        if self._filter is None:
            self._filter = BloomFilter64.for_items(self.items, self.fpp)
        self._filter.add_hashes(hash_array(values, self.data_type))

    def serialized_bytes(self) -> bytes:
        f = self._filter or BloomFilter64.for_items(self.items, self.fpp)
        return f.num_hash_functions.to_bytes(4, "big", signed=True) + f.bits.tobytes()


class _Reader(FileIndexReader):
    def __init__(self, data_type: DataType, data: bytes) -> None:
        if len(data) < 5:
            raise CorruptFileError(f"A bloom filter index of {len(data)} bytes is too short")
        self.data_type = data_type
        k = int.from_bytes(data[:4], "big", signed=True)
        self.filter = BloomFilter64(k, np.frombuffer(data, dtype=np.uint8, offset=4))

    def visit_equal(self, literal: Any) -> FileIndexResult:
        if literal is None:
            return REMAIN
        if isinstance(literal, float) and (literal == 0.0 or math.isnan(literal)):
            # -0.0 equals 0.0 (and a NaN literal is kept as is) in our comparisons, but their
            # bits, and so their hashes, differ: never skip on them
            return REMAIN
        try:
            h = hash_value(literal, self.data_type)
        except (TypeError, ValueError):
            return REMAIN
        return REMAIN if self.filter.test_hash(h) else SKIP
