"""Rollback (Java's ``RollbackHelper`` and ``AbstractFileStoreTable.rollbackTo``, Paimon 1.2+).

A destructive rollback is metadata-only: it moves the LATEST hint to the target, deletes the
snapshot files after it (missing ones are skipped), the long-lived changelogs after it and
the tags of later snapshots. Data and manifest files are left for ``remove_orphan_files``
(Paimon PR #5712). Rolling back to a tag whose snapshot has expired writes the tag back as
``snapshot-N`` and moves EARLIEST. ``rollback_to_as_latest`` (in ``rollback_as_latest.py``)
instead commits a new snapshot with the target's content and keeps all history.

Targets: an ``int`` is a snapshot id; if that snapshot has expired, a tag on it is used (Java).
A ``str`` is a tag name; a numeric string that names no tag is read as a snapshot id (Spark's
``rollback(version => '5')``).

Concurrency. Stop writers first (Paimon's advice). Still, a commit that lands during the
rollback must not be lost silently:

* before deleting anything, the latest snapshot id is checked again (a change: nothing done);
* snapshot files are deleted newest first, then the snapshot directory is listed again. New
  snapshots that continue the target (``target+1, target+2, ...``) were committed on top of the
  rolled-back state and are kept. Any other new snapshot was based on a snapshot this rollback
  deleted: the deleted snapshot files are written back (no-overwrite), LATEST is restored and a
  :class:`CommitConflictError` is raised; tags and changelogs are only deleted after this check.

Not guaranteed: a commit that read a pre-rollback snapshot but publishes *after* that final
listing (the committer does not re-check its parent), and, on stores whose no-overwrite publish
is not atomic (``FileIO.atomic_publish_is_safe`` False, e.g. plain S3 without conditional
writes), the restore can race a committer. Use the catalog's ``commit_lock`` or stop writers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import (
    CommitConflictError,
    InvalidArgumentError,
    SnapshotNotFoundError,
    TagNotFoundError,
)
from paimon_core.path_confinement import check_snapshot_names
from paimon_core.results import _ToDict
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.tag.tag_manager import trim_to_snapshot
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RollbackResult(_ToDict):
    """What a rollback did (or, with ``dry_run``, would do).

    ``previous_snapshot_id``/``current_snapshot_id`` are the latest snapshot before and after,
    as Paimon's procedures return them; ``target_snapshot_id`` is the state rolled back to.
    """

    table: str
    previous_snapshot_id: int
    current_snapshot_id: int
    target_snapshot_id: int
    target_tag: str | None = None
    deleted_snapshot_ids: tuple[int, ...] = ()
    deleted_tags: tuple[str, ...] = ()
    deleted_changelogs: tuple[int, ...] = ()
    restored_snapshot_from_tag: bool = False  # the target's snapshot file was written back from its tag
    created_tag: str | None = None  # rollback_to_as_latest of a snapshot id tags the target (Java)
    kept_snapshot_ids: tuple[int, ...] = ()  # commits that landed on top of the target meanwhile
    dry_run: bool = False


@dataclass(frozen=True)
class _Plan:
    latest_id: int
    target: Snapshot
    target_tag: str | None
    restore_from_tag: bool
    snapshot_ids: tuple[int, ...]
    tags: tuple[str, ...]
    changelogs: tuple[int, ...]


class RollbackHelper:
    """Rolls one table back to a snapshot or tag."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.file_io = table.file_io
        self.snapshots = table.snapshot_manager
        self.tags = table.tag_manager
        self.changelogs = ChangelogManager(table.file_io, table.paths)

    # --- entry points ------------------------------------------------------------------------
    def rollback_to(self, target: int | str, *, dry_run: bool = False) -> RollbackResult:
        """Make ``target`` (snapshot id or tag) the latest snapshot, deleting what came after it."""
        snapshot, tag = self.resolve(target)
        plan = self._plan(snapshot, tag)
        if dry_run:
            return self._result(plan, plan.snapshot_ids, plan.tags, plan.changelogs, (), dry_run=True)
        return self._execute(plan)

    def rollback_to_timestamp(self, timestamp: TimePoint, *, dry_run: bool = False) -> RollbackResult:
        """Roll back to the newest snapshot committed at or before ``timestamp``."""
        ts = to_epoch_millis(timestamp, name="timestamp")
        self._latest_id()
        snap = self.snapshots.earlier_or_equal_time_millis(ts)
        if snap is None:
            raise SnapshotNotFoundError(
                f"Cannot roll back {self.table.name}: no snapshot was committed at or before {ts}", timestamp=ts
            )
        return self.rollback_to(snap.id, dry_run=dry_run)

    def rollback_to_as_latest(self, target: int | str, *, dry_run: bool = False) -> RollbackResult:
        """Commit a new OVERWRITE snapshot whose content is the target's; history and tags stay."""
        from paimon_core.table.rollback_as_latest import rollback_to_as_latest

        snapshot, tag = self.resolve(target)
        return rollback_to_as_latest(self.table, snapshot, tag, dry_run=dry_run)

    # --- target ------------------------------------------------------------------------------
    def resolve(self, target: int | str) -> tuple[Snapshot, str | None]:
        """(snapshot to roll back to, the tag it came from); its file names checked
        (:class:`UnsafePathError` for a name pointing outside the table)."""
        snapshot, tag = self._resolve(target)
        check_snapshot_names(snapshot, what="snapshot" if tag is None else f"tag '{tag}' of snapshot")
        return snapshot, tag

    def _resolve(self, target: int | str) -> tuple[Snapshot, str | None]:
        if isinstance(target, bool) or not isinstance(target, int | str):
            raise InvalidArgumentError(f"Rollback target must be a snapshot id or a tag name, got {target!r}")
        if isinstance(target, int):
            snap = self.snapshots.try_snapshot(target)
            if snap is not None:
                return snap, None
            for tagged, names in self.tags.tags_by_snapshot():
                if tagged.id == target:
                    return tagged, names[0]
            self.snapshots.snapshot(target)  # raises SnapshotNotFoundError naming the live range
            raise SnapshotNotFoundError(f"Snapshot {target} does not exist", snapshot_id=target)  # pragma: no cover
        tag = self.tags.try_get(target)
        if tag is not None:
            return trim_to_snapshot(tag), target
        if target.strip().isdigit():
            return self._resolve(int(target.strip()))
        raise TagNotFoundError(f"Cannot roll back {self.table.name}: tag '{target}' does not exist", tag=target)

    def _latest_id(self) -> int:
        latest = self.snapshots.latest_snapshot_id()
        if latest is None:
            raise SnapshotNotFoundError(f"Cannot roll back {self.table.name}: it has no snapshot")
        return latest

    # --- destructive rollback ----------------------------------------------------------------
    def _plan(self, target: Snapshot, tag: str | None) -> _Plan:
        latest = self._latest_id()
        restore = not self.snapshots.snapshot_exists(target.id)
        if target.id > latest:
            raise InvalidArgumentError(f"Cannot roll back {self.table.name} to snapshot {target.id}: latest is {latest}")
        return _Plan(
            latest_id=latest,
            target=target,
            target_tag=tag,
            restore_from_tag=restore,
            snapshot_ids=tuple(i for i in self.snapshots.list_snapshot_ids() if i > target.id),
            tags=tuple(n for tagged, names in self.tags.tags_by_snapshot() if tagged.id > target.id for n in names),
            changelogs=tuple(i for i in self.changelogs.list_ids() if i > target.id),
        )

    def _execute(self, plan: _Plan) -> RollbackResult:
        sm, target = self.snapshots, plan.target
        saved = {sid: self._read_or_none(sid) for sid in plan.snapshot_ids}
        old_earliest = sm.earliest_snapshot_id()
        if sm.latest_snapshot_id() != plan.latest_id:
            raise CommitConflictError(
                f"Rollback of {self.table.name} aborted: a commit landed while it was planned "
                f"(latest moved from {plan.latest_id} to {sm.latest_snapshot_id()}); nothing was changed"
            )
        sm.commit_latest_hint(target.id)
        deleted = []
        for sid in sorted(plan.snapshot_ids, reverse=True):
            if self.file_io.delete(sm.snapshot_path(sid)):
                deleted.append(sid)
        restored = False
        if plan.restore_from_tag:
            restored = self.file_io.try_write_atomic(sm.snapshot_path(target.id), trim_to_snapshot(target).to_json().encode())
            sm.commit_earliest_hint(target.id)
        appeared = [i for i in sm.list_snapshot_ids() if i > target.id]
        if appeared != list(range(target.id + 1, target.id + 1 + len(appeared))):
            self._undo(plan, saved, restored, old_earliest, appeared)
        if appeared:
            logger.warning(
                "Snapshots %s of %s were committed on top of rollback target %d while it ran; kept",
                appeared,
                self.table.name,
                target.id,
            )
            sm.commit_latest_hint(appeared[-1])
        deleted_changelogs = self._delete_changelogs(plan)
        deleted_tags = tuple(n for n in plan.tags if self.tags.delete(n))
        logger.info(
            "Rolled back %s from snapshot %d to %d%s: deleted %d snapshot(s), %d tag(s), %d changelog(s)",
            self.table.name,
            plan.latest_id,
            target.id,
            f" (tag {plan.target_tag})" if plan.target_tag else "",
            len(deleted),
            len(deleted_tags),
            len(deleted_changelogs),
        )
        return self._result(plan, tuple(sorted(deleted)), deleted_tags, deleted_changelogs, tuple(appeared), dry_run=False)

    def _read_or_none(self, sid: int) -> bytes | None:
        try:
            return self.file_io.read_bytes(self.snapshots.snapshot_path(sid))
        except FileNotFoundError:
            return None

    def _undo(
        self, plan: _Plan, saved: dict[int, bytes | None], restored: bool, old_earliest: int | None, appeared: list[int]
    ) -> None:
        """Put the deleted snapshots back after a conflicting commit, then raise."""
        sm = self.snapshots
        lost = []
        for sid, data in sorted(saved.items()):
            if data is not None and not self.file_io.try_write_atomic(sm.snapshot_path(sid), data):
                lost.append(sid)
        if restored:
            self.file_io.delete(sm.snapshot_path(plan.target.id))
            if old_earliest is not None:
                sm.commit_earliest_hint(old_earliest)
        ids = sm.list_snapshot_ids()
        if ids:
            sm.commit_latest_hint(ids[-1])
        state = (
            "the rollback was undone (all deleted snapshots were written back)"
            if not lost
            else f"snapshot id(s) {lost} were taken by other commits and could not be written back"
        )
        raise CommitConflictError(
            f"Rollback of {self.table.name} to snapshot {plan.target.id} conflicted with concurrent commit(s) "
            f"{appeared} based on snapshots it was deleting: {state}; tags and changelogs are untouched. "
            "Stop writers and retry.",
            snapshot_id=plan.target.id,
        )

    def _delete_changelogs(self, plan: _Plan) -> tuple[int, ...]:
        if not plan.changelogs:
            return ()
        remaining = [i for i in self.changelogs.list_ids() if i <= plan.target.id]
        # Java: LATEST hint first (-1 when none is left), then the files.
        self.changelogs.commit_latest_hint(remaining[-1] if remaining else -1)
        return tuple(i for i in sorted(plan.changelogs, reverse=True) if self.changelogs.delete(i))[::-1]

    def _result(
        self,
        plan: _Plan,
        snapshots: tuple[int, ...],
        tags: tuple[str, ...],
        changelogs: tuple[int, ...],
        kept: tuple[int, ...],
        *,
        dry_run: bool,
    ) -> RollbackResult:
        return RollbackResult(
            table=self.table.name,
            previous_snapshot_id=plan.latest_id,
            current_snapshot_id=kept[-1] if kept else plan.target.id,
            target_snapshot_id=plan.target.id,
            target_tag=plan.target_tag,
            deleted_snapshot_ids=snapshots,
            deleted_tags=tags,
            deleted_changelogs=changelogs,
            restored_snapshot_from_tag=plan.restore_from_tag,
            kept_snapshot_ids=kept,
            dry_run=dry_run,
        )
