"""TagResult: what a tag call (create, replace, rename) did, as the other maintenance results.

``table.maintenance.create_tag(...)`` and its siblings return this instead of the tag's
:class:`~paimon_core.snapshot.snapshot.Snapshot`: a frozen record with ``to_dict()`` (JSON-safe, for
XCom and a job's result line), the tag's snapshot summary under the keys the maintenance ledger
records for a tag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot

__all__ = ["TagResult"]


@dataclass(frozen=True)
class TagResult(_ToDict):
    """The tag ``tag`` of ``table`` and the snapshot it holds (with ``dry_run``: would hold)."""

    table: str
    tag: str
    snapshot_id: int
    schema_id: int
    commit_time_millis: int
    commit_kind: str
    record_count: int
    watermark: int | None = None
    tag_create_time: tuple[int, ...] | None = None  # Java's LocalDateTime fields, as written
    tag_time_retained: str | None = None
    dry_run: bool = False
    previous_snapshot_id: int | None = None  # replace_tag: the snapshot the tag held before
    renamed_from: str | None = None  # rename_tag: the tag's old name

    @classmethod
    def of(
        cls,
        table: str,
        tag: str,
        snapshot: Snapshot,
        *,
        dry_run: bool = False,
        previous_snapshot_id: int | None = None,
        renamed_from: str | None = None,
    ) -> TagResult:
        """The result for ``tag`` holding ``snapshot`` (a tag file or the snapshot a dry run picked)."""
        created = snapshot.tag_create_time
        return cls(
            table=table,
            tag=tag,
            snapshot_id=snapshot.id,
            schema_id=snapshot.schema_id,
            commit_time_millis=snapshot.time_millis,
            commit_kind=str(snapshot.commit_kind),
            record_count=snapshot.total_record_count,
            watermark=snapshot.watermark,
            tag_create_time=None if created is None else tuple(created),
            tag_time_retained=snapshot.tag_time_retained,
            dry_run=dry_run,
            previous_snapshot_id=previous_snapshot_id,
            renamed_from=renamed_from,
        )
