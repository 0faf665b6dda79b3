"""Purge every file of a table (Java's ``FileStoreTable.purgeFiles``, procedure ``purge_files``).

The table stays (its schema and options), empty, with one snapshot: Java's steps in Java's order,

1. drop every branch (their metadata; files only they held go in step 7);
2. delete every tag, with the files only it held (``delete_tag``);
3. delete every consumer;
4. truncate: one OVERWRITE snapshot with no file (readers of the latest snapshot see 0 rows);
5. delete the ``changelog/`` directory (long-lived changelogs);
6. expire every snapshot but the latest (retain max 1, min 1, older than now), deleting the data,
   manifest and index files only they held;
7. remove orphan files older than now (what a failed write or a dropped branch left).

It cannot be undone: run it with ``dry_run`` first, which lists what would go (branches, tags,
consumers, live files and rows, snapshots, changelogs) and changes nothing. Checks come before
any step: a handle on another branch than ``main``, and a fallback branch a table option reads
(``scan.fallback-branch``), are refused with nothing changed. Interrupted, run it again: each step
finishes what an earlier run left.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.path_confinement import link_below
from paimon_core.paths import MAIN_BRANCH
from paimon_core.results import _ToDict
from paimon_core.snapshot.changelog_manager import ChangelogManager
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["PurgeFiles", "PurgeFilesResult"]

logger = logging.getLogger(__name__)

_FALLBACK_OPTIONS = ("scan.fallback-branch", "scan.primary-branch")
_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class PurgeFilesResult(_ToDict):
    """What ``purge_files`` removed (``dry_run``: would remove)."""

    table: str
    dry_run: bool
    dropped_branches: tuple[str, ...] = ()
    deleted_tags: tuple[str, ...] = ()
    deleted_consumers: tuple[str, ...] = ()
    live_files: int = 0  # files of the latest snapshot, dropped by the truncate
    live_rows: int = 0
    snapshots: int = 0  # snapshot files before (all but the truncate's go)
    changelogs: int = 0  # long-lived changelog files before
    snapshot_id: int | None = None  # the truncate's OVERWRITE snapshot: the one that stays
    expired_snapshots: int = 0
    deleted_data_files: int = 0  # by tag deletion and snapshot expiry
    deleted_manifest_files: int = 0
    deleted_orphan_files: int = 0
    deleted_bytes: int = 0
    result: str = "Success"  # Java's procedure output


class PurgeFiles:
    """Purges one table (see the module docstring)."""

    def __init__(self, store: FileStore) -> None:
        self.store = store

    def check(self) -> None:
        store = self.store
        if store.branch != MAIN_BRANCH:
            raise InvalidArgumentError(
                f"purge_files runs on the main branch of a table; {store.name} is a handle on branch "
                f"'{store.branch}' (nothing changed)",
                branch=store.branch,
            )
        for key in _FALLBACK_OPTIONS:
            value = store.options.get(key)
            if value:
                raise InvalidArgumentError(
                    f"Cannot purge {store.name}: its branches would be dropped, and branch '{value}' is configured "
                    f"as '{key}'. Unset '{key}' first (nothing changed).",
                    branch=value,
                )
        for d in (store.paths.changelog_dir,):
            link = link_below(store.file_io, d, [store.path], include_self=True)
            if link is not None:
                raise UnsafePathError(
                    f"Cannot purge {store.name}: {link} is a symbolic link, and deleting through it would delete "
                    "the files it points to (nothing changed)",
                    path=link,
                )

    def plan(self) -> PurgeFilesResult:
        store = self.store
        latest = store.snapshot_manager.latest_snapshot()
        live = store.new_scan().live_entries(latest) if latest is not None else []
        return PurgeFilesResult(
            table=store.name,
            dry_run=True,
            dropped_branches=tuple(store.branch_manager().branches()),
            deleted_tags=tuple(store.tag_manager.list_names()),
            deleted_consumers=tuple(sorted(store.consumer_manager.list_all_ids())),
            live_files=len(live),
            live_rows=sum(e.file.row_count for e in live),
            snapshots=len(store.snapshot_manager.list_snapshot_ids()),
            changelogs=len(ChangelogManager(store.file_io, store.paths).list_ids()),
        )

    def run(self, *, dry_run: bool = False) -> PurgeFilesResult:
        from paimon_core.operation.commit.committer import new_commit_user
        from paimon_core.operation.expire_snapshots import ExpireSnapshots
        from paimon_core.operation.orphan_files_clean import OrphanFilesClean
        from paimon_core.operation.tag_deletion import delete_tags

        self.check()
        plan = self.plan()
        if dry_run:
            return plan
        store = self.store
        # 1. branches
        if plan.dropped_branches:
            store.branch_manager().delete_branch(list(plan.dropped_branches))
        # 2. tags, with the files only they hold
        data = manifests = deleted_bytes = 0
        if plan.deleted_tags:
            tags = delete_tags(store, list(plan.deleted_tags))
            data += tags.deleted_data_files
            manifests += tags.deleted_manifest_files
            deleted_bytes += tags.deleted_bytes
        # 3. consumers
        for consumer in plan.deleted_consumers:
            store.consumer_manager.delete_consumer(consumer)
        # 4. truncate
        committer = store.new_commit(new_commit_user(store.options.get("commit.user-prefix")))
        commit = committer.truncate(BATCH_COMMIT_IDENTIFIER)
        # 5. long-lived changelogs
        store.file_io.delete(store.paths.changelog_dir, recursive=True)
        # 6. every snapshot but the latest
        now = store.clock.now_millis()
        expired = ExpireSnapshots(store).expire(retain_max=1, retain_min=1, older_than=now, max_deletes=_LONG_MAX)
        data += expired.deleted_data_files + expired.deleted_changelog_files
        manifests += expired.deleted_manifest_files
        deleted_bytes += expired.deleted_bytes
        # 7. orphans (files of dropped branches, failed writes)
        orphans = OrphanFilesClean(store).clean(older_than=store.clock.now_millis() - 1, force=True)
        logger.info(
            "Purged %s: %d branch(es), %d tag(s), %d consumer(s), %d live file(s); %d snapshot(s) expired, "
            "%d orphan file(s) deleted",
            store.name, len(plan.dropped_branches), len(plan.deleted_tags), len(plan.deleted_consumers),
            plan.live_files, len(expired.expired_snapshot_ids), orphans.deleted_file_count,
        )  # fmt: skip
        return PurgeFilesResult(
            table=store.name,
            dry_run=False,
            dropped_branches=plan.dropped_branches,
            deleted_tags=plan.deleted_tags,
            deleted_consumers=plan.deleted_consumers,
            live_files=plan.live_files,
            live_rows=plan.live_rows,
            snapshots=plan.snapshots,
            changelogs=plan.changelogs,
            snapshot_id=commit.snapshot_id,
            expired_snapshots=len(expired.expired_snapshot_ids),
            deleted_data_files=data,
            deleted_manifest_files=manifests,
            deleted_orphan_files=orphans.deleted_file_count,
            deleted_bytes=deleted_bytes + orphans.deleted_bytes,
        )
