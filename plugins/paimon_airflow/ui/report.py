"""What the "Paimon tables" page shows of one table, from table metadata only (no Airflow).

:func:`table_report` is :func:`paimon_core.table.health.table_health` (LSM shape, small files,
consumers, tags, score) plus what a person looks at next to it:

* ``snapshots``: every snapshot still on disk (the newest :data:`MAX_SNAPSHOTS`), with its commit
  kind and time, for the "snapshots over time by kind" chart;
* ``retention``: the table's snapshot retention settings, and per consumer how its lag compares
  with them (a consumer pins snapshots: Paimon's expiry keeps every snapshot from the smallest
  consumer position on, so a stuck reader makes snapshots pile up);
* ``compaction``: the sorted-run triggers, for the "sorted runs per bucket" chart.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from paimon_core.mergetree.compact.compact_options import (
    NUM_SORTED_RUN_COMPACTION_TRIGGER,
    NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT,
    num_sorted_run_stop_trigger,
)
from paimon_core.table.health import table_health

if TYPE_CHECKING:
    from paimon_core import FileStoreTable
    from paimon_core.snapshot.snapshot import Snapshot

__all__ = ["MAX_SNAPSHOTS", "consumer_status", "table_report", "table_summary"]

#: The snapshots chart shows at most this many (the newest).
MAX_SNAPSHOTS = 500


def _snapshot_row(s: Snapshot) -> dict[str, Any]:
    return {
        "snapshot_id": s.id,
        "commit_kind": str(s.commit_kind.value),
        "time_millis": s.time_millis,
        "commit_user": s.commit_user,
        "delta_record_count": s.delta_record_count,
        "total_record_count": s.total_record_count,
    }


def consumer_status(
    *,
    next_snapshot: int,
    latest_id: int | None,
    earliest_id: int | None,
    waiting_since_millis: int | None,
    now_millis: int,
    retain_min: int,
    retain_max: int,
    time_retained_ms: int,
) -> str:
    """``"expired"``, ``"pinning"`` or ``"ok"`` for a consumer at ``next_snapshot``.

    * ``expired``: its next snapshot is gone already (it lost its position);
    * ``pinning``: it holds back snapshot expiry: it lags more snapshots than
      ``snapshot.num-retained.min`` and the oldest snapshot it still needs is older than
      ``snapshot.time-retained``, or it lags more than ``snapshot.num-retained.max``;
    * ``ok``: otherwise.
    """
    if earliest_id is not None and next_snapshot < earliest_id:
        return "expired"
    lag = max(0, latest_id + 1 - next_snapshot) if latest_id is not None else 0
    too_old = waiting_since_millis is not None and now_millis - waiting_since_millis > time_retained_ms
    if lag > retain_max or (lag > retain_min and too_old):
        return "pinning"
    return "ok"


def table_summary(table: FileStoreTable) -> dict[str, Any]:
    """The cheap part (latest snapshot only), for the list of tables."""
    latest = table.latest_snapshot()
    return {
        "table": table.name,
        "primary_keys": list(table.primary_keys),
        "partition_keys": list(table.partition_keys),
        "snapshot_id": latest.id if latest is not None else None,
        "snapshot_time_millis": latest.time_millis if latest is not None else None,
        "commit_kind": str(latest.commit_kind.value) if latest is not None else None,
    }


def table_report(table: FileStoreTable, *, now_millis: int | None = None) -> dict[str, Any]:
    """Everything the page shows of ``table`` (JSON-safe)."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    health = table_health(table, now_millis=now)
    sm = table.snapshot_manager
    ids = sm.list_snapshot_ids()[-MAX_SNAPSHOTS:]
    snapshots = [s for s in (sm.try_snapshot(i) for i in ids) if s is not None]
    by_id = {s.id: s for s in snapshots}
    opts = table.options
    retain_min = opts.snapshot_num_retained_min
    retain_max = opts.snapshot_num_retained_max
    time_retained = opts.snapshot_time_retained_ms

    consumers: list[dict[str, Any]] = []
    for c in health.consumers:
        waiting_on = by_id.get(c.next_snapshot)
        since = waiting_on.time_millis if waiting_on is not None else None
        consumers.append(
            {
                **c.to_dict(),
                "waiting_since_millis": since,
                "status": consumer_status(
                    next_snapshot=c.next_snapshot,
                    latest_id=health.snapshot_id,
                    earliest_id=health.earliest_snapshot_id,
                    waiting_since_millis=since,
                    now_millis=now,
                    retain_min=retain_min,
                    retain_max=retain_max,
                    time_retained_ms=time_retained,
                ),
            }
        )

    raw = table.options.options
    report = health.to_dict()
    report.update(
        {
            "table": table.name,
            "path": table.path,
            "primary_keys": list(table.primary_keys),
            "partition_keys": list(table.partition_keys),
            "snapshots": [_snapshot_row(s) for s in snapshots],
            "snapshot_kinds": dict(Counter(str(s.commit_kind.value) for s in snapshots)),
            "retention": {
                "snapshot_num_retained_min": retain_min,
                "snapshot_num_retained_max": retain_max,
                "snapshot_time_retained_ms": time_retained,
            },
            "consumers": consumers,
            "compaction": {
                "compaction_trigger": int(
                    raw.get(NUM_SORTED_RUN_COMPACTION_TRIGGER, NUM_SORTED_RUN_COMPACTION_TRIGGER_DEFAULT)
                ),
                "stop_trigger": num_sorted_run_stop_trigger(raw),
            },
        }
    )
    return report
