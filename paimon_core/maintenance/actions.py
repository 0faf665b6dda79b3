"""What the planner returns: planned actions, a table's plan, and the wording of its reasons.

Action names are the maintenance ledger's vocabulary (``compact``, ``compact_manifest``,
``create_tag``, ``trigger_tag_automatic_creation``, ``expire_tags``, ``expire_partitions``,
``expire_snapshots``, ``expire_changelogs``, ``remove_orphan_files``), so a planned action, the
executor's item and the ledger row all use the same name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paimon_core.maintenance.executor import ACTION_ORDER
from paimon_core.maintenance.table_state import TableState
from paimon_core.results import _ToDict

__all__ = [
    "LIGHT_ACTIONS",
    "Need",
    "PlannedAction",
    "TablePlan",
    "files_for",
    "fmt_bytes",
    "fmt_duration",
    "fmt_time",
]

MIB = 1024 * 1024

#: Metadata actions: every action the executor runs but ``compact``; cheap, run in the task
#: process, never limited by the rewrite budget.
LIGHT_ACTIONS = frozenset(ACTION_ORDER) - {"compact"}


@dataclass(frozen=True)
class PlannedAction(_ToDict):
    """One action a table needs now.

    ``reason`` names the numbers and the option that made it due; ``bytes_to_read`` /
    ``bytes_to_write`` estimate the data the action rewrites (compactions; 0 for metadata
    actions), ``files_to_delete`` the files it deletes now; ``gain`` is what it removes (sorted
    runs and small files, snapshots, tags, partitions, manifests; for orphan cleanup the age of
    the last clean in intervals), ``priority`` the gain over the cost (higher first; ``urgent``
    actions, e.g. writers stalled at ``num-sorted-run.stop-trigger``, before all others).
    ``needs_spark``: a compaction too big for the task process. ``args``: the keyword arguments
    of the table call (:func:`paimon_core.maintenance.executor.execute_action`).
    """

    action: str
    reason: str
    bytes_to_read: int = 0
    bytes_to_write: int = 0
    files_to_delete: int = 0
    gain: float = 0.0
    priority: float = 0.0
    needs_spark: bool = False
    args: Mapping[str, Any] = field(default_factory=dict)
    urgent: bool = False

    @property
    def light(self) -> bool:
        return self.action in LIGHT_ACTIONS

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["args"] = dict(self.args)
        return out

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> PlannedAction:
        return PlannedAction(
            action=str(raw["action"]),
            reason=str(raw.get("reason") or ""),
            bytes_to_read=int(raw.get("bytes_to_read") or 0),
            bytes_to_write=int(raw.get("bytes_to_write") or 0),
            files_to_delete=int(raw.get("files_to_delete") or 0),
            gain=float(raw.get("gain") or 0.0),
            priority=float(raw.get("priority") or 0.0),
            needs_spark=bool(raw.get("needs_spark")),
            args=dict(raw.get("args") or {}),
            urgent=bool(raw.get("urgent")),
        )


@dataclass(frozen=True)
class TablePlan(_ToDict):
    """What one table needs now: ``actions`` (in the pass order), and for every action it does
    not need, why (``skipped_reasons``: action -> sentence)."""

    table: str
    state: TableState
    actions: tuple[PlannedAction, ...]
    skipped_reasons: Mapping[str, str]
    planned_at_millis: int

    @property
    def compaction_debt(self) -> float:
        return self.state.compaction_debt

    @property
    def health_score(self) -> int:
        return self.state.health_score

    def action(self, name: str) -> PlannedAction | None:
        return next((a for a in self.actions if a.action == name), None)

    def to_dict(self, *, include_state: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "table": self.table,
            "planned_at_millis": self.planned_at_millis,
            "health_score": self.health_score,
            "compaction_debt": self.compaction_debt,
            "actions": [a.to_dict() for a in self.actions],
            "skipped_reasons": dict(self.skipped_reasons),
        }
        if include_state:
            out["state"] = self.state.to_dict()
        return out

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> TablePlan:
        """A plan :meth:`to_dict` wrote (with its state)."""
        return TablePlan(
            table=str(raw["table"]),
            state=TableState.from_dict(raw["state"]),
            actions=tuple(PlannedAction.from_dict(a) for a in raw.get("actions") or ()),
            skipped_reasons={str(k): str(v) for k, v in (raw.get("skipped_reasons") or {}).items()},
            planned_at_millis=int(raw["planned_at_millis"]),
        )


@dataclass(frozen=True)
class Need:
    """One rule's verdict on one table: the action (or why none), and since when it has been
    needed (None: unknown or not needed), which the lag alerts compare with the grace."""

    action: str
    planned: PlannedAction | None = None
    skipped: str | None = None
    needed_since_millis: int | None = None


# --- wording ---------------------------------------------------------------------------------
def fmt_bytes(n: float) -> str:
    """``512 B``, ``3.2 KiB``, ``64.0 MiB``, ``1.50 GiB``."""
    if n < 1024:
        return f"{int(n)} B"
    if n < MIB:
        return f"{n / 1024:.1f} KiB"
    if n < 1024 * MIB:
        return f"{n / MIB:.1f} MiB"
    return f"{n / (1024 * MIB):.2f} GiB"


def fmt_duration(ms: float) -> str:
    """``45 s``, ``20 min``, ``3 h``, ``2 d 4 h`` (rounded down)."""
    s = int(ms // 1000)
    if s < 120:
        return f"{s} s"
    m = s // 60
    if m < 120:
        return f"{m} min"
    h = m // 60
    if h < 48:
        return f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} d {h} h" if h else f"{d} d"


def fmt_time(ms: int) -> str:
    """UTC ISO time to the minute: ``2026-11-02 00:00 UTC``."""
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def files_for(bytes_: int, target: int) -> int:
    """Files of ``target`` size that ``bytes_`` make (at least one when there are bytes)."""
    if bytes_ <= 0:
        return 0
    return max(1, math.ceil(bytes_ / max(1, target)))
