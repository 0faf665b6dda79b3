"""Streaming read of a Paimon table: ``spark.readStream.format("paimon")`` (Paimon Spark's
``PaimonMicroBatchStream`` + ``StreamHelper``, on PySpark's ``DataSourceStreamReader``).

::

    (spark.readStream.format("paimon").option("warehouse", W)
        .option("read.stream.maxFilesPerTrigger", "10").option("consumer-id", "job1")
        .load("db.t"))

**What is read.** ``scan.mode`` (:class:`~paimon_core.table.stream_scan.StreamTableScan`) picks
the start: ``latest-full`` (default: the latest snapshot in full, then every later change),
``latest`` (only snapshots committed after the start), ``from-snapshot`` / ``from-snapshot-full``
(``scan.snapshot-id``), ``from-timestamp`` (``scan.timestamp-millis``),
``from-file-creation-time`` (``scan.file-creation-time-millis``: the latest snapshot's files
created since then, then changes). After the start, each APPEND snapshot contributes the files
it added (an append table is a queue of its commits); COMPACT/ANALYZE snapshots add nothing and
are skipped; OVERWRITE snapshots are skipped unless ``streaming-read-overwrite=true`` (an
append table then streams the files the overwrite added, a primary-key table its changes: per
bucket, the rows before and after diffed by key into -D, -U/+U and +I, as Java's ``readChanges``).
Primary-key tables stream each snapshot's *delta* (the level-0 files it wrote; with a
``changelog-producer``: its changelog files): as Paimon Spark, the rows are emitted as they are,
-U/-D retractions included, **without** a row kind, unless ``read.changelog=true``, which adds a
first column ``rowkind`` (``+I``/``-U``/``+U``/``-D``) like Paimon's ``$audit_log``.

**Offsets** are JSON ``{"snapshotId", "index", "scanSnapshot", "totalUnits"}``: the last unit
read (index -1: none yet) of a snapshot read in full (``scanSnapshot``) or as its delta; a
unit is one file (raw reads) or one merged bucket. Micro-batches cover (start, end].

**Read limits** ``read.stream.maxFilesPerTrigger`` / ``maxRowsPerTrigger`` /
``maxBytesPerTrigger`` are hard caps per micro-batch (except that a batch always admits its
first unit, even when that one file is larger than the cap); offsets may stop inside a snapshot.
(Paimon Spark admits a split while the batch is still *below* the cap, so its batches may
overshoot by one split.) ``minRowsPerTrigger`` + ``maxTriggerDelayMs`` delay a batch until
enough rows wait or the delay passed (not with AvailableNow). ``Trigger.AvailableNow`` reads
up to the latest snapshot at query start, in as many limited batches as needed, then stops.

**Consumer** (``consumer-id``): resumes from ``consumer/consumer-<id>`` when the query has no
checkpoint (unless ``consumer.ignore-progress``); progress is written when Spark has durably
finished a batch: Spark calls ``latestOffset(start)`` only after the batch that ended at
``start`` is in its commit log, so that is where the next snapshot is recorded (and again in
``commit(end)``, Paimon Spark's hook, which Spark calls one batch late). An incomplete initial
full scan records nothing; a partly read delta snapshot records that snapshot (replayed whole
on resume). ``consumer.mode`` does not change this (as in Paimon Spark). A consumer, or a
checkpoint, whose next snapshot has expired fails the query naming it (Paimon falls back to
the earliest snapshot silently).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from paimon_core.exceptions import InvalidArgumentError, SnapshotNotFoundError
from paimon_core.options import parse_memory_size
from paimon_core.predicate import Predicate
from paimon_core.table.source import DataSplit
from paimon_core.table.stream_scan import StartingPosition, StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import ROW_KIND, TableRead
from paimon_core.table.table_scan import SPLIT_TARGET_SIZE
from spark_jobs.datasource.options import StreamLimits
from spark_jobs.datasource.types import spark_arrow_schema, to_spark_batch

__all__ = ["ROWKIND_COLUMN", "PaimonStreamInputPartition", "PaimonStreamReader", "StreamOffset"]

logger = logging.getLogger(__name__)

#: First column added by ``read.changelog=true`` (Paimon's ``SpecialFields.ROW_KIND``).
ROWKIND_COLUMN = "rowkind"
_PLAN_CACHE_SIZE = 64


@dataclass(frozen=True)
class StreamOffset:
    """Position of a streaming read: the last unit read of one snapshot."""

    snapshot_id: int
    index: int = -1
    scan_snapshot: bool = False
    total_units: int | None = None

    @property
    def completed(self) -> bool:
        """Every unit of the snapshot has been read."""
        return self.total_units is not None and self.index >= self.total_units - 1

    def next_position(self) -> tuple[int, int, bool]:
        """(snapshot, unit index, full read?) of the next unit to read."""
        if self.completed:
            return self.snapshot_id + 1, 0, False
        return self.snapshot_id, self.index + 1, self.scan_snapshot

    def consumer_next_snapshot(self) -> int | None:
        """The consumer's next snapshot once everything up to here is processed (None: an
        incomplete full scan, which a consumer cannot express)."""
        if self.completed:
            return self.snapshot_id + 1
        return None if self.scan_snapshot else self.snapshot_id

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshotId": self.snapshot_id,
            "index": self.index,
            "scanSnapshot": self.scan_snapshot,
            "totalUnits": self.total_units,
        }

    @staticmethod
    def from_json(value: Any) -> StreamOffset:
        try:
            total = value.get("totalUnits")
            off = StreamOffset(
                int(value["snapshotId"]),
                int(value["index"]),
                bool(value["scanSnapshot"]),
                None if total is None else int(total),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidArgumentError(f"Not a paimon streaming offset: {value!r} ({e})") from e
        if off.index < -1 or (off.total_units is not None and off.index >= off.total_units):
            raise InvalidArgumentError(f"Invalid paimon streaming offset {value!r}")
        return off

    @staticmethod
    def start(position: StartingPosition) -> StreamOffset:
        return StreamOffset(position.snapshot_id, -1, position.full, None)


class _Admission:
    """Admits units into a micro-batch while every configured cap still holds."""

    def __init__(self, limits: StreamLimits | None) -> None:
        self.limits = limits
        self.files = self.rows = self.bytes = self.units = 0

    def admit(self, unit: DataSplit) -> bool:
        f, r, b = len(unit.files), unit.row_count, unit.file_size
        lim = self.limits
        if self.units and lim is not None:
            if (
                (lim.max_files is not None and self.files + f > lim.max_files)
                or (lim.max_rows is not None and self.rows + r > lim.max_rows)
                or (lim.max_bytes is not None and self.bytes + b > lim.max_bytes)
            ):
                return False
        self.files, self.rows, self.bytes, self.units = (
            self.files + f,
            self.rows + r,
            self.bytes + b,
            self.units + 1,
        )
        return True


class PaimonStreamInputPartition(InputPartition):
    """Units of one micro-batch read by one Spark task (in commit order)."""

    def __init__(self, index: int, splits: Sequence[DataSplit]) -> None:
        super().__init__(index)
        self.index = index
        self.splits = tuple(splits)

    def __repr__(self) -> str:
        return f"PaimonStreamInputPartition({self.index}, units={len(self.splits)})"


class PaimonStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch planning (one long-lived Python process per query) and reading (executors).

    ``table`` is the table at its latest schema with the read's non-time-travel options;
    ``scan_options`` are all the read's options. Construction does no I/O (Spark builds the
    reader twice and pickles one copy to the executors).
    """

    def __init__(
        self,
        table: FileStoreTable,
        schema: StructType,
        scan_options: dict[str, str],
        *,
        predicate: Predicate | None = None,
        limits: StreamLimits | None = None,
        read_changelog: bool = False,
    ) -> None:
        self.table = table
        self.schema = schema
        self.read_changelog = read_changelog
        names = [f.name for f in schema.fields]
        if read_changelog:
            if not names or names[0] != ROWKIND_COLUMN:
                raise InvalidArgumentError(
                    f"read.changelog needs the schema to start with '{ROWKIND_COLUMN}'"
                )
            names = names[1:]
        self.columns = names
        table.schema.fields_of(self.columns)  # columns the latest schema lacks: clear error
        self.predicate = predicate
        self.limits = limits or StreamLimits()
        self.scan = StreamTableScan(table, predicate=predicate, options=scan_options)
        self._plans: OrderedDict[tuple[int, bool], list[DataSplit] | None] = OrderedDict()
        self._until: int | None = None
        self._last_trigger_ms = 0
        self._consumer_next: int | None = None

    # --- planning (driver side) ----------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 - Spark's name
        """Where a query without a checkpoint starts (consumer progress, else ``scan.mode``)."""
        position = self.scan.starting_position()
        logger.info(
            "paimon %s: streaming read starts at snapshot %d (%s%s)",
            self.table.name,
            position.snapshot_id,
            "full" if position.full else "changes",
            f", consumer {position.consumer_id}" if position.consumer_id else "",
        )
        return StreamOffset.start(position).to_json()

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802 - Spark's name
        """A limit Spark hands back to :meth:`latestOffset` (all configured caps apply anyway)."""
        lim = self.limits
        if lim.max_rows is not None:
            return ReadMaxRows(lim.max_rows)
        if lim.max_files is not None:
            return ReadMaxFiles(lim.max_files)
        if lim.max_bytes is not None:
            return ReadMaxBytes(lim.max_bytes)
        if lim.min_rows is not None:
            return ReadMinRows(lim.min_rows)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802 - Spark's name
        """Trigger.AvailableNow: never read past the snapshot that is latest now."""
        self._until = self.table.snapshot_manager.latest_snapshot_id() or 0
        logger.info("paimon %s: AvailableNow reads up to snapshot %d", self.table.name, self._until)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:  # noqa: N802
        """The end of the next micro-batch: as many units after ``start`` as the limits admit."""
        begin = StreamOffset.from_json(start)
        self._record_progress(begin)  # Spark finished (and logged) the batch that ended at `start`
        admission = _Admission(None if isinstance(limit, ReadAllAvailable) else self.limits)
        until = self._until
        if until is not None and begin.scan_snapshot and not begin.completed:
            until = max(until, begin.snapshot_id)  # the initial full snapshot is always available
        last: StreamOffset | None = None
        for sid, index, full, units in self._walk(begin, until, None):
            if not admission.admit(units[index]):
                break
            last = StreamOffset(sid, index, full, len(units))
        if last is None:
            return start
        lim = self.limits
        now = int(time.time() * 1000)
        if (
            lim.min_rows is not None
            and lim.max_trigger_delay_ms is not None
            and self._until is None
            and not isinstance(limit, ReadAllAvailable)
            and admission.rows < lim.min_rows
            and now - self._last_trigger_ms < lim.max_trigger_delay_ms
        ):
            return start
        self._last_trigger_ms = now
        return last.to_json()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """The units in (start, end], grouped per (partition, bucket) into tasks of about
        ``source.split.target-size`` bytes, in commit order inside each task."""
        begin, stop = StreamOffset.from_json(start), StreamOffset.from_json(end)
        groups: dict[tuple[bytes, int], list[DataSplit]] = {}
        for _, index, _, units in self._walk(begin, stop.snapshot_id, stop):
            u = units[index]
            groups.setdefault((u.partition, u.bucket), []).append(u)
        target = parse_memory_size(self.scan.options.get(SPLIT_TARGET_SIZE, "128 mb"))
        out: list[InputPartition] = []
        for units in groups.values():
            chunk: list[DataSplit] = []
            size = 0
            for u in units:
                if chunk and size + u.file_size > target:
                    out.append(PaimonStreamInputPartition(len(out), chunk))
                    chunk, size = [], 0
                chunk.append(u)
                size += u.file_size
            if chunk:
                out.append(PaimonStreamInputPartition(len(out), chunk))
        return out

    def commit(self, end: dict[str, Any]) -> None:
        """Spark is done with everything up to ``end``: record (or refresh, for
        ``consumer.expiration-time``) the consumer's progress."""
        self._record_progress(StreamOffset.from_json(end), refresh=True)

    def stop(self) -> None:
        """Nothing to release (files are opened per read)."""

    # --- internals -------------------------------------------------------------------------
    def _record_progress(self, done: StreamOffset, *, refresh: bool = False) -> None:
        """Write the consumer file when its next snapshot moves forward (or, with ``refresh``,
        stays the same) in this process."""
        nxt = done.consumer_next_snapshot()
        if self.scan.consumer_id is None or nxt is None:
            return
        if self._consumer_next is not None and (
            nxt < self._consumer_next or (nxt == self._consumer_next and not refresh)
        ):
            return
        self.scan.notify_next_snapshot(nxt)
        self._consumer_next = nxt

    def _plan(self, snapshot_id: int, full: bool) -> list[DataSplit] | None:
        key = (snapshot_id, full)
        if key in self._plans:
            self._plans.move_to_end(key)
            return self._plans[key]
        try:
            snapshot = self.table.snapshot_manager.snapshot(snapshot_id)
        except SnapshotNotFoundError as e:
            who = f"consumer '{self.scan.consumer_id}'" if self.scan.consumer_id else "the query's checkpoint"
            raise SnapshotNotFoundError(
                f"Streaming read of {self.table.name}: {who} needs snapshot {snapshot_id}, which no longer "
                f"exists ({e}). Rows would be lost: restart without the checkpoint (and reset the consumer) to "
                f"start again by scan.mode.",
                snapshot_id=snapshot_id,
                consumer_id=self.scan.consumer_id,
            ) from e
        units = self.scan.plan_full(snapshot) if full else self.scan.plan_delta(snapshot)
        self._plans[key] = units
        if len(self._plans) > _PLAN_CACHE_SIZE:
            self._plans.popitem(last=False)
        return units

    def _walk(
        self, begin: StreamOffset, until: int | None, end: StreamOffset | None
    ) -> Iterator[tuple[int, int, bool, list[DataSplit]]]:
        """(snapshot, index, full, units) of every unit after ``begin``, up to snapshot ``until``
        (default: the latest) and, if given, up to and including ``end``."""
        sid, index, full = begin.next_position()
        last = until if until is not None else (self.table.snapshot_manager.latest_snapshot_id() or 0)
        while sid <= last:
            if end is not None and (sid, index) > (end.snapshot_id, end.index):
                return
            units = self._plan(sid, full)
            if end is not None and sid == end.snapshot_id and len(units or ()) != end.total_units:
                raise InvalidArgumentError(
                    f"Streaming read of {self.table.name}: snapshot {sid} now plans {len(units or ())} unit(s), "
                    f"but the logged offset {end.to_json()} was planned with {end.total_units}; the read options "
                    f"changed since the checkpoint was written"
                )
            for i in range(index, len(units or ())):
                if end is not None and (sid, i) > (end.snapshot_id, end.index):
                    return
                yield sid, i, full, units  # type: ignore[misc]
            sid, index, full = sid + 1, 0, False

    # --- reading (executors) -----------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Arrow batches of the partition's units, shaped exactly as Spark's schema."""
        if not isinstance(partition, PaimonStreamInputPartition):
            return
        target = spark_arrow_schema(self.schema)
        reader = TableRead(self.table, projection=self.columns, predicate=self.predicate, row_kind=True)
        for batch in reader.to_batches(list(partition.splits)):
            kinds = batch.column(ROW_KIND)
            cols = [batch.column(c) for c in self.columns]
            if self.read_changelog:
                cols.insert(0, kinds)
            yield to_spark_batch(pa.RecordBatch.from_arrays(cols, names=[f.name for f in target]), target)
