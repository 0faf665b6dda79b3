"""Builders shared by the LSM planning tests: single-INT keys, files, runs (Java test helpers)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from paimon_core.data.binary_row import serialize_binary_row
from paimon_core.manifest.entries import EMPTY_STATS, DataFileMeta
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.keys import binary_key_of
from paimon_core.mergetree.sorted_run import LevelSortedRun, SortedRun
from paimon_core.schema.data_types import IntType

KEY_TYPES = (IntType(),)
KEY_OF = binary_key_of(KEY_TYPES)
_names = itertools.count()


def row(i: int) -> bytes:
    return serialize_binary_row([i], KEY_TYPES)


def data_file(
    size: int = 1,
    *,
    level: int = 0,
    min_key: int = 0,
    max_key: int = 0,
    min_seq: int = 0,
    max_seq: int = 0,
    name: str | None = None,
    creation_time: int | None = 0,
    delete_row_count: int | None = 0,
) -> DataFileMeta:
    return DataFileMeta(
        file_name=name if name is not None else f"data-{next(_names)}.parquet",
        file_size=size,
        row_count=1,
        min_key=row(min_key),
        max_key=row(max_key),
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=min_seq,
        max_sequence_number=max_seq,
        schema_id=0,
        level=level,
        creation_time=creation_time,
        delete_row_count=delete_row_count,
    )


def interval(level: int, min_key: int, max_key: int, max_seq: int = 0) -> DataFileMeta:
    """Java ``DataFileTestUtils.newFile(level, min, max, maxSeq)``: size = max - min + 1."""
    return data_file(max_key - min_key + 1, level=level, min_key=min_key, max_key=max_key, max_seq=max_seq)


def run(level: int, size: int) -> LevelSortedRun:
    return LevelSortedRun(level, SortedRun.from_single(data_file(size, level=level)))


def level0(*sizes: int) -> list[LevelSortedRun]:
    return [run(0, s) for s in sizes]


def sizes_of(unit: CompactUnit | None) -> list[int] | None:
    return None if unit is None else [f.file_size for f in unit.files]


def key_range(files: Iterable[DataFileMeta]) -> tuple[int, int]:
    files = list(files)
    return min(KEY_OF(f.min_key)[0][1] for f in files), max(KEY_OF(f.max_key)[0][1] for f in files)
