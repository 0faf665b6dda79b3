"""Snapshot expiry (Java's ``ExpireSnapshotsImpl``), consumer- and tag-aware, crash-safe.

Range rules, exactly as Java:

* begin of the time check = ``max(latest - retain_max + 1, earliest)``; the expiry itself
  always starts at the earliest snapshot (snapshots beyond ``retain_max`` go regardless of time);
* exclusive end = ``latest - retain_min + 1``, capped at the smallest ``nextSnapshot`` of the
  consumers (unless ``consumer.changelog-only``) and at ``earliest + max_deletes``
  (``snapshot.expire.limit``);
* snapshot *id* may expire only if snapshot *id+1* was committed before the cutoff
  (``now - snapshot.time-retained``, or ``older_than``): retention is measured on the successor.

Delete order (a crash anywhere leaves every retained snapshot and tag readable and a
re-run finishes the job): the EARLIEST hint moves to the chunk's retained end first (so no
reader starts from a snapshot whose files are being deleted; snapshot files left below it
by a crash are finished by the next run, whatever its retention) -> data files that snapshots in (begin, end] marked deleted and no
tag uses -> changelog files of expired snapshots (unless the changelog lifecycle is
decoupled) -> empty directories (optional) -> manifests, index files and statistics the
retained end snapshot and the tags do not use, children before the lists naming them ->
snapshot files in id order (first copied to ``changelog/changelog-N`` when decoupled) ->
the EARLIEST hint again (it may have been missing). Long ranges run as consecutive chunks, each a complete expiry up to a
retained chunk end, so memory stays bounded by the chunk size and one tag's file set. A chunk
is planned in full before its first change: a name in its metadata that points outside the
table raises :class:`UnsafePathError` naming the snapshot, and the chunk is left untouched.

Gaps in the snapshot sequence and concurrent expiries are survived: a snapshot or file
that is already gone is skipped; if the end snapshot itself is missing, expiry retains from
the nearest existing snapshot below it.

``write-only`` turns off expiry *inside writers*; this explicit call is the dedicated
expiry job and runs regardless.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.io.file_io import join
from paimon_core.operation.file_deletion_base import (
    DEFAULT_BATCH_SIZE,
    EntrySkipper,
    FileDeleter,
    RecentNames,
    check_int_argument,
    find_previous,
    find_skipping_tags,
    read_tagged_snapshots,
)
from paimon_core.operation.snapshot_deletion import Planned, SnapshotDeletion
from paimon_core.path_confinement import check_snapshot_names, naming_snapshot
from paimon_core.paths import EARLIEST
from paimon_core.results import _ToDict
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

#: Snapshots expired per chunk (each chunk is a complete, crash-safe expiry).
DEFAULT_CHUNK_SIZE = 50


@dataclass(frozen=True)
class ExpireSnapshotsResult(_ToDict):
    """What one expiry run did (or, with ``dry_run``, would do)."""

    table: str
    dry_run: bool
    expired_snapshot_ids: tuple[int, ...] = ()
    deleted_data_files: int = 0
    deleted_changelog_files: int = 0
    deleted_manifest_files: int = 0  # manifests, manifest lists and index manifests
    deleted_index_files: int = 0
    deleted_statistics_files: int = 0
    deleted_snapshot_files: int = 0
    deleted_bytes: int = 0  # sizes known from metadata (snapshot JSON files not included)
    written_changelogs: int = 0  # changelog/changelog-N written (decoupled lifecycle)
    expired_consumers: tuple[str, ...] = ()
    blocking_consumers: tuple[str, ...] = ()  # fresh consumers that held the range back
    earliest_snapshot_id: int | None = None  # after the run (would-be, in a dry run)
    latest_snapshot_id: int | None = None
    cutoff_millis: int | None = None
    sample_paths: tuple[str, ...] = field(default=())  # first few paths (deleted or would be)


@dataclass
class _Run:
    dry_run: bool
    deleter: FileDeleter
    deletion: SnapshotDeletion
    expired: list[int] = field(default_factory=list)
    written_changelogs: int = 0
    skipper_cache: tuple[int, EntrySkipper | None] | None = None


class ExpireSnapshots:
    """Expires old snapshots of one table; see the module docstring for the rules."""

    def __init__(
        self,
        store: FileStore,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        self.store = store
        self.snapshot_manager = store.snapshot_manager
        self.changelog_manager = ChangelogManager(store.file_io, store.paths)
        self.chunk_size = max(1, chunk_size)
        self.batch_size = batch_size

    def expire(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: TimePoint | None = None,
        max_deletes: int | None = None,
        dry_run: bool = False,
    ) -> ExpireSnapshotsResult:
        """Expire by the table options; arguments override ``snapshot.num-retained.max/min``,
        ``snapshot.expire.limit`` and (``older_than``, an absolute cutoff) ``snapshot.time-retained``."""
        opts = self.store.options
        r_max = check_int_argument(
            opts.snapshot_num_retained_max if retain_max is None else retain_max, "retain_max", 1
        )
        r_min = check_int_argument(
            opts.snapshot_num_retained_min if retain_min is None else retain_min, "retain_min", 1
        )
        limit = check_int_argument(
            opts.snapshot_expire_limit if max_deletes is None else max_deletes, "max_deletes", 1
        )
        if r_max < r_min:
            raise InvalidArgumentError(
                f"retain_max ({r_max}) must not be less than retain_min ({r_min})", argument="retain_max"
            )
        now = self.store.clock.now_millis()
        cutoff = (
            now - opts.snapshot_time_retained_ms
            if older_than is None
            else to_epoch_millis(older_than, name="older_than")
        )
        expired_consumers, live_consumers = self._expire_consumers(now, dry_run)

        latest = self.snapshot_manager.latest_snapshot_id()
        # Expiry starts from the oldest snapshot *file*: files below the EARLIEST hint are
        # what an interrupted run left (it moves the hint first), and this run finishes them.
        earliest = self.snapshot_manager.earliest_snapshot_file_id()
        committed = self.snapshot_manager.earliest_snapshot_id()
        base = ExpireSnapshotsResult(
            table=self.store.name,
            dry_run=dry_run,
            expired_consumers=tuple(expired_consumers),
            earliest_snapshot_id=earliest,
            latest_snapshot_id=latest,
            cutoff_millis=cutoff,
        )
        if latest is None or earliest is None:
            return base

        begin = max(latest - r_max + 1, earliest)
        end = min(latest - r_min + 1, earliest + limit)
        for sid in range(begin, end):
            nxt = self._read(sid + 1)  # a missing one (gap, concurrent expiry) does not stop the scan
            if nxt is not None and cutoff <= nxt.time_millis:
                end = sid
                break
        # Fresh consumers fence the range (Java applies this cap before the time scan; the
        # result is the same minimum, computed this way to tell who is holding expiry back).
        blocking: list[str] = []
        if not opts.consumer_changelog_only and live_consumers:
            fence = min(n for n, _ in live_consumers.values())
            if fence < end:
                blocking = self._warn_blocking(live_consumers, end, latest, now)
                end = fence

        if committed is not None and earliest < committed and end < committed:
            # An interrupted expiry already hid [earliest, committed) from readers and may have
            # deleted some of their files: finish it whatever the retention says now.
            logger.warning(
                "Finishing an interrupted expiry of %s: snapshots %d..%d are below EARLIEST %d",
                self.store.name, earliest, committed - 1, committed,
            )
            end = committed

        decoupled = opts.changelog_lifecycle_decoupled
        with FileDeleter(
            self.store.file_io, dry_run=dry_run, batch_size=self.batch_size, parallelism=self._parallelism()
        ) as deleter:
            run = _Run(dry_run, deleter, SnapshotDeletion(self.store, deleter, changelog_decoupled=decoupled))
            new_earliest = self._expire_until(earliest, end, run)
        counts = deleter.counts
        result = ExpireSnapshotsResult(
            table=self.store.name,
            dry_run=dry_run,
            expired_snapshot_ids=tuple(run.expired),
            deleted_data_files=counts["data"],
            deleted_changelog_files=counts["changelog"],
            deleted_manifest_files=counts["manifest"],
            deleted_index_files=counts["index"],
            deleted_statistics_files=counts["statistics"],
            deleted_snapshot_files=counts["snapshot"],
            deleted_bytes=deleter.bytes,
            written_changelogs=run.written_changelogs,
            expired_consumers=tuple(expired_consumers),
            blocking_consumers=tuple(blocking),
            earliest_snapshot_id=new_earliest if dry_run else self.snapshot_manager.earliest_snapshot_id(),
            latest_snapshot_id=latest,
            cutoff_millis=cutoff,
            sample_paths=tuple(deleter.sample),
        )
        logger.info(
            "%s snapshots of %s: %d expired (now earliest %s), %d data, %d changelog, %d manifest, %d index files",
            "Dry-run expiry of" if dry_run else "Expired",
            self.store.name,
            len(run.expired),
            result.earliest_snapshot_id,
            result.deleted_data_files,
            result.deleted_changelog_files,
            result.deleted_manifest_files,
            result.deleted_index_files,
        )
        return result

    # --- consumers -----------------------------------------------------------------------
    def _expire_consumers(self, now: int, dry_run: bool) -> tuple[list[str], dict[str, tuple[int, int]]]:
        """Expire consumers idle longer than ``consumer.expiration-time``; return them and the rest."""
        cm = self.store.consumer_manager
        expiration = self.store.options.consumer_expiration_time_ms
        expired = cm.expire(now - expiration, dry_run=dry_run) if expiration is not None else []
        live = {cid: v for cid, v in cm.consumers_with_mtime().items() if cid not in set(expired)}
        return expired, live

    def _warn_blocking(
        self, consumers: dict[str, tuple[int, int]], would_end: int, latest: int, now: int
    ) -> list[str]:
        """Log each consumer that holds expiry back, with its lag against the retention."""
        expiration = self.store.options.consumer_expiration_time_ms
        blocking = sorted(cid for cid, (nxt, _) in consumers.items() if nxt < would_end)
        for cid in blocking:
            nxt, mtime = consumers[cid]
            logger.warning(
                "Consumer %s of %s (next snapshot %d, %d snapshots behind latest %d, last progress %.1f h ago) "
                "keeps snapshots from %d on from expiring; %s",
                cid,
                self.store.name,
                nxt,
                latest - nxt + 1,
                latest,
                (now - mtime) / 3_600_000,
                nxt,
                "it never expires: set consumer.expiration-time or reset_consumer/clear_consumers"
                if expiration is None
                else f"it expires after {expiration / 3_600_000:.1f} h without progress",
            )
        return blocking

    # --- the expiry ------------------------------------------------------------------------
    def _parallelism(self) -> int:
        v = self.store.options.get("file-operation.thread-num")
        return int(v) if v and v.strip().isdigit() and int(v) > 0 else 8

    def _read(self, snapshot_id: int) -> Snapshot | None:
        path = self.snapshot_manager.snapshot_path(snapshot_id)
        try:
            data = self.store.file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        return Snapshot.from_json(data, path=path)

    def _expire_until(self, earliest: int, end: int, run: _Run) -> int:
        """Expire [earliest, end) chunk by chunk; return the (would-be) earliest id after."""
        # The retained end snapshot must exist (its manifests are kept): on a gap, retain
        # from the nearest existing snapshot below it.
        end_snap = self._read(end) if end > earliest else None
        while end_snap is None and end > earliest:
            end -= 1
            end_snap = self._read(end)
        if end <= earliest:
            if not run.dry_run and not self.store.file_io.exists(
                join(self.store.paths.snapshot_dir, EARLIEST)
            ):
                self.snapshot_manager.commit_earliest_hint(earliest)
            return earliest
        begin = earliest
        while begin < end:
            chunk = self._collect_chunk(begin, end)
            if not chunk:  # a concurrent expiry went past our range
                break
            # If `end` vanished meanwhile (a concurrent expiry), the last snapshot found is
            # retained instead: retaining more is always safe.
            self._expire_chunk(chunk, run)
            if chunk[-1].id == begin:  # no progress possible
                break
            begin = chunk[-1].id
        return end

    def _collect_chunk(self, begin: int, end: int) -> list[Snapshot]:
        """Existing snapshots from ``begin`` on: at most ``chunk_size`` to expire plus the
        retained chunk end (``end`` exists, so the last element always does)."""
        snaps: list[Snapshot] = []
        sid = begin
        while sid <= end:
            snap = self._read(sid)
            if snap is not None:
                snaps.append(snap)
                if len(snaps) > self.chunk_size:
                    break
            sid += 1
        return snaps

    def _expire_chunk(self, snaps: list[Snapshot], run: _Run) -> None:
        deletion, deleter = run.deletion, run.deleter
        end_snap = snaps[-1]
        expiring = snaps[:-1]
        # Re-read the tags for every chunk: a tag created or deleted meanwhile is seen soon.
        tags = [snap for snap, _ in read_tagged_snapshots(self.store)]
        # Plan the whole chunk before changing anything: a path from metadata that points
        # outside the table (UnsafePathError) stops the run with this chunk untouched.
        data, changelogs, manifests = self._plan_chunk(snaps, tags, run)
        # 0. the EARLIEST hint first: from here on readers start at the retained chunk end and
        # never see a snapshot whose files this chunk is about to delete (Paimon issue #6978).
        # A crash leaves snapshot files below the hint; the next run finishes them.
        if not run.dry_run:
            self.snapshot_manager.commit_earliest_hint(end_snap.id)

        # 1. data files that snapshots in (begin, end] marked deleted
        deleter.add_all(data)
        deleter.flush()
        # 2. changelog files of the expired snapshots
        deleter.add_all(changelogs)
        deleter.flush()
        deletion.clean_empty_directories()
        # 3. manifests, index files, statistics nothing retained uses: children, then lists
        for step in manifests:
            deleter.add_all(step)
            deleter.flush()

        # 4. snapshot files, in id order
        for snap in expiring:
            if deletion.changelog_decoupled and not run.dry_run:
                self.changelog_manager.commit_changelog(snap)
                run.written_changelogs += 1
            if deleter.delete_now("snapshot", self.snapshot_manager.snapshot_path(snap.id)):
                run.expired.append(snap.id)
        # 5. the EARLIEST hint
        if not run.dry_run:
            self.snapshot_manager.commit_earliest_hint(end_snap.id)

    def _plan_chunk(
        self, snaps: list[Snapshot], tags: list[Snapshot], run: _Run
    ) -> tuple[Planned, Planned, list[Planned]]:
        """(data files, changelog files, [manifest children, manifest parents]) of a chunk."""
        deletion = run.deletion
        end_snap = snaps[-1]
        expiring = snaps[:-1]
        for snap in snaps:
            check_snapshot_names(snap)
        data: Planned = []
        for snap in snaps[1:]:
            idx = find_previous(tags, snap.id)
            skip = (lambda _e: False) if idx < 0 else self._tag_skipper(tags[idx], run)
            if skip is None:
                logger.info(
                    "Not deleting data files of snapshot %d of %s: tag snapshot %d cannot be read",
                    snap.id,
                    self.store.name,
                    tags[idx].id,
                )
                continue
            with naming_snapshot(snap.id):
                data += deletion.plan_deleted_data(snap, skip)
        changelogs: Planned = []
        if not deletion.changelog_decoupled:
            for snap in expiring:
                with naming_snapshot(snap.id):
                    changelogs += deletion.plan_added_in_changelog(snap)
        try:
            skipping = deletion.manifest_skipping_set([*find_skipping_tags(tags, snaps[0].id, end_snap.id), end_snap])
        except UnsafePathError:
            raise
        except Exception as e:  # noqa: BLE001 - keep every manifest rather than guess
            logger.info("Not deleting manifests of %s: cannot build the skipping set: %s", self.store.name, e)
            return data, changelogs, []
        recent = RecentNames()
        children: Planned = []
        parents: Planned = []
        for snap in expiring:
            with naming_snapshot(snap.id):
                c, p = deletion.plan_manifests(snap, skipping, recent)
            children += c
            parents += p
            recent.advance()
        return data, changelogs, [children, parents]

    def _tag_skipper(self, tag: Snapshot, run: _Run) -> EntrySkipper | None:
        """Skips the files of the nearest earlier tag (cached: ids only grow); None if unreadable."""
        if run.skipper_cache is not None and run.skipper_cache[0] == tag.id:
            return run.skipper_cache[1]
        run.skipper_cache = None  # free the previous tag's set before building the next
        skipper: EntrySkipper | None
        try:
            skipper = run.deletion.data_file_skipper([tag])
        except UnsafePathError:
            raise
        except Exception as e:  # noqa: BLE001 - never delete what an unreadable tag may use
            logger.warning("Cannot read the files of tag snapshot %d of %s: %s", tag.id, self.store.name, e)
            skipper = None
        run.skipper_cache = (tag.id, skipper)
        return skipper
