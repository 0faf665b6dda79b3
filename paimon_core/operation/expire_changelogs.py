"""Expiry of long-lived changelogs (Java's ``ExpireChangelogImpl``).

With a decoupled changelog lifecycle, snapshot expiry leaves ``changelog/changelog-N``
behind; this removes them by ``changelog.num-retained.max/min`` and
``changelog.time-retained`` (arguments override them), counted over changelogs *and*
snapshots, as in Java:

* begin of the time check = ``max(latest snapshot - retain_max + 1, earliest changelog)``;
* exclusive end = ``latest snapshot - retain_min + 1``, capped at the consumers' smallest
  ``nextSnapshot``, at ``earliest changelog + max_deletes`` and at the latest changelog
  (which stays as the retained end);
* changelog *id* may expire only if it was itself committed before the cutoff.

Per changelog, in order: its data files (changelog files, or the appended files its delta
deleted, minus what tags use), then its manifests nothing retained uses, then its file;
finally the changelog EARLIEST hint. ``delete_all`` removes every changelog (all must be
older than the earliest snapshot) and the hints.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.operation.changelog_deletion import ChangelogDeletion
from paimon_core.operation.file_deletion_base import (
    EntrySkipper,
    FileDeleter,
    RecentNames,
    check_int_argument,
    find_previous,
    find_skipping_tags,
    read_tagged_snapshots,
)
from paimon_core.path_confinement import check_snapshot_names, naming_snapshot
from paimon_core.results import _ToDict
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExpireChangelogsResult(_ToDict):
    """What one changelog expiry did (or, with ``dry_run``, would do)."""

    table: str
    dry_run: bool
    expired_changelog_ids: tuple[int, ...] = ()
    deleted_data_files: int = 0
    deleted_changelog_files: int = 0
    deleted_manifest_files: int = 0
    deleted_bytes: int = 0
    earliest_changelog_id: int | None = None  # after the run (would-be, in a dry run)
    sample_paths: tuple[str, ...] = ()


class ExpireChangelogs:
    """Expires the long-lived changelogs of one table."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.snapshot_manager = store.snapshot_manager
        self.changelog_manager = ChangelogManager(store.file_io, store.paths)

    def expire(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: TimePoint | None = None,
        max_deletes: int | None = None,
        delete_all: bool = False,
        dry_run: bool = False,
    ) -> ExpireChangelogsResult:
        opts = self.store.options
        r_max = check_int_argument(
            opts.changelog_num_retained_max if retain_max is None else retain_max, "retain_max", 1
        )
        r_min = check_int_argument(
            opts.changelog_num_retained_min if retain_min is None else retain_min, "retain_min", 1
        )
        limit = check_int_argument(
            opts.snapshot_expire_limit if max_deletes is None else max_deletes, "max_deletes", 1
        )
        if r_max < r_min:
            raise InvalidArgumentError(
                f"retain_max ({r_max}) must not be less than retain_min ({r_min})", argument="retain_max"
            )
        cutoff = (
            self.store.clock.now_millis() - opts.changelog_time_retained_ms
            if older_than is None
            else to_epoch_millis(older_than, name="older_than")
        )
        cm = self.changelog_manager
        latest_snap = self.snapshot_manager.latest_snapshot_id()
        earliest_snap = self.snapshot_manager.earliest_snapshot_id()
        latest_cl = cm.latest_id()
        earliest_cl = cm.earliest_id()
        empty = ExpireChangelogsResult(self.store.name, dry_run, earliest_changelog_id=earliest_cl)
        if latest_snap is None or earliest_snap is None or latest_cl is None or earliest_cl is None:
            return empty

        if delete_all:
            if latest_cl >= earliest_snap:
                raise InvalidArgumentError(
                    f"Latest changelog {latest_cl} of {self.store.name} is not older than its earliest "
                    f"snapshot {earliest_snap}: the table is inconsistent, not deleting changelogs",
                )
            return self._run(earliest_cl, latest_cl + 1, earliest_snap, dry_run, retained_end=None)

        begin = max(latest_snap - r_max + 1, earliest_cl)
        end = latest_snap - r_min + 1
        consumers = self.store.consumer_manager.min_next_snapshot()
        if consumers is not None:
            end = min(end, consumers)
        end = min(end, earliest_cl + limit, latest_cl)
        if end <= earliest_cl:
            return empty
        for cid in range(begin, end + 1):
            changelog = cm.try_changelog(cid)
            if changelog is not None and cutoff <= changelog.time_millis:
                end = cid
                break
        if end <= earliest_cl:
            return empty
        return self._run(earliest_cl, end, earliest_snap, dry_run, retained_end=end)

    def _run(
        self, earliest: int, end: int, earliest_snap: int, dry_run: bool, *, retained_end: int | None
    ) -> ExpireChangelogsResult:
        """Expire changelogs [earliest, end); ``retained_end`` is the changelog kept as the
        range's end (None for delete_all, where the earliest snapshot bounds the range)."""
        cm = self.changelog_manager
        tags = [snap for snap, _ in read_tagged_snapshots(self.store)]
        keep: list[Snapshot] = find_skipping_tags(
            tags, earliest, end if retained_end is not None else earliest_snap
        )
        if retained_end is not None:
            end_changelog = cm.try_changelog(retained_end)
            if end_changelog is None:
                logger.error(
                    "Changelog %d of %s is missing, not expiring changelogs", retained_end, self.store.name
                )
                return ExpireChangelogsResult(self.store.name, dry_run, earliest_changelog_id=earliest)
            keep.append(end_changelog)
        earliest_snapshot = self.snapshot_manager.try_snapshot(earliest_snap)
        if earliest_snapshot is not None:
            keep.append(earliest_snapshot)
        expired: list[int] = []
        with FileDeleter(self.store.file_io, dry_run=dry_run) as deleter:
            deletion = ChangelogDeletion(self.store, deleter)
            try:
                skipping: set[str] | None = deletion.manifest_skipping_set(keep, tolerate_missing=True)
            except UnsafePathError:
                raise
            except Exception as e:  # noqa: BLE001 - keep every manifest rather than guess
                logger.info("Not deleting changelog manifests of %s: %s", self.store.name, e)
                skipping = None
            recent = RecentNames()
            cached: tuple[int, EntrySkipper | None] | None = None
            for cid in range(earliest, end):
                changelog = cm.try_changelog(cid)
                if changelog is None:
                    continue
                idx = find_previous(tags, cid)
                skip: EntrySkipper | None = lambda _e: False  # noqa: E731
                if idx >= 0:
                    if cached is None or cached[0] != tags[idx].id:
                        cached = (tags[idx].id, self._skipper(deletion, tags[idx]))
                    skip = cached[1]
                # Plan all of this changelog before deleting any of it (UnsafePathError stops here).
                with naming_snapshot(cid, what="changelog"):
                    check_snapshot_names(changelog, what="changelog")
                    data = deletion.plan_data(changelog, skip) if skip is not None else []
                    children, parents = (
                        deletion.plan_manifests(changelog, skipping, recent) if skipping is not None else ([], [])
                    )
                for step in (data, children, parents):
                    deleter.add_all(step)
                    deleter.flush()
                if skipping is not None:
                    recent.advance()
                if deleter.delete_now("changelog_meta", cm.changelog_path(cid)):
                    expired.append(cid)
            deletion.clean_empty_directories()
        if not dry_run:
            if retained_end is None:
                cm.delete_hints()
            else:
                cm.commit_earliest_hint(end)
        counts = deleter.counts
        result = ExpireChangelogsResult(
            table=self.store.name,
            dry_run=dry_run,
            expired_changelog_ids=tuple(expired),
            deleted_data_files=counts["data"],
            deleted_changelog_files=counts["changelog"],
            deleted_manifest_files=counts["manifest"],
            deleted_bytes=deleter.bytes,
            earliest_changelog_id=(retained_end if dry_run else cm.earliest_id()),
            sample_paths=tuple(deleter.sample),
        )
        logger.info(
            "%s changelogs of %s: %d expired, %d changelog files, %d data files, %d manifest files",
            "Dry-run expiry of" if dry_run else "Expired",
            self.store.name,
            len(expired),
            result.deleted_changelog_files,
            result.deleted_data_files,
            result.deleted_manifest_files,
        )
        return result

    def _skipper(self, deletion: ChangelogDeletion, tag: Snapshot) -> EntrySkipper | None:
        try:
            return deletion.data_file_skipper([tag])
        except UnsafePathError:
            raise
        except Exception as e:  # noqa: BLE001 - never delete what an unreadable tag may use
            logger.warning("Cannot read the files of tag snapshot %d of %s: %s", tag.id, self.store.name, e)
            return None
