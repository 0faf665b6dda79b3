"""The jobs' maintenance ledger rows (see :mod:`paimon_core.ledger`).

Every ``python -m spark_jobs <job>`` run records one ledger row per table it maintained
(``compact_database`` and ``remove_orphan_files --table DB.*``: one per table), with
``entry_point = 'spark_job'`` and the Airflow ids of ``$PAIMON_LEDGER_CONTEXT`` when an Airflow
task started it. The job creates the warehouse's ledger when it is missing, unless run with
``--no-ledger`` (then it records nothing). ``ingest`` is not maintenance: it records nothing
(:data:`UNRECORDED_JOBS`).

CPU: ``cpu_seconds`` is the driver process's CPU plus, where Spark ran, the CPU of the Python
workers, summed by :class:`WorkerCpu` (an accumulator each executor-side function adds its
process CPU to).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

from paimon_core.ledger import ActionRecording, ledger_disabled, record_action

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core import FileStoreTable, FileSystemCatalog
    from spark_jobs.common.args import JobConfig
    from spark_jobs.common.procedure import ProcedureArgs

__all__ = ["UNRECORDED_JOBS", "WorkerCpu", "job_action", "job_catalog", "job_recording", "worker_cpu"]

#: Jobs that are not maintenance and record no ledger row.
UNRECORDED_JOBS = frozenset({"ingest"})

_meters: ContextVar[list[WorkerCpu] | None] = ContextVar("paimon_job_worker_cpu", default=None)

T = TypeVar("T")
U = TypeVar("U")


def job_catalog(config: JobConfig) -> FileSystemCatalog:
    """The job's warehouse catalog."""
    from paimon_core import FileSystemCatalog

    return FileSystemCatalog(config.warehouse, storage_options=dict(config.storage_options) or None)


def job_action(job: str, args: ProcedureArgs | None = None) -> str:
    """The ledger action of a job run: the job's name (Paimon's procedure), except a ``compact``
    with an ``order_strategy``, which is ``sort_compact``."""
    if job == "compact" and args is not None:
        if (args.get("order_strategy") or "none").strip().lower() != "none":
            return "sort_compact"
    return job


@contextlib.contextmanager
def job_recording(
    config: JobConfig,
    table: FileStoreTable | str,
    action: str,
    *,
    catalog: FileSystemCatalog | None = None,
    dry_run: bool = False,
) -> Iterator[ActionRecording]:
    """Record one action of a job (``table``: the table, or its name until it is opened)."""
    if not config.ledger:
        with ledger_disabled():
            yield ActionRecording()
        return
    with record_action(
        table,
        action,
        entry_point="spark_job",
        catalog=catalog or job_catalog(config),
        dry_run=dry_run,
        ensure=True,
    ) as recording:
        token = _meters.set([])
        try:
            yield recording
        finally:
            meters = _meters.get() or []
            _meters.reset(token)
            recording.add_cpu(sum(m.seconds for m in meters))


def worker_cpu(spark: SparkSession) -> WorkerCpu:
    """A :class:`WorkerCpu` whose sum goes to the job's ledger row when its recording ends."""
    meter = WorkerCpu(spark)
    meters = _meters.get()
    if meters is not None:
        meters.append(meter)
    return meter


class WorkerCpu:
    """The process CPU Spark's Python workers spend in this job's functions, summed on the
    driver by an accumulator (made by :func:`worker_cpu` inside a job's recording, which adds
    it to the row)."""

    def __init__(self, spark: SparkSession) -> None:
        self._acc = spark.sparkContext.accumulator(0.0)

    def partitions(self, fn: Callable[[T], Iterable[U]]) -> Callable[[T], Iterator[U]]:
        """``fn`` (a ``mapPartitions``/``mapInArrow``/``flatMap`` function) that adds its CPU."""
        acc = self._acc

        def timed(it: T) -> Iterator[U]:
            start = time.process_time()
            try:
                yield from fn(it)
            finally:
                acc.add(time.process_time() - start)

        return timed

    def each(self, fn: Callable[[T], U]) -> Callable[[T], U]:
        """``fn`` (a ``map`` function) that adds its CPU."""
        acc = self._acc

        def timed(x: T) -> U:
            start = time.process_time()
            try:
                return fn(x)
            finally:
                acc.add(time.process_time() - start)

        return timed

    @property
    def seconds(self) -> float:
        """The CPU seconds summed so far (read on the driver)."""
        return float(self._acc.value)
