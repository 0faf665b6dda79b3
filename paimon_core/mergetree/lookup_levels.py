"""Point lookups of keys in the higher levels of a bucket: Java's ``LookupLevels``, a batch at a time.

Java builds a local key -> (value, file, row position) store per data file and looks keys up
one by one, level by level from ``startLevel``: the first level holding the key answers. Here a
whole batch of keys is looked up at once. Each level's files are read once (only the key
columns when the values are not needed), with their row positions, minus the rows their
deletion vectors delete, sorted by key, and cached for the life of the object (one compaction
task). A batch is matched against the window of the level between its smallest and largest
first key column (binary searches): by ``np.searchsorted`` for a single integer-like key, else
by a hash join of the window. Keys found on a level are not looked up on the levels above it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.deletionvectors.index_file import read_deletion_vector
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.segments import in_key_order, to_array
from paimon_core.schema.data_types import DataField

__all__ = ["LEVEL", "LookupLevels", "LookupResult"]

logger = logging.getLogger(__name__)

#: The level of a row, a column the lookup rewriter adds to the rows it merges.
LEVEL = "_LEVEL"
_POS = "_LOOKUP_POS"
_FILE = "_LOOKUP_FILE"
_KEY_INDEX = "_LOOKUP_KEY_INDEX"
_ROW = "_LOOKUP_ROW"


@dataclass(frozen=True)
class LookupResult:
    """The keys found: ``key_index`` (into the keys looked up, ascending) and, row for row, the
    file and row position holding each (``file_names[file_index[i]]``) and the stored row
    (``rows``: the value columns, ``_VALUE_KIND``, ``_SEQUENCE_NUMBER`` and ``_LEVEL``; None
    when the lookup was for positions only)."""

    key_index: npt.NDArray[np.int64]
    file_index: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    file_names: tuple[str, ...]
    rows: pa.Table | None

    @property
    def count(self) -> int:
        return int(self.key_index.size)


class LookupLevels:
    """The files of the levels a compaction looks keys up in (Java ``LookupLevels``).

    ``files``: data files on levels >= 1 that the compaction does not rewrite; ``fields``: the
    table's fields (read in the current schema); ``with_values``: whether lookups return the
    stored rows (Java's ``KeyValueProcessor``/``PositionedKeyValueProcessor``) or only where
    they are (``FilePosition``); ``deletion_file``: each file's committed deletion vector.
    """

    def __init__(
        self,
        reader: DataFileReader,
        bucket_path: str,
        files: Sequence[DataFileMeta],
        fields: Sequence[DataField],
        key_names: Sequence[str],
        *,
        with_values: bool,
        deletion_file: Callable[[str], DeletionFile | None] | Mapping[str, DeletionFile] = lambda _: None,
    ) -> None:
        self.reader = reader
        self.bucket_path = bucket_path
        self.fields = list(fields)
        self.key_names = list(key_names)
        self.with_values = with_values
        self._deletion_file = deletion_file.get if isinstance(deletion_file, Mapping) else deletion_file
        self._levels: dict[int, list[DataFileMeta]] = {}
        for f in files:
            if f.level <= 0:
                raise ValueError(f"Lookup levels hold files of levels >= 1, {f.file_name} is on level {f.level}")
            self._levels.setdefault(f.level, []).append(f)
        self._cache: dict[int, _Level | None] = {}

    @property
    def levels(self) -> list[int]:
        return sorted(self._levels)

    def _level_rows(self, level: int) -> _Level | None:
        """The live rows of a level's files sorted by key, with ``_LOOKUP_POS`` and
        ``_LOOKUP_FILE`` (index); None when the level has none."""
        if level in self._cache:
            return self._cache[level]
        files = self._levels[level]
        names = set(self.key_names)
        fields = self.fields if self.with_values else [f for f in self.fields if f.name in names]
        parts: list[pa.Table] = []
        for i, f in enumerate(files):
            batches = list(
                self.reader.read(self.bucket_path, f, fields, with_kind=self.with_values, with_seq=self.with_values)
            )
            if not batches:
                continue
            t = pa.Table.from_batches(batches)
            n = t.num_rows
            positions = np.arange(n, dtype=np.int64)
            deletion = self._deletion_file(f.file_name)
            if deletion is not None:
                keep = ~read_deletion_vector(self.reader.file_io, deletion).deleted_mask(n)
                t, positions = t.filter(pa.array(keep)), positions[keep]
            t = t.append_column(_POS, pa.array(positions)).append_column(
                _FILE, pa.array(np.full(t.num_rows, i, dtype=np.int32))
            )
            parts.append(t)
        if not parts:  # every row of the level is deleted
            self._cache[level] = None
            return None
        table = pa.concat_tables(parts)
        if not in_key_order(table, self.key_names):  # files come in any order; each is key-sorted
            table = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in self.key_names]))
        table = table.combine_chunks()
        if self.with_values:
            table = table.append_column(LEVEL, pa.array(np.full(table.num_rows, level, dtype=np.int32)))
        first = to_array(table.column(self.key_names[0]))
        entry = _Level(table, tuple(f.file_name for f in files), first, _sortable_numpy(first))
        self._cache[level] = entry
        logger.debug("Lookup level %d: %d file(s), %d live row(s)", level, len(files), table.num_rows)
        return entry

    def _match(self, level: _Level, probe: pa.Table) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(probe row, level row) of every probe key found on ``level`` (at most one row each)."""
        first = to_array(probe.column(self.key_names[0]))
        probe_np = _sortable_numpy(first)
        if level.first_np is not None and probe_np is not None:
            lo = np.searchsorted(level.first_np, probe_np.min(), side="left")
            hi = np.searchsorted(level.first_np, probe_np.max(), side="right")
            if len(self.key_names) == 1:  # sorted, unique keys: a binary search per key
                window = level.first_np[lo:hi]
                at = np.searchsorted(window, probe_np)
                ok = at < window.size
                ok[ok] = window[at[ok]] == probe_np[ok]
                return np.flatnonzero(ok).astype(np.int64), (at[ok] + lo).astype(np.int64)
        else:
            mm = pc.min_max(first)
            lo = _bisect(level.first, mm["min"], right=False)
            hi = _bisect(level.first, mm["max"], right=True)
        if hi <= lo:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty
        window_keys = level.table.select(self.key_names).slice(lo, hi - lo)
        window_keys = window_keys.append_column(_ROW, pa.array(np.arange(lo, hi, dtype=np.int64)))
        left = probe.select(self.key_names).append_column(_KEY_INDEX, pa.array(np.arange(probe.num_rows, dtype=np.int64)))
        joined = left.join(window_keys, keys=self.key_names, join_type="inner", use_threads=False)
        kidx = np.asarray(joined.column(_KEY_INDEX).to_numpy(), dtype=np.int64)
        rows = np.asarray(joined.column(_ROW).to_numpy(), dtype=np.int64)
        order = np.lexsort((rows, kidx))
        kidx, rows = kidx[order], rows[order]
        unique = np.ones(kidx.size, dtype=np.bool_)
        unique[1:] = kidx[1:] != kidx[:-1]  # a level is a sorted run: one live row per key
        return kidx[unique], rows[unique]

    def lookup(self, keys: pa.Table, start_level: int) -> LookupResult:
        """Look up every row of ``keys`` (the key columns) on levels >= ``start_level``."""
        pending = np.arange(keys.num_rows, dtype=np.int64)
        found_key: list[npt.NDArray[np.int64]] = []
        found_file: list[npt.NDArray[np.int64]] = []
        found_pos: list[npt.NDArray[np.int64]] = []
        found_rows: list[pa.Table] = []
        names: list[str] = []
        probe = keys.select(self.key_names)
        for level_no in self.levels:
            if level_no < start_level or pending.size == 0:
                continue
            level = self._level_rows(level_no)
            if level is None:
                continue
            probe_idx, rows = self._match(level, probe.take(pa.array(pending)))
            if probe_idx.size == 0:
                continue
            kidx = pending[probe_idx]
            hit = level.table.take(pa.array(rows))
            offset = len(names)
            names += level.files
            found_key.append(kidx)
            found_file.append(np.asarray(hit.column(_FILE).to_numpy(), dtype=np.int64) + offset)
            found_pos.append(np.asarray(hit.column(_POS).to_numpy(), dtype=np.int64))
            if self.with_values:
                found_rows.append(hit.drop_columns([_POS, _FILE]))
            pending = np.setdiff1d(pending, kidx, assume_unique=True)
        if not found_key:
            empty = np.empty(0, dtype=np.int64)
            return LookupResult(empty, empty, empty, tuple(names), None)
        key_index = np.concatenate(found_key)
        order = np.argsort(key_index, kind="stable")
        rows_out: pa.Table | None = None
        if self.with_values:
            rows_out = pa.concat_tables(found_rows).take(pa.array(order))
        return LookupResult(
            key_index[order],
            np.concatenate(found_file)[order],
            np.concatenate(found_pos)[order],
            tuple(names),
            rows_out,
        )


@dataclass(frozen=True)
class _Level:
    """A level's live rows sorted by key, its files, and its first key column (as numpy when
    that column sorts like its numbers)."""

    table: pa.Table
    files: tuple[str, ...]
    first: pa.Array
    first_np: npt.NDArray[np.int64] | None


def _sortable_numpy(column: pa.Array) -> npt.NDArray[np.int64] | None:
    """``column`` as int64 numbers ordered as Arrow orders it (integers, dates, times,
    timestamps without nulls), else None."""
    t = column.type
    if column.null_count:
        return None
    if pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            return None
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.int64)
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return np.asarray(column.view(pa.int32()).to_numpy(), dtype=np.int64)
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t):
        return np.asarray(column.view(pa.int64()).to_numpy(), dtype=np.int64)
    return None


def _bisect(column: pa.Array, value: pa.Scalar, *, right: bool) -> int:
    """Rows of the ascending ``column`` below ``value`` (``right``: up to and including it)."""
    lo, hi = 0, len(column)
    while lo < hi:
        mid = (lo + hi) // 2
        here = column[mid]
        below = pc.less_equal(here, value).as_py() if right else pc.less(here, value).as_py()
        if below:
            lo = mid + 1
        else:
            hi = mid
    return lo
