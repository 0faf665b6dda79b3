"""Range-partitioned sort of one partition, file by file: bounded memory, and the steps the Spark
executor runs on its workers (Flink's ``RangeShuffle`` / ``SortUtils``, by sampling).

1. :func:`sample_file`: a file's order columns keyed, ``ranges x
   sort-compaction.local-sample.magnification`` keys per partition drawn at random in proportion
   to the file's rows, each weighted by its share of the file's bytes (``size``) or 1
   (``quantity``);
2. :func:`partition_boundaries`: ``ranges - 1`` boundary keys from the pooled sample;
3. :func:`split_file` : a file read whole (deletion vectors applied), each row given its range,
   the rows grouped by range;
4. each range's rows are sorted and written on their own (:func:`write_range`).

:func:`spill_sort_task` runs the four steps in this process with Arrow IPC spill files in a
temporary directory, so it holds one input file or one range at a time; the local executor uses
it for partitions larger than ``write-buffer-size`` (Paimon's sort buffer spills beyond it too).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.compact.sort_task import SortCompactTask, read_task_rows, write_sorted_ranges
from paimon_core.sort.table_sorter import SortSpec, assign_ranges, range_boundaries

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["SAMPLE_SEED", "partition_boundaries", "sample_file", "spill_sort_task", "split_file", "write_range"]

SAMPLE_SEED = 20240601


def sample_file(
    store: FileStore, spec: SortSpec, task: SortCompactTask, file_index: int, ranges: int, *, seed: int = SAMPLE_SEED
) -> tuple[pa.Table, np.ndarray]:
    """Sampled keys of one input file and their weights (see the module docstring)."""
    f = task.files[file_index]
    rows, weights = read_task_rows(store, task.partition, [f], deletion_index=task.deletion_index, columns=spec.columns)
    n = rows.num_rows
    if n == 0:
        return spec.keys(rows, store.schema.fields), np.zeros(0)
    want = math.ceil(ranges * spec.sample_magnification * f.row_count / max(1, task.input_rows))
    rng = np.random.default_rng([seed, file_index])
    pick = np.sort(rng.choice(n, size=min(n, want), replace=False))
    keys = spec.keys(rows.take(pa.array(pick)), store.schema.fields)
    return keys, (weights[pick] if spec.range_strategy == "size" else np.ones(len(pick)))


def partition_boundaries(samples: Sequence[tuple[pa.Table, np.ndarray]], ranges: int) -> pa.Table | None:
    """The ``ranges - 1`` boundary keys of a partition from its files' samples (None: no rows)."""
    kept = [(k, w) for k, w in samples if k.num_rows]
    if not kept:
        return None
    return range_boundaries(pa.concat_tables([k for k, _ in kept]), np.concatenate([w for _, w in kept]), ranges)


def split_file(
    store: FileStore, spec: SortSpec, task: SortCompactTask, file_index: int, boundaries: pa.Table | None
) -> Iterator[tuple[int, pa.Table]]:
    """The rows of one input file grouped by range: ``(range, rows)`` in range order."""
    rows, _ = read_task_rows(store, task.partition, [task.files[file_index]], deletion_index=task.deletion_index)
    if rows.num_rows == 0:
        return
    if boundaries is None or boundaries.num_rows == 0:
        yield 0, rows
        return
    rid = assign_ranges(spec.keys(rows, store.schema.fields), boundaries)
    order = np.argsort(rid, kind="stable")
    grouped = rows.take(pa.array(order))
    ranked = rid[order]
    starts = np.flatnonzero(np.concatenate([[True], ranked[1:] != ranked[:-1]]))
    for lo, hi in zip(starts, np.append(starts[1:], len(ranked)), strict=True):
        yield int(ranked[lo]), grouped.slice(int(lo), int(hi - lo))


def write_range(store: FileStore, spec: SortSpec, task: SortCompactTask, range_index: int, rows: pa.Table) -> list[DataFileMeta]:
    """Sort and write one range; its sequence numbers start ``range_index * input_rows`` after the
    task's first (ranges never overlap)."""
    first = min(f.min_sequence_number for f in task.files) + range_index * task.input_rows
    return write_sorted_ranges(store, task.partition, spec, rows, np.ones(rows.num_rows), ranges=1,
                               first_sequence_number=first)  # fmt: skip


def spill_sort_task(store: FileStore, spec: SortSpec, task: SortCompactTask, *, spill_dir: str | None = None) -> list[DataFileMeta]:
    """One partition sorted by sampled ranges with local spill files (see the module docstring);
    on failure the files written so far are deleted, and the spill directory always is."""
    target = store.options.target_file_size(has_primary_key=False)
    ranges = task.ranges(target, spec)
    bounds = partition_boundaries([sample_file(store, spec, task, i, ranges) for i in range(len(task.files))], ranges)
    work = Path(tempfile.mkdtemp(prefix="paimon-sort-", dir=spill_dir))
    written: list[DataFileMeta] = []
    try:
        writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        try:
            for i in range(len(task.files)):
                for r, rows in split_file(store, spec, task, i, bounds):
                    if r not in writers:
                        writers[r] = pa.ipc.new_file(str(work / f"range-{r}.arrow"), rows.schema)
                    writers[r].write_table(rows)
        finally:
            for w in writers.values():
                w.close()
        for r in sorted(writers):
            path = work / f"range-{r}.arrow"
            with pa.memory_map(str(path)) as source:
                rows = pa.ipc.open_file(source).read_all()
            written += write_range(store, spec, task, r, rows)
            path.unlink()
    except BaseException:
        bucket_path = store.bucket_path(task.partition, 0)
        for f in written:
            store.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return written
