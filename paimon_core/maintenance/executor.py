"""Run the actions a maintenance pass planned, many tables in one process (the batch executor).

The planner (:mod:`paimon_core.maintenance.planner`) says which actions each table needs; this
module carries them out through the table facade (``table.compact``, ``table.expire_snapshots``,
...), so each action is exactly the call a person would make and records its ledger row the same
way. One batch holds the actions of many tables; per table they run in the pass order
(compaction, tags, partition expiry, snapshot expiry, orphan cleanup), and a failed action stops
that table's later actions (as a failed upstream task would) while the other tables go on.

Retries are safe: a compaction commits under the caller's commit user and identifier (a retry of
a landed one commits nothing), and expiry, tag creation and orphan cleanup leave the same table
when run twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import TerminalError
from paimon_core.ledger.metrics import status_of
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "ACTION_ORDER",
    "ActionItem",
    "ActionOutcome",
    "BatchResult",
    "execute_action",
    "execute_batch",
    "order_items",
]

logger = logging.getLogger(__name__)

#: The order of a table's actions within one pass (Paimon's: compact, then tag, then expire, then
#: clean; orphan cleanup last so it never races the table's own compaction).
ACTION_ORDER = (
    "compact",
    "compact_manifest",
    "create_tag",
    "trigger_tag_automatic_creation",
    "expire_tags",
    "expire_partitions",
    "expire_snapshots",
    "expire_changelogs",
    "remove_orphan_files",
)

DAY_MILLIS = 86_400_000


@dataclass(frozen=True)
class ActionItem(_ToDict):
    """One action of one table, as the pass's plan hands it to an executor."""

    table: str
    action: str
    args: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> ActionItem:
        return ActionItem(
            table=str(raw["table"]),
            action=str(raw["action"]),
            args=dict(raw.get("args") or {}),
            reason=str(raw.get("reason") or ""),
        )


@dataclass(frozen=True)
class ActionOutcome(_ToDict):
    """What one action did: ``status`` is ``success``, ``no_op``, ``dry_run``, ``skipped`` or ``failed``."""

    table: str
    action: str
    status: str
    seconds: float
    result: Mapping[str, Any] | None = None
    error: str | None = None
    terminal: bool = False  # a failure that a retry cannot fix (TerminalError: bad argument, missing table)


@dataclass(frozen=True)
class BatchResult(_ToDict):
    """Every action of one batch, in the order they ran."""

    outcomes: tuple[ActionOutcome, ...]

    @property
    def failed(self) -> tuple[ActionOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "failed")

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.outcomes:
            out[o.status] = out.get(o.status, 0) + 1
        return out


def order_items(items: Iterable[ActionItem]) -> list[ActionItem]:
    """``items`` grouped by table (tables in first-seen order), each table's in :data:`ACTION_ORDER`."""
    rank = {a: i for i, a in enumerate(ACTION_ORDER)}
    tables: dict[str, list[ActionItem]] = {}
    for item in items:
        tables.setdefault(item.table, []).append(item)
    out: list[ActionItem] = []
    for group in tables.values():
        out.extend(sorted(group, key=lambda i: rank.get(i.action, len(rank))))
    return out


def _create_tag(table: FileStoreTable, args: Mapping[str, Any]) -> dict[str, Any]:
    """Tag ``args['tag_name']`` on the latest snapshot at or before ``snapshot_time_millis``
    (default: the latest); an existing tag is left alone (``created`` false)."""
    from paimon_core.exceptions import InvalidArgumentError, TagAlreadyExistsError

    name = str(args.get("tag_name") or "").strip()
    if not name:
        raise InvalidArgumentError(f"create_tag on {table.name} needs a tag_name", argument="tag_name")
    existing = table.tag_manager.try_get(name)
    if existing is not None:
        return {"tag_name": name, "created": False, "reason": "exists", "snapshot_id": existing.id}
    at = args.get("snapshot_time_millis")
    sm = table.snapshot_manager
    snapshot = sm.latest_snapshot() if at is None else sm.earlier_or_equal_time_millis(int(at))
    if snapshot is None:
        return {"tag_name": name, "created": False, "reason": "no_snapshot", "snapshot_time_millis": at}
    try:
        tag = table.maintenance.create_tag(name, snapshot.id, time_retained=args.get("time_retained") or None)
    except TagAlreadyExistsError:  # another writer created it since try_get
        raced = table.tag_manager.try_get(name)
        if raced is None:
            raise
        return {"tag_name": name, "created": False, "reason": "exists", "snapshot_id": raced.id}
    return {"tag_name": name, "created": True, "snapshot_id": tag.snapshot_id}


def execute_action(
    table: FileStoreTable,
    action: str,
    args: Mapping[str, Any],
    *,
    commit_user: str,
    now_millis: int,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Run one planned ``action`` on ``table``; its result's ``to_dict()`` (JSON-safe).

    ``args`` are the planner's arguments of the action; ``commit_user`` makes a compaction's
    commit idempotent (identifier 1); ``now_millis`` anchors orphan cleanup's cutoff
    (``orphan_min_age_days`` before it, at least one day)."""
    from paimon_core.exceptions import InvalidArgumentError

    if action == "compact":
        return table.maintenance.compact(
            compact_strategy=str(args.get("compact_strategy") or "minor"),
            partitions=args.get("partitions") or None,
            partition_idle_time=args.get("partition_idle_time") or None,
            commit_user=commit_user,
            commit_identifier=1,
            dry_run=dry_run,
        ).to_dict()
    if action == "compact_manifest":
        return table.maintenance.compact_manifest(dry_run=dry_run).to_dict()
    if action == "create_tag":
        if dry_run:
            return {"tag_name": args.get("tag_name"), "created": False, "reason": "dry_run"}
        return _create_tag(table, args)
    if action == "trigger_tag_automatic_creation":
        if dry_run:
            return {"created_tags": [], "dry_run": True}
        return table.maintenance.trigger_tag_automatic_creation(now=now_millis).to_dict()
    if action == "expire_tags":
        return table.maintenance.expire_tags(dry_run=dry_run).to_dict()
    if action == "expire_partitions":
        return table.maintenance.expire_partitions(args.get("expiration_time") or None, dry_run=dry_run).to_dict()
    if action == "expire_snapshots":
        return table.maintenance.expire_snapshots(
            retain_max=args.get("retain_max"), retain_min=args.get("retain_min"), dry_run=dry_run
        ).to_dict()
    if action == "expire_changelogs":
        return table.maintenance.expire_changelogs(dry_run=dry_run).to_dict()
    if action == "remove_orphan_files":
        days = max(1, int(args.get("older_than_days") or 1))
        cutoff = now_millis - days * DAY_MILLIS
        out = table.maintenance.remove_orphan_files(older_than=cutoff, dry_run=dry_run).to_dict()
        out.setdefault("older_than_millis", cutoff)
        return out
    raise InvalidArgumentError(f"the maintenance executor cannot run action {action!r}", argument="action")


def execute_batch(
    get_table: Callable[[str], FileStoreTable],
    items: Sequence[ActionItem],
    *,
    commit_user_of: Callable[[str], str],
    now_millis: int,
    dry_run: bool = False,
    is_terminal: Callable[[BaseException], bool] = lambda e: isinstance(e, TerminalError),
    clock: Callable[[], float] = time.monotonic,
) -> BatchResult:
    """Run ``items`` table by table (:func:`order_items`); a failed action skips the table's later
    actions; one table's failure never stops another's. Never raises for an action's error: the
    caller reads :attr:`BatchResult.failed` (and fails its task after the whole batch ran);
    ``is_terminal`` says which errors a retry cannot fix (default: :class:`TerminalError`)."""
    outcomes: list[ActionOutcome] = []
    broken: dict[str, str] = {}
    tables: dict[str, FileStoreTable] = {}
    for item in items:  # an action this executor cannot run fails its table before anything runs
        if item.action not in ACTION_ORDER and item.table not in broken:
            broken[item.table] = item.action
            error = f"InvalidArgumentError: the maintenance executor cannot run action {item.action!r}"
            outcomes.append(ActionOutcome(item.table, item.action, "failed", 0.0, error=error, terminal=True))
    for item in order_items(items):
        if item.action not in ACTION_ORDER and broken.get(item.table) == item.action:
            continue  # reported above
        if item.table in broken:
            outcomes.append(
                ActionOutcome(
                    item.table, item.action, "skipped", 0.0, error=f"skipped after {broken[item.table]} failed"
                )
            )
            continue
        started = clock()
        try:
            table = tables.get(item.table)
            if table is None:
                table = tables[item.table] = get_table(item.table)
            result = execute_action(
                table,
                item.action,
                item.args,
                commit_user=commit_user_of(item.table),
                now_millis=now_millis,
                dry_run=dry_run,
            )
        except Exception as e:  # noqa: BLE001 - reported per action; the batch goes on
            logger.warning("Maintenance %s of %s failed: %s: %s", item.action, item.table, type(e).__name__, e)
            broken[item.table] = item.action
            outcomes.append(
                ActionOutcome(
                    item.table,
                    item.action,
                    "failed",
                    clock() - started,
                    error=f"{type(e).__name__}: {e}",
                    terminal=is_terminal(e),
                )
            )
            continue
        status = status_of(item.action, result, dry_run=dry_run)
        logger.info("Maintenance %s of %s: %s", item.action, item.table, status)
        outcomes.append(ActionOutcome(item.table, item.action, status, clock() - started, result=result))
    return BatchResult(tuple(outcomes))
