"""Does a table need compaction (data files or manifests) now, and what would it cost?

Data files, per bucket of the :class:`~paimon_core.maintenance.table_state.TableState`, by the
table's own rules as Paimon applies them:

* primary-key tables, ``minor``: the table's compaction strategy (this project's port of
  ``UniversalCompaction``: ``compaction.optimization-interval`` / ``total-size-threshold`` /
  ``incremental-size-threshold``, size amplification over
  ``compaction.max-size-amplification-percent``, size ratio with ``compaction.size-ratio`` plus
  ``compaction.offpeak-ratio`` in the off-peak hours, and more runs than
  ``num-sorted-run.compaction-trigger``; ``ForceUpLevel0Compaction`` for lookup and
  deletion-vector tables), run on the bucket's sorted runs as of ``now``, trivial units dropped
  as ``MergeTreeCompactManager`` does. ``full`` (the registry's, or
  ``full-compaction.delta-commits`` reached): every bucket with more than one sorted run.
* append tables: the files Paimon's ``AppendCompactCoordinator`` (unaware bucket: small files
  below ``target-file-size`` x ``compaction.small-file-ratio``, bins of 2 x target or at least
  ``compaction.min.file-num`` files) or ``BucketedAppendCompactManager`` (fixed bucket) would
  rewrite, as the state recorded them; data-evolution tables: those ``DataEvolutionCompactCoordinator``
  would merge (row-id runs of at least ``compaction.min.file-num`` files).

Partitions with a file newer than ``partition_idle_time`` (the registry's, or a table option
``partition.idle-time-to-compact``) are left alone; with ``respect_offpeak`` a table with
``compaction.offpeak.start.hour`` / ``end.hour`` is compacted outside those hours only where its
writers stall (more sorted runs than ``num-sorted-run.stop-trigger``).

Manifests: ``compact_manifest`` when at least ``manifest.merge-min-count`` manifests are smaller
than ``manifest.target-file-size``, or the manifests holding DELETE entries reach
``manifest.full-compaction-threshold-size`` (Paimon's ``ManifestFileMerger`` thresholds).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.maintenance.actions import MIB, Need, PlannedAction, files_for, fmt_bytes, fmt_duration
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import BucketState, TableState

if TYPE_CHECKING:
    from paimon_core.mergetree.sorted_run import LevelSortedRun

__all__ = ["IDLE_TIME_OPTION", "MAX_PARTITIONS_ARG", "compaction_need", "manifest_need"]

logger = logging.getLogger(__name__)

#: A table option naming the idle time of ``partition_idle_time`` for this table. Paimon itself
#: has no such option (its ``compact`` procedure takes ``partition_idle_time``); the planner reads
#: it so a table can carry its own.
IDLE_TIME_OPTION = "partition.idle-time-to-compact"
#: Above this many partitions the compaction is not narrowed by ``partitions`` (the rules pick
#: the same buckets anyway; the list would only grow the arguments).
MAX_PARTITIONS_ARG = 100
#: Reasons listed per action before "+N more".
REASONS_SHOWN = 3


@dataclass(frozen=True)
class _Pick:
    """What compacting one bucket would do."""

    label: str
    partition: str
    bytes: int
    files: int
    gain: int  # sorted runs or files removed, whichever is more
    urgent: bool
    why: str


def compaction_need(state: TableState, settings: MaintenanceSettings, *, now_millis: int) -> Need:
    """Whether ``state``'s table needs ``compact`` now (see the module docstring)."""
    action = "compact"
    if settings.compaction == "none":
        return Need(action, skipped="compaction is 'none' in the registry settings")
    if state.snapshot_id is None:
        return Need(action, skipped="the table has no snapshot")
    if state.bucket_mode == -2:
        return _postpone_need(state, settings, now_millis)
    idle_ms, idle_text = _idle_time(state, settings)
    hot = (
        {
            p.partition
            for p in state.partitions
            if p.last_file_creation_millis is not None and p.last_file_creation_millis >= now_millis - idle_ms
        }
        if idle_ms is not None
        else set()
    )
    offpeak_note = _outside_offpeak(state, settings, now_millis)
    if state.primary_key:
        strategy, picks, deferred, nothing = _pk_picks(
            state, settings, now_millis, hot, offpeak_note is not None
        )
    else:
        strategy, picks, deferred, nothing = _append_picks(state, settings, hot, offpeak_note is not None)
    notes = []
    if hot:
        notes.append(f"{len(hot)} partition(s) written within partition_idle_time {idle_text} left alone")
    if deferred and offpeak_note is not None:
        notes.append(f"{deferred} bucket(s) wait for the off-peak hours ({offpeak_note})")
    if not picks:
        return Need(action, skipped="; ".join([nothing, *notes]))
    return Need(action, planned=_action(state, settings, strategy, picks, notes, idle_text))


def _postpone_need(state: TableState, settings: MaintenanceSettings, now_millis: int) -> Need:
    """Postpone-bucket tables (``bucket = -2``): rows in ``bucket-postpone`` are invisible to batch
    reads until a compaction assigns their buckets (Java's ``PostponeBucketCompactSplitSource``),
    so any postpone file makes the table due, urgently. Java's postpone compaction takes no
    partitions and no idle time: the whole table is compacted. Without postpone files, the real
    buckets with level-0 files (written by fixed-bucket batch writes) are due when the table's
    strategy picks them (the postpone compaction compacts them as Java's level-0 markers)."""
    pending = [b for b in state.buckets if b.bucket == -2 and b.file_count > 0]
    if not pending:
        from dataclasses import replace

        from paimon_core.mergetree.compact.compact_options import (
            NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT,
            need_lookup,
            num_levels,
        )

        opts = state.options
        levels = num_levels(opts)
        trigger = int(opts.get("num-sorted-run.compaction-trigger", NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT))
        picks = []
        for b in state.buckets:
            unit = _minor_pick(opts, levels, b, now_millis) if b.bucket >= 0 and b.level0_file_count else None
            if unit is not None:
                why = _why_minor(opts, levels, trigger, need_lookup(opts), b, now_millis)
                size = sum(b.runs[i][1] for i in unit)
                files = sum(b.runs[i][2] for i in unit)
                picks.append(_Pick(b.label, b.partition, size, files, len(unit) - 1, False, f"bucket {b.label}: {why}"))
        if not picks:
            return Need("compact", skipped="no postpone files (bucket = -2) and no real bucket the strategy picks")
        action = _action(state, settings, "minor", picks, (), None)
        return Need("compact", planned=replace(action, args={**action.args, "partitions": None, "partition_idle_time": None}))
    size = sum(b.total_bytes for b in pending)
    files = sum(b.file_count for b in pending)
    needs_spark = settings.compaction_mode == "distributed" and size > settings.in_process_max_bytes
    where = (
        f"in Spark (> in_process_max_bytes {fmt_bytes(settings.in_process_max_bytes)})"
        if needs_spark
        else "in the task process"
    )
    shown = [f"{b.partition or '(unpartitioned)'}: {b.file_count} postpone file(s)" for b in pending[:REASONS_SHOWN]]
    if len(pending) > REASONS_SHOWN:
        shown.append(f"+{len(pending) - REASONS_SHOWN} more")
    reason = (
        f"{len(pending)} partition(s) with rows in bucket-postpone, unreadable until compacted (bucket = -2): "
        + "; ".join(shown)
        + f". {files} files, {fmt_bytes(size)} to assign to real buckets {where}"
    )
    return Need(
        "compact",
        planned=PlannedAction(
            action="compact",
            reason=reason,
            bytes_to_read=size,
            bytes_to_write=size,
            gain=float(files),
            priority=files / max(1.0, size / MIB),
            needs_spark=needs_spark,
            args={"compact_strategy": "minor", "partitions": None, "partition_idle_time": None},
            urgent=True,
        ),
    )


def _idle_time(state: TableState, settings: MaintenanceSettings) -> tuple[int | None, str | None]:
    from paimon_core.utils.time_util import to_duration_millis

    text = settings.partition_idle_time or state.options.get(IDLE_TIME_OPTION)
    if text is None or not state.partition_keys:
        return None, None
    return to_duration_millis(text, name="partition_idle_time"), text


def _outside_offpeak(state: TableState, settings: MaintenanceSettings, now_millis: int) -> str | None:
    """A description of the off-peak hours when ``now`` is outside them and they are respected."""
    from paimon_core.mergetree.compact.compact_options import off_peak_hours_from_options
    from paimon_core.tag.tag_period import to_local_datetime

    if not settings.respect_offpeak:
        return None
    hours = off_peak_hours_from_options(state.options)
    if hours is None:
        return None
    hour = to_local_datetime(now_millis, None).hour
    if hours.is_off_peak(hour):
        return None
    return (
        f"compaction.offpeak.start.hour {hours.start_hour} / end.hour {hours.end_hour}; it is {hour}:00 now"
    )


# --- primary-key tables ---------------------------------------------------------------------------
def _pk_picks(
    state: TableState, settings: MaintenanceSettings, now_millis: int, hot: set[str], outside_offpeak: bool
) -> tuple[str, list[_Pick], int, str]:
    from paimon_core.mergetree.compact.compact_options import (
        NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT,
        need_lookup,
        num_levels,
        num_sorted_run_stop_trigger,
    )
    from paimon_core.table.full_compaction_trigger import full_compaction_delta_commits

    opts = state.options
    levels = num_levels(opts)
    trigger = int(opts.get("num-sorted-run.compaction-trigger", NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT))
    stop = num_sorted_run_stop_trigger(opts)
    delta = full_compaction_delta_commits(opts)
    by_delta = bool(delta) and (state.appends_since_compact or 0) >= (delta or 0)
    strategy = "full" if settings.compaction == "full" or by_delta else "minor"
    lookup = need_lookup(opts)
    picks: list[_Pick] = []
    deferred = 0
    for b in state.buckets:
        if b.partition in hot or not b.runs:
            continue
        urgent = len(b.runs) > stop
        if outside_offpeak and not urgent:
            deferred += 1
            continue
        if strategy == "full":
            if len(b.runs) < 2 and not (lookup and b.level0_file_count):
                continue
            picked = list(range(len(b.runs)))
            why = (
                f"full-compaction.delta-commits {delta} reached ({state.appends_since_compact} commits since the last compaction)"
                if by_delta
                else "compaction 'full' in the registry settings"
            )
            why = f"{len(b.runs)} sorted runs, {why}"
        else:
            unit = _minor_pick(opts, levels, b, now_millis)
            if unit is None:
                continue
            picked = unit
            why = _why_minor(opts, levels, trigger, lookup, b, now_millis)
        if urgent:
            why += f"; {len(b.runs)} sorted runs > num-sorted-run.stop-trigger {stop}: writers wait for compaction"
        size = sum(b.runs[i][1] for i in picked)
        files = sum(b.runs[i][2] for i in picked)
        picks.append(
            _Pick(b.label, b.partition, size, files, len(picked) - 1, urgent, f"bucket {b.label}: {why}")
        )
    if picks:
        return strategy, picks, deferred, ""
    worst = max((len(b.runs) for b in state.buckets), default=1 if state.data_file_count else 0)
    amp = opts.get("compaction.max-size-amplification-percent", "200")
    nothing = (
        f"no bucket needs compaction: at most {worst} sorted run(s) per bucket "
        f"(num-sorted-run.compaction-trigger {trigger}), no size amplification over "
        f"compaction.max-size-amplification-percent {amp}"
    )
    if strategy == "full":
        nothing = f"no bucket has more than one sorted run (compaction 'full'; at most {worst})"
    return strategy, picks, deferred, nothing


def _synthetic_runs(b: BucketState, max_level: int) -> list[LevelSortedRun]:
    """The bucket's runs as ``LevelSortedRun``s of one stand-in file each (``run-<i>``): the
    strategies look at run sizes and levels only; the max-level stand-in carries the creation
    time Paimon estimates the last full compaction from."""
    from paimon_core.manifest.entries import EMPTY_STATS, DataFileMeta
    from paimon_core.mergetree.sorted_run import LevelSortedRun, SortedRun

    out: list[LevelSortedRun] = []
    for i, (level, size, _) in enumerate(b.runs):
        f = DataFileMeta(
            file_name=f"run-{i}",
            file_size=size,
            row_count=0,
            min_key=b"",
            max_key=b"",
            key_stats=EMPTY_STATS,
            value_stats=EMPTY_STATS,
            min_sequence_number=0,
            max_sequence_number=0,
            schema_id=0,
            level=level,
            creation_time=b.max_level_created_millis if level == max_level else None,
        )
        out.append(LevelSortedRun(level, SortedRun.from_single(f)))
    return out


def _minor_pick(opts: Mapping[str, str], levels: int, b: BucketState, now_millis: int) -> list[int] | None:
    """Indexes of the runs the table's strategy picks now (None: nothing, or a trivial unit)."""
    from paimon_core.mergetree.compact.compact_options import compact_strategy_from_options
    from paimon_core.mergetree.compact.compact_strategy import filter_trivial_unit
    from paimon_core.utils.clock import ManualClock

    runs = _synthetic_runs(b, levels - 1)
    restore = [r.run.files[0] for r in runs]
    picker = compact_strategy_from_options(opts, clock=ManualClock(now_millis), restore_files=restore)
    unit = filter_trivial_unit(picker.pick(levels, runs))
    if unit is None:
        return None
    return sorted(int(f.file_name.rsplit("-", 1)[1]) for f in unit.files)


def _why_minor(
    opts: Mapping[str, str], levels: int, trigger: int, lookup: bool, b: BucketState, now_millis: int
) -> str:
    """Which of Paimon's rules makes the bucket due, with its numbers (in the strategy's order)."""
    from paimon_core.mergetree.compact.early_full_compaction import estimate_last_full_compaction_time
    from paimon_core.options import parse_duration_ms, parse_memory_size

    runs = b.runs
    n = len(runs)
    max_level = levels - 1
    interval = opts.get("compaction.optimization-interval")
    if interval is not None and n > 1:
        files = [r.run.files[0] for r in _synthetic_runs(b, max_level)]
        last = estimate_last_full_compaction_time(files, levels)
        ms = parse_duration_ms(interval, key="compaction.optimization-interval")
        if last is None:
            return f"{n} sorted runs and no full compaction yet (compaction.optimization-interval {interval})"
        if now_millis - last > ms:
            return (
                f"{n} sorted runs, the last full compaction was {fmt_duration(now_millis - last)} ago > "
                f"compaction.optimization-interval {interval}"
            )
    total = sum(r[1] for r in runs)
    threshold = opts.get("compaction.total-size-threshold")
    if (
        threshold is not None
        and n > 1
        and total < parse_memory_size(threshold, key="compaction.total-size-threshold")
    ):
        return f"{n} sorted runs of {fmt_bytes(total)} < compaction.total-size-threshold {threshold}"
    incremental = opts.get("compaction.incremental-size-threshold")
    if incremental is not None and n > 1:
        above = sum(r[1] for r in runs if r[0] != max_level)
        if above > parse_memory_size(incremental, key="compaction.incremental-size-threshold"):
            return f"{fmt_bytes(above)} outside the max level > compaction.incremental-size-threshold {incremental}"
    if n >= trigger:
        why = f"{n} sorted runs >= num-sorted-run.compaction-trigger {trigger}"
        amp = int(opts.get("compaction.max-size-amplification-percent", "200"))
        newer, oldest = sum(r[1] for r in runs[:-1]), runs[-1][1]
        if n > 1 and newer * 100 > amp * oldest:
            pct = "inf" if oldest == 0 else str(newer * 100 // oldest)
            why += f", size amplification {pct}% > compaction.max-size-amplification-percent {amp}"
        return why
    if lookup and b.level0_file_count:
        return (
            f"{b.level0_file_count} level-0 file(s) on a table that needs lookup (deletion vectors, lookup "
            "changelog or first-row): batch reads do not see them until compacted"
        )
    if b.level0_file_count and opts.get("compaction.force-up-level-0", "false").lower() == "true":
        return f"{b.level0_file_count} level-0 file(s), compaction.force-up-level-0"
    return f"{n} sorted runs: Paimon's universal compaction picks some"


# --- append tables --------------------------------------------------------------------------------
def _append_picks(
    state: TableState, settings: MaintenanceSettings, hot: set[str], outside_offpeak: bool
) -> tuple[str, list[_Pick], int, str]:
    from paimon_core.append.append_compact_coordinator import AppendCompactConfig
    from paimon_core.append.row_tracking import data_evolution_enabled

    config = AppendCompactConfig.from_options(state.options)
    fixed = state.bucket_mode > 0
    data_evolution = data_evolution_enabled(state.options)  # Java's DataEvolutionCompactCoordinator
    strategy = settings.compaction
    small = f"under {fmt_bytes(config.compaction_file_size)} (target-file-size x compaction.small-file-ratio)"
    picks: list[_Pick] = []
    deferred = 0
    for b in state.buckets:
        if b.partition in hot:
            continue
        files, size = (
            (b.full_files, b.full_bytes) if fixed and strategy == "full" else (b.minor_files, b.minor_bytes)
        )
        if not files:
            continue
        if outside_offpeak:
            deferred += 1
            continue
        if not fixed and data_evolution:
            where = f"partition {b.partition}" if b.partition else "the table"
            why = (
                f"{where}: {files} files of neighbouring row-id ranges (base and column files) to merge "
                f"(DataEvolutionCompactCoordinator: >= compaction.min.file-num {config.min_file_num} files a task)"
            )
        elif not fixed:
            where = f"partition {b.partition}" if b.partition else "the table"
            why = (
                f"{where}: {files} files {small} to bin-pack (AppendCompactCoordinator: bins of 2 x "
                f"target-file-size, or >= compaction.min.file-num {config.min_file_num} files)"
            )
        elif strategy == "full":
            why = f"bucket {b.label}: {files} of {b.file_count} files to rewrite, more small than big (compaction 'full')"
        else:
            why = f"bucket {b.label}: {files} files >= compaction.min.file-num {config.min_file_num} (BucketedAppendCompactManager)"
        removed = max(0, files - files_for(size, config.target_file_size))
        picks.append(_Pick(b.label, b.partition, size, files, removed, False, why))
    worst = max((b.small_file_count for b in state.buckets), default=0)
    nothing = (
        f"no {'bucket' if fixed else 'partition'} has files to compact: at most {worst} file(s) {small} "
        f"per {'bucket' if fixed else 'partition'} (compaction.min.file-num {config.min_file_num})"
    )
    return strategy, picks, deferred, nothing


# --- the action -----------------------------------------------------------------------------------
def _action(
    state: TableState,
    settings: MaintenanceSettings,
    strategy: str,
    picks: Sequence[_Pick],
    notes: Sequence[str],
    idle_text: str | None,
) -> PlannedAction:
    size = sum(p.bytes for p in picks)
    files = sum(p.files for p in picks)
    gain = float(sum(p.gain for p in picks))
    urgent = any(p.urgent for p in picks)
    ordered = sorted(picks, key=lambda p: (not p.urgent, -p.bytes, p.label))
    shown = [p.why for p in ordered[:REASONS_SHOWN]]
    if len(ordered) > REASONS_SHOWN:
        shown.append(f"+{len(ordered) - REASONS_SHOWN} more")
    needs_spark = settings.compaction_mode == "distributed" and size > settings.in_process_max_bytes
    where = (
        f"in Spark (> in_process_max_bytes {fmt_bytes(settings.in_process_max_bytes)})"
        if needs_spark
        else "in the task process"
    )
    unit = "bucket(s)" if state.primary_key or state.bucket_mode > 0 else "partition(s)"
    reason = (
        f"{len(picks)} {unit} to compact ({strategy}): "
        + "; ".join(shown)
        + f". {files} files, {fmt_bytes(size)} to rewrite {where}"
    )
    if state.options.get("write-only", "false").lower() == "true":
        reason += "; write-only=true: no writer compacts this table"
    if notes:
        reason += "; " + "; ".join(notes)
    partitions = sorted({p.partition for p in picks})
    spec_arg = None
    if (
        state.partition_keys
        and len(partitions) < len(state.partitions)
        and len(partitions) <= MAX_PARTITIONS_ARG
    ):
        default = state.options.get("partition.default-name", "__DEFAULT_PARTITION__")
        by_text = {p.partition: p for p in state.partitions}
        spec_arg = [by_text[t].spec_dict(default) for t in partitions if t in by_text]
    return PlannedAction(
        action="compact",
        reason=reason,
        bytes_to_read=size,
        bytes_to_write=size,
        files_to_delete=0,
        gain=gain,
        priority=gain / max(1.0, size / MIB),
        needs_spark=needs_spark,
        args={"compact_strategy": strategy, "partitions": spec_arg, "partition_idle_time": idle_text},
        urgent=urgent,
    )


# --- manifests ------------------------------------------------------------------------------------
def manifest_need(state: TableState, settings: MaintenanceSettings) -> Need:
    """Whether the latest snapshot's manifests should be merged now (see the module docstring)."""
    from paimon_core.options import CoreOptions

    action = "compact_manifest"
    if not settings.manifest_compaction:
        return Need(action, skipped="manifest_compaction is off in the settings")
    if state.snapshot_id is None:
        return Need(action, skipped="the table has no snapshot")
    opts = CoreOptions(state.options)
    m = state.manifests
    min_count = opts.manifest_merge_min_count
    target = opts.manifest_target_file_size
    full = opts.manifest_full_compaction_size
    why = []
    if m.small_count >= min_count:
        why.append(
            f"{m.small_count} manifests under manifest.target-file-size {fmt_bytes(target)} "
            f">= manifest.merge-min-count {min_count}"
        )
    if m.delete_bytes >= full and m.delete_entries:
        why.append(
            f"{fmt_bytes(m.delete_bytes)} of manifests with {m.delete_entries} DELETE entries "
            f">= manifest.full-compaction-threshold-size {fmt_bytes(full)}"
        )
    after = files_for(m.total_bytes, target)
    gain = max(0, m.count - after)
    if not why or (gain == 0 and not m.delete_entries):
        return Need(
            action,
            skipped=(
                f"{m.count} manifests, {m.small_count} small (manifest.merge-min-count {min_count}); "
                f"{fmt_bytes(m.delete_bytes)} with DELETE entries (manifest.full-compaction-threshold-size {fmt_bytes(full)})"
            ),
        )
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason="; ".join(why)
            + f": {m.count} -> about {after} manifest(s), {fmt_bytes(m.total_bytes)} rewritten",
            bytes_to_read=m.total_bytes,
            bytes_to_write=m.total_bytes,
            gain=float(gain + (1 if m.delete_entries else 0)),
            priority=(gain + (1 if m.delete_entries else 0)) / max(1.0, m.total_bytes / MIB),
        ),
    )
