"""Automatic period tags (Java's ``TagAutoManager``: ``TagAutoCreation``, ``TagBatchCreation``
and ``TagTimeExpire``), run on demand, e.g. by a scheduled job, as of a time ``now``.

``tag.automatic-creation``:

* ``process-time`` / ``watermark``: replays Java's TagAutoCreation over the snapshots not yet
  covered (those after the newest auto tag), in id order, up to ``now``: a snapshot whose time
  (commit time, or watermark), minus ``tag.creation-delay``, reaches the end of the next
  period gets the tag of the last complete period before it (``tag.automatic-completion``:
  the next missing period instead). Progress is restored from the newest auto tag, exactly as
  Java does, so a Java writer and this job can take turns.
  For ``process-time`` the run then does what Java's forced snapshot does at period ends: when
  ``now - delay`` has passed the next period's end, the table's state as of ``now`` (the latest
  snapshot committed at or before ``now``) is tagged. If that snapshot already carries an auto
  tag (no commit since), an empty snapshot is committed to carry the new tag, as Java's writer
  forces one; when commits after ``now`` make that impossible, the period is reported in
  ``skipped`` (one snapshot never carries two auto tags: Java relies on it).
* ``batch``: tags the latest snapshot (at or before ``now``) with ``tag.batch.customized-name``
  or ``batch-write-<yyyy-MM-dd>``; a tag of that name on another snapshot is replaced.

Then ``tag.num-retained-max`` deletes the oldest *automatic* tags beyond the limit (manual tags
are never counted) and, if ``tag.time-expire-enabled``, tags past their retention expire.
Running twice with the same ``now`` creates nothing the second time.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paimon_core.exceptions import TagAlreadyExistsError
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot
from paimon_core.tag.tag_period import TagPeriodHandler, TagTimeExtractor, parse_zone, to_local_datetime
from paimon_core.tag.tag_time_expire import expire_tags_at
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

BATCH_WRITE_TAG_PREFIX = "batch-write-"


@dataclass(frozen=True)
class TagCreationResult(_ToDict):
    """What one run created and deleted."""

    table: str
    mode: str
    now_millis: int
    created_tags: tuple[str, ...] = ()
    expired_tags: tuple[str, ...] = ()  # by tag.num-retained-max and by time retained
    created_snapshot_ids: tuple[int, ...] = ()  # empty snapshots committed to carry a tag
    skipped: tuple[str, ...] = ()  # periods that could not be tagged, with the reason


@dataclass
class _Run:
    created: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class TagAutoCreation:
    """Creates and retires the automatic tags of one table."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.options = store.options
        self.mode = self.options.tag_automatic_creation.lower()
        self.extractor = TagTimeExtractor.for_auto_tag(self.options)
        self.delay = dt.timedelta(milliseconds=self.options.tag_creation_delay_ms)
        self.handler: TagPeriodHandler | None = None
        if self.extractor is not None:
            self.handler = TagPeriodHandler.create(self.options)
            self.handler.validate_delay(self.options.tag_creation_delay_ms)
        self.retained_ms = self.options.tag_default_time_retained_ms
        self._auto: dict[int, list[str]] | None = None  # snapshot id -> its auto tags, read once per run

    def run(self, *, now: TimePoint | None = None) -> TagCreationResult:
        now_ms = self.store.clock.now_millis() if now is None else to_epoch_millis(now, name="now")
        run = _Run()
        self._auto = None
        if self.mode == "batch":
            self._batch(now_ms, run)
        elif self.extractor is not None and self.handler is not None:
            self._periodic(self.handler, self.extractor, now_ms, run)
        if self.options.tag_time_expire_enabled:
            run.expired += expire_tags_at(self.store, now_millis=now_ms).expired_tags
        result = TagCreationResult(
            table=self.store.name,
            mode=self.mode,
            now_millis=now_ms,
            created_tags=tuple(run.created),
            expired_tags=tuple(run.expired),
            created_snapshot_ids=tuple(run.snapshots),
            skipped=tuple(run.skipped),
        )
        if run.created or run.expired or run.skipped:
            logger.info("Tag auto-creation on %s: %s", self.store.name, result.to_dict())
        return result

    # --- process-time / watermark -----------------------------------------------------------
    def _periodic(self, handler: TagPeriodHandler, extractor: TagTimeExtractor, now_ms: int, run: _Run) -> None:
        sm, tm = self.store.snapshot_manager, self.store.tag_manager
        next_tag, next_snapshot = self._restore(handler)
        covered = next_snapshot - 1  # the snapshot of the newest auto tag (or before the earliest)
        while True:  # Java's TagAutoCreation.run, bounded by ``now``
            snap = sm.try_snapshot(next_snapshot)
            if snap is None:
                earliest = sm.earliest_snapshot_id()
                if earliest is not None and earliest > next_snapshot:
                    next_snapshot = earliest
                    continue
                break
            if snap.time_millis > now_ms:
                break
            time = extractor.extract(snap.time_millis, snap.watermark)
            if time is not None and (next_tag is None or time - self.delay >= handler.next_tag_time(next_tag)):
                this_tag = handler.normalize_to_previous_tag(time)
                if self.options.tag_automatic_completion and next_tag is not None:
                    this_tag = next_tag
                self._tag(handler, handler.time_to_tag(this_tag), snap, run)
                next_tag = handler.next_tag_time(this_tag)
            next_snapshot += 1
        if extractor.mode == "process-time":
            now_local = to_local_datetime(now_ms, extractor.zone)
            while next_tag is None or now_local - self.delay >= handler.next_tag_time(next_tag):
                this_tag = handler.normalize_to_previous_tag(now_local)
                if self.options.tag_automatic_completion and next_tag is not None:
                    this_tag = next_tag
                name = handler.time_to_tag(this_tag)
                if not tm.exists(name) and not self._tag_state_as_of(handler, name, now_ms, covered, run):
                    break
                next_tag = handler.next_tag_time(this_tag)
        self._retain_max(handler, run)

    def _restore(self, handler: TagPeriodHandler) -> tuple[dt.datetime | None, int]:
        """(next tag time, next snapshot id) from the newest auto tag, as Java's constructor does."""
        tm = self.store.tag_manager
        for name in sorted((n for n in tm.list_names() if handler.is_auto_tag(n)), key=handler.tag_to_time, reverse=True):
            tag = tm.try_get(name)
            if tag is not None:
                return handler.next_tag_time(handler.tag_to_time(name)), tag.id + 1
        return None, self.store.snapshot_manager.earliest_snapshot_id() or 1

    def _tag_state_as_of(self, handler: TagPeriodHandler, name: str, now_ms: int, covered: int, run: _Run) -> bool:
        """Tag the table's state as of ``now`` with ``name``; False if that cannot be done."""
        sm = self.store.snapshot_manager
        snap = sm.earlier_or_equal_time_millis(now_ms)
        if snap is None:
            run.skipped.append(f"{name}: the table has no snapshot at or before {now_ms}")
            return False
        if snap.id < covered:
            run.skipped.append(f"{name}: the state as of {now_ms} (snapshot {snap.id}) predates the newest auto tag")
            return False
        carried = self._auto_tags_of(handler, snap.id)
        if carried:
            if sm.latest_snapshot_id() != snap.id:
                run.skipped.append(
                    f"{name}: snapshot {snap.id} (the state as of {now_ms}) already carries auto tag(s) "
                    f"{carried} and later commits exist"
                )
                return False
            snap = self._commit_empty_snapshot()
            run.snapshots.append(snap.id)
        return self._tag(handler, name, snap, run)

    def _auto_tags_of(self, handler: TagPeriodHandler, snapshot_id: int) -> list[str]:
        if self._auto is None:
            self._auto = {}
            for tagged, names in self.store.tag_manager.tags_by_snapshot():
                auto = [n for n in names if handler.is_auto_tag(n)]
                if auto:
                    self._auto[tagged.id] = auto
        return list(self._auto.get(snapshot_id, ()))

    def _commit_empty_snapshot(self) -> Snapshot:
        """An empty APPEND snapshot (Java's forced snapshot for process-time tags)."""
        commit = self.store.new_commit(new_commit_user("tag-auto-creation"))
        sid, _, _ = commit._try_commit([], CommitKind.APPEND, BATCH_COMMIT_IDENTIFIER, None, None, None)
        return self.store.snapshot_manager.snapshot(sid)

    def _tag(self, handler: TagPeriodHandler | None, name: str, snap: Snapshot, run: _Run) -> bool:
        tm = self.store.tag_manager
        if tm.exists(name):  # Java: ignoreIfExists
            return True
        if handler is not None:
            carried = self._auto_tags_of(handler, snap.id)
            if carried:
                run.skipped.append(f"{name}: snapshot {snap.id} already carries auto tag(s) {carried}")
                return False
        try:
            tm.create(name, snap, time_retained_ms=self.retained_ms)
        except TagAlreadyExistsError:  # created concurrently: same outcome
            return True
        run.created.append(name)
        if handler is not None and self._auto is not None:
            self._auto.setdefault(snap.id, []).append(name)
        return True

    def _retain_max(self, handler: TagPeriodHandler, run: _Run) -> None:
        limit = self.options.tag_num_retained_max
        if limit is None:
            return
        auto = [
            (tagged.id, handler.tag_to_time(n), n)
            for tagged, names in self.store.tag_manager.tags_by_snapshot()
            for n in names
            if handler.is_auto_tag(n)
        ]
        self._delete_oldest(sorted(auto), limit, run)

    def _delete_oldest(self, ordered: list[tuple[int, dt.datetime, str]], limit: int, run: _Run) -> None:
        if len(ordered) <= limit:
            return
        names = [n for _, _, n in ordered[: len(ordered) - limit]]
        from paimon_core.operation.tag_deletion import delete_tags

        deleted = delete_tags(self.store, names, dry_run=False).deleted_tags
        logger.info("Deleted %d auto tag(s) of %s over tag.num-retained-max=%d: %s", len(deleted), self.store.name, limit, deleted)
        run.expired += deleted

    # --- batch ------------------------------------------------------------------------------
    def _batch(self, now_ms: int, run: _Run) -> None:
        snap = self.store.snapshot_manager.earlier_or_equal_time_millis(now_ms)
        if snap is None:
            return
        name = self.options.get("tag.batch.customized-name") or (
            BATCH_WRITE_TAG_PREFIX
            + to_local_datetime(snap.time_millis, parse_zone(self.options.get("sink.process-time-zone"))).strftime("%Y-%m-%d")
        )
        tm = self.store.tag_manager
        existing = tm.try_get(name)
        if existing is not None and existing.id == snap.id:
            return  # already tagged: idempotent
        if existing is not None:
            from paimon_core.operation.tag_deletion import delete_tags

            delete_tags(self.store, [name], dry_run=False)
        self._tag(None, name, snap, run)
        limit = self.options.tag_num_retained_max
        if limit is not None:
            batch = [
                (tagged.id, dt.datetime.min, n)
                for tagged, names in tm.tags_by_snapshot()
                for n in names
                if n.startswith(BATCH_WRITE_TAG_PREFIX) or n == self.options.get("tag.batch.customized-name")
            ]
            self._delete_oldest(sorted(batch), limit, run)
