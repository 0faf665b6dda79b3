"""Sort compaction on Spark: the executor half of ``compact --order_strategy ... --order_by ...``.

The driver plans (:class:`paimon_core.operation.compact.sort_compact.SortCompaction`: the live
files of the selected partitions in one snapshot) and commits once; this module runs the sort:

1. **sample** (one Spark task per group of input files): each file's order columns are read and
   keyed, and ``ranges x sort-compaction.local-sample.magnification`` keys per partition are
   drawn at random in proportion to the file's rows, each weighted by its share of the file's
   bytes (``sort-compaction.range-strategy = size``) or 1 (``quantity``);
2. **boundaries** (driver): per partition, ``ranges - 1`` boundary keys from the sample (Java
   ``RangeShuffle.allocateRangeBaseSize``), ``ranges = ceil(bytes / target-file-size)``; broadcast;
3. **range shuffle**: each file is read whole (deletion vectors applied), every row gets its
   range (:func:`paimon_core.sort.table_sorter.assign_ranges`), and the rows of each range go to
   one reduce partition (``partitionBy`` over the global range id) as Arrow IPC;
4. **sort and write** (one Spark task per range): the range's rows are sorted by key and written
   by the compaction writer (the same path as every other compaction); the task returns the
   file metas. Nothing is visible until the driver commits.

The steps are :mod:`paimon_core.operation.compact.sort_spill`'s, which the local executor runs
with spill files for partitions beyond ``write-buffer-size``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.compact.sort_spill import (
    SAMPLE_SEED,
    partition_boundaries,
    sample_file,
    split_file,
    write_range,
)
from paimon_core.operation.compact.sort_task import SortCompactTask, SortExecutor
from paimon_core.sort.table_sorter import SortSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.store.file_store import FileStore

__all__ = ["spark_sort_executor"]


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def spark_sort_executor(spark: SparkSession) -> SortExecutor:
    """Sample, range-shuffle and sort the tasks' rows on the executors (see the module docstring)."""

    def run(store: FileStore, spec: SortSpec, tasks: Sequence[SortCompactTask]) -> list[list[DataFileMeta]]:
        if not tasks:
            return []
        from spark_jobs.common.ledger import worker_cpu

        cpu = worker_cpu(spark)  # the workers' CPU, for the ledger row
        sc = spark.sparkContext
        target = store.options.target_file_size(has_primary_key=False)
        ranges = [t.ranges(target, spec) for t in tasks]
        bases = np.concatenate([[0], np.cumsum(ranges)[:-1]]).astype(int).tolist()
        total = int(sum(ranges))
        units = [(ti, fi) for ti, t in enumerate(tasks) for fi in range(len(t.files))]
        slices = max(1, min(len(units), sc.defaultParallelism * 2))
        task_list = list(tasks)

        def sample(it: Iterable[tuple[int, int]]) -> Iterator[tuple[int, bytes, bytes]]:
            for ti, fi in it:
                keys, weights = sample_file(store, spec, task_list[ti], fi, ranges[ti], seed=SAMPLE_SEED + ti)
                if keys.num_rows:
                    yield ti, _ipc(keys), weights.astype(np.float64).tobytes()

        sampled: dict[int, list[tuple[pa.Table, np.ndarray]]] = {}
        for ti, keys_ipc, w_bytes in sc.parallelize(units, slices).mapPartitions(cpu.partitions(sample)).collect():
            sampled.setdefault(ti, []).append((_from_ipc(keys_ipc), np.frombuffer(w_bytes, dtype=np.float64)))
        bounds: dict[int, bytes] = {}
        for ti, samples in sampled.items():
            b = partition_boundaries(samples, ranges[ti])
            if b is not None:
                bounds[ti] = _ipc(b)
        shared = sc.broadcast(bounds)

        def shuffle(it: Iterable[tuple[int, int]]) -> Iterator[tuple[int, bytes]]:
            for ti, fi in it:
                raw = shared.value.get(ti)
                for r, rows in split_file(store, spec, task_list[ti], fi, _from_ipc(raw) if raw else None):
                    yield bases[ti] + r, _ipc(rows)

        def owner(gid: int) -> tuple[int, int]:
            ti = int(np.searchsorted(np.asarray(bases), gid, side="right")) - 1
            return ti, gid - bases[ti]

        def write(it: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, list[DataFileMeta]]]:
            parts: dict[int, list[pa.Table]] = {}
            for gid, data in it:
                parts.setdefault(gid, []).append(_from_ipc(data))
            for gid, chunks in sorted(parts.items()):
                ti, r = owner(gid)
                yield gid, write_range(store, spec, task_list[ti], r, pa.concat_tables(chunks))

        shuffled = sc.parallelize(units, slices).mapPartitions(cpu.partitions(shuffle)).partitionBy(total, lambda gid: gid)
        done = dict(shuffled.mapPartitions(cpu.partitions(write)).collect())
        return [[f for r in range(ranges[ti]) for f in done.get(bases[ti] + r, [])] for ti in range(len(tasks))]

    return run
