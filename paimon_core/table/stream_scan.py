"""StreamTableScan: what a streaming read sees, snapshot by snapshot.

Mirrors Java's ``DataTableStreamScan`` with its starting scanners
(``FullStartingScanner``, ``ContinuousLatestStartingScanner``,
``ContinuousFromSnapshot[Full]StartingScanner``, ``ContinuousFromTimestampStartingScanner``,
``FileCreationTimeStartingScanner``, and the consumer's resume position) and follow-up
scanners (``DeltaFollowUpScanner``, ``ChangelogFollowUpScanner``, overwrite handling).

It is stateless: a streaming reader asks where to start (:meth:`starting_position`), then for
the *units* of one snapshot: the full state (:meth:`plan_full`) or what it added
(:meth:`plan_delta`). A unit is a :class:`DataSplit` read on its own: one file when files can
be read raw (append files, delta / changelog files, non-overlapping primary-key files), else a
whole merged bucket. Units come in a deterministic order (partition path, bucket, sequence
number, file name; bucket-postpone below), so an index into them is a stable position inside a
snapshot.

An overwrite of a primary-key table read with ``streaming-read-overwrite`` yields its changes
as Java's ``readChanges`` does: per bucket, the files before and after, merged and diffed by key.

Postpone-bucket tables (``bucket = -2``) without a changelog producer stream their
``bucket-postpone`` files as written, in the full phase too: Java's ``MergeFileSplitRead`` reads a
split of the postpone bucket with ``createNoMergeReader`` (every row with its row kind, ``-D`` and
``-U`` included, never merged) and its streaming full phase applies no level filter (so no
``batchScanSkipLevel0`` of deletion-vector or first-row tables hides these level-0 files). Their
units come in replay order (file creation time, then scan order), the order our postpone
compaction replays them in: sequence numbers restart per writer, so they order nothing; they
follow the real buckets of their partition, so a consumer applying the stream in order ends
with what the next compaction makes (Java orders them by key ranges, and reads a lone file
without delete rows raw, its ``+U`` rows as ``+I``; ours keep every row's kind). Real buckets
are read as for any table (merged in the full phase, deletes dropped).

Differences from Java: a consumer whose next snapshot has expired is an error (Java silently
starts from the earliest snapshot).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.predicate import Predicate
from paimon_core.snapshot.snapshot import FIRST_SNAPSHOT_ID, CommitKind, Snapshot
from paimon_core.table.source import DataSplit
from paimon_core.table.table_scan import TableScan

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["STREAM_TIME_TRAVEL_KEYS", "StartingPosition", "StreamTableScan"]

logger = logging.getLogger(__name__)

SCAN_MODE = "scan.mode"
SCAN_FILE_CREATION_TIME_MILLIS = "scan.file-creation-time-millis"
CONSUMER_ID = "consumer-id"
CONSUMER_IGNORE_PROGRESS = "consumer.ignore-progress"
STREAMING_READ_OVERWRITE = "streaming-read-overwrite"
CHANGELOG_PRODUCER = "changelog-producer"
#: Options that pick a starting point; a streaming read must not time-travel its schema with them.
STREAM_TIME_TRAVEL_KEYS = ("scan.snapshot-id", "scan.tag-name", "scan.timestamp-millis", "scan.timestamp")

_STREAM_MODES = (
    "latest-full",
    "latest",
    "from-snapshot",
    "from-snapshot-full",
    "from-timestamp",
    "from-file-creation-time",
)
_EPOCH = dt.datetime(1970, 1, 1)


@dataclass(frozen=True)
class StartingPosition:
    """Where a streaming read starts: ``snapshot_id`` read in full (``full``) or as its delta."""

    snapshot_id: int
    full: bool
    #: The consumer whose progress this is, when resuming from a consumer.
    consumer_id: str | None = None


def _true(options: Mapping[str, str], key: str) -> bool:
    return options.get(key, "false").strip().lower() == "true"


def _local_to_epoch_millis(local_millis: int) -> int:
    """Java's ``creationTimeEpochMillis``: the stored local wall-clock millis as epoch millis."""
    return int((_EPOCH + dt.timedelta(milliseconds=local_millis)).timestamp() * 1000)


class StreamTableScan(TableScan):
    """Starting position and per-snapshot units of a streaming read of ``table``.

    ``options`` are the read's options (``scan.mode``, ``scan.snapshot-id``, ``consumer-id``...);
    ``table`` should not carry time-travel options itself (its schema is the one rows are read in).
    """

    def __init__(
        self,
        table: FileStoreTable,
        *,
        predicate: Predicate | None = None,
        options: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(table, predicate=predicate, options={**table.dynamic_options, **(options or {})})
        self.consumer_id = self.options.get(CONSUMER_ID) or None
        if self.consumer_id is not None:
            table.consumer_manager.validate_id(self.consumer_id)

    # --- starting position -------------------------------------------------------------
    def startup_mode(self) -> str:
        """``scan.mode`` with ``default``/``full`` resolved as Java's ``CoreOptions.startupMode``."""
        mode = self.options.get(SCAN_MODE, "default").strip().lower()
        if mode == "full":
            return "latest-full"
        if mode != "default":
            if mode not in _STREAM_MODES:
                raise InvalidOptionError(
                    f"scan.mode '{mode}' is not supported by streaming reads (use one of {', '.join(_STREAM_MODES)})",
                    key=SCAN_MODE,
                )
            return mode
        o = self.options
        if o.get("scan.timestamp-millis") or o.get("scan.timestamp"):
            return "from-timestamp"
        if o.get("scan.snapshot-id") or o.get("scan.tag-name"):
            return "from-snapshot"
        if o.get(SCAN_FILE_CREATION_TIME_MILLIS):
            return "from-file-creation-time"
        return "latest-full"

    def _long(self, key: str, mode: str) -> int:
        value = self.options.get(key)
        if not value:
            if key == "scan.snapshot-id" and self.options.get("scan.tag-name"):
                raise InvalidOptionError(
                    "scan.tag-name cannot start a streaming read (as in Paimon); use scan.snapshot-id",
                    key=key,
                )
            if key == "scan.timestamp-millis" and self.options.get("scan.timestamp"):
                raise InvalidOptionError(
                    "Streaming reads take scan.timestamp-millis, not scan.timestamp", key=key
                )
            raise InvalidOptionError(f"scan.mode '{mode}' needs option '{key}'", key=key)
        try:
            return int(value)
        except ValueError:
            raise InvalidOptionError(f"Option '{key}' must be an integer, got {value!r}", key=key) from None

    def starting_position(self) -> StartingPosition:
        """Where to start: the consumer's next snapshot if it has one, else by ``scan.mode``."""
        sm = self.table.snapshot_manager
        earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
        if self.consumer_id is not None and not _true(self.options, CONSUMER_IGNORE_PROGRESS):
            consumer = self.table.consumer_manager.consumer(self.consumer_id)
            if consumer is not None:
                nxt = consumer.next_snapshot
                if earliest is not None and nxt < earliest:
                    raise SnapshotNotFoundError(
                        f"Consumer '{self.consumer_id}' of {self.table.name} would resume at snapshot {nxt}, "
                        f"but it has expired (earliest snapshot is {earliest}). Reset the consumer "
                        f"(reset_consumer) or set consumer.ignore-progress=true to start by scan.mode.",
                        snapshot_id=nxt,
                        consumer_id=self.consumer_id,
                        earliest_snapshot_id=earliest,
                    )
                return StartingPosition(nxt, False, self.consumer_id)
        mode = self.startup_mode()
        if latest is None or earliest is None:
            first = FIRST_SNAPSHOT_ID
            if mode in ("from-snapshot", "from-snapshot-full"):
                first = max(self._long("scan.snapshot-id", mode), FIRST_SNAPSHOT_ID)
            elif mode == "from-timestamp":
                self._long("scan.timestamp-millis", mode)
            elif mode == "from-file-creation-time":
                self._long(SCAN_FILE_CREATION_TIME_MILLIS, mode)
            return StartingPosition(first, False)  # empty table: every snapshot is new data
        if mode in ("latest-full", "from-file-creation-time"):
            if mode == "from-file-creation-time":
                self._long(SCAN_FILE_CREATION_TIME_MILLIS, mode)
            return StartingPosition(latest, True)
        if mode == "latest":
            return StartingPosition(latest + 1, False)
        if mode == "from-snapshot":
            return StartingPosition(max(self._long("scan.snapshot-id", mode), earliest), False)
        if mode == "from-snapshot-full":
            sid = max(self._long("scan.snapshot-id", mode), earliest)
            sm.snapshot(sid)  # SnapshotNotFoundError for a snapshot not written yet
            return StartingPosition(sid, True)
        # from-timestamp: the first snapshot committed at or after the timestamp
        ts = self._long("scan.timestamp-millis", mode)
        before = sm.earlier_or_equal_time_millis(ts - 1)
        if before is not None:
            return StartingPosition(before.id + 1, False)
        # Nothing before the timestamp: the earliest snapshot, read again since the one read
        # above may have expired during the search (Paimon issue #3479).
        return StartingPosition(sm.earliest_snapshot_id() or earliest, False)

    # --- units of one snapshot -----------------------------------------------------------
    def plan_full(self, snapshot: Snapshot) -> list[DataSplit]:
        """The units of the whole state of ``snapshot`` (for ``from-file-creation-time``: of the
        files created at or after ``scan.file-creation-time-millis``)."""
        entries = self.table.new_file_store_scan().live_entries(snapshot, self._filter())
        if self.startup_mode() == "from-file-creation-time" and self.options.get(
            SCAN_FILE_CREATION_TIME_MILLIS
        ):
            since = int(self.options[SCAN_FILE_CREATION_TIME_MILLIS])
            entries = [
                e
                for e in entries
                if e.file.creation_time is None or _local_to_epoch_millis(e.file.creation_time) >= since
            ]
        # bucket-postpone files: read as written, every row kind kept (Java's createNoMergeReader
        # for the postpone bucket) and no level-0 skipping (all of them are level 0)
        postpone = [e for e in entries if e.bucket == POSTPONE_BUCKET]
        entries = [e for e in entries if e.bucket != POSTPONE_BUCKET]
        keep_level = self._full_phase_levels()
        if keep_level is not None:
            entries = [e for e in entries if keep_level(e.file.level)]
        dvs = self._deletion_files(snapshot, entries)
        splits = self._splits(snapshot.id, entries, incremental=False, dvs=dvs)
        return self._units([*splits, *self._splits(snapshot.id, postpone, incremental=True)])

    def _skips_level0(self) -> bool:
        """No ``batchScanSkipLevel0`` in a streaming read: Java's ``DataTableStreamScan`` reads
        level 0 of deletion-vector and first-row tables in its full phase (merged), since the
        delta phase starts after it; only the changelog producers filter levels
        (:meth:`_full_phase_levels`)."""
        return False

    def _full_phase_levels(self) -> Callable[[int], bool] | None:
        """The levels the full phase reads (Java's ``DataTableStreamScan.tryFirstPlan``):
        ``changelog-producer = lookup``: above level 0 (level-0 rows reach the stream as the
        changelog of the compaction that will look them up); ``full-compaction``: the top level
        only (every other row reaches it as the changelog of the next full compaction); else
        (and with ``stream-scan-mode = file-monitor``) every level. Reading level 0 there too
        would stream those rows twice."""
        if not self.table.schema.primary_keys:
            return None
        if self.options.get("stream-scan-mode", "none").strip().lower() == "file-monitor":
            return None
        producer = self.options.get(CHANGELOG_PRODUCER, "none").strip().lower()
        if producer == "lookup":
            return lambda level: level > 0
        if producer == "full-compaction":
            from paimon_core.mergetree.compact.compact_options import num_levels

            top = num_levels(self.options) - 1
            return lambda level: level == top
        return None

    def _only_real_buckets(self) -> bool:
        """Java's ``DataTableStreamScan``: postpone-bucket files are streamed (as they were
        written) unless the table has a changelog producer; then only real buckets."""
        return super()._only_real_buckets() and self._changelog_mode()

    def _changelog_mode(self) -> bool:
        producer = self.options.get(CHANGELOG_PRODUCER, "none").strip().lower()
        return bool(self.table.schema.primary_keys) and producer != "none"

    def plan_delta(self, snapshot: Snapshot) -> list[DataSplit] | None:
        """The units of what ``snapshot`` added for a streaming reader; None when the snapshot
        carries nothing to stream (COMPACT/ANALYZE, or OVERWRITE without
        ``streaming-read-overwrite``; with a changelog producer: no changelog)."""
        scan = self.table.new_file_store_scan()
        flt = self._filter()
        entries: list[ManifestEntry]
        if snapshot.commit_kind == CommitKind.OVERWRITE and _true(self.options, STREAMING_READ_OVERWRITE):
            if self.table.schema.primary_keys:
                return self._units(self._diff_splits(snapshot))
            entries = [e for e in scan.delta_entries(snapshot, flt) if e.kind == FileKind.ADD]
        elif self._changelog_mode():
            if snapshot.changelog_manifest_list is None:
                return None
            metas = scan.read_list(snapshot.changelog_manifest_list)
            entries = [e for e in scan.read_entries(metas, flt) if e.kind == FileKind.ADD]
        elif snapshot.commit_kind == CommitKind.APPEND:
            entries = [e for e in scan.delta_entries(snapshot, flt) if e.kind == FileKind.ADD]
        else:
            return None
        return self._units(self._splits(snapshot.id, entries, incremental=True))

    def _diff_splits(self, snapshot: Snapshot) -> list[DataSplit]:
        """The changes of a primary-key overwrite (Java's ``SnapshotReader.readChanges``): per
        bucket it touched, the files it removed (before) and added (after), diffed on read.
        Files are not pruned by the filter's value stats (a pruned 'before' row would turn an
        update into an insert); the filter applies to the diffed rows."""
        groups: dict[tuple[bytes, int], tuple[list[DataFileMeta], list[DataFileMeta]]] = {}
        for e in self.table.new_file_store_scan().delta_entries(snapshot):
            before, after = groups.setdefault((e.partition, e.bucket), ([], []))
            (after if e.kind == FileKind.ADD else before).append(e.file)
        return [
            DataSplit(
                snapshot.id,
                partition,
                bucket,
                self.table.bucket_path(partition, bucket),
                tuple(after),
                raw_convertible=False,
                incremental=True,
                before_files=tuple(before),
                diff=True,
            )
            for (partition, bucket), (before, after) in groups.items()
        ]

    def _units(self, splits: Sequence[DataSplit]) -> list[DataSplit]:
        """Raw splits exploded into one unit per file; all in a deterministic order: per
        partition and bucket, by sequence number (bucket-postpone: by replay order, see the
        module docstring)."""
        keyed: list[tuple[tuple[str, bool, int, int, int, str], DataSplit]] = []
        for s in splits:
            if not s.raw_convertible or len(s.files) == 1:
                keyed.append((self._unit_key(s, 0), s))
                continue
            for i, f in enumerate(s.files):
                dfs = (s.deletion_files[i],) if s.deletion_files else ()
                unit = DataSplit(
                    s.snapshot_id, s.partition, s.bucket, s.bucket_path, (f,), True, s.incremental, dfs
                )
                keyed.append((self._unit_key(unit, i), unit))
        return [u for _, u in sorted(keyed, key=lambda k: k[0])]

    def _unit_key(self, unit: DataSplit, position: int) -> tuple[str, bool, int, int, int, str]:
        """The sort key of a unit; ``position``: its file's place in the scan order of its bucket.
        A partition's bucket-postpone units come after its real buckets (their rows change keys
        of every bucket), in replay order (``PostponeBucketCompactSplitSource``: creation time,
        stable on scan order)."""
        path = self.table.partition_path(unit.partition)
        if unit.bucket == POSTPONE_BUCKET:
            f = (unit.files or unit.before_files)[0]
            return (path, True, unit.bucket, f.creation_time or 0, position, f.file_name)
        first = min(unit.files or unit.before_files, key=lambda f: (f.min_sequence_number, f.file_name))
        return (path, False, unit.bucket, first.min_sequence_number, 0, first.file_name)

    # --- consumer ----------------------------------------------------------------------
    def notify_next_snapshot(self, next_snapshot: int) -> None:
        """Record the consumer's progress (Java's ``notifyCheckpointComplete``): it will next read
        ``next_snapshot``, so snapshot expiry keeps that snapshot and later ones."""
        if self.consumer_id is None or next_snapshot < FIRST_SNAPSHOT_ID:
            return
        self.table.consumer_manager.reset_consumer(self.consumer_id, Consumer(next_snapshot))
        logger.debug("Consumer %s of %s: next snapshot %d", self.consumer_id, self.table.name, next_snapshot)
