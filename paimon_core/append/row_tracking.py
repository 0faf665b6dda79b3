"""Row tracking of append tables (Java ``SpecialFields``, ``RowTrackingCommitUtils``,
``DataFileRecordReader``/``ColumnarRowIterator.assignRowTracking``).

A table with ``row-tracking.enabled`` (unaware bucket, no primary key; Java's
``SchemaValidation.validateRowTracking``) gives every row a stable ``_ROW_ID`` and a
``_SEQUENCE_NUMBER`` (the snapshot that last wrote it):

* **Commit** (:func:`assign_row_tracking`, Java ``RowTrackingCommitUtils.assignRowTracking``):
  a delta file with ``min_sequence_number == 0`` gets the new snapshot id as min and max
  sequence number (``max == 0``: only the max); an APPEND file without ``first_row_id`` and
  without a physical ``_ROW_ID`` column gets ``first_row_id = next_row_id`` of the previous
  snapshot (0 for the first), which then advances by its row count; COMPACT files keep what they
  carry. The snapshot stores the new ``next_row_id``.
* **Read** (:func:`row_tracking_batches`): a row's ``_ROW_ID`` is the file's physical ``_ROW_ID``
  value when present and not null, else ``first_row_id + position in the file``; its
  ``_SEQUENCE_NUMBER`` the physical value, else the file's ``max_sequence_number``.
* **Compaction** (Java ``AppendOnlyFileStore.newWrite`` reads with
  ``SpecialFields.rowTypeWithRowTracking`` and ``CompactProcedure``/``AppendTableCompactor`` write
  with it): the compacted files hold ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as physical columns
  after the table's columns, min/max sequence numbers come from the rows, and the commit keeps
  them (COMPACT files get no new ids). Two deliberate differences, both read the same by Java:

  - Only runs of two or more files whose ``first_row_id`` ranges follow on from each other (no
    deletion vector) are rewritten, in ``first_row_id`` order, each run into its own files;
    every output file then holds ids ``first, first+1, ...`` and also carries
    ``first_row_id = first``. Java rewrites whatever its coordinator picked and leaves
    ``first_row_id`` null, reading the ids from the column; but pypaimon 2.1.0 ignores a
    physical ``_ROW_ID`` (null ids without ``first_row_id``) and pypaimon-rust 0.4.0 refuses a
    row-tracked file without one ("Row-tracked file ... is missing first_row_id"). So a file
    whose range has no neighbour among the candidates (a partition's files, when commits
    wrote several partitions and the ids interleave) or with deleted rows stays uncompacted:
    every reader keeps reading every row with its id, the table is merely less compacted.
  - ``write_cols`` stays empty, where Java lists the table's fields then the two system fields:
    Java's ``RawFileSplitRead`` reads a row-tracking file's system columns whatever
    ``write_cols`` says (``rowTypeWithRowTracking(schema, true, true)``: missing columns read as
    null and are filled), while pypaimon-rust 0.4.0 refuses a file listing ``_ROW_ID`` in
    ``write_cols`` ("Unknown data-evolution write path").

The rewrite holds one run's ids and sequence numbers (16 bytes a row) to set its files' metadata.

Data-evolution tables (``data-evolution.enabled``: files holding some columns of a row-id range,
merged on read) are compacted as Java's ``DataEvolutionCompactCoordinator``/``DataEvolutionCompactTask``
do (:mod:`paimon_core.append.data_evolution_compact_coordinator`): :func:`check_compactable` keeps
them from the plain append rewrite, and :func:`read_with_row_tracking` refuses a partial-column
file (:mod:`paimon_core.operation.data_evolution_split_read` merges them by row id). Sort compaction and rescale of row-tracking tables are refused by
:mod:`paimon_core.operation.compact.sort_compact` and :mod:`paimon_core.table.rescale`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import SchemaMismatchError, UnsupportedTableKindError
from paimon_core.manifest.entries import DataFileMeta, FileSource, ManifestEntry
from paimon_core.schema.data_types import BigIntType, DataField

if TYPE_CHECKING:
    from paimon_core.deletionvectors import DeletionFile
    from paimon_core.store.file_store import FileStore

__all__ = [
    "DATA_EVOLUTION_ENABLED",
    "ROW_ID",
    "ROW_TRACKING_ENABLED",
    "ROW_TRACKING_PARTITION_GROUP_ON_COMMIT",
    "SEQUENCE_NUMBER",
    "RowTrackingAssigned",
    "assign_row_tracking",
    "check_compactable",
    "compact_file_meta",
    "data_evolution_enabled",
    "file_row_ids",
    "read_with_row_tracking",
    "row_tracking_arrow_schema",
    "row_tracking_enabled",
    "row_tracking_fields",
]

logger = logging.getLogger(__name__)

ROW_TRACKING_ENABLED = "row-tracking.enabled"
ROW_TRACKING_PARTITION_GROUP_ON_COMMIT = "row-tracking.partition-group-on-commit"
DATA_EVOLUTION_ENABLED = "data-evolution.enabled"

#: Java ``SpecialFields.ROW_ID`` (id ``Integer.MAX_VALUE - 5``, BIGINT NOT NULL).
ROW_ID = DataField(2147483647 - 5, "_ROW_ID", BigIntType(nullable=False))
#: Java ``SpecialFields.SEQUENCE_NUMBER`` (id ``Integer.MAX_VALUE - 1``, BIGINT NOT NULL).
SEQUENCE_NUMBER = DataField(2147483647 - 1, "_SEQUENCE_NUMBER", BigIntType(nullable=False))


def _true(options: Mapping[str, str], key: str) -> bool:
    return (options.get(key) or "false").strip().lower() == "true"


def row_tracking_enabled(options: Mapping[str, str]) -> bool:
    """``row-tracking.enabled`` (Java ``CoreOptions.rowTrackingEnabled``)."""
    return _true(options, ROW_TRACKING_ENABLED)


def data_evolution_enabled(options: Mapping[str, str]) -> bool:
    """``data-evolution.enabled`` (Java ``CoreOptions.dataEvolutionEnabled``)."""
    return _true(options, DATA_EVOLUTION_ENABLED)


def row_tracking_fields(fields: Sequence[DataField]) -> list[DataField]:
    """``fields`` then ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (Java
    ``SpecialFields.rowTypeWithRowTracking``; user fields of those names are replaced)."""
    names = {ROW_ID.name, SEQUENCE_NUMBER.name}
    return [f for f in fields if f.name not in names] + [ROW_ID, SEQUENCE_NUMBER]


def check_compactable(options: Mapping[str, str], *, table: str, action: str = "compact") -> None:
    """Refuse to rewrite the data files of a data-evolution table as a plain append table's (see
    the module docstring).

    Raises:
        UnsupportedTableKindError: ``data-evolution.enabled`` is true; nothing was changed.
    """
    if data_evolution_enabled(options):
        raise UnsupportedTableKindError(
            f"Cannot {action} table {table} as a plain append table: it is a data-evolution table "
            "(data-evolution.enabled = true), whose files hold some columns of shared row-id ranges; row ids would "
            "not be kept. Compact it with table.maintenance.compact() or spark_jobs compact (Java's "
            "DataEvolutionCompactCoordinator, paimon_core.append.data_evolution_compact_coordinator)",
            feature="data evolution",
            key=DATA_EVOLUTION_ENABLED,
            action=action,
        )


@dataclass(frozen=True, slots=True)
class RowTrackingAssigned:
    """Result of :func:`assign_row_tracking` (Java ``RowTrackingAssigned``)."""

    next_row_id: int
    entries: tuple[ManifestEntry, ...]

    def to_dict(self) -> dict[str, object]:
        return {"next_row_id": self.next_row_id, "entries": len(self.entries)}


def assign_row_tracking(
    new_snapshot_id: int,
    first_row_id_start: int,
    entries: Sequence[ManifestEntry],
    *,
    partition_group: bool = False,
) -> RowTrackingAssigned:
    """Sequence numbers and first row ids of a commit's delta entries (Java
    ``RowTrackingCommitUtils.assignRowTracking``; see the module docstring).

    ``partition_group`` (``row-tracking.partition-group-on-commit``): entries are grouped by
    partition first, in order of first appearance (Java's ``groupingBy`` into a hash map keeps no
    defined order; first appearance is one of the orders it may give). Blob and vector-store files
    (which share the ids of their data file) are not handled: paimon_core refuses such tables.
    """
    ordered: Sequence[ManifestEntry] = entries
    if partition_group:
        groups: dict[bytes, list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault(e.partition, []).append(e)
        ordered = [e for group in groups.values() for e in group]
    start = first_row_id_start
    out: list[ManifestEntry] = []
    for e in ordered:
        f = e.file
        if f.min_sequence_number == 0:
            f = f.copy(min_sequence_number=new_snapshot_id, max_sequence_number=new_snapshot_id)
        elif f.max_sequence_number == 0:
            f = f.copy(max_sequence_number=new_snapshot_id)
        if f.file_source is None:
            raise ValueError(f"This is a bug, file source field for row-tracking table must present ({f.file_name}).")
        has_row_id = f.write_cols is not None and ROW_ID.name in f.write_cols
        if f.file_source == FileSource.APPEND and f.first_row_id is None and not has_row_id:
            f = f.copy(first_row_id=start)
            start += f.row_count
        out.append(e if f is e.file else ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets, f))
    return RowTrackingAssigned(start, tuple(out))


def has_physical(f: DataFileMeta, field: DataField) -> bool:
    """Whether the file holds ``field`` (a system field) as a column (Java lists it in ``write_cols``)."""
    return f.write_cols is not None and field.name in f.write_cols


def file_row_ids(f: DataFileMeta, physical: pa.Array | pa.ChunkedArray | None) -> np.ndarray:
    """The ``_ROW_ID`` of every row of ``f`` in file order (before deletion vectors): the physical
    value where present and not null, else ``first_row_id + position``.

    Raises:
        UnsupportedTableKindError: a row has no id (no physical value and no ``first_row_id``):
            the file was written to a row-tracking table by a writer that assigned none.
    """
    n = f.row_count
    positional = None if f.first_row_id is None else np.arange(f.first_row_id, f.first_row_id + n, dtype=np.int64)
    if physical is None:
        if positional is None:
            raise _no_row_ids(f)
        return positional
    arr = physical.combine_chunks() if isinstance(physical, pa.ChunkedArray) else physical
    if len(arr) != n:
        raise ValueError(f"data file {f.file_name} holds {len(arr)} _ROW_ID values for {n} rows")
    if arr.null_count == 0:
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)
    if positional is None:
        raise _no_row_ids(f)
    values = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    mask = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values[mask] = positional[mask]
    return values


def _no_row_ids(f: DataFileMeta) -> UnsupportedTableKindError:
    return UnsupportedTableKindError(
        f"Data file {f.file_name} of a row-tracking table (row-tracking.enabled) has no row ids (no first_row_id "
        "and no _ROW_ID column): it was committed without row tracking, so its rows' ids are unknown; "
        "refusing to rewrite or read them as if they had ids",
        feature="row tracking",
        key=ROW_TRACKING_ENABLED,
        file=f.file_name,
    )


def fill_sequence(f: DataFileMeta, physical: pa.Array | pa.ChunkedArray | None, num_rows: int) -> pa.Array:
    """``_SEQUENCE_NUMBER`` of ``num_rows`` rows of ``f``: the physical value where present and
    not null, else the file's ``max_sequence_number`` (Java's tracking vector)."""
    if physical is None:
        return pa.array(np.full(num_rows, f.max_sequence_number, dtype=np.int64))
    arr = physical.combine_chunks() if isinstance(physical, pa.ChunkedArray) else physical
    return arr.cast(pa.int64()).fill_null(f.max_sequence_number)


def compact_file_meta(meta: DataFileMeta, row_ids: np.ndarray, sequences: np.ndarray) -> DataFileMeta:
    """A compacted file's meta for a row-tracking table: min/max sequence numbers of its rows
    (Java ``RowDataFileSequenceNumberTracker``), ``first_row_id`` when its ids are contiguous, and
    ``write_cols`` left empty (see the module docstring)."""
    if len(row_ids) != meta.row_count or len(sequences) != meta.row_count:
        raise ValueError(f"compacted file {meta.file_name}: {meta.row_count} rows, {len(row_ids)} row ids")
    first: int | None = None
    if meta.row_count and bool(np.array_equal(row_ids, np.arange(row_ids[0], row_ids[0] + len(row_ids)))):
        first = int(row_ids[0])
    return meta.copy(
        first_row_id=first,
        write_cols=None,
        min_sequence_number=int(sequences.min()) if meta.row_count else 0,
        max_sequence_number=int(sequences.max()) if meta.row_count else 0,
    )


def row_id_runs(files: Sequence[DataFileMeta], deleted: Mapping[str, bool]) -> list[list[DataFileMeta]]:
    """``files`` in ``first_row_id`` order (files without one last, in their order), cut into runs
    whose ``first_row_id`` ranges follow on from each other: a file without ``first_row_id`` or
    with deleted rows (``deleted[name]``) is a run of its own. Each run is written to its own
    output files, so those of a gap-free run get a ``first_row_id`` (:func:`compact_file_meta`
    checks the ids themselves)."""
    with_id = sorted((f for f in files if f.first_row_id is not None), key=lambda f: f.first_row_id or 0)
    ordered = with_id + [f for f in files if f.first_row_id is None]
    runs: list[list[DataFileMeta]] = []
    expected: int | None = None
    for f in ordered:
        alone = f.first_row_id is None or deleted.get(f.file_name, False)
        if runs and not alone and expected is not None and f.first_row_id == expected:
            runs[-1].append(f)
        else:
            runs.append([f])
        expected = None if alone or f.first_row_id is None else f.first_row_id + f.row_count
    return runs


def iter_numpy(arrays: Iterator[np.ndarray]) -> np.ndarray:
    """Concatenate int64 arrays (empty: an empty array)."""
    parts = list(arrays)
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


#: Rows per batch read from a data file.
READ_BATCH_ROWS = 65536


def row_tracking_arrow_schema(store: FileStore) -> pa.Schema:
    """The table's Arrow schema then ``_ROW_ID``, ``_SEQUENCE_NUMBER`` (int64, not null)."""
    from paimon_core.format.arrow_types import to_arrow_type

    fields = list(store.schema.fields)
    if len(row_tracking_fields(fields)) != len(fields) + 2:
        raise UnsupportedTableKindError(
            f"Table {store.name} has a column named _ROW_ID or _SEQUENCE_NUMBER, Paimon's row-tracking system fields",
            feature="row tracking",
            key=ROW_TRACKING_ENABLED,
        )
    system = [pa.field(s.name, to_arrow_type(s.type), nullable=False) for s in (ROW_ID, SEQUENCE_NUMBER)]
    return pa.schema([*store.arrow_schema, *system])


def read_with_row_tracking(
    store: FileStore,
    partition: bytes,
    bucket_path: str,
    f: DataFileMeta,
    *,
    deletion: DeletionFile | None = None,
) -> Iterator[pa.Table]:
    """The live rows of ``f`` in the table's schema, then their ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER`` (Java ``DataFileRecordReader`` with row tracking; see the module
    docstring). Ids and sequence numbers are taken before ``deletion`` (the file's deletion
    vector) drops rows."""
    from paimon_core.deletionvectors import read_deletion_vector
    from paimon_core.format.file_format import file_format_from_name, read_file
    from paimon_core.io.data_file_reader import DataFileReader, partition_scalars

    schema = row_tracking_arrow_schema(store)
    if f.write_cols is not None and not {fl.name for fl in store.schema.fields} <= set(f.write_cols):
        raise UnsupportedTableKindError(
            f"Data file {f.file_name} of table {store.name} holds only columns {list(f.write_cols)} of a row-id range "
            "(a data-evolution partial-column file, data-evolution.enabled): merging such files by row id (Java "
            "DataEvolutionSplitRead) is not supported by paimon_core",
            feature="data evolution",
            key=DATA_EVOLUTION_ENABLED,
            file=f.file_name,
        )
    reader = DataFileReader(
        store.file_io, store.schema_manager_cached, table_name=store.name, batch_size=READ_BATCH_ROWS, paths=store.paths
    )
    fields = list(store.schema.fields)
    part_fields = store.schema.partition_fields
    values = partition_scalars(part_fields, store.partition_codec.decode(partition)) if part_fields else None
    physical_ids = None
    if has_physical(f, ROW_ID) or f.file_source == FileSource.COMPACT:
        # our compacted files hold _ROW_ID without listing it in write_cols (see the docstring)
        path = reader.path_of(bucket_path, f)
        try:
            batches = list(read_file(store.file_io, path, file_format_from_name(f.file_name), columns=[ROW_ID.name]))
            physical_ids = pa.chunked_array([b.column(0) for b in batches], pa.int64())
        except SchemaMismatchError:
            physical_ids = None  # the file has no such column
    ids = file_row_ids(f, physical_ids)
    with_seq = physical_ids is not None or has_physical(f, SEQUENCE_NUMBER)
    dv = read_deletion_vector(store.file_io, deletion) if deletion is not None else None
    position = 0
    try:
        batches_iter = reader.read(bucket_path, f, fields, with_seq=with_seq, streaming=True, partition_values=values)
        for batch in batches_iter:
            n = batch.num_rows
            if not n:
                continue
            seq = fill_sequence(f, batch.column(len(fields)) if with_seq else None, n)
            arrays = [*batch.columns[: len(fields)], pa.array(ids[position : position + n]), seq]
            out = pa.Table.from_arrays(arrays, schema=schema)
            if dv is not None:
                deleted = dv.deleted_mask(n, position)
                if deleted.any():
                    out = out.filter(pa.array(np.logical_not(deleted)))
            position += n
            if out.num_rows:
                yield out
    except SchemaMismatchError as e:
        raise SchemaMismatchError(f"Data file {f.file_name}: {e}", file=f.file_name) from e
