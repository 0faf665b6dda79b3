"""The merged read of a data-evolution table's files (Java ``DataEvolutionSplitRead``,
``RangeHelper.mergeOverlappingRanges``, ``DataEvolutionFileReader``, ``DataEvolutionUtils``).

Store-level: reads take a :class:`~paimon_core.store.file_store.FileStore` and plain file lists,
so a compaction below the table layer reads as the table read does
(:mod:`paimon_core.table.data_evolution_read` plans the splits and describes the semantics):

* files are grouped by overlapping row-id range (:func:`row_id_groups`), each group newest file
  first (:func:`merge_ranges_and_sort`; all must span the same range);
* every read column comes from the newest file that wrote it (``write_cols``, or all the columns
  of its schema), ``_ROW_ID``/``_SEQUENCE_NUMBER`` likewise (physical value, else
  ``first_row_id + position`` / that file's max sequence number); a column no file wrote is null;
* a group's deletion vector is its anchor's (:func:`anchor_file`), applied to the merged rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.append.row_tracking import (
    DATA_EVOLUTION_ENABLED,
    ROW_ID,
    SEQUENCE_NUMBER,
    file_row_ids,
    fill_sequence,
    has_physical,
)
from paimon_core.deletionvectors import DeletionFile, read_deletion_vector
from paimon_core.exceptions import CorruptFileError, SchemaMismatchError, UnsupportedTableKindError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.format.file_format import file_format_from_name, read_file
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.schema.data_types import DataField

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = [
    "DataEvolutionSplitRead",
    "aligned_slices",
    "anchor_file",
    "check_plain",
    "merge_ranges_and_sort",
    "row_id_groups",
    "row_id_range",
    "same_range_groups",
]

logger = logging.getLogger(__name__)

_SYSTEM_IDS = frozenset({ROW_ID.id, SEQUENCE_NUMBER.id})


def row_id_range(f: DataFileMeta) -> tuple[int, int]:
    """``[first_row_id, last_row_id]`` of ``f`` (Java ``DataFileMeta.nonNullRowIdRange``)."""
    if f.first_row_id is None:
        raise UnsupportedTableKindError(
            f"Data file {f.file_name} of a data-evolution table has no first_row_id: it was committed without row "
            "tracking, so the rows it holds cannot be matched with the other files of their row-id range",
            feature="data evolution",
            key=DATA_EVOLUTION_ENABLED,
            file=f.file_name,
            action="read",
        )
    return f.first_row_id, f.first_row_id + f.row_count - 1


def check_plain(f: DataFileMeta) -> None:
    """Refuse a blob or vector-store file (paimon_core reads no blob or vector columns)."""
    fmt = f.file_name.rsplit(".", 1)[-1].lower()
    if fmt in ("blob", "vector") or ".vector." in f.file_name:
        raise UnsupportedTableKindError(
            f"Data file {f.file_name} is a blob or vector-store file of a data-evolution table: paimon_core does not "
            "read blob or vector columns",
            feature="blob columns" if fmt == "blob" else "vector columns",
            key=DATA_EVOLUTION_ENABLED,
            file=f.file_name,
            action="read",
        )


def row_id_groups(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """``files`` grouped by overlapping row-id range, groups in range order, each in input order
    (Java ``RangeHelper.mergeOverlappingRanges``)."""
    if not files:
        return []
    ranges = [row_id_range(f) for f in files]
    order = sorted(range(len(files)), key=lambda i: ranges[i])
    groups: list[list[int]] = [[order[0]]]
    end = ranges[order[0]][1]
    for i in order[1:]:
        start, stop = ranges[i]
        if start <= end:
            groups[-1].append(i)
            end = max(end, stop)
        else:
            groups.append([i])
            end = stop
    return [[files[i] for i in sorted(g)] for g in groups]


def same_range_groups(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """:func:`row_id_groups`, each group's files checked to span one row-id range, and not blob
    or vector-store files.

    Raises:
        UnsupportedTableKindError: a blob or vector-store file, or a file without ``first_row_id``.
        CorruptFileError: the files of a group do not all span the same row-id range.
    """
    groups = row_id_groups(files)
    for group in groups:
        for f in group:
            check_plain(f)
        first = row_id_range(group[0])
        if any(row_id_range(f) != first for f in group[1:]):
            raise CorruptFileError(
                "Data files "
                + ", ".join(f"{f.file_name} (rows {row_id_range(f)[0]}..{row_id_range(f)[1]})" for f in group)
                + " of a data-evolution table overlap without spanning the same row-id range: they cannot be "
                "merged, compacted or given new row ids"
            )
    return groups


def merge_ranges_and_sort(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """Row-id groups, each newest file first (Java ``DataEvolutionSplitRead.mergeRangesAndSort``);
    refused as :func:`same_range_groups` refuses."""
    return [sorted(g, key=lambda f: -f.max_sequence_number) for g in same_range_groups(files)]  # stable: Java's List.sort


def anchor_file(group: Sequence[DataFileMeta]) -> DataFileMeta:
    """The file whose deletion vector is the group's: the smallest (max sequence number, file
    name) (Java ``DataEvolutionUtils.retrieveAnchorFile``)."""
    return min(group, key=lambda f: (f.max_sequence_number, f.file_name))


class DataEvolutionSplitRead:
    """Reads files of a data-evolution table, merging the columns of each row-id group (Java
    ``DataEvolutionSplitRead``; see the module docstring)."""

    def __init__(self, store: FileStore, *, batch_size: int = 65536) -> None:
        self.store = store
        self.batch_size = batch_size
        self._files = DataFileReader(
            store.file_io, store.schema_manager_cached, table_name=store.name, batch_size=batch_size, paths=store.paths
        )
        self._ids_cache: dict[tuple[int, tuple[str, ...] | None], frozenset[int]] = {}

    def _field_ids(self, f: DataFileMeta) -> frozenset[int]:
        """Ids of the fields ``f`` holds: its ``write_cols`` in its schema (all of its schema's
        fields without them), and the two system fields (Java ``rowTypeWithRowTracking`` of
        ``schema.project(writeCols)``)."""
        key = (f.schema_id, tuple(f.write_cols) if f.write_cols is not None else None)
        got = self._ids_cache.get(key)
        if got is None:
            fields = self._files.schema_of(f.schema_id).fields
            if f.write_cols is None:
                ids = {x.id for x in fields}
            else:
                names = set(f.write_cols)
                ids = {x.id for x in fields if x.name in names}
            got = frozenset(ids | _SYSTEM_IDS)
            self._ids_cache[key] = got
        return got

    def read_files(
        self,
        bucket_path: str,
        files: Sequence[DataFileMeta],
        fields: Sequence[DataField],
        *,
        deletion_files: Mapping[str, DeletionFile] | None = None,
        snapshot_id: int | None = None,
        partition_values: Mapping[int, pa.Scalar] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of ``fields`` (table fields, and ``_ROW_ID``/``_SEQUENCE_NUMBER`` by their
        system ids) of every row of ``files`` (one bucket's), merged by row-id group in range
        order; ``deletion_files`` (data file name -> vector): each group's anchor's is applied.
        ``snapshot_id`` only names the snapshot in errors."""
        for group in merge_ranges_and_sort(files):
            deletion = deletion_files.get(anchor_file(group).file_name) if deletion_files else None
            yield from self.read_group(
                bucket_path, group, fields, deletion=deletion, snapshot_id=snapshot_id, partition_values=partition_values
            )

    def read_group(
        self,
        bucket_path: str,
        group: Sequence[DataFileMeta],
        fields: Sequence[DataField],
        *,
        deletion: DeletionFile | None = None,
        snapshot_id: int | None = None,
        partition_values: Mapping[int, pa.Scalar] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The merged rows of one row-id group (newest file first, all spanning one range; see
        :func:`merge_ranges_and_sort`), streaming: the owning files are decoded batch by batch in
        step (sliced to a common length), so a group holds about a batch per file."""
        n = group[0].row_count
        dv = read_deletion_vector(self.store.file_io, deletion) if deletion is not None else None
        if dv is not None and dv.deletes_all(n):
            return
        owner: list[int] = []  # for each read field, the index in ``group`` of the file it comes from
        for fld in fields:
            owner.append(next((i for i, f in enumerate(group) if fld.id in self._field_ids(f)), -1))
            if owner[-1] < 0 and not fld.type.nullable:
                raise SchemaMismatchError(
                    f"Field {fld.name} ({fld.type.as_sql_string()}) is not null "
                    "but no file of row-id range "
                    f"{row_id_range(group[0])[0]}..{row_id_range(group[0])[1]} ({', '.join(f.file_name for f in group)}) holds it",
                    column=fld.name,
                )
        sources: list[Iterator[pa.RecordBatch]] = []
        slots: dict[int, tuple[int, int]] = {}  # field id -> (source, column) of its values
        system: dict[int, pa.Array] = {}  # field id -> the whole group's values
        for i, f in enumerate(group):
            mine = [fields[j] for j, o in enumerate(owner) if o == i]
            data = [x for x in mine if x.id not in _SYSTEM_IDS]
            if data:
                for c, x in enumerate(data):
                    slots[x.id] = (len(sources), c)
                sources.append(
                    self._files.read(
                        bucket_path,
                        f,
                        data,
                        snapshot_id=snapshot_id,
                        streaming=True,
                        partition_values=partition_values,
                    )
                )
            if len(data) < len(mine):
                system.update(self._system_columns(bucket_path, f, [x for x in mine if x.id in _SYSTEM_IDS]))
        names = [x.name for x in fields]
        types = [to_arrow_type(x.type) for x in fields]
        position = 0
        for chunk, m in aligned_slices(sources, n, self.batch_size, group):
            arrays: list[pa.Array] = []
            for x, typ in zip(fields, types, strict=True):
                slot = slots.get(x.id)
                if slot is not None:
                    arrays.append(chunk[slot[0]].column(slot[1]))
                elif x.id in system:
                    arrays.append(system[x.id].slice(position, m))
                else:
                    arrays.append(pa.nulls(m, typ))  # no file of the range wrote the column
            batch = pa.RecordBatch.from_arrays(arrays, names=names)
            if dv is not None:  # the group's files all span the anchor's range: same positions
                deleted = dv.deleted_mask(m, position)
                if deleted.any():
                    batch = batch.filter(pa.array(np.logical_not(deleted)))
            position += m
            if batch.num_rows:
                yield batch

    def _system_columns(self, bucket_path: str, f: DataFileMeta, system: Sequence[DataField]) -> dict[int, pa.Array]:
        """``_ROW_ID`` / ``_SEQUENCE_NUMBER`` of every row of ``f``: the physical column where the
        file lists it in ``write_cols``, else from the file's metadata."""
        wanted = [s for s in (ROW_ID, SEQUENCE_NUMBER) if any(x.id == s.id for x in system)]
        physical: dict[int, pa.ChunkedArray] = {}
        stored = [s for s in wanted if has_physical(f, s)]
        if stored:
            path = self._files.path_of(bucket_path, f)
            try:
                table = pa.Table.from_batches(
                    list(read_file(self.store.file_io, path, file_format_from_name(f.file_name), columns=[s.name for s in stored]))
                )
                physical = {s.id: table.column(s.name) for s in stored}
            except SchemaMismatchError:
                physical = {}
        out: dict[int, pa.Array] = {}
        if any(s.id == ROW_ID.id for s in wanted):
            out[ROW_ID.id] = pa.array(file_row_ids(f, physical.get(ROW_ID.id)), pa.int64())
        if any(s.id == SEQUENCE_NUMBER.id for s in wanted):
            out[SEQUENCE_NUMBER.id] = fill_sequence(f, physical.get(SEQUENCE_NUMBER.id), f.row_count)
        return out


def aligned_slices(
    sources: Sequence[Iterator[pa.RecordBatch]], n: int, batch_size: int, group: Sequence[DataFileMeta]
) -> Iterator[tuple[list[pa.RecordBatch], int]]:
    """Slices of the same rows from every source, and their length: the row-position alignment
    of Java's ``DataEvolutionFileReader``. Without sources, lengths of up to ``batch_size`` over
    ``n`` rows.

    Raises:
        CorruptFileError: the sources do not all hold ``n`` rows.
    """
    if not sources:
        for start in range(0, n, batch_size):
            yield [], min(batch_size, n - start)
        return
    current: list[pa.RecordBatch | None] = [None] * len(sources)
    offsets = [0] * len(sources)
    produced = 0
    while True:
        for i, it in enumerate(sources):
            batch = current[i]
            while batch is None or offsets[i] >= batch.num_rows:
                batch = next(it, None)
                offsets[i] = 0
                if batch is None:
                    break
            current[i] = batch
        ended = [b is None for b in current]
        if any(ended):
            if not all(ended) or produced != n:
                raise CorruptFileError(
                    "The files " + ", ".join(f.file_name for f in group) + f" of row-id range "
                    f"{row_id_range(group[0])[0]}..{row_id_range(group[0])[1]} do not all hold its {n} rows: they cannot be merged"
                )
            return
        live = [b for b in current if b is not None]
        m = min(b.num_rows - o for b, o in zip(live, offsets, strict=True))
        yield [b.slice(o, m) for b, o in zip(live, offsets, strict=True)], m
        offsets = [o + m for o in offsets]
        produced += m


