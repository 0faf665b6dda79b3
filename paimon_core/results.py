"""Typed results of mutating operations; each has ``to_dict()`` (JSON-safe)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


class _ToDict:
    def to_dict(self) -> dict[str, Any]:
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_jsonable(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if hasattr(v, "value") and not isinstance(v, int | str | float):
        return v.value
    return v


@dataclass(frozen=True)
class CommitResult(_ToDict):
    """Outcome of one commit call."""

    table: str
    snapshot_id: int | None  # None: nothing to commit, or already committed earlier
    commit_kind: str | None
    commit_user: str
    commit_identifier: int
    added_files: int = 0
    deleted_files: int = 0
    added_rows: int = 0
    deleted_rows: int = 0
    attempts: int = 0
    already_committed: bool = False
    snapshot_ids: tuple[int, ...] = ()  # all snapshots this call made (append + compact)
    # post-commit maintenance (operation/commit_maintenance.py; off with write-only=true)
    expired_snapshots: int = 0
    created_tags: tuple[str, ...] = ()
    maintenance_error: str | None = None  # the commit landed; its maintenance did not
    expired_partitions: tuple[str, ...] = ()  # dropped by partition.expiration-time
