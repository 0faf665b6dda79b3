"""One maintenance pass over many tables: what runs now within the budget, what waits, in batches.

:func:`schedule_pass` takes every table's :class:`~paimon_core.maintenance.actions.TablePlan` and a
:class:`PassBudget` (bytes the pass's compactions may rewrite, Spark applications at once, an end
time) and picks:

* metadata actions (expiry, tags, manifest merges, orphan cleanup) always, unless the deadline
  leaves no time for them;
* compactions by the fairness ``policy`` (Amoro's two schedulers, for a pass instead of a
  standing queue), urgent ones (writers stalled at ``num-sorted-run.stop-trigger``) first:

  - ``balanced``: the table maintained longest ago first (``last_maintained``; never maintained
    first), then the highest priority;
  - ``quota``: highest priority (gain per byte rewritten) first, each table limited to its share of
    the budget (``quota_share``, default an equal share per table wanting compaction); budget its
    share leaves unused goes, in a second round, to the compactions that were over their share;

  while their bytes fit the budget and their estimated time fits before the deadline. The first
  compaction considered runs even if it alone is bigger than the whole budget (one oversize
  item, so a huge table is never starved), and then no other compaction does.

Everything not picked is the backlog, each with why; the next pass plans those tables again and,
under ``balanced``, takes them first (they were not maintained). The executors get
``light_batches`` (all light actions and small compactions of up to ``batch_size`` tables per
task instance, each table's actions together) and ``spark_groups`` (up to ``spark_group_size``
tables per Spark application, with the same compaction arguments), labelled by what they do.
A table compacted on Spark has its partition expiry deferred to the next pass, so the two
OVERWRITE/COMPACT commits never race.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.maintenance.actions import MIB, PlannedAction, TablePlan, fmt_bytes, fmt_duration
from paimon_core.results import _ToDict

__all__ = [
    "POLICIES",
    "BacklogItem",
    "LightBatch",
    "PassBudget",
    "PassSchedule",
    "ScheduledAction",
    "SparkGroup",
    "schedule_pass",
]

logger = logging.getLogger(__name__)

POLICIES = ("balanced", "quota")
GIB = 1024 * MIB
#: Label kinds of a light batch, in the order they are named.
_KINDS = (
    ("compact", ("compact",)),
    ("expire", ("expire_snapshots", "expire_partitions", "expire_tags", "expire_changelogs")),
    ("tags", ("create_tag", "trigger_tag_automatic_creation")),
    ("manifests", ("compact_manifest",)),
    ("orphans", ("remove_orphan_files",)),
)


@dataclass(frozen=True)
class PassBudget(_ToDict):
    """What one pass may spend, and the rates its time estimates use.

    ``max_rewrite_bytes``: bytes all compactions of the pass may read (None: no limit; 0: no
    compaction); ``spark_slots``: Spark applications at once (0: no Spark, big compactions wait);
    ``deadline_millis``: when the pass must be done (None: no deadline); ``batch_size`` /
    ``spark_group_size``: tables per light task instance / per Spark application;
    ``task_slots``: light batches running at once; ``quota_share``: a table's share of the budget
    under the ``quota`` policy (None: equal shares). The rates (bytes per second in the task
    process and per Spark slot, seconds per Spark application and per metadata action) only
    estimate whether the work fits before the deadline.
    """

    max_rewrite_bytes: int | None = 100 * GIB
    spark_slots: int = 2
    deadline_millis: int | None = None
    batch_size: int = 200
    spark_group_size: int = 8
    task_slots: int = 2
    quota_share: float | None = None
    in_process_bytes_per_second: float = 16 * MIB
    spark_bytes_per_second: float = 32 * MIB
    spark_app_seconds: float = 30.0
    light_action_seconds: float = 0.5

    def __post_init__(self) -> None:
        for name in ("spark_slots",):
            _int(name, getattr(self, name), 0)
        for name in ("batch_size", "spark_group_size", "task_slots"):
            _int(name, getattr(self, name), 1)
        if self.max_rewrite_bytes is not None:
            _int("max_rewrite_bytes", self.max_rewrite_bytes, 0)
        if self.deadline_millis is not None:
            _int("deadline_millis", self.deadline_millis, 0)
        if self.quota_share is not None and not 0 < self.quota_share <= 1:
            raise InvalidArgumentError(
                f"quota_share must be in (0, 1], got {self.quota_share!r}", argument="quota_share"
            )
        for name in ("in_process_bytes_per_second", "spark_bytes_per_second"):
            if not getattr(self, name) > 0:
                raise InvalidArgumentError(f"{name} must be > 0, got {getattr(self, name)!r}", argument=name)
        for name in ("spark_app_seconds", "light_action_seconds"):
            if not getattr(self, name) >= 0:
                raise InvalidArgumentError(f"{name} must be >= 0, got {getattr(self, name)!r}", argument=name)

    @staticmethod
    def from_mapping(raw: Mapping[str, Any]) -> PassBudget:
        """A budget from a mapping of its fields; unknown keys are an error naming them."""
        known = {f.name for f in dataclasses.fields(PassBudget)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise InvalidArgumentError(
                f"unknown pass budget settings {unknown}; known: {sorted(known)}", argument=unknown[0]
            )
        return PassBudget(**dict(raw))


@dataclass(frozen=True)
class ScheduledAction(_ToDict):
    """A planned action picked for this pass; ``rank``: its place in the policy's order."""

    table: str
    action: PlannedAction
    rank: int

    def item(self) -> dict[str, Any]:
        """The executor's item (``paimon_core.maintenance.executor.ActionItem.from_dict``)."""
        return {
            "table": self.table,
            "action": self.action.action,
            "args": dict(self.action.args),
            "reason": self.action.reason,
        }


@dataclass(frozen=True)
class BacklogItem(_ToDict):
    """A planned action left for a later pass, and why."""

    table: str
    action: PlannedAction
    why: str
    rank: int


@dataclass(frozen=True)
class LightBatch(_ToDict):
    """The light actions (and small compactions) of some tables: one task instance."""

    label: str
    tables: tuple[str, ...]
    actions: tuple[ScheduledAction, ...]

    def to_dict(self) -> dict[str, Any]:
        """What ``PaimonMaintenanceBatchOperator`` takes: ``{"label", "items": [...]}``."""
        return {"label": self.label, "tables": list(self.tables), "items": [a.item() for a in self.actions]}


@dataclass(frozen=True)
class SparkGroup(_ToDict):
    """Compactions of several tables in one Spark application (the same arguments for all)."""

    label: str
    tables: tuple[str, ...]
    compact_strategy: str
    partition_idle_time: str | None
    bytes_to_read: int

    def to_dict(self) -> dict[str, Any]:
        """What ``PaimonCompactGroupOperator`` takes."""
        return {
            "label": self.label,
            "tables": list(self.tables),
            "compact_strategy": self.compact_strategy,
            "partition_idle_time": self.partition_idle_time,
            "bytes_to_read": self.bytes_to_read,
        }


@dataclass(frozen=True)
class PassSchedule(_ToDict):
    """The pass: what runs now (``selected``, in ``light_batches`` and ``spark_groups``) and the
    ``backlog``."""

    policy: str
    now_millis: int
    budget: PassBudget
    selected: tuple[ScheduledAction, ...]
    backlog: tuple[BacklogItem, ...]
    light_batches: tuple[LightBatch, ...]
    spark_groups: tuple[SparkGroup, ...]
    rewrite_bytes: int  # bytes the selected compactions read
    light_seconds: float  # estimated time of the light batches (over task_slots)
    spark_seconds: float  # estimated time of the Spark groups (over spark_slots)
    tables_planned: int = 0
    tables_with_work: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def estimated_seconds(self) -> float:
        return max(self.light_seconds, self.spark_seconds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "now_millis": self.now_millis,
            "budget": self.budget.to_dict(),
            "tables_planned": self.tables_planned,
            "tables_with_work": self.tables_with_work,
            "rewrite_bytes": self.rewrite_bytes,
            "light_seconds": round(self.light_seconds, 1),
            "spark_seconds": round(self.spark_seconds, 1),
            "selected": [{"table": s.table, "rank": s.rank, **s.action.to_dict()} for s in self.selected],
            "backlog": [
                {"table": b.table, "rank": b.rank, "why": b.why, **b.action.to_dict()} for b in self.backlog
            ],
            "batches": [b.to_dict() for b in self.light_batches],
            "spark_groups": [g.to_dict() for g in self.spark_groups],
            "notes": list(self.notes),
        }

    def summary_md(self, *, max_rows: int = 50) -> str:
        """A Markdown summary of the pass (for an approval form or a log)."""
        lines = [
            f"**Maintenance pass ({self.policy})**: {self.tables_with_work} of {self.tables_planned} tables need work; "
            f"{len(self.selected)} actions now ({len(self.light_batches)} batches, {len(self.spark_groups)} Spark groups), "
            f"{fmt_bytes(self.rewrite_bytes)} to rewrite, about {fmt_duration(self.estimated_seconds * 1000)}; "
            f"{len(self.backlog)} in backlog.",
            "",
        ]
        if self.selected:
            lines += ["| table | action | why |", "|---|---|---|"]
            lines += [
                f"| {s.table} | {s.action.action} | {_cell(s.action.reason)} |"
                for s in self.selected[:max_rows]
            ]
            if len(self.selected) > max_rows:
                lines.append(f"| ... | +{len(self.selected) - max_rows} more | |")
        if self.backlog:
            lines += ["", "**Backlog**", "", "| table | action | why it waits |", "|---|---|---|"]
            lines += [f"| {b.table} | {b.action.action} | {_cell(b.why)} |" for b in self.backlog[:max_rows]]
            if len(self.backlog) > max_rows:
                lines.append(f"| ... | +{len(self.backlog) - max_rows} more | |")
        lines += [f"- {n}" for n in self.notes]
        return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgumentError(f"{name} must be an integer >= {minimum}, got {value!r}", argument=name)


# --- scheduling -----------------------------------------------------------------------------------
@dataclass
class _Lanes:
    """Estimated busy seconds of the two lanes (light task instances, Spark applications)."""

    budget: PassBudget
    light: float = 0.0  # summed over actions; divided by task_slots
    spark: float = 0.0  # summed over compactions; divided by spark_slots
    remaining: float = math.inf  # seconds until the deadline

    def light_fits(self, seconds: float) -> bool:
        return (self.light + seconds) / self.budget.task_slots <= self.remaining

    def spark_fits(self, seconds: float) -> bool:
        return (
            self.budget.spark_slots > 0 and (self.spark + seconds) / self.budget.spark_slots <= self.remaining
        )


def _light_seconds(a: PlannedAction, budget: PassBudget, state_files: int) -> float:
    seconds = budget.light_action_seconds
    if a.action == "remove_orphan_files":
        seconds += state_files / 20_000  # listing and reference checks, ~20k files/s
    seconds += a.bytes_to_read / budget.in_process_bytes_per_second
    return seconds


def _spark_seconds(a: PlannedAction, budget: PassBudget) -> float:
    return (
        budget.spark_app_seconds / budget.spark_group_size + a.bytes_to_read / budget.spark_bytes_per_second
    )


def schedule_pass(
    plans: Sequence[TablePlan],
    budget: PassBudget,
    *,
    policy: str,
    now_millis: int,
    last_maintained: Mapping[str, int],
) -> PassSchedule:
    """Pick this pass's actions from ``plans`` within ``budget`` (see the module docstring).

    ``last_maintained``: table -> epoch millis of its last maintenance (missing: never), the
    ``balanced`` order. Every planned action ends up exactly once in ``selected`` or ``backlog``.
    """
    if policy not in POLICIES:
        raise InvalidArgumentError(
            f"policy must be one of {', '.join(POLICIES)}; got {policy!r}", argument="policy"
        )
    names = [p.table for p in plans]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InvalidArgumentError(f"plans must hold each table once; repeated: {dup}", argument="plans")
    lanes = _Lanes(budget)
    if budget.deadline_millis is not None:
        lanes.remaining = (budget.deadline_millis - now_millis) / 1000.0
    files = {p.table: p.state.data_file_count + p.state.manifests.count for p in plans}
    order = _table_order(plans, policy, last_maintained)
    rank = {t: i for i, t in enumerate(order)}
    by_table = {p.table: p for p in plans}

    selected: list[ScheduledAction] = []
    backlog: list[BacklogItem] = []
    # 1. metadata actions, in the table order, urgent first; only the deadline stops them
    light = [(t, a) for t in order for a in by_table[t].actions if a.light]
    light.sort(key=lambda ta: (not ta[1].urgent, rank[ta[0]]))
    for t, a in light:
        seconds = _light_seconds(a, budget, files[t])
        if lanes.light_fits(seconds):
            lanes.light += seconds
            selected.append(ScheduledAction(t, a, rank[t]))
        else:
            backlog.append(BacklogItem(t, a, _deadline_why(budget, now_millis), rank[t]))
    # 2. compactions by the policy, within the rewrite budget and the deadline
    compactions = [(t, a) for t in order for a in by_table[t].actions if not a.light]
    compactions.sort(key=lambda ta: (not ta[1].urgent, rank[ta[0]]))
    picked, waiting = _pick_compactions(compactions, budget, policy, lanes, rank, now_millis)
    selected += picked
    backlog += waiting
    # 3. a table compacted on Spark expires its partitions next pass (no OVERWRITE racing it)
    on_spark = {s.table for s in picked if s.action.needs_spark}
    kept: list[ScheduledAction] = []
    for s in selected:
        if s.action.action == "expire_partitions" and s.table in on_spark:
            backlog.append(
                BacklogItem(s.table, s.action, "waits for the table's Spark compaction in this pass", s.rank)
            )
        else:
            kept.append(s)
    selected = sorted(kept, key=lambda s: (s.rank, s.action.light))
    backlog.sort(key=lambda b: (b.rank, b.action.action))
    rewrite = sum(s.action.bytes_to_read for s in selected if not s.action.light)
    batches = _light_batches(selected, budget.batch_size)
    groups = _spark_groups(selected, budget.spark_group_size)
    notes = []
    if budget.max_rewrite_bytes is not None and rewrite > budget.max_rewrite_bytes:
        notes.append(
            f"one compaction larger than the whole rewrite budget ({fmt_bytes(budget.max_rewrite_bytes)}) runs alone"
        )
    schedule = PassSchedule(
        policy=policy,
        now_millis=now_millis,
        budget=budget,
        selected=tuple(selected),
        backlog=tuple(backlog),
        light_batches=tuple(batches),
        spark_groups=tuple(groups),
        rewrite_bytes=rewrite,
        light_seconds=lanes.light / budget.task_slots,
        spark_seconds=0.0 if budget.spark_slots == 0 else lanes.spark / budget.spark_slots,
        tables_planned=len(plans),
        tables_with_work=sum(1 for p in plans if p.actions),
        notes=tuple(notes),
    )
    logger.info(
        "Pass (%s): %d actions selected in %d batches and %d Spark groups, %s to rewrite; %d in backlog",
        policy,
        len(schedule.selected),
        len(batches),
        len(groups),
        fmt_bytes(rewrite),
        len(schedule.backlog),
    )
    return schedule


def _table_order(plans: Sequence[TablePlan], policy: str, last_maintained: Mapping[str, int]) -> list[str]:
    """Tables in the policy's order: ``balanced`` longest since last maintenance first (never
    first), ``quota`` highest priority first; ties by priority, then name."""

    def top(p: TablePlan) -> float:
        return max((a.priority for a in p.actions), default=0.0)

    if policy == "balanced":
        key = lambda p: (last_maintained.get(p.table, -math.inf), -top(p), p.table)  # noqa: E731
    else:
        key = lambda p: (-top(p), last_maintained.get(p.table, -math.inf), p.table)  # noqa: E731
    return [p.table for p in sorted(plans, key=key)]


def _deadline_why(budget: PassBudget, now_millis: int) -> str:
    if budget.deadline_millis is not None and budget.deadline_millis <= now_millis:
        return "the pass's deadline has passed"
    left = 0 if budget.deadline_millis is None else budget.deadline_millis - now_millis
    return f"does not fit before the pass's deadline ({fmt_duration(left)} left)"


def _pick_compactions(
    compactions: Sequence[tuple[str, PlannedAction]],
    budget: PassBudget,
    policy: str,
    lanes: _Lanes,
    rank: Mapping[str, int],
    now_millis: int,
) -> tuple[list[ScheduledAction], list[BacklogItem]]:
    limit = budget.max_rewrite_bytes
    share = (
        budget.quota_share
        if budget.quota_share is not None
        else 1.0 / max(1, len({t for t, _ in compactions}))
    )
    cap = None if limit is None or policy != "quota" else int(limit * share)
    used = 0
    oversize: str | None = None
    picked: list[ScheduledAction] = []
    waiting: list[BacklogItem] = []
    over_share: list[tuple[str, PlannedAction]] = []

    def time_ok(a: PlannedAction) -> tuple[bool, float]:
        if a.needs_spark:
            s = _spark_seconds(a, budget)
            return lanes.spark_fits(s), s
        s = a.bytes_to_read / budget.in_process_bytes_per_second + budget.light_action_seconds
        return lanes.light_fits(s), s

    def take(t: str, a: PlannedAction, seconds: float) -> None:
        nonlocal used
        used += a.bytes_to_read
        if a.needs_spark:
            lanes.spark += seconds
        else:
            lanes.light += seconds
        picked.append(ScheduledAction(t, a, rank[t]))

    def consider(t: str, a: PlannedAction, *, second_round: bool) -> None:
        nonlocal oversize
        size = a.bytes_to_read
        if limit == 0:
            waiting.append(BacklogItem(t, a, "the pass's rewrite budget is 0", rank[t]))
            return
        if a.needs_spark and budget.spark_slots == 0:
            waiting.append(BacklogItem(t, a, "needs Spark and the pass has no Spark slots", rank[t]))
            return
        if oversize is not None:
            waiting.append(
                BacklogItem(
                    t, a, f"the rewrite budget went to the oversize compaction of {oversize}", rank[t]
                )
            )
            return
        fits_time, seconds = time_ok(a)
        alone = not picked and used == 0
        if (
            cap is not None
            and not second_round
            and size > cap
            and not (alone and limit is not None and size > limit)
        ):
            over_share.append((t, a))  # quota: over its share, waits for what the shares leave
            return
        if limit is not None and used + size > limit and not (alone and size > limit):
            left = max(0, limit - used)
            waiting.append(
                BacklogItem(
                    t,
                    a,
                    f"over the pass's rewrite budget: needs {fmt_bytes(size)}, {fmt_bytes(left)} of "
                    f"{fmt_bytes(limit)} left",
                    rank[t],
                )
            )
            return
        if not fits_time:
            waiting.append(BacklogItem(t, a, _deadline_why(budget, now_millis), rank[t]))
            return
        if limit is not None and size > limit:
            oversize = t
        take(t, a, seconds)

    for t, a in compactions:
        consider(t, a, second_round=False)
    for t, a in over_share:  # quota: what the shares left over goes to those over their share
        before = len(waiting)
        consider(t, a, second_round=True)
        if len(waiting) > before and cap is not None:
            last = waiting[-1]
            waiting[-1] = dataclasses.replace(last, why=f"{last.why} (its quota share is {fmt_bytes(cap)})")
    return picked, waiting


def _kinds_label(actions: Iterable[str]) -> str:
    present = set(actions)
    return "+".join(name for name, members in _KINDS if present & set(members)) or "other"


def _light_batches(selected: Sequence[ScheduledAction], size: int) -> list[LightBatch]:
    """Light actions and in-process compactions, ``size`` tables per batch, each table's together
    (tables in the pass order); labelled ``expire+tags 1-50`` by kind and table positions."""
    per_table: dict[str, list[ScheduledAction]] = {}
    for s in selected:
        if s.action.light or not s.action.needs_spark:
            per_table.setdefault(s.table, []).append(s)
    tables = list(per_table)
    out = []
    for start in range(0, len(tables), size):
        chunk = tables[start : start + size]
        actions = tuple(a for t in chunk for a in per_table[t])
        first, last = start + 1, start + len(chunk)
        span = str(first) if first == last else f"{first}-{last}"
        out.append(
            LightBatch(f"{_kinds_label(a.action.action for a in actions)} {span}", tuple(chunk), actions)
        )
    return out


def _spark_groups(selected: Sequence[ScheduledAction], size: int) -> list[SparkGroup]:
    """Spark compactions, up to ``size`` tables per application, grouped by their arguments
    (one ``compact_database`` run takes one strategy and idle time); labelled
    ``compact db.a, db.b +3``."""
    keyed: dict[tuple[str, str | None], list[ScheduledAction]] = {}
    for s in selected:
        if not s.action.light and s.action.needs_spark:
            args = s.action.args
            key = (str(args.get("compact_strategy") or "minor"), args.get("partition_idle_time"))
            keyed.setdefault(key, []).append(s)
    out = []
    for (strategy, idle), items in keyed.items():
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            tables = tuple(s.table for s in chunk)
            label = "compact " + ", ".join(tables[:2]) + (f" +{len(tables) - 2}" if len(tables) > 2 else "")
            out.append(SparkGroup(label, tables, strategy, idle, sum(s.action.bytes_to_read for s in chunk)))
    return out
