"""What a watcher of a Paimon table fires on: the synchronous half of the snapshot trigger.

:func:`evaluate` decides, for one table whose latest snapshot moved from the watermark to
``head``, whether to fire and with what payload; :func:`budget_violations` says why a table is
over a compaction-debt budget. Both are blocking (they read table metadata) and are called off the
event loop by :class:`~paimon_airflow.triggers.paimon.PaimonTableSnapshotTrigger`, and directly by
the sensors. ``paimon_core`` is imported inside the functions, so importing this module (at DAG
parse time, through the trigger) stays cheap.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from paimon_core import FileStoreTable
    from paimon_core.table.health import TableHealth
    from paimon_core.table.snapshot_changes import SnapshotInfo

__all__ = [
    "COMMIT_KINDS",
    "FIRE_ON",
    "FireOn",
    "WatchCriteria",
    "WatchState",
    "budget_violations",
    "evaluate",
    "health_summary",
]

FireOn = Literal["snapshot", "partition", "health", "compaction"]
FIRE_ON: tuple[FireOn, ...] = ("snapshot", "partition", "health", "compaction")
#: Paimon's commit kinds (``paimon_core.snapshot.snapshot.CommitKind``), spelled out so this
#: module does not import paimon_core at DAG parse time.
COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")
#: Snapshot ids listed in an event at most (the newest).
MAX_EVENT_SNAPSHOT_IDS = 100


@dataclass(frozen=True)
class WatchCriteria:
    """When to fire.

    * ``snapshot``: a new snapshot; with ``commit_kinds`` / ``commit_user`` /
      ``commit_identifier``, only one that matches them all (identifiers match at or above the
      given one, as Paimon orders a commit user's identifiers).
    * ``partition``: a matching new snapshot that gave files to a partition which had none.
    * ``health``: the table went over budget (compaction debt above ``max_compaction_debt``,
      small-file ratio above ``max_small_file_ratio``, or health score below
      ``min_health_score``); fires on crossing, once, until it is back within budget.
    * ``compaction``: the maintenance planner (:func:`paimon_core.maintenance.planner.plan_table`,
      the same rules ``paimon_maintenance`` plans by: the table's own triggers and the registry's
      ``planner_settings``) plans a compaction now; fires once, until no compaction is due.
    """

    fire_on: FireOn = "snapshot"
    commit_kinds: tuple[str, ...] | None = None
    commit_user: str | None = None
    commit_identifier: int | None = None
    max_compaction_debt: float | None = None
    max_small_file_ratio: float | None = None
    min_health_score: int | None = None
    with_partitions: bool = True
    #: compaction mode: the table's maintenance settings (``MaintenanceSettings`` fields), as sorted pairs
    planner_settings: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.fire_on not in FIRE_ON:
            raise ValueError(f"fire_on must be one of {FIRE_ON}, got {self.fire_on!r}")
        if self.commit_kinds is not None:
            bad = sorted(set(self.commit_kinds) - set(COMMIT_KINDS))
            if bad or not self.commit_kinds:
                raise ValueError(
                    f"commit_kinds must be a non-empty subset of {COMMIT_KINDS}, got {self.commit_kinds!r}"
                )
        if self.commit_identifier is not None and self.commit_user is None:
            raise ValueError("commit_identifier needs commit_user (identifiers are per commit user)")
        if self.fire_on == "health" and not self.has_budget:
            raise ValueError(
                "fire_on='health' needs max_compaction_debt, max_small_file_ratio or min_health_score"
            )

    @property
    def has_budget(self) -> bool:
        return any(
            v is not None
            for v in (self.max_compaction_debt, self.max_small_file_ratio, self.min_health_score)
        )

    def matches(self, snap: SnapshotInfo) -> bool:
        """Whether one snapshot passes the commit filters."""
        if self.commit_kinds is not None and snap.commit_kind not in self.commit_kinds:
            return False
        if self.commit_user is not None and snap.commit_user != self.commit_user:
            return False
        return self.commit_identifier is None or snap.commit_identifier >= self.commit_identifier


@dataclass(frozen=True)
class WatchState:
    """What a watcher remembers between polls (and, through the asset state store, restarts)."""

    last_seen_snapshot_id: int | None = None
    over_budget: bool | None = None  # health mode: the verdict at the watermark


def budget_violations(
    health: TableHealth,
    *,
    max_compaction_debt: float | None = None,
    max_small_file_ratio: float | None = None,
    min_health_score: int | None = None,
) -> list[str]:
    """Human-readable reasons ``health`` is over budget (empty: within budget)."""
    out: list[str] = []
    debt = health.compaction_debt
    if max_compaction_debt is not None and debt is not None and debt > max_compaction_debt:
        out.append(
            f"compaction debt {debt:.2f} > {max_compaction_debt} "
            f"({health.max_sorted_runs} sorted runs in a bucket, stop trigger {health.sorted_run_stop_trigger})"
        )
    if max_small_file_ratio is not None and health.small_file_ratio > max_small_file_ratio:
        out.append(
            f"small-file ratio {health.small_file_ratio:.2f} > {max_small_file_ratio} "
            f"({health.small_file_count} of {health.data_file_count} files below "
            f"{health.small_file_threshold_bytes} bytes)"
        )
    if min_health_score is not None and health.health_score < min_health_score:
        out.append(f"health score {health.health_score} < {min_health_score}")
    return out


def health_summary(health: TableHealth) -> dict[str, Any]:
    """The headline numbers of a :class:`TableHealth` (JSON-safe, small enough for an event)."""
    keys = (
        "snapshot_id",
        "health_score",
        "compaction_debt",
        "max_sorted_runs",
        "sorted_run_stop_trigger",
        "max_level0_file_count",
        "small_file_ratio",
        "small_file_count",
        "data_file_count",
        "total_bytes",
    )
    d = health.to_dict()
    return {k: d[k] for k in keys}


def _iso(millis: int) -> str:
    return dt.datetime.fromtimestamp(millis / 1000, tz=dt.UTC).isoformat()


def evaluate(
    table: FileStoreTable,
    name: str,
    state: WatchState,
    head: int,
    criteria: WatchCriteria,
) -> tuple[dict[str, Any] | None, WatchState]:
    """Decide whether the move of ``table``'s latest snapshot from the watermark to ``head`` fires.

    Returns the event payload (``None``: no event) and the new state; the watermark always moves
    to ``head``, fired or not. A ``head`` below the watermark is a rollback: only ``head`` itself
    is examined and the payload says ``rolled_back``. The first poll with no watermark examines
    ``head`` alone (as Airflow's Iceberg trigger reports the current head first).
    """
    from paimon_core.table.health import table_health
    from paimon_core.table.snapshot_changes import new_partitions, snapshot_range

    watermark = state.last_seen_snapshot_id
    if watermark == head:
        return None, state
    rolled_back = watermark is not None and head < watermark
    since = None if watermark is None or rolled_back else watermark
    moved = replace(state, last_seen_snapshot_id=head)

    base: dict[str, Any] = {
        "table": name,
        "previous_snapshot_id": watermark,
        "latest_snapshot_id": head,
        "rolled_back": rolled_back,
        "reason": criteria.fire_on,
    }
    if criteria.fire_on == "compaction":
        return _compaction_event(table, head, criteria, state, moved, base)
    if criteria.fire_on == "health":
        health = table_health(table)
        reasons = budget_violations(
            health,
            max_compaction_debt=criteria.max_compaction_debt,
            max_small_file_ratio=criteria.max_small_file_ratio,
            min_health_score=criteria.min_health_score,
        )
        over = bool(reasons)
        new_state = replace(moved, over_budget=over)
        if not over or state.over_budget is True:
            return None, new_state
        payload = {**_head_payload(table, head, base), "health": health_summary(health), "violations": reasons}
        return payload, new_state

    # partition mode reads the deltas once, in new_partitions below, not here as well
    rng = snapshot_range(
        table, since, head, with_partitions=criteria.with_partitions and criteria.fire_on != "partition"
    )
    matching = [s for s in rng.snapshots if criteria.matches(s)]
    if not matching:
        return None, moved
    event_snap = matching[-1]
    payload = {
        **base,
        "snapshot_id": event_snap.snapshot_id,
        "commit_kind": event_snap.commit_kind,
        "commit_user": event_snap.commit_user,
        "commit_identifier": event_snap.commit_identifier,
        "time_millis": event_snap.time_millis,
        "time": _iso(event_snap.time_millis),
        "snapshot_ids": [s.snapshot_id for s in matching[-MAX_EVENT_SNAPSHOT_IDS:]],
        "snapshots_truncated": rng.snapshots_truncated or len(matching) > MAX_EVENT_SNAPSHOT_IDS,
        "changed_partitions": list(rng.changed_partitions) if rng.changed_partitions is not None else None,
        "partitions_truncated": rng.partitions_truncated,
    }
    if criteria.fire_on == "partition":
        added = new_partitions(table, since, head)
        if not added:
            return None, moved
        payload["new_partitions"] = list(added)
    return payload, moved


def _head_payload(table: FileStoreTable, head: int, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` plus the head snapshot's id, kind, committer and time (the state modes' events)."""
    latest = table.snapshot_manager.try_snapshot(head)
    return {
        **base,
        "snapshot_id": head,
        "commit_kind": str(latest.commit_kind.value) if latest else None,
        "commit_user": latest.commit_user if latest else None,
        "commit_identifier": latest.commit_identifier if latest else None,
        "time_millis": latest.time_millis if latest else None,
        "time": _iso(latest.time_millis) if latest else None,
    }


def _compaction_event(
    table: FileStoreTable,
    head: int,
    criteria: WatchCriteria,
    state: WatchState,
    moved: WatchState,
    base: dict[str, Any],
) -> tuple[dict[str, Any] | None, WatchState]:
    """Compaction mode: fire when the planner plans a compaction (and did not at the watermark)."""
    import time

    from paimon_core.maintenance.planner import plan_table
    from paimon_core.maintenance.settings import MaintenanceSettings
    from paimon_core.maintenance.table_state import collect_table_state

    now = int(time.time() * 1000)
    settings = MaintenanceSettings.from_mapping(dict(criteria.planner_settings))
    plan = plan_table(collect_table_state(table, now_millis=now), settings, now_millis=now, last_success={})
    compact = plan.action("compact")
    new_state = replace(moved, over_budget=compact is not None)
    if compact is None or state.over_budget is True:
        return None, new_state
    payload = {
        **_head_payload(table, head, base),
        "compaction": compact.to_dict(),
        "health_score": plan.health_score,
        "compaction_debt": plan.compaction_debt,
        "violations": [compact.reason],
    }
    return payload, new_state


def as_tuple(values: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """``"APPEND,COMPACT"`` or a list as a tuple of upper-case names (``None`` stays ``None``)."""
    if values is None:
        return None
    items = values.split(",") if isinstance(values, str) else list(values)
    out = tuple(v.strip().upper() for v in items if v and v.strip())
    return out or None
