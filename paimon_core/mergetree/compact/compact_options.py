"""Compaction options of primary-key tables and the strategy they select.

Mirrors ``CoreOptions`` getters (``numLevels``, ``numSortedRunStopTrigger``,
``compactionFileSize``, ``lookupCompactMaxInterval``, ``needLookup``) and
``MergeTreeCompactManagerFactory.createCompactStrategy``: universal compaction, wrapped in
``ForceUpLevel0Compaction`` when the table needs lookup (``changelog-producer=lookup``,
``deletion-vectors.enabled``, ``merge-engine=first-row``, ``force-lookup``; ``lookup-compact``
GENTLE forces level 0 up only every ``lookup-compact.max-interval`` picks) or when
``compaction.force-up-level-0`` is set.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from paimon_core.exceptions import InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.compact.compact_strategy import CompactStrategy
from paimon_core.mergetree.compact.early_full_compaction import (
    EarlyFullCompaction,
    estimate_last_full_compaction_time,
)
from paimon_core.mergetree.compact.force_up_level0 import ForceUpLevel0Compaction
from paimon_core.mergetree.compact.off_peak_hours import OffPeakHours
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction
from paimon_core.options import (
    TARGET_FILE_SIZE,
    TARGET_FILE_SIZE_PK_DEFAULT,
    parse_duration_ms,
    parse_memory_size,
)
from paimon_core.utils.clock import Clock

__all__ = [
    "compact_strategy_from_options",
    "compaction_file_size",
    "force_keep_delete",
    "need_lookup",
    "num_levels",
    "num_sorted_run_stop_trigger",
]

NUM_SORTED_RUN_COMPACTION_TRIGGER = "num-sorted-run.compaction-trigger"
NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT = 5
NUM_SORTED_RUN_STOP_TRIGGER = "num-sorted-run.stop-trigger"
NUM_LEVELS = "num-levels"
COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT = "compaction.max-size-amplification-percent"
COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT_DEFAULT = 200
COMPACTION_SIZE_RATIO = "compaction.size-ratio"
COMPACTION_SIZE_RATIO_DEFAULT = 1
COMPACTION_OFFPEAK_START_HOUR = "compaction.offpeak.start.hour"
COMPACTION_OFFPEAK_END_HOUR = "compaction.offpeak.end.hour"
COMPACTION_OFFPEAK_HOUR_DEFAULT = -1
COMPACTION_OFFPEAK_RATIO = "compaction.offpeak-ratio"
COMPACTION_OFFPEAK_RATIO_DEFAULT = 0
COMPACTION_OPTIMIZATION_INTERVAL = "compaction.optimization-interval"
COMPACTION_TOTAL_SIZE_THRESHOLD = "compaction.total-size-threshold"
COMPACTION_INCREMENTAL_SIZE_THRESHOLD = "compaction.incremental-size-threshold"
COMPACTION_FORCE_UP_LEVEL_0 = "compaction.force-up-level-0"
COMPACTION_SMALL_FILE_RATIO = "compaction.small-file-ratio"
COMPACTION_SMALL_FILE_RATIO_DEFAULT = 0.7
CHANGELOG_PRODUCER = "changelog-producer"
DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
MERGE_ENGINE = "merge-engine"
FORCE_LOOKUP = "force-lookup"
LOOKUP_COMPACT = "lookup-compact"
LOOKUP_COMPACT_DEFAULT = "radical"
LOOKUP_COMPACT_MAX_INTERVAL = "lookup-compact.max-interval"
CHAIN_TABLE_ENABLED = "chain-table.enabled"


def _int(options: Mapping[str, str], key: str, default: int) -> int:
    value = _opt_int(options, key)
    return default if value is None else value


def _opt_int(options: Mapping[str, str], key: str) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise InvalidOptionError(f"Option '{key}' must be an integer, got {value!r}", key=key) from None


def _bool(options: Mapping[str, str], key: str) -> bool:
    value = options.get(key)
    if value is None:
        return False
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise InvalidOptionError(f"Option '{key}' must be true or false, got {value!r}", key=key)
    return text == "true"


def _enum(options: Mapping[str, str], key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = options.get(key, default).strip().lower()
    if value not in allowed:
        raise InvalidOptionError(f"Option '{key}' must be one of {', '.join(allowed)}; got {value!r}", key=key)
    return value


def _trigger(options: Mapping[str, str]) -> int:
    return _int(options, NUM_SORTED_RUN_COMPACTION_TRIGGER, NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT)


def num_levels(options: Mapping[str, str]) -> int:
    """``num-levels``, default ``num-sorted-run.compaction-trigger`` + 1 (Java ``numLevels``)."""
    return _int(options, NUM_LEVELS, _trigger(options) + 1)


def num_sorted_run_stop_trigger(options: Mapping[str, str]) -> int:
    """max(trigger, ``num-sorted-run.stop-trigger``), default trigger + 3: writers wait above it."""
    trigger = _trigger(options)
    return max(trigger, _int(options, NUM_SORTED_RUN_STOP_TRIGGER, trigger + 3))


def compaction_file_size(options: Mapping[str, str]) -> int:
    """Files below this size are rewritten, not upgraded: target-file-size × small-file ratio.

    Java ``compactionFileSize(hasPrimaryKey=true)``, truncated like Java's ``(long)`` cast.
    """
    target_text = options.get(TARGET_FILE_SIZE)
    target = TARGET_FILE_SIZE_PK_DEFAULT if target_text is None else parse_memory_size(target_text, key=TARGET_FILE_SIZE)
    ratio_text = options.get(COMPACTION_SMALL_FILE_RATIO)
    try:
        ratio = COMPACTION_SMALL_FILE_RATIO_DEFAULT if ratio_text is None else float(ratio_text)
    except ValueError:
        raise InvalidOptionError(
            f"Option '{COMPACTION_SMALL_FILE_RATIO}' must be a number, got {ratio_text!r}",
            key=COMPACTION_SMALL_FILE_RATIO,
        ) from None
    return int(target * ratio)


def need_lookup(options: Mapping[str, str]) -> bool:
    """Java ``needLookup``: lookup changelog, deletion vectors, first-row engine or force-lookup."""
    return (
        _enum(options, CHANGELOG_PRODUCER, "none", ("none", "input", "full-compaction", "lookup")) == "lookup"
        or _bool(options, DELETION_VECTORS_ENABLED)
        or options.get(MERGE_ENGINE, "deduplicate").strip().lower() == "first-row"
        or _bool(options, FORCE_LOOKUP)
    )


def force_keep_delete(options: Mapping[str, str]) -> bool:
    """Java passes ``isChainTable()`` as the manager's force-keep-delete switch."""
    return _bool(options, CHAIN_TABLE_ENABLED)


def lookup_compact_max_interval(options: Mapping[str, str]) -> int:
    """max(trigger, ``lookup-compact.max-interval``), default trigger × 2."""
    trigger = _trigger(options)
    return max(trigger, _int(options, LOOKUP_COMPACT_MAX_INTERVAL, trigger * 2))


def early_full_compaction_from_options(
    options: Mapping[str, str], *, clock: Clock, last_full_compaction_ms: int | None = None
) -> EarlyFullCompaction | None:
    """Java ``EarlyFullCompaction.create``: None unless one of the three options is set."""
    interval = options.get(COMPACTION_OPTIMIZATION_INTERVAL)
    total = options.get(COMPACTION_TOTAL_SIZE_THRESHOLD)
    incremental = options.get(COMPACTION_INCREMENTAL_SIZE_THRESHOLD)
    if interval is None and total is None and incremental is None:
        return None
    return EarlyFullCompaction(
        full_compaction_interval_ms=None
        if interval is None
        else parse_duration_ms(interval, key=COMPACTION_OPTIMIZATION_INTERVAL),
        total_size_threshold=None if total is None else parse_memory_size(total, key=COMPACTION_TOTAL_SIZE_THRESHOLD),
        incremental_size_threshold=None
        if incremental is None
        else parse_memory_size(incremental, key=COMPACTION_INCREMENTAL_SIZE_THRESHOLD),
        last_full_compaction_ms=last_full_compaction_ms,
        clock=clock,
    )


def off_peak_hours_from_options(options: Mapping[str, str]) -> OffPeakHours | None:
    """Java ``OffPeakHours.create(options)``."""
    return OffPeakHours.create(
        _int(options, COMPACTION_OFFPEAK_START_HOUR, COMPACTION_OFFPEAK_HOUR_DEFAULT),
        _int(options, COMPACTION_OFFPEAK_END_HOUR, COMPACTION_OFFPEAK_HOUR_DEFAULT),
        _int(options, COMPACTION_OFFPEAK_RATIO, COMPACTION_OFFPEAK_RATIO_DEFAULT),
    )


def compact_strategy_from_options(
    options: Mapping[str, str],
    *,
    clock: Clock,
    restore_files: Sequence[DataFileMeta] = (),
    zone: dt.tzinfo | None = None,
) -> CompactStrategy:
    """The strategy of one bucket (Java ``MergeTreeCompactManagerFactory.createCompactStrategy``).

    ``restore_files`` are the bucket's current files: the newest max-level file's creation time
    seeds the last full compaction time. ``zone`` is the zone of the stored creation times and
    of off-peak hours (None = this machine's, as Java).
    """
    levels = num_levels(options)
    universal = UniversalCompaction(
        _int(options, COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT, COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT_DEFAULT),
        _int(options, COMPACTION_SIZE_RATIO, COMPACTION_SIZE_RATIO_DEFAULT),
        _trigger(options),
        early_full_compaction=early_full_compaction_from_options(
            options,
            clock=clock,
            last_full_compaction_ms=estimate_last_full_compaction_time(restore_files, levels, zone=zone),
        ),
        off_peak_hours=off_peak_hours_from_options(options),
        clock=clock,
        zone=zone,
    )
    if need_lookup(options):
        mode = _enum(options, LOOKUP_COMPACT, LOOKUP_COMPACT_DEFAULT, ("radical", "gentle"))
        interval = lookup_compact_max_interval(options) if mode == "gentle" else None
        return ForceUpLevel0Compaction(universal, max_compact_interval=interval)
    if _bool(options, COMPACTION_FORCE_UP_LEVEL_0):
        return ForceUpLevel0Compaction(universal)
    return universal
