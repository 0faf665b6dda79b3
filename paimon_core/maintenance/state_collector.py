"""Reads a :class:`~paimon_core.maintenance.table_state.TableState` from a table's metadata.

:func:`collect` is :func:`~paimon_core.maintenance.table_state.collect_table_state`: a cheap
unchanged check against the previous state first (the ``LATEST`` hint: one read), a scan of the
latest snapshot's manifests otherwise. The per-bucket figures reuse Paimon's own pickers as this
project ports them (``AppendCompactCoordinator``, ``BucketedAppendCompactManager``), so the state
says what Paimon itself would compact; primary-key buckets keep their sorted runs so the planner
can run ``UniversalCompaction`` at the time it plans (off-peak hours and
``compaction.optimization-interval`` depend on the clock).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.append.row_tracking import data_evolution_enabled
from paimon_core.exceptions import PaimonError
from paimon_core.io.file_io import join
from paimon_core.maintenance.table_state import (
    STATE_VERSION,
    BucketState,
    ManifestState,
    PartitionState,
    TableState,
    TagState,
)
from paimon_core.paths import LATEST
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.snapshot.snapshot import CommitKind, Snapshot

if TYPE_CHECKING:
    from paimon_core.manifest.entries import DataFileMeta, ManifestEntry, ManifestFileMeta
    from paimon_core.table.table import FileStoreTable

__all__ = ["collect", "latest_snapshot_hint"]

logger = logging.getLogger(__name__)

#: Append tables have no stop trigger; their debt is measured against min.file-num + this,
#: as num-sorted-run.stop-trigger defaults to compaction-trigger + 3.
APPEND_DEBT_SLACK = 3


def collect(table: FileStoreTable, *, now_millis: int, previous: TableState | None = None) -> TableState:
    """See :func:`~paimon_core.maintenance.table_state.collect_table_state`."""
    if (
        previous is not None
        and previous.version == STATE_VERSION
        and previous.table == table.name
        and previous.path == table.path
        and previous.schema_id == table.schema.id
        and previous.snapshot_id is not None
    ):
        latest = latest_snapshot_hint(table)
        if latest is not None and latest == previous.snapshot_id and not _newer_schema(table):
            sm = table.snapshot_manager
            if previous.earliest_snapshot_id is None or sm.snapshot_exists(previous.earliest_snapshot_id):
                changelog = previous.earliest_changelog_id
                if changelog is None or _changelog_manager(table).exists(changelog):
                    logger.debug("%s unchanged at snapshot %d: previous state reused", table.name, latest)
                    return dataclasses.replace(previous, checked_at_millis=now_millis, source="unchanged")
                return _refresh_changelogs(table, previous, now_millis)
            return _refresh_retention(table, previous, now_millis)
    return _scan(table, now_millis, previous)


def latest_snapshot_hint(table: FileStoreTable) -> int | None:
    """The latest snapshot id when the ``LATEST`` hint names it (one read, two existence checks:
    the hinted snapshot exists and the next does not); None when the hint is missing, not a
    number or stale (the caller scans instead)."""
    sm = table.snapshot_manager
    try:
        text = table.file_io.read_bytes(f"{table.paths.snapshot_dir}/{LATEST}").decode(
            "ascii", errors="replace"
        )
    except FileNotFoundError:
        return None
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    hint = int(text)
    if not sm.snapshot_exists(hint) or sm.snapshot_exists(hint + 1):
        return None
    return hint


def _newer_schema(table: FileStoreTable) -> bool:
    """A schema was committed after the one ``table`` was loaded with (an existence check)."""
    return table.file_io.exists(table.paths.schema_path(table.schema.id + 1))


# --- snapshots and retention ----------------------------------------------------------------
class _Times:
    """Snapshot times read on demand (each snapshot file at most once)."""

    def __init__(self, table: FileStoreTable, known: Sequence[Snapshot]) -> None:
        self.sm = table.snapshot_manager
        self.times: dict[int, int | None] = {s.id: s.time_millis for s in known}

    def time(self, snapshot_id: int) -> int | None:
        if snapshot_id not in self.times:
            snap = self.sm.try_snapshot(snapshot_id)
            self.times[snapshot_id] = None if snap is None else snap.time_millis
        return self.times[snapshot_id]


def _time_retention_end(times: _Times, earliest: int, latest: int, cutoff: int) -> int:
    """The first id in [earliest, latest] whose successor was committed at or after ``cutoff``
    (``latest`` when every successor is older): ids below it are past ``snapshot.time-retained``,
    as the expiry judges them. Binary search; a missing successor counts as old."""

    def young(sid: int) -> bool:
        if sid >= latest:
            return True
        t = times.time(sid + 1)
        return t is not None and t >= cutoff

    return _first_young(earliest, latest, young)


def _first_young(lo: int, hi: int, young: Callable[[int], bool]) -> int:
    """The first id in [lo, hi] that is ``young`` (``young(hi)`` must hold), ids being old, then
    young: a binary search."""
    while lo < hi:
        mid = (lo + hi) // 2
        if young(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _retention(
    table: FileStoreTable, latest: Snapshot, earliest: Snapshot, now_millis: int
) -> dict[str, int | None]:
    times = _Times(table, (latest, earliest))
    cutoff = now_millis - table.options.snapshot_time_retained_ms
    successor = times.time(earliest.id + 1) if earliest.id < latest.id else None
    return {
        "earliest_snapshot_id": earliest.id,
        "earliest_snapshot_time_millis": earliest.time_millis,
        "successor_time_millis": successor,
        "snapshot_count": latest.id - earliest.id + 1,
        "time_retention_end": _time_retention_end(times, earliest.id, latest.id, cutoff),
        "retention_cutoff_millis": cutoff,
    }


def _refresh_retention(table: FileStoreTable, previous: TableState, now_millis: int) -> TableState:
    """The previous state with new retention fields: the earliest snapshot moved (expiry ran,
    which may have written long-lived changelogs too)."""
    sm = table.snapshot_manager
    latest = sm.latest_snapshot()
    earliest = sm.earliest_snapshot()
    if latest is None or earliest is None or latest.id != previous.snapshot_id:
        return _scan(table, now_millis, previous)
    live = table.tag_manager.tags()
    return dataclasses.replace(
        previous,
        checked_at_millis=now_millis,
        source="earliest-refresh",
        tags=_tags(live),
        **_retention(table, latest, earliest, now_millis),  # type: ignore[arg-type]
        **_changelogs(table, now_millis),  # type: ignore[arg-type]
    )


# --- long-lived changelogs ----------------------------------------------------------------------
_NO_CHANGELOGS: dict[str, int | None] = {
    "earliest_changelog_id": None,
    "latest_changelog_id": None,
    "earliest_changelog_time_millis": None,
    "changelog_count": 0,
    "changelog_time_retention_end": None,
    "changelog_retention_cutoff_millis": None,
}


def _changelog_manager(table: FileStoreTable) -> ChangelogManager:
    return ChangelogManager(table.file_io, table.paths)


def _changelogs(table: FileStoreTable, now_millis: int) -> dict[str, int | None]:
    """The long-lived changelog fields of :class:`TableState`. Read only when the lifecycle is
    decoupled or the changelog directory has a ``LATEST`` hint (every changelog write moves it;
    else one existence check); then the hints (with their existence checks), the earliest
    changelog and a binary search over changelog times, as :func:`_time_retention_end` does for
    snapshots: never every changelog file."""
    opts = table.options
    cm = _changelog_manager(table)
    try:
        decoupled = opts.changelog_lifecycle_decoupled
        retained: int | None = opts.changelog_time_retained_ms
    except PaimonError as e:  # the rule reports the options; the changelogs are still counted
        logger.warning("Changelog retention of %s cannot be read: %s", table.name, e)
        decoupled, retained = True, None
    if not decoupled and not table.file_io.exists(join(cm.changelog_dir, LATEST)):
        return dict(_NO_CHANGELOGS)
    earliest, latest = cm.earliest_id(), cm.latest_id()
    if earliest is None or latest is None or latest < earliest:
        return dict(_NO_CHANGELOGS)
    times: dict[int, int | None] = {}

    def time_of(cid: int) -> int | None:
        if cid not in times:
            changelog = cm.try_changelog(cid)
            times[cid] = None if changelog is None else changelog.time_millis
        return times[cid]

    cutoff = None if retained is None else now_millis - retained

    def young(cid: int) -> bool:  # a missing changelog counts as old, as the expiry skips it
        if cid > latest or cutoff is None:
            return True
        t = time_of(cid)
        return t is not None and t >= cutoff

    return {
        "earliest_changelog_id": earliest,
        "latest_changelog_id": latest,
        "earliest_changelog_time_millis": time_of(earliest),
        "changelog_count": latest - earliest + 1,
        "changelog_time_retention_end": None if cutoff is None else _first_young(earliest, latest + 1, young),
        "changelog_retention_cutoff_millis": cutoff,
    }


def _refresh_changelogs(table: FileStoreTable, previous: TableState, now_millis: int) -> TableState:
    """The previous state with new changelog fields: the earliest changelog is gone (changelog
    expiry ran; the snapshots did not change)."""
    return dataclasses.replace(
        previous,
        checked_at_millis=now_millis,
        source="earliest-refresh",
        **_changelogs(table, now_millis),  # type: ignore[arg-type]
    )


def _appends_since_compact(
    table: FileStoreTable, latest: Snapshot, earliest_id: int, limit: int, previous: TableState | None
) -> int:
    """APPEND/OVERWRITE commits after the newest COMPACT snapshot, counted up to ``limit``
    (reading back at most ``limit`` snapshots; only the new ones when ``previous`` counted)."""
    sm = table.snapshot_manager
    stop = earliest_id
    base = 0
    if (
        previous is not None
        and previous.snapshot_id is not None
        and previous.appends_since_compact is not None
    ):
        if previous.snapshot_id >= earliest_id and previous.snapshot_id < latest.id:
            stop, base = previous.snapshot_id + 1, previous.appends_since_compact
    count = 0
    sid = latest.id
    while sid >= stop and count < limit:
        snap = latest if sid == latest.id else sm.try_snapshot(sid)
        if snap is not None:
            if snap.commit_kind == CommitKind.COMPACT:
                return count
            if snap.commit_kind in (CommitKind.APPEND, CommitKind.OVERWRITE):
                count += 1
        sid -= 1
    return min(limit, count + (base if sid < stop else 0))


# --- the scan ---------------------------------------------------------------------------------
def _scan(table: FileStoreTable, now_millis: int, previous: TableState | None) -> TableState:
    from paimon_core.table.full_compaction_trigger import full_compaction_delta_commits
    from paimon_core.table.health import health_of, small_file_threshold

    sm = table.snapshot_manager
    opts = table.options
    is_pk = bool(table.primary_keys)
    base = TableState(
        table=table.name,
        path=table.path,
        collected_at_millis=now_millis,
        checked_at_millis=now_millis,
        source="scan",
        schema_id=table.schema.id,
        primary_keys=tuple(table.primary_keys),
        partition_keys=tuple(table.partition_keys),
        options=dict(opts.options),
        small_file_threshold=small_file_threshold(table),
        target_file_size=opts.target_file_size(has_primary_key=is_pk),
    )
    latest = sm.latest_snapshot()
    earliest = sm.earliest_snapshot() if latest is not None else None
    if latest is None or earliest is None:
        return base
    scan = table.new_file_store_scan()
    metas = scan.data_manifests(latest)
    entries = scan.live_entries(latest)
    consumers = table.consumer_manager.consumers()
    tags = table.tag_manager.tags()
    retention = _retention(table, latest, earliest, now_millis)
    health = health_of(
        table,
        now_millis=now_millis,
        latest=latest,
        earliest=earliest,
        entries=entries,
        snapshot_count=int(retention["snapshot_count"] or 0),
        consumers=consumers,
        tags=tags,
    )
    delta_commits = full_compaction_delta_commits(opts.options) if is_pk else None
    buckets, bucket_count, debt = _buckets(table, entries)
    partitions, partition_error = _partitions(table, entries)
    health_dict = health.to_dict()
    health_dict.pop("buckets", None)
    any_fence = min(consumers.values()) if consumers else None
    fence = None if opts.consumer_changelog_only else any_fence
    return dataclasses.replace(
        base,
        snapshot_id=latest.id,
        snapshot_time_millis=latest.time_millis,
        snapshot_commit_kind=str(latest.commit_kind.value),
        snapshot_watermark=latest.watermark,
        consumer_min_next_snapshot=fence,
        changelog_consumer_fence=any_fence,
        consumer_count=len(consumers),
        appends_since_compact=None
        if not delta_commits
        else _appends_since_compact(table, latest, earliest.id, delta_commits, previous),
        data_file_count=len(entries),
        total_bytes=health.total_bytes,
        total_rows=health.total_rows,
        bucket_count=bucket_count,
        compact_bucket_count=bucket_count - len(buckets),
        buckets=tuple(buckets),
        partitions=tuple(partitions),
        partition_time_error=partition_error,
        manifests=_manifests(metas, opts.manifest_target_file_size),
        tags=_tags(tags),
        health_score=health.health_score,
        compaction_debt=debt if not is_pk else float(health.compaction_debt or 0.0),
        health=health_dict,
        **retention,  # type: ignore[arg-type]
        **_changelogs(table, now_millis),  # type: ignore[arg-type]
    )


def _tags(tags: Mapping[str, Snapshot]) -> tuple[TagState, ...]:
    from paimon_core.tag.tag_manager import tag_create_time_millis, tag_time_retained_ms

    out = []
    for name, snap in sorted(tags.items()):
        try:
            created, retained = tag_create_time_millis(snap), tag_time_retained_ms(snap)
        except PaimonError as e:  # a tag whose retention cannot be read never expires by time
            logger.warning("Tag %s has an unreadable retention: %s", name, e)
            created = retained = None
        out.append(TagState(name, snap.id, snap.time_millis, created, retained))
    return tuple(out)


def _manifests(metas: Sequence[ManifestFileMeta], target: int) -> ManifestState:
    small = [m for m in metas if m.file_size < target]
    return ManifestState(
        count=len(metas),
        total_bytes=sum(m.file_size for m in metas),
        small_count=len(small),
        small_bytes=sum(m.file_size for m in small),
        delete_bytes=sum(m.file_size for m in metas if m.num_deleted_files > 0),
        delete_entries=sum(m.num_deleted_files for m in metas),
    )


def _buckets(table: FileStoreTable, entries: Sequence[ManifestEntry]) -> tuple[list[BucketState], int, float]:
    """The buckets that are not compact, how many buckets there are, and the compaction debt."""
    from paimon_core.append.append_compact_coordinator import AppendCompactConfig
    from paimon_core.table.health import partition_text, small_file_threshold

    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    for e in entries:
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
    texts: dict[bytes, str] = {}

    def text(partition: bytes) -> str:
        if partition not in texts:
            texts[partition] = partition_text(table, partition)
        return texts[partition]

    threshold = small_file_threshold(table)
    out: list[BucketState] = []
    if table.primary_keys:
        from paimon_core.mergetree.compact.compact_options import num_levels

        max_level = num_levels(table.options.options) - 1
        for (partition, bucket), files in sorted(groups.items()):
            state = _pk_bucket(text(partition), bucket, files, threshold, max_level)
            if not (len(state.runs) == 1 and state.runs[0][0] == max_level):
                out.append(state)
        return out, len(groups), 0.0  # the debt of primary-key tables is the health's
    config = AppendCompactConfig.from_options(table.options.options)
    picks = _append_picks(table, groups, config)
    worst = 0
    for (partition, bucket), files in sorted(groups.items()):
        small = [f for f in files if f.file_size < threshold]
        worst = max(worst, len(small))
        minor, full = picks.get((partition, bucket), ((), ()))
        state = BucketState(
            partition=text(partition),
            bucket=bucket,
            file_count=len(files),
            total_bytes=sum(f.file_size for f in files),
            small_file_count=len(small),
            small_bytes=sum(f.file_size for f in small),
            level0_file_count=sum(1 for f in files if f.level == 0),
            minor_files=len(minor),
            minor_bytes=sum(f.file_size for f in minor),
            full_files=len(full),
            full_bytes=sum(f.file_size for f in full),
        )
        if state.minor_files or state.full_files or state.small_file_count > 1:
            out.append(state)
    debt = worst / (config.min_file_num + APPEND_DEBT_SLACK) if worst > 1 else 0.0
    return out, len(groups), debt


def _pk_bucket(
    partition: str, bucket: int, files: Sequence[DataFileMeta], threshold: int, max_level: int
) -> BucketState:
    from paimon_core.mergetree.levels import level0_order

    level0 = sorted((f for f in files if f.level == 0), key=level0_order)
    runs: list[tuple[int, int, int]] = [(0, f.file_size, 1) for f in level0]
    levels: dict[int, list[int]] = {}
    for f in files:
        if f.level > 0:
            acc = levels.setdefault(f.level, [0, 0])
            acc[0] += f.file_size
            acc[1] += 1
    runs += [(level, size, count) for level, (size, count) in sorted(levels.items())]
    created = [f.creation_time for f in files if f.level == max_level and f.creation_time is not None]
    small = [f for f in files if f.file_size < threshold]
    return BucketState(
        partition=partition,
        bucket=bucket,
        file_count=len(files),
        total_bytes=sum(f.file_size for f in files),
        small_file_count=len(small),
        small_bytes=sum(f.file_size for f in small),
        level0_file_count=len(level0),
        runs=tuple(runs),
        max_level_created_millis=max(created) if created else None,
    )


def _append_picks(
    table: FileStoreTable, groups: Mapping[tuple[bytes, int], Sequence[DataFileMeta]], config: object
) -> dict[tuple[bytes, int], tuple[Sequence[DataFileMeta], Sequence[DataFileMeta]]]:
    """Per bucket, what Paimon's minor pick and a full compaction would rewrite (append tables).

    Deletion vectors are not read here: files with many deleted rows but a normal size are not
    counted (the compaction itself still rewrites them)."""
    from paimon_core.append.append_compact_coordinator import (
        AppendCompactConfig,
        plan_unaware_bucket_compaction,
    )
    from paimon_core.append.bucketed_append_compact_manager import pick_compact_before, pick_full_compaction

    assert isinstance(config, AppendCompactConfig)
    out: dict[tuple[bytes, int], tuple[Sequence[DataFileMeta], Sequence[DataFileMeta]]] = {}
    if table.options.bucket > 0:
        for key, files in groups.items():
            minor = pick_compact_before(
                files, min_file_num=config.min_file_num, target_file_size=config.target_file_size
            )
            full = pick_full_compaction(
                files,
                compaction_file_size=config.compaction_file_size,
                deletion_vectors_enabled=config.deletion_vectors_enabled,
                force_rewrite_all_files=config.force_rewrite_all_files,
            )
            out[key] = (minor.picked or (), full)
        return out
    if table.options.bucket == -2:
        return out  # postpone buckets need a primary key: never an append table
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    for (partition, _), files in sorted(groups.items()):
        by_partition.setdefault(partition, []).extend(files)
    if data_evolution_enabled(table.options.options):  # Java's DataEvolutionCompactCoordinator
        return _data_evolution_picks(table, groups, by_partition)
    tasks = plan_unaware_bucket_compaction(
        by_partition,
        target_file_size=config.target_file_size,
        compaction_file_size=config.compaction_file_size,
        open_file_cost=config.open_file_cost,
        min_file_num=config.min_file_num,
        delete_ratio_threshold=config.delete_ratio_threshold,
        file_num_limit=config.file_num_limit,
    )
    picked: dict[bytes, list[DataFileMeta]] = {}
    for t in tasks:
        picked.setdefault(t.partition, []).extend(t.files)
    for partition, bucket in groups:
        files = picked.get(partition, [])
        out[(partition, bucket)] = (files, files)
    return out


def _data_evolution_picks(
    table: FileStoreTable,
    groups: Mapping[tuple[bytes, int], Sequence[DataFileMeta]],
    by_partition: Mapping[bytes, Sequence[DataFileMeta]],
) -> dict[tuple[bytes, int], tuple[Sequence[DataFileMeta], Sequence[DataFileMeta]]]:
    """Per partition, the files a data-evolution compaction would merge (minor and full alike:
    Paimon ignores ``compact_strategy`` for these tables). A table the compaction refuses (its
    options, or files it cannot merge) gets no pick: the refusal is the compaction's to report."""
    from paimon_core.append.data_evolution_compact_coordinator import DataEvolutionCompactCoordinator

    try:
        tasks = DataEvolutionCompactCoordinator.from_options(table.options.options).plan(by_partition)
    except PaimonError as e:
        logger.warning("Data-evolution table %s: no compaction planned (%s)", table.name, e)
        tasks = []
    picked: dict[bytes, list[DataFileMeta]] = {}
    for t in tasks:
        picked.setdefault(t.partition, []).extend(t.files)
    return {(p, b): (picked.get(p, []), picked.get(p, [])) for p, b in groups}


def _partitions(
    table: FileStoreTable, entries: Sequence[ManifestEntry]
) -> tuple[list[PartitionState], str | None]:
    """Every partition, with the time partition expiry judges it by; the strategy's error, if any."""
    if not table.partition_keys:
        return [], None
    from paimon_core.crosspartition.index_bootstrap import creation_epoch_millis
    from paimon_core.partition.partition_expire_strategy import create_strategy, partition_entries
    from paimon_core.table.health import partition_text, small_file_threshold
    from paimon_core.tag.tag_period import from_local_datetime

    error: str | None = None
    strategy = None
    try:
        strategy = create_strategy(table.store, table.options)
    except PaimonError as e:
        error = f"{type(e).__name__}: {e}"
    threshold = small_file_threshold(table)
    small: dict[bytes, int] = {}
    for entry in entries:
        if entry.file.file_size < threshold:
            small[entry.partition] = small.get(entry.partition, 0) + 1
    keys = table.partition_keys
    out = []
    for p in partition_entries(table.store, entries):
        when = None
        if strategy is not None:
            try:
                t = strategy.partition_time(p)
            except (PaimonError, ValueError) as e:  # a value the formatter does not match
                error = error or f"{type(e).__name__}: {e}"
                t = None
            when = None if t is None else from_local_datetime(t, None)
        created = p.last_file_creation_time
        out.append(
            PartitionState(
                partition=partition_text(table, p.partition),
                spec=tuple(zip(keys, p.values, strict=True)),
                file_count=p.file_count,
                total_bytes=p.file_size_in_bytes,
                row_count=p.record_count,
                small_file_count=small.get(p.partition, 0),
                last_file_creation_millis=None if created is None else creation_epoch_millis(created),
                partition_time_millis=when,
            )
        )
    out.sort(key=lambda s: s.partition)
    return out, error
