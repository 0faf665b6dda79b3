"""The planner's memory between passes: each table's last :class:`TableState`, in the warehouse.

One JSON document, ``<warehouse>/_maintenance/planner-state.json``, written by the planning task
at the end of each pass (one writer: the maintenance DAG runs one pass at a time) and read at the
start of the next: a table whose latest snapshot and schema have not changed since is then
re-planned from its saved state after one metadata read, not a manifest scan. The operator
console reads the same document for its warehouse overview.

It lives outside every ``<db>.db`` directory, so the catalog never lists it and no table's orphan
cleanup sees it. It is a cache: losing it (or a corrupt one, or one of another format version)
costs one full scan per table on the next pass, never a wrong plan.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paimon_core.maintenance.table_state import STATE_VERSION, TableState

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO

__all__ = ["STATE_DIR", "STATE_FILE", "PlannerStateStore", "SavedStates"]

logger = logging.getLogger(__name__)

STATE_DIR = "_maintenance"
STATE_FILE = "planner-state.json"


@dataclass(frozen=True)
class SavedStates:
    """What the last pass saved: when, and each table's state."""

    saved_millis: int | None
    states: Mapping[str, TableState]
    extra: Mapping[str, Any]


class PlannerStateStore:
    """Load and save the planner state document of one warehouse."""

    def __init__(self, file_io: FileIO, warehouse: str) -> None:
        from paimon_core.io.file_io import join

        self.file_io = file_io
        self.path = join(warehouse, STATE_DIR, STATE_FILE)

    def load(self) -> SavedStates:
        """The saved states; empty when there is no document or it cannot be used (logged)."""
        try:
            raw = json.loads(self.file_io.read_bytes(self.path))
        except FileNotFoundError:
            return SavedStates(None, {}, {})
        except (OSError, ValueError) as e:
            logger.warning("Planner state %s unreadable, every table is scanned: %s", self.path, e)
            return SavedStates(None, {}, {})
        if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION:
            return SavedStates(None, {}, {})
        states: dict[str, TableState] = {}
        for name, value in (raw.get("states") or {}).items():
            try:
                states[str(name)] = TableState.from_dict(value)
            except (KeyError, TypeError, ValueError) as e:
                logger.warning("Planner state of %s unreadable, it is scanned: %s", name, e)
        saved = raw.get("saved_millis")
        return SavedStates(int(saved) if isinstance(saved, int) else None, states, dict(raw.get("extra") or {}))

    def save(self, states: Mapping[str, TableState], *, now_millis: int, extra: Mapping[str, Any] | None = None) -> None:
        """Replace the document (``extra``: JSON-safe data for the console, e.g. the last pass's summary)."""
        doc = {
            "version": STATE_VERSION,
            "saved_millis": now_millis,
            "states": {name: state.to_dict() for name, state in sorted(states.items())},
            "extra": dict(extra or {}),
        }
        self.file_io.write_bytes(self.path, json.dumps(doc, separators=(",", ":")).encode(), overwrite=True)
