"""Does a table need expiry, tags or orphan cleanup now? Pure rules over a table state.

* ``expire_snapshots``: Java's ``ExpireSnapshotsImpl`` range as this project runs it: snapshots
  below ``latest - retain_max + 1`` go regardless of time, the others while their successor is
  older than ``snapshot.time-retained``, always keeping ``retain_min`` (``snapshot.num-retained.min``
  / ``.max``, or the registry's ``snapshot_retain_min`` / ``_max``) and nothing a consumer still
  reads (its next snapshot). At most ``snapshot.expire.limit`` per run. Runs at most every
  ``expire_interval`` unless more than ``retain_max`` snapshots are kept.
* ``expire_changelogs``: Java's ``ExpireChangelogImpl`` window over the long-lived changelogs a
  decoupled lifecycle keeps (``changelog/changelog-N``): ``changelog.num-retained.max`` / ``.min``
  counted over changelogs *and* snapshots (those below ``latest snapshot - max + 1`` go regardless
  of time, the others only if committed before ``now - changelog.time-retained``), never past
  every consumer's next snapshot, and the latest changelog stays as the range's end. At most
  ``snapshot.expire.limit`` per run; throttled by ``expire_interval`` as snapshot expiry is.
* ``create_tag``: the registry's daily tag (``YYYY-MM-DD`` of the last complete UTC day, the
  table's state at that day's end) when it is missing; or, for a table with
  ``tag.automatic-creation`` ``process-time`` / ``watermark``, ``trigger_tag_automatic_creation``
  when the tag of the last complete ``tag.creation-period`` (after ``tag.creation-delay``) is
  missing (Java's ``TagAutoCreation`` names and periods).
* ``expire_tags``: tags whose ``tagCreateTime`` + ``tagTimeRetained`` has passed.
* ``expire_partitions``: partitions whose time (``partition.expiration-strategy``) is older than
  ``partition.expiration-time`` (or the registry's ``partition_expiration_time``), checked at most
  every ``partition.expiration-check-interval``; at most ``partition.expiration-max-num`` per run.
* ``remove_orphan_files``: when the last successful clean is older than ``orphan_clean_interval``.

``last_success`` (action -> epoch millis of the table's last successful run, from the ledger)
tells a tag or an expiry done after the state was read from one still to do.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping
from typing import Any

from paimon_core.maintenance.actions import Need, PlannedAction, fmt_bytes, fmt_duration, fmt_time
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState

__all__ = [
    "DAY_MILLIS",
    "daily_tag",
    "expire_changelogs_need",
    "expire_partitions_need",
    "expire_snapshots_need",
    "expire_tags_need",
    "orphan_need",
    "tag_need",
]

logger = logging.getLogger(__name__)

DAY_MILLIS = 86_400_000
_DAY_NAME = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Files one expired snapshot deletes at least: its snapshot file, its base and delta manifest
#: lists and its delta manifest (data files replaced in it come on top).
FILES_PER_SNAPSHOT = 4


def _since(last_success: Mapping[str, int], action: str) -> int | None:
    value = last_success.get(action)
    return None if value is None else int(value)


# --- snapshots ------------------------------------------------------------------------------------
def expire_snapshots_need(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> Need:
    from paimon_core.options import CoreOptions

    action = "expire_snapshots"
    latest, earliest = state.snapshot_id, state.earliest_snapshot_id
    if latest is None or earliest is None:
        return Need(action, skipped="the table has no snapshot")
    opts = CoreOptions(state.options)
    r_max = settings.snapshot_retain_max or opts.snapshot_num_retained_max
    r_min = settings.snapshot_retain_min or opts.snapshot_num_retained_min
    r_max = max(r_max, r_min)
    retained_ms = opts.snapshot_time_retained_ms
    limit = opts.snapshot_expire_limit
    count = state.snapshot_count or (latest - earliest + 1)
    cutoff = now_millis - retained_ms
    # where the time retention ends now: at least where it ended when the state was read
    time_end = state.time_retention_end if state.time_retention_end is not None else earliest
    if (
        time_end == earliest
        and state.successor_time_millis is not None
        and state.successor_time_millis < cutoff
    ):
        time_end = earliest + 1
    exact = state.retention_cutoff_millis is None or state.retention_cutoff_millis >= cutoff
    begin = max(latest - r_max + 1, earliest)
    end = min(latest - r_min + 1, max(begin, time_end))
    fence = state.consumer_min_next_snapshot
    fenced = fence is not None and fence < end
    if fenced and fence is not None:
        end = fence
    n = max(0, end - earliest)
    rules = (
        f"snapshot.num-retained.min {r_min}, .max {r_max}, snapshot.time-retained {fmt_duration(retained_ms)}"
    )
    if n == 0:
        if fenced:
            return Need(
                action, skipped=f"{count} snapshots; a consumer still reads from snapshot {fence} ({rules})"
            )
        if count <= r_min:
            return Need(action, skipped=f"{count} snapshots <= snapshot.num-retained.min {r_min}")
        age = (
            ""
            if state.successor_time_millis is None
            else (
                f"; the oldest's successor is {fmt_duration(max(0, now_millis - state.successor_time_millis))} old"
            )
        )
        return Need(action, skipped=f"{count} snapshots, none past retention ({rules}){age}")
    over_max = count > r_max
    why = (
        f"{count} snapshots > snapshot.num-retained.max {r_max}"
        if over_max and n >= count - r_max
        else f"snapshots older than snapshot.time-retained {fmt_duration(retained_ms)}"
    )
    at_least = "" if exact else "at least "
    successor = state.successor_time_millis
    return _planned_expiry(
        state,
        settings,
        action=action,
        noun="snapshot",
        n=n,
        reason=f"{at_least}{n} of {count} snapshots past retention ({why}; keeping snapshot.num-retained.min {r_min})",
        over_max=over_max,
        limit=limit,
        fence=fence if fenced else None,
        r_min=r_min,
        needed_since=None if successor is None else successor + retained_ms,
        args={"retain_max": settings.snapshot_retain_max, "retain_min": settings.snapshot_retain_min},
        now_millis=now_millis,
        last_success=last_success,
    )


def _planned_expiry(
    state: TableState,
    settings: MaintenanceSettings,
    *,
    action: str,
    noun: str,
    n: int,
    reason: str,
    over_max: bool,
    limit: int,
    fence: int | None,
    r_min: int,
    needed_since: int | None,
    args: Mapping[str, Any],
    now_millis: int,
    last_success: Mapping[str, int],
) -> Need:
    """The expiry of ``n`` snapshots or changelogs (``noun``) past retention: skipped when it ran
    within ``expire_interval`` unless more than the ``.max`` are kept (``over_max``, then urgent);
    ``reason`` gets the per-run limit, the consumer ``fence`` that binds it and write-only added."""
    last = _since(last_success, action)
    interval = settings.millis("expire_interval") or 0
    if not over_max and last is not None and now_millis - last < interval:
        ran = "expiry" if noun == "snapshot" else f"{noun} expiry"
        return Need(
            action,
            skipped=(
                f"{n} {noun}(s) past retention, but {ran} ran {fmt_duration(now_millis - last)} ago "
                f"(< expire_interval {settings.expire_interval})"
            ),
        )
    if n > limit:
        reason += f"; snapshot.expire.limit {limit} per run"
    if fence is not None:
        reason += f"; a consumer holds snapshot {fence} and later"
    if state.options.get("write-only", "false").lower() == "true":
        reason += "; write-only=true: writers do not expire"
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=reason,
            files_to_delete=FILES_PER_SNAPSHOT * min(n, limit),
            gain=float(n),
            priority=float(n) / max(1, r_min),
            args=dict(args),
            urgent=over_max,
        ),
        needed_since_millis=needed_since,
    )


# --- long-lived changelogs -------------------------------------------------------------------------
def expire_changelogs_need(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> Need:
    """``expire_changelogs`` (the table call with the table's options, as the executor runs it):
    the changelogs :class:`~paimon_core.operation.expire_changelogs.ExpireChangelogs` would expire
    at ``now_millis`` (see the module docstring)."""
    from paimon_core.options import CoreOptions

    action = "expire_changelogs"
    opts = CoreOptions(state.options)
    earliest, latest_cl, latest = state.earliest_changelog_id, state.latest_changelog_id, state.snapshot_id
    if earliest is None or latest_cl is None:
        if not opts.changelog_lifecycle_decoupled:
            return Need(action, skipped="not decoupled: changelogs expire with their snapshots")
        return Need(action, skipped="no long-lived changelog")
    if latest is None:
        return Need(action, skipped="the table has no snapshot")
    r_max = opts.changelog_num_retained_max
    r_min = opts.changelog_num_retained_min
    retained_ms = opts.changelog_time_retained_ms
    limit = opts.snapshot_expire_limit
    count = state.changelog_count or (latest_cl - earliest + 1)
    total = latest - earliest + 1  # changelogs and snapshots: what the changelog.* counts count
    cutoff = now_millis - retained_ms
    # where the time retention ends now: at least where it ended when the state was read
    time_end = state.changelog_time_retention_end
    if time_end is None:
        time_end = earliest
    if (
        time_end == earliest
        and state.earliest_changelog_time_millis is not None
        and state.earliest_changelog_time_millis < cutoff
    ):
        time_end = earliest + 1
    exact = (
        state.changelog_retention_cutoff_millis is None or state.changelog_retention_cutoff_millis >= cutoff
    )
    begin = max(latest - r_max + 1, earliest)
    # the latest changelog stays: the expiry keeps it as the retained end of its range
    end = min(latest - r_min + 1, latest_cl, max(begin, time_end))
    fence = state.changelog_consumer_fence
    fenced = fence is not None and fence < end
    if fenced and fence is not None:
        end = fence
    n = max(0, end - earliest)
    rules = f"changelog.num-retained.min {r_min}, .max {r_max}, changelog.time-retained {fmt_duration(retained_ms)}"
    if n == 0:
        if fenced:
            return Need(
                action, skipped=f"{count} changelogs; a consumer still reads from snapshot {fence} ({rules})"
            )
        if total <= r_min:
            return Need(
                action,
                skipped=f"{count} changelogs + {total - count} snapshots <= changelog.num-retained.min {r_min}",
            )
        if count == 1:
            return Need(
                action, skipped=f"1 changelog: the latest stays as the expiry's retained end ({rules})"
            )
        age = (
            ""
            if state.earliest_changelog_time_millis is None
            else f"; the oldest is {fmt_duration(max(0, now_millis - state.earliest_changelog_time_millis))} old"
        )
        return Need(action, skipped=f"{count} changelogs, none past retention ({rules}){age}")
    over_max = total > r_max
    why = (
        f"{total} changelogs and snapshots > changelog.num-retained.max {r_max}"
        if over_max and n >= total - r_max
        else f"changelogs older than changelog.time-retained {fmt_duration(retained_ms)}"
    )
    at_least = "" if exact else "at least "
    oldest = state.earliest_changelog_time_millis
    return _planned_expiry(
        state,
        settings,
        action=action,
        noun="changelog",
        n=n,
        reason=(
            f"{at_least}{n} of {count} changelogs past retention ({why}; keeping changelog.num-retained.min "
            f"{r_min} counted with the snapshots)"
        ),
        over_max=over_max,
        limit=limit,
        fence=fence if fenced else None,
        r_min=r_min,
        needed_since=None if oldest is None else oldest + retained_ms,
        args={},
        now_millis=now_millis,
        last_success=last_success,
    )


# --- tags ---------------------------------------------------------------------------------------
def daily_tag(now_millis: int) -> tuple[str, int]:
    """The registry's daily tag due at ``now``: the last complete UTC day ``D`` (``'2026-11-01'``)
    and the end of that day (epoch millis), whose state it holds."""
    day = dt.datetime.fromtimestamp(now_millis / 1000, dt.UTC).date() - dt.timedelta(days=1)
    end = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC) + dt.timedelta(days=1)
    return day.isoformat(), int(end.timestamp() * 1000)


def tag_need(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> Need:
    """``create_tag`` (the registry's daily tag) or ``trigger_tag_automatic_creation``."""
    from paimon_core.options import CoreOptions

    mode = CoreOptions(state.options).tag_automatic_creation.strip().lower()
    if mode not in ("", "none"):
        return _auto_tag_need(state, mode, now_millis=now_millis, last_success=last_success)
    action = "create_tag"
    if settings.tag_period == "none":
        return Need(action, skipped="tag_period 'none' in the registry settings")
    name, at = daily_tag(now_millis)
    names = {t.name for t in state.tags}
    if name in names:
        return Need(action, skipped=f"tag {name} exists")
    last = _since(last_success, action)
    if last is not None and last >= at:
        return Need(action, skipped=f"tag {name} was created at {fmt_time(last)}")
    if state.earliest_snapshot_time_millis is None or state.earliest_snapshot_time_millis > at:
        return Need(action, skipped=f"no snapshot at or before {fmt_time(at)} to tag {name}")
    overdue = max(0, now_millis - at)
    since = at
    reason = f"daily tag {name} (the table at {fmt_time(at)}) is missing, due {fmt_duration(overdue)} ago"
    earlier = sorted(n for n in names if _DAY_NAME.fullmatch(n) and n < name)
    if earlier:  # missing since the day after the newest daily tag
        newest = dt.datetime.fromisoformat(earlier[-1]).replace(tzinfo=dt.UTC)
        since = int(newest.timestamp() * 1000) + 2 * DAY_MILLIS  # the end of the day after it
        if since < at:
            reason += f" (the newest daily tag is {earlier[-1]})"
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=reason,
            gain=1.0,
            priority=1.0 + overdue / DAY_MILLIS,
            args={"tag_name": name, "snapshot_time_millis": at, "time_retained": settings.tag_retention},
        ),
        needed_since_millis=since,
    )


def _auto_tag_need(state: TableState, mode: str, *, now_millis: int, last_success: Mapping[str, int]) -> Need:
    from paimon_core.exceptions import PaimonError
    from paimon_core.options import CoreOptions
    from paimon_core.tag.tag_period import (
        TagPeriodHandler,
        TagTimeExtractor,
        from_local_datetime,
        to_local_datetime,
    )

    action = "trigger_tag_automatic_creation"
    if mode == "batch":
        return Need(action, skipped="tag.automatic-creation batch: batch writes tag themselves")
    opts = CoreOptions(state.options)
    try:
        extractor = TagTimeExtractor.for_auto_tag(opts)
        handler = TagPeriodHandler.create(opts)
    except PaimonError as e:
        return Need(action, skipped=f"tag.automatic-creation {mode}: the tag options are invalid: {e}")
    if extractor is None or state.snapshot_id is None:
        return Need(action, skipped=f"tag.automatic-creation {mode}: no snapshot to tag")
    delay = dt.timedelta(milliseconds=opts.tag_creation_delay_ms)
    if mode == "watermark":
        if state.snapshot_watermark is None or state.snapshot_watermark == -(2**63):
            return Need(
                action, skipped="tag.automatic-creation watermark: the latest snapshot has no watermark"
            )
        point = to_local_datetime(state.snapshot_watermark, extractor.zone)
    else:
        point = to_local_datetime(now_millis, extractor.zone)
    start = handler.normalize_to_previous_tag(point - delay)
    name = handler.time_to_tag(start)
    due = from_local_datetime(handler.next_tag_time(start) + delay, extractor.zone)
    if name in {t.name for t in state.tags}:
        return Need(action, skipped=f"auto tag {name} exists")
    last = _since(last_success, action)
    if last is not None and last >= due:
        return Need(action, skipped=f"auto tag {name}: tag creation ran at {fmt_time(last)}")
    period = opts.tag_creation_period
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=(
                f"tag {name} of tag.automatic-creation {mode} (tag.creation-period {period}) is missing, "
                f"due since {fmt_time(due)}"
            ),
            gain=1.0,
            priority=1.0 + max(0, now_millis - due) / DAY_MILLIS,
            args={},
        ),
        needed_since_millis=due,
    )


def expire_tags_need(state: TableState, *, now_millis: int, last_success: Mapping[str, int]) -> Need:
    action = "expire_tags"
    last = _since(last_success, action)
    due = [
        t
        for t in state.tags
        if t.expires_at_millis is not None
        and now_millis > t.expires_at_millis
        and (last is None or last < t.expires_at_millis)
    ]
    if not due:
        kept = sum(1 for t in state.tags if t.expires_at_millis is not None)
        return Need(
            action, skipped=f"{len(state.tags)} tag(s), none past its time-retained ({kept} have one)"
        )
    names = ", ".join(t.name for t in due[:5]) + (f" +{len(due) - 5} more" if len(due) > 5 else "")
    oldest = min(t.expires_at_millis or now_millis for t in due)
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=f"{len(due)} tag(s) past their time-retained: {names}",
            files_to_delete=len(due),
            gain=float(len(due)),
            priority=float(len(due)),
            args={},
        ),
        needed_since_millis=oldest,
    )


# --- partitions -----------------------------------------------------------------------------------
def expire_partitions_need(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> Need:
    from paimon_core.options import CoreOptions

    action = "expire_partitions"
    if not state.partition_keys:
        return Need(action, skipped="the table is not partitioned")
    opts = CoreOptions(state.options)
    expiration = settings.millis("partition_expiration_time") or opts.partition_expiration_time_ms
    if expiration is None:
        return Need(
            action, skipped="no partition_expiration_time in the settings and no partition.expiration-time"
        )
    source = (
        f"partition_expiration_time {settings.partition_expiration_time}"
        if settings.partition_expiration_time
        else f"partition.expiration-time {state.options.get('partition.expiration-time')}"
    )
    cutoff = now_millis - expiration
    expired = [
        p
        for p in state.partitions
        if p.partition_time_millis is not None and p.partition_time_millis < cutoff
    ]
    if not expired:
        if state.partition_time_error and all(p.partition_time_millis is None for p in state.partitions):
            return Need(action, skipped=f"no partition time can be read ({state.partition_time_error})")
        return Need(action, skipped=f"{len(state.partitions)} partition(s), none older than {source}")
    check = max(opts.partition_expiration_check_interval_ms, settings.millis("expire_interval") or 0)
    last = _since(last_success, action)
    if last is not None and now_millis - last < check and last >= state.collected_at_millis:
        return Need(
            action,
            skipped=(
                f"{len(expired)} partition(s) past {source}, checked {fmt_duration(now_millis - last)} ago "
                f"(partition.expiration-check-interval {fmt_duration(opts.partition_expiration_check_interval_ms)})"
            ),
        )
    limit = opts.partition_expiration_max_num
    names = ", ".join(p.partition for p in expired[:3]) + (
        f" +{len(expired) - 3} more" if len(expired) > 3 else ""
    )
    reason = (
        f"{len(expired)} of {len(state.partitions)} partition(s) older than {source}: {names} "
        f"({fmt_bytes(sum(p.total_bytes for p in expired))}, freed when snapshot expiry removes them)"
    )
    if len(expired) > limit:
        reason += f"; partition.expiration-max-num {limit} per run"
    oldest = min(p.partition_time_millis or cutoff for p in expired)
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=reason,
            gain=float(min(len(expired), limit)),
            priority=float(min(len(expired), limit)),
            args={"expiration_time": settings.partition_expiration_time},
        ),
        needed_since_millis=oldest + expiration,
    )


# --- orphan files ---------------------------------------------------------------------------------
def orphan_need(
    state: TableState, settings: MaintenanceSettings, *, now_millis: int, last_success: Mapping[str, int]
) -> Need:
    action = "remove_orphan_files"
    interval = settings.millis("orphan_clean_interval")
    if interval is None or interval <= 0:
        return Need(action, skipped="orphan_clean_interval is off in the settings")
    last = _since(last_success, action)
    if last is not None and now_millis - last < interval:
        return Need(
            action,
            skipped=(
                f"last clean {fmt_duration(now_millis - last)} ago < orphan_clean_interval "
                f"{settings.orphan_clean_interval}"
            ),
        )
    if last is None:
        since = state.earliest_snapshot_time_millis
        age = "never cleaned"
        gain = 1.0 if since is None else max(1.0, (now_millis - since) / interval)
    else:
        since = last + interval
        age = f"last clean {fmt_duration(now_millis - last)} ago"
        gain = (now_millis - last) / interval
    files = state.data_file_count + state.manifests.count + state.snapshot_count
    return Need(
        action,
        planned=PlannedAction(
            action=action,
            reason=(
                f"{age} >= orphan_clean_interval {settings.orphan_clean_interval}; files older than "
                f"orphan_min_age_days {settings.orphan_min_age_days} d that nothing references are deleted "
                f"(about {files} live files listed)"
            ),
            gain=gain,
            priority=gain,
            args={"older_than_days": settings.orphan_min_age_days},
        ),
        needed_since_millis=since,
    )
