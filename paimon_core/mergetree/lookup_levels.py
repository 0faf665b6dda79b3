"""Point lookups of keys in the higher levels of a bucket: Java's ``LookupLevels``, a batch at a time.

Java builds a local key -> (value, file, row position) store per data file and looks keys up
one by one, level by level from ``startLevel``: the first level holding the key answers, and
within a level only the file whose key range holds the key is read. Here a whole batch of keys
is looked up at once: per level, only the files whose ``[min_key, max_key]`` overlaps the
batch's key range are read (compared in Java's key order, :func:`~paimon_core.mergetree.keys.binary_key_of`),
each lazily, once (only the key columns when the values are not needed), with its row positions,
minus the rows its deletion vector deletes, and cached for the life of the object (one
compaction task). Each file is matched against the slice of the (key-sorted) batch within its
first key column's range: by ``np.searchsorted`` for a single integer-like key, else by a hash
join. Keys found on a level are not looked up on the levels above it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.data.binary_row import deserialize_binary_row, serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal, internal_to_arrow_scalar
from paimon_core.deletionvectors.deletion_file import DeletionFile
from paimon_core.deletionvectors.index_file import read_deletion_vector
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.keys import Key, KeyOf, binary_key_of
from paimon_core.mergetree.segments import in_key_order, to_array
from paimon_core.schema.data_types import DataField, DoubleType, FloatType

__all__ = ["LEVEL", "LookupLevels", "LookupResult"]

logger = logging.getLogger(__name__)

#: The level of a row, a column the lookup rewriter adds to the rows it merges.
LEVEL = "_LEVEL"
_POS = "_LOOKUP_POS"
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
        by_name = {f.name: f for f in self.fields}
        self._key_types = [by_name[k].type for k in self.key_names]
        # Float keys (-0.0/0.0, NaN) order differently in Arrow and Java: no pruning, no slicing.
        exact = not any(isinstance(t, (FloatType, DoubleType)) for t in self._key_types)
        self._key_of: KeyOf | None = binary_key_of(self._key_types) if exact else None
        self._cache: dict[str, _File | None] = {}
        self._bounds: dict[str, pa.Array | bool] = {}
        #: files read so far (each once)
        self.files_read = 0

    @property
    def levels(self) -> list[int]:
        return sorted(self._levels)

    # --- pruning ------------------------------------------------------------------------
    def _row_key(self, probe: pa.Table, row: int, key_of: KeyOf) -> Key:
        values = [arrow_scalar_to_internal(probe.column(k)[row], t) for k, t in zip(self.key_names, self._key_types, strict=True)]
        return key_of(serialize_binary_row(values, self._key_types))

    def _candidates(self, level: int, probe: pa.Table) -> list[DataFileMeta]:
        """The level's files whose key range overlaps the (key-sorted) probe's; all of them
        when keys cannot be compared exactly."""
        files = self._levels[level]
        key_of = self._key_of
        if key_of is None or probe.num_rows == 0:
            return files
        try:
            low, high = self._row_key(probe, 0, key_of), self._row_key(probe, probe.num_rows - 1, key_of)
            return [f for f in files if key_of(f.min_key) <= high and key_of(f.max_key) >= low]
        except Exception:  # noqa: BLE001 - undecodable keys: read every file, to be safe
            logger.debug("Lookup of %s: keys not comparable, reading every file of level %d", self.bucket_path, level)
            return files

    def _file_rows(self, f: DataFileMeta) -> _File | None:
        """The live rows of one file (key-sorted, as written) with ``_LOOKUP_POS``; None when
        every row is deleted. Read once."""
        if f.file_name in self._cache:
            return self._cache[f.file_name]
        names = set(self.key_names)
        fields = self.fields if self.with_values else [x for x in self.fields if x.name in names]
        batches = list(self.reader.read(self.bucket_path, f, fields, with_kind=self.with_values, with_seq=self.with_values))
        self.files_read += 1
        entry: _File | None = None
        if batches:
            t = pa.Table.from_batches(batches)
            n = t.num_rows
            positions = np.arange(n, dtype=np.int64)
            deletion = self._deletion_file(f.file_name)
            if deletion is not None:
                keep = ~read_deletion_vector(self.reader.file_io, deletion).deleted_mask(n)
                t, positions = t.filter(pa.array(keep)), positions[keep]
            if t.num_rows:
                t = t.append_column(_POS, pa.array(positions))
                if not in_key_order(t, self.key_names):  # written key-sorted; float keys are re-checked here
                    t = t.take(pc.sort_indices(t, sort_keys=[(k, "ascending") for k in self.key_names]))
                t = t.combine_chunks()
                if self.with_values:
                    t = t.append_column(LEVEL, pa.array(np.full(t.num_rows, f.level, dtype=np.int32)))
                first = to_array(t.column(self.key_names[0]))
                entry = _File(t, f.file_name, first, _sortable_numpy(first))
        self._cache[f.file_name] = entry
        logger.debug("Lookup file %s (level %d): %d live row(s)", f.file_name, f.level, 0 if entry is None else entry.table.num_rows)
        return entry

    def _first_bounds(self, f: DataFileMeta, type_: pa.DataType) -> pa.Array | None:
        """The file's smallest and largest first key column value (from its meta), as an array
        of ``type_``; None when they cannot be compared exactly (float keys, undecodable)."""
        if self._key_of is None:
            return None
        cached = self._bounds.get(f.file_name)
        if cached is None:
            t = self._key_types[0]
            try:
                low = deserialize_binary_row(f.min_key, self._key_types)[0]
                high = deserialize_binary_row(f.max_key, self._key_types)[0]
                cached = pa.array([internal_to_arrow_scalar(low, t), internal_to_arrow_scalar(high, t)]).cast(type_)
            except Exception:  # noqa: BLE001 - undecodable or not castable: read the file, to be safe
                cached = False
            self._bounds[f.file_name] = cached
        return None if cached is False else cached

    def _probe_slice(
        self, f: DataFileMeta, first: pa.Array, first_np: npt.NDArray[np.int64] | None
    ) -> tuple[int, int]:
        """The rows of the key-sorted probe whose first key column lies within the file's
        ``[min_key, max_key]`` (every row when that cannot be told exactly)."""
        bounds = self._first_bounds(f, first.type)
        if bounds is None:
            return 0, len(first)
        bounds_np = _sortable_numpy(bounds)
        if first_np is not None and bounds_np is not None:
            lo = int(np.searchsorted(first_np, bounds_np[0], side="left"))
            return lo, int(np.searchsorted(first_np, bounds_np[1], side="right"))
        return _bisect(first, bounds[0], right=False), _bisect(first, bounds[1], right=True)

    def _match(self, level: _File, probe: pa.Table) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(probe row, file row) of every probe key found in a file (at most one row each)."""
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
        unique[1:] = kidx[1:] != kidx[:-1]  # a file holds a key once
        return kidx[unique], rows[unique]

    def lookup(self, keys: pa.Table, start_level: int) -> LookupResult:
        """Look up every row of ``keys`` (the key columns) on levels >= ``start_level``."""
        probe = keys.select(self.key_names)
        if in_key_order(probe, self.key_names):
            order = np.arange(probe.num_rows, dtype=np.int64)
        else:
            order = np.asarray(pc.sort_indices(probe, sort_keys=[(k, "ascending") for k in self.key_names]), dtype=np.int64)
            probe = probe.take(pa.array(order))
        probe = probe.combine_chunks()
        first = to_array(probe.column(self.key_names[0]))
        first_np = _sortable_numpy(first)
        found = np.zeros(probe.num_rows, dtype=np.bool_)
        found_key: list[npt.NDArray[np.int64]] = []
        found_file: list[npt.NDArray[np.int64]] = []
        found_pos: list[npt.NDArray[np.int64]] = []
        found_rows: list[pa.Table] = []
        names: list[str] = []
        for level_no in self.levels:
            if level_no < start_level:
                continue
            pending = np.flatnonzero(~found)
            if pending.size == 0:
                break
            for f in self._candidates(level_no, probe.take(pa.array(pending[[0, -1]]))):
                lo, hi = self._probe_slice(f, first, first_np)
                idx = np.arange(lo, hi, dtype=np.int64)
                idx = idx[~found[lo:hi]]
                if idx.size == 0:  # no pending key within the file's range: not read
                    continue
                entry = self._file_rows(f)
                if entry is None:
                    continue
                probe_idx, rows = self._match(entry, probe.take(pa.array(idx)))
                if probe_idx.size == 0:
                    continue
                hit_keys = idx[probe_idx]
                found[hit_keys] = True
                hit = entry.table.take(pa.array(rows))
                names.append(entry.file_name)
                found_key.append(order[hit_keys])
                found_file.append(np.full(hit_keys.size, len(names) - 1, dtype=np.int64))
                found_pos.append(np.asarray(hit.column(_POS).to_numpy(), dtype=np.int64))
                if self.with_values:
                    found_rows.append(hit.drop_columns([_POS]))
        if not found_key:
            empty = np.empty(0, dtype=np.int64)
            return LookupResult(empty, empty, empty, tuple(names), None)
        key_index = np.concatenate(found_key)
        result_order = np.argsort(key_index, kind="stable")
        rows_out: pa.Table | None = None
        if self.with_values:
            rows_out = pa.concat_tables(found_rows).take(pa.array(result_order))
        return LookupResult(
            key_index[result_order],
            np.concatenate(found_file)[result_order],
            np.concatenate(found_pos)[result_order],
            tuple(names),
            rows_out,
        )


@dataclass(frozen=True)
class _File:
    """A file's live rows sorted by key and its first key column (as numpy when that column
    sorts like its numbers)."""

    table: pa.Table
    file_name: str
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
