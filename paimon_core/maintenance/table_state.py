"""Everything the maintenance planner needs to know about one table, read from its metadata.

A :class:`TableState` is plain data with a JSON round trip (:meth:`TableState.to_dict` /
:meth:`TableState.from_dict`), so a pass can keep the states of the last pass and hand them back:
:func:`collect_table_state` with ``previous`` reads only the ``LATEST`` hint (one small read plus
existence checks) when the table's latest snapshot and schema have not changed, and returns the
previous state re-dated. Only a changed table is scanned (its latest snapshot's manifests).

What a scan gathers (no data file is read):

* snapshots: latest and earliest (ids, times), the snapshot count, the time of the earliest
  snapshot's successor and where ``snapshot.time-retained`` ends (a binary search over snapshot
  times, as Java's ``ExpireSnapshotsImpl`` scans), the consumers' smallest next snapshot, and
  for ``full-compaction.delta-commits`` the APPEND commits since the last COMPACT snapshot;
* long-lived changelogs (``changelog/changelog-N``, kept by a decoupled changelog lifecycle):
  earliest and latest ids, their count, the earliest one's time and where
  ``changelog.time-retained`` ends (a binary search over changelog times), and every consumer's
  smallest next snapshot (``consumer.changelog-only`` frees snapshots, never changelogs); read
  only when the lifecycle is decoupled or the changelog directory has a ``LATEST`` hint;
* per (partition, bucket) that is not already compact: file counts, small files (below
  ``target-file-size`` x ``compaction.small-file-ratio``), level-0 files, the sorted runs of a
  primary-key bucket (Java ``Levels.levelSortedRuns``: one per level-0 file, newest first, then one
  per level) and the creation time of its newest max-level file (Java's estimate of the last full
  compaction); for append tables what Paimon's own pickers would rewrite (``AppendCompactCoordinator``
  bins of unaware-bucket tables, ``BucketedAppendCompactManager`` windows of fixed buckets);
* per partition: files, bytes, rows, small files, the newest file's creation time (what
  ``partition_idle_time`` compares) and the time partition expiry judges it by
  (``partition.expiration-strategy``);
* manifests of the latest snapshot (count, small ones below ``manifest.target-file-size``, bytes of
  manifests holding DELETE entries), tags (with creation time and retention), the table's options
  and its health (:func:`paimon_core.table.health.health_of`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "STATE_VERSION",
    "BucketState",
    "ManifestState",
    "PartitionState",
    "TableState",
    "TagState",
    "collect_table_state",
]

logger = logging.getLogger(__name__)

#: Bumped when the layout changes; a previous state of another version is never reused.
#: 2: the long-lived changelog fields (a version-1 state knows nothing of a table's changelogs).
STATE_VERSION = 2

Run = tuple[int, int, int]  # (level, bytes, files)


@dataclass(frozen=True)
class BucketState(_ToDict):
    """One (partition, bucket) of the latest snapshot that is not already compact.

    ``runs`` (primary-key tables): the sorted runs as ``(level, bytes, files)``, level-0 files one
    run each, newest first, then one run per non-empty level ascending. ``max_level_created_millis``:
    the newest max-level file's stored creation time (local wall-clock millis, as Paimon stores
    it). ``minor_*`` / ``full_*`` (append tables): the files and bytes Paimon's minor pick and a
    full compaction would rewrite (unaware-bucket tables: the coordinator's bins, both the same).
    """

    partition: str
    bucket: int
    file_count: int
    total_bytes: int
    small_file_count: int
    small_bytes: int
    level0_file_count: int
    runs: tuple[Run, ...] = ()
    max_level_created_millis: int | None = None
    minor_files: int = 0
    minor_bytes: int = 0
    full_files: int = 0
    full_bytes: int = 0

    @property
    def sorted_runs(self) -> int:
        return len(self.runs)

    @property
    def label(self) -> str:
        """``dt=2026-11-01/0`` (``0`` for an unpartitioned table's bucket 0)."""
        return f"{self.partition}/{self.bucket}" if self.partition else str(self.bucket)

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> BucketState:
        return BucketState(
            partition=str(raw["partition"]),
            bucket=int(raw["bucket"]),
            file_count=int(raw["file_count"]),
            total_bytes=int(raw["total_bytes"]),
            small_file_count=int(raw["small_file_count"]),
            small_bytes=int(raw["small_bytes"]),
            level0_file_count=int(raw["level0_file_count"]),
            runs=tuple((int(r[0]), int(r[1]), int(r[2])) for r in raw.get("runs") or ()),
            max_level_created_millis=_opt_int(raw.get("max_level_created_millis")),
            minor_files=int(raw.get("minor_files") or 0),
            minor_bytes=int(raw.get("minor_bytes") or 0),
            full_files=int(raw.get("full_files") or 0),
            full_bytes=int(raw.get("full_bytes") or 0),
        )


@dataclass(frozen=True)
class PartitionState(_ToDict):
    """One partition of the latest snapshot.

    ``spec``: the partition values as text (``None`` for null), what ``compact(partitions=...)``
    takes; ``last_file_creation_millis`` (epoch) is Java's ``lastFileCreationTime``;
    ``partition_time_millis`` (epoch) the time partition expiry judges it by (None: never expires).
    """

    partition: str
    spec: tuple[tuple[str, str | None], ...]
    file_count: int
    total_bytes: int
    row_count: int
    small_file_count: int
    last_file_creation_millis: int | None
    partition_time_millis: int | None

    def spec_dict(self, default_name: str) -> dict[str, str]:
        """``{"dt": "2026-11-01"}``, a null value as ``partition.default-name``."""
        return {k: default_name if v is None else v for k, v in self.spec}

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> PartitionState:
        return PartitionState(
            partition=str(raw["partition"]),
            spec=tuple((str(k), None if v is None else str(v)) for k, v in raw.get("spec") or ()),
            file_count=int(raw["file_count"]),
            total_bytes=int(raw["total_bytes"]),
            row_count=int(raw["row_count"]),
            small_file_count=int(raw["small_file_count"]),
            last_file_creation_millis=_opt_int(raw.get("last_file_creation_millis")),
            partition_time_millis=_opt_int(raw.get("partition_time_millis")),
        )


@dataclass(frozen=True)
class ManifestState(_ToDict):
    """The data manifests (base + delta) of the latest snapshot."""

    count: int = 0
    total_bytes: int = 0
    small_count: int = 0  # below manifest.target-file-size
    small_bytes: int = 0
    delete_bytes: int = 0  # bytes of manifests that hold DELETE entries
    delete_entries: int = 0

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> ManifestState:
        return ManifestState(**{k: int(raw.get(k) or 0) for k in ManifestState.__dataclass_fields__})


@dataclass(frozen=True)
class TagState(_ToDict):
    """A tag: the snapshot it holds and its retention (when its file records one)."""

    name: str
    snapshot_id: int
    snapshot_time_millis: int
    create_time_millis: int | None = None
    time_retained_ms: int | None = None

    @property
    def expires_at_millis(self) -> int | None:
        if self.create_time_millis is None or self.time_retained_ms is None:
            return None
        return self.create_time_millis + self.time_retained_ms

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> TagState:
        return TagState(
            name=str(raw["name"]),
            snapshot_id=int(raw["snapshot_id"]),
            snapshot_time_millis=int(raw["snapshot_time_millis"]),
            create_time_millis=_opt_int(raw.get("create_time_millis")),
            time_retained_ms=_opt_int(raw.get("time_retained_ms")),
        )


@dataclass(frozen=True)
class TableState(_ToDict):
    """What the planner knows about one table (see the module docstring)."""

    table: str
    path: str
    collected_at_millis: int  # when the metadata was read
    checked_at_millis: int  # when it was last confirmed unchanged (= collected_at after a scan)
    #: 'scan', 'unchanged' (one metadata read) or 'earliest-refresh' (an expiry ran since: the
    #: earliest snapshot or changelog is gone)
    source: str
    schema_id: int
    primary_keys: tuple[str, ...]
    partition_keys: tuple[str, ...]
    options: Mapping[str, str]
    # snapshots
    snapshot_id: int | None = None
    snapshot_time_millis: int | None = None
    snapshot_commit_kind: str | None = None
    snapshot_watermark: int | None = None
    earliest_snapshot_id: int | None = None
    earliest_snapshot_time_millis: int | None = None
    successor_time_millis: int | None = None  # time of snapshot earliest + 1
    snapshot_count: int = 0
    #: first snapshot id not older than snapshot.time-retained at ``retention_cutoff_millis``:
    #: ids below it are past the time retention (each judged by its successor's time)
    time_retention_end: int | None = None
    retention_cutoff_millis: int | None = None
    consumer_min_next_snapshot: int | None = None
    consumer_count: int = 0
    appends_since_compact: int | None = None  # only with full-compaction.delta-commits
    # long-lived changelogs (changelog/changelog-N)
    earliest_changelog_id: int | None = None
    latest_changelog_id: int | None = None
    earliest_changelog_time_millis: int | None = None
    changelog_count: int = 0
    #: first changelog id committed at or after ``changelog_retention_cutoff_millis`` (now -
    #: changelog.time-retained): ids below it are past the time retention (latest + 1: all are)
    changelog_time_retention_end: int | None = None
    changelog_retention_cutoff_millis: int | None = None
    #: every consumer's smallest next snapshot (changelog expiry's fence, consumer.changelog-only or not)
    changelog_consumer_fence: int | None = None
    # files
    data_file_count: int = 0
    total_bytes: int = 0
    total_rows: int = 0
    small_file_threshold: int = 0
    target_file_size: int = 0
    bucket_count: int = 0  # (partition, bucket) pairs with live files
    compact_bucket_count: int = 0  # of them, already compact (not listed in ``buckets``)
    buckets: tuple[BucketState, ...] = ()
    partitions: tuple[PartitionState, ...] = ()
    partition_time_error: str | None = None
    manifests: ManifestState = field(default_factory=ManifestState)
    tags: tuple[TagState, ...] = ()
    # health
    health_score: int = 100
    compaction_debt: float = 0.0
    health: Mapping[str, Any] = field(default_factory=dict)
    version: int = STATE_VERSION

    @property
    def primary_key(self) -> bool:
        return bool(self.primary_keys)

    @property
    def bucket_mode(self) -> int:
        """The ``bucket`` option: > 0 fixed, -1 dynamic (PK) or unaware (append), -2 postponed."""
        from paimon_core.options import CoreOptions

        return CoreOptions(self.options).bucket

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> TableState:
        """The state :meth:`to_dict` wrote (through JSON)."""
        return TableState(
            table=str(raw["table"]),
            path=str(raw["path"]),
            collected_at_millis=int(raw["collected_at_millis"]),
            checked_at_millis=int(raw["checked_at_millis"]),
            source=str(raw["source"]),
            schema_id=int(raw["schema_id"]),
            primary_keys=tuple(str(k) for k in raw.get("primary_keys") or ()),
            partition_keys=tuple(str(k) for k in raw.get("partition_keys") or ()),
            options={str(k): str(v) for k, v in (raw.get("options") or {}).items()},
            snapshot_id=_opt_int(raw.get("snapshot_id")),
            snapshot_time_millis=_opt_int(raw.get("snapshot_time_millis")),
            snapshot_commit_kind=raw.get("snapshot_commit_kind"),
            snapshot_watermark=_opt_int(raw.get("snapshot_watermark")),
            earliest_snapshot_id=_opt_int(raw.get("earliest_snapshot_id")),
            earliest_snapshot_time_millis=_opt_int(raw.get("earliest_snapshot_time_millis")),
            successor_time_millis=_opt_int(raw.get("successor_time_millis")),
            snapshot_count=int(raw.get("snapshot_count") or 0),
            time_retention_end=_opt_int(raw.get("time_retention_end")),
            retention_cutoff_millis=_opt_int(raw.get("retention_cutoff_millis")),
            consumer_min_next_snapshot=_opt_int(raw.get("consumer_min_next_snapshot")),
            consumer_count=int(raw.get("consumer_count") or 0),
            appends_since_compact=_opt_int(raw.get("appends_since_compact")),
            earliest_changelog_id=_opt_int(raw.get("earliest_changelog_id")),
            latest_changelog_id=_opt_int(raw.get("latest_changelog_id")),
            earliest_changelog_time_millis=_opt_int(raw.get("earliest_changelog_time_millis")),
            changelog_count=int(raw.get("changelog_count") or 0),
            changelog_time_retention_end=_opt_int(raw.get("changelog_time_retention_end")),
            changelog_retention_cutoff_millis=_opt_int(raw.get("changelog_retention_cutoff_millis")),
            changelog_consumer_fence=_opt_int(raw.get("changelog_consumer_fence")),
            data_file_count=int(raw.get("data_file_count") or 0),
            total_bytes=int(raw.get("total_bytes") or 0),
            total_rows=int(raw.get("total_rows") or 0),
            small_file_threshold=int(raw.get("small_file_threshold") or 0),
            target_file_size=int(raw.get("target_file_size") or 0),
            bucket_count=int(raw.get("bucket_count") or 0),
            compact_bucket_count=int(raw.get("compact_bucket_count") or 0),
            buckets=tuple(BucketState.from_dict(b) for b in raw.get("buckets") or ()),
            partitions=tuple(PartitionState.from_dict(p) for p in raw.get("partitions") or ()),
            partition_time_error=raw.get("partition_time_error"),
            manifests=ManifestState.from_dict(raw.get("manifests") or {}),
            tags=tuple(TagState.from_dict(t) for t in raw.get("tags") or ()),
            health_score=int(raw.get("health_score", 100)),
            compaction_debt=float(raw.get("compaction_debt") or 0.0),
            health=dict(raw.get("health") or {}),
            version=int(raw.get("version") or 0),
        )

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["options"] = dict(self.options)
        out["health"] = dict(self.health)
        return out


def collect_table_state(
    table: FileStoreTable, *, now_millis: int, previous: TableState | None = None
) -> TableState:
    """The state of ``table`` now, from its metadata only.

    With ``previous`` (the state of the last pass): if the table's latest snapshot id and schema id
    are the ones ``previous`` saw, the only read is the ``LATEST`` hint (plus existence checks of
    the latest, next and earliest snapshot files, and of the earliest changelog when there was one)
    and ``previous`` comes back with ``checked_at_millis = now_millis`` and ``source = 'unchanged'``;
    when only the earliest snapshot or the earliest long-lived changelog moved (an expiry ran),
    just the retention fields are refreshed (``source = 'earliest-refresh'``). Otherwise the latest snapshot's manifests are scanned (``source = 'scan'``).
    """
    from paimon_core.maintenance.state_collector import collect

    return collect(table, now_millis=now_millis, previous=previous)


def _opt_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]
