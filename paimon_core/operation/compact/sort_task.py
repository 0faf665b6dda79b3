"""The work of a sort compaction, runnable anywhere (the executor half of
:mod:`paimon_core.operation.compact.sort_compact`).

A :class:`SortCompactTask` is one partition's input files (and its deletion vectors) in the
planned snapshot. :func:`read_task_rows` reads them (vectors applied) with each row's weight in
input bytes; :func:`write_sorted_ranges` sorts rows by the spec's key, cuts them into ranges of
equal weight and writes each range with the compaction writer; :func:`local_sort_executor` does
both per partition in this process (one partition's rows in memory at a time, or file by file
with spill files for a partition beyond ``write-buffer-size``: :mod:`.sort_spill`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.sort.table_sorter import SortSpec, cut_by_weight, sort_indices

if TYPE_CHECKING:
    from paimon_core.append.append_deletion_index import DeletionIndex
    from paimon_core.store.file_store import FileStore

__all__ = ["READ_BATCH_ROWS", "SortCompactTask", "SortExecutor", "local_sort_executor", "memory_budget", "read_task_rows",
           "sort_task", "write_sorted_ranges"]  # fmt: skip

READ_BATCH_ROWS = 65536


@dataclass(frozen=True)
class SortCompactTask:
    """All live files of one partition in the planned snapshot, and (deletion-vector tables) the
    partition's vectors in that snapshot (picklable, for executors)."""

    partition: bytes
    partition_name: str
    files: tuple[DataFileMeta, ...]
    deletion_index: DeletionIndex | None = None
    #: level of the written files (incremental clustering: the unit's output level; else 0)
    output_level: int = 0

    @property
    def input_bytes(self) -> int:
        return sum(f.file_size for f in self.files)

    @property
    def input_rows(self) -> int:
        return sum(f.row_count for f in self.files)

    def ranges(self, target_file_size: int, spec: SortSpec) -> int:
        """Output files wanted: the input's bytes (or rows, ``quantity``) over the target size."""
        if spec.range_strategy == "quantity":
            rows_per_file = max(1, self.input_rows * target_file_size // max(1, self.input_bytes))
            return max(1, math.ceil(self.input_rows / rows_per_file))
        return max(1, math.ceil(self.input_bytes / max(1, target_file_size)))

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "sort",
            "partition": self.partition_name,
            "bucket": 0,
            "input_files": len(self.files),
            "input_bytes": self.input_bytes,
            "input_rows": self.input_rows,
            "output_level": self.output_level,
        }


#: Runs the tasks; returns per task the files written, in key order (threads, or Spark).
SortExecutor = Callable[["FileStore", SortSpec, Sequence[SortCompactTask]], list[list[DataFileMeta]]]


def read_task_rows(
    store: FileStore,
    partition: bytes,
    files: Sequence[DataFileMeta],
    *,
    deletion_index: DeletionIndex | None,
    columns: Sequence[str] | None = None,
) -> tuple[pa.Table, np.ndarray]:
    """The rows of ``files`` (deletion vectors applied) in the table's current schema (or just
    ``columns``), and each row's weight in input bytes (its file's bytes per row)."""
    from paimon_core.io.data_file_reader import DataFileReader

    reader = DataFileReader(store.file_io, store.schema_manager_cached, table_name=store.name, batch_size=READ_BATCH_ROWS)
    fields = list(store.schema.fields)
    if columns is not None:
        by_name = {f.name: f for f in fields}
        fields = [by_name[c] for c in columns]
    schema = pa.schema([store.arrow_schema.field(f.name) for f in fields])
    bucket_path = store.bucket_path(partition, 0)
    batches: list[pa.RecordBatch] = []
    weights: list[np.ndarray] = []
    for f in files:
        deletion = deletion_index.deletion_files.get(f.file_name) if deletion_index is not None else None
        per_row = f.file_size / max(1, f.row_count)
        for batch in reader.read(bucket_path, f, fields, deletion=deletion, streaming=True):
            if batch.num_rows:
                batches.append(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
                weights.append(np.full(batch.num_rows, per_row))
    rows = pa.Table.from_batches(batches, schema=schema)
    return rows, (np.concatenate(weights) if weights else np.zeros(0))


def write_sorted_ranges(
    store: FileStore,
    partition: bytes,
    spec: SortSpec,
    rows: pa.Table,
    weights: np.ndarray,
    *,
    ranges: int,
    first_sequence_number: int,
) -> list[DataFileMeta]:
    """Sort ``rows`` by ``spec``'s key, cut them into ``ranges`` runs of equal weight and write each
    run as its own file(s); on failure every file written is deleted."""
    from paimon_core.append.append_compact_rewriter import new_compact_writer

    if rows.num_rows == 0:
        return []
    order = sort_indices(spec.keys(rows, store.schema.fields))
    w = weights[order] if spec.range_strategy == "size" else np.ones(len(order))
    written: list[DataFileMeta] = []
    seq = first_sequence_number
    try:
        for lo, hi in cut_by_weight(w, ranges):
            writer = new_compact_writer(store, partition, 0, first_sequence_number=seq)
            try:
                writer.write(rows.take(pa.array(order[lo:hi])))
                written += writer.close()
            except BaseException:
                writer.abort()
                raise
            seq += hi - lo
    except BaseException:
        bucket_path = store.bucket_path(partition, 0)
        for f in written:
            store.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
        raise
    return written


WRITE_BUFFER_SIZE = "write-buffer-size"
WRITE_BUFFER_SIZE_DEFAULT = "256 mb"


def memory_budget(store: FileStore) -> int:
    """Input bytes a task may sort in memory: ``write-buffer-size`` (Paimon's sort buffer)."""
    from paimon_core.options import parse_memory_size

    raw = store.options.get(WRITE_BUFFER_SIZE) or WRITE_BUFFER_SIZE_DEFAULT
    return parse_memory_size(raw, key=WRITE_BUFFER_SIZE)


def sort_task(store: FileStore, spec: SortSpec, task: SortCompactTask, *, budget: int | None = None) -> list[DataFileMeta]:
    """Run one task in this process: a partition within ``budget`` input bytes (default
    :func:`memory_budget`) is sorted in memory and cut exactly by weight; a larger one by sampled
    ranges with local spill files (:func:`paimon_core.operation.compact.sort_spill.spill_sort_task`)."""
    if task.input_bytes > (memory_budget(store) if budget is None else budget):
        from paimon_core.operation.compact.sort_spill import spill_sort_task

        return spill_sort_task(store, spec, task)
    rows, weights = read_task_rows(store, task.partition, task.files, deletion_index=task.deletion_index)
    target = store.options.target_file_size(has_primary_key=False)
    first_seq = min(f.min_sequence_number for f in task.files)
    return write_sorted_ranges(store, task.partition, spec, rows, weights, ranges=task.ranges(target, spec),
                               first_sequence_number=first_seq)  # fmt: skip


def local_sort_executor(*, budget: int | None = None) -> SortExecutor:
    """Partitions one after another in this process (see :func:`sort_task` for ``budget``)."""

    def run(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        done: list[list[DataFileMeta]] = []
        try:
            for t in tasks:
                done.append(sort_task(store, spec, t, budget=budget))
        except BaseException:
            _delete_files(store, tasks, done)
            raise
        return done

    return run


def _delete_files(store: FileStore, tasks: Sequence[SortCompactTask], written: Sequence[Sequence[DataFileMeta]]) -> None:
    for task, files in zip(tasks, written, strict=False):
        bucket_path = store.bucket_path(task.partition, 0)
        for f in files:
            store.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
