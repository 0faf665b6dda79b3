"""TableCommit: the one commit path of every writer (Java's ``TableCommitImpl``).

Batch writes (``BatchTableCommit``), stream writes (``StreamTableCommit``), the Spark data source's
driver commit, the Spark streaming sink, ``merge_into`` and the ingest job all commit through
:class:`TableCommit`, which runs, in order:

1. **the commit identity check**: a commit user + identifier already in the snapshot history
   commits nothing (a retried job or a replayed micro-batch); skipped for fresh generated users,
   which have no history to look at;
2. **the postpone fixed-bucket step** of batch commits (``bucket = -2`` tables with
   ``postpone.batch-write-fixed-bucket``): staged rows replayed into real buckets
   (:class:`~paimon_core.table.fixed_bucket_commit.PostponeFixedBucketCommit`); stream commits
   (``batch=False``) keep them in ``bucket-postpone`` for the postpone compaction, as Java's;
3. **precommit-compact** (append tables' ``precommit-compact``): every writer's small new files
   merged before the commit (:func:`~paimon_core.append.append_pre_commit_compact.merged_for_commit`);
4. **the commit** through :class:`~paimon_core.operation.commit.committer.FileStoreCommit`, with its
   conflict checks and retries; when the APPEND snapshot landed but the COMPACT half of a writer's
   inline compaction lost to a dedicated compaction, the write succeeded: the compaction's own
   files are deleted and :attr:`CommitResult.maintenance_error` says so
   (:func:`commit_keeping_landed_append`);
5. **post-commit maintenance** (tags, snapshot / partition / changelog expiry;
   :func:`~paimon_core.operation.commit_maintenance.maintain_after_commit`), with the commit's long-lived
   partition expiry.

Only this module and the commit package (``paimon_core.operation.commit``) create the low-level
committer for writers; ``tests/unit/paimon_core/test_one_commit_path_guard.py`` enforces it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflictError
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.operation.commit_maintenance import maintain_after_commit
from paimon_core.options_validation import check_maintenance_options
from paimon_core.results import CommitResult
from paimon_core.table.commit_message import CommitMessage

if TYPE_CHECKING:
    from paimon_core.operation.commit.committer import FileStoreCommit, OverwriteSpec
    from paimon_core.operation.partition_expire import PartitionExpire
    from paimon_core.table.table import FileStoreTable

__all__ = ["TableCommit", "commit_keeping_landed_append", "delete_uncommitted"]

logger = logging.getLogger(__name__)


def commit_keeping_landed_append(
    table: FileStoreTable, messages: Sequence[CommitMessage], commit: Callable[[], CommitResult]
) -> CommitResult:
    """Run ``commit``; when its APPEND snapshot landed but the COMPACT half of a writer's inline
    compaction conflicted (a dedicated compaction changed the bucket meanwhile), the write still
    succeeded: the compaction's files are deleted and the result says what happened in
    ``maintenance_error`` (Java's writer would fail here and restart)."""
    try:
        return commit()
    except CommitConflictError as e:
        landed: tuple[int, ...] = tuple(e.context.get("landed_snapshot_ids") or ())
        if not landed:
            raise
        # Only the compaction's own output goes (its files, changelog and index files): the landed
        # APPEND snapshot references the new data files and the data increment's index files (a
        # dynamic bucket's HASH index), and upgraded files are the same files as before.
        for m in messages:
            keep = {f.file_name for f in (*m.compact_before, *m.new_files)}
            bucket_path = table.bucket_path(m.partition, m.bucket)
            for f in m.compact_after:
                if f.file_name not in keep:
                    table.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
            for f in m.compact_changelog_files:
                table.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
            for i in m.compact_new_index_files:
                table.file_io.delete(index_file_path(table.store, m.partition, m.bucket, i))
        logger.warning("%s", e)
        return CommitResult(
            table=table.name,
            snapshot_id=landed[-1],
            commit_kind=e.context.get("landed_kind") or "APPEND",
            commit_user=str(e.context.get("commit_user", "")),
            commit_identifier=int(e.context.get("commit_identifier", 0)),
            snapshot_ids=landed,
            maintenance_error=f"inline compaction not committed: {e}",
        )


def delete_uncommitted(table: FileStoreTable, messages: Sequence[CommitMessage]) -> None:
    """Delete every file ``messages`` wrote (new data and changelog files, and what a writer's
    inline compaction wrote): for messages that will never be committed."""
    from paimon_core.operation.compact.table_compact import delete_written

    for m in messages:
        bucket_path = table.bucket_path(m.partition, m.bucket)
        for f in (*m.new_files, *m.changelog_files):
            path = f.external_path or f"{bucket_path}/{f.file_name}"
            table.file_io.delete(path)
            for extra in f.extra_files:  # the file's data-file index (``.index``), as fresh as the file
                table.file_io.delete(f"{path.rsplit('/', 1)[0]}/{extra}")
    delete_written(table.store, messages)


def _new_partition_expire(table: FileStoreTable) -> PartitionExpire | None:
    """The writer's partition expiry (None: off); a bad strategy or formatter fails here."""
    if table.options.write_only:
        return None
    from paimon_core.operation.partition_expire import PartitionExpire

    return PartitionExpire.from_options(table.store)


class TableCommit:
    """Commits writers' messages to one table as one commit user (Java's ``TableCommitImpl``).

    ``overwrite``: replace instead of append (see :class:`OverwriteSpec`). ``check_committed``:
    look up (commit user, identifier) in the history first and commit nothing when it is there;
    off only for a freshly generated commit user (nothing to find). ``batch``: a batch commit (the
    postpone fixed-bucket step applies); streams pass False. One ``TableCommit`` may commit
    many identifiers (a stream's); its partition expiry's check interval runs from its creation.
    """

    def __init__(
        self,
        table: FileStoreTable,
        commit_user: str,
        *,
        overwrite: OverwriteSpec | None = None,
        check_committed: bool = True,
        batch: bool = True,
    ) -> None:
        check_maintenance_options(table.options, table=table.name)  # before anything lands
        self.table = table
        self.commit_user = commit_user
        self.overwrite = overwrite
        self.check_committed = check_committed
        self.batch = batch
        # Java's TableCommitImpl: made (and its options checked) with the commit
        self._partition_expire = _new_partition_expire(table)

    def _committer(self) -> FileStoreCommit:
        return self.table.new_file_store_commit(self.commit_user)

    def is_committed(self, commit_identifier: int) -> bool:
        """Whether this commit user already committed ``commit_identifier`` (or a later one)."""
        return self._committer().is_committed(commit_identifier)

    def commit(self, messages: Sequence[CommitMessage], commit_identifier: int) -> CommitResult:
        """Commit ``messages`` as ``commit_identifier`` (see the module docstring for the steps).

        A commit already in the history returns ``already_committed`` and touches nothing: the
        caller owns the messages' files then (a replay's files are not referenced by any snapshot)."""
        committer = self._committer()
        if self.check_committed and committer.is_committed(commit_identifier):
            return committer.commit([], commit_identifier, check_committed=True)  # the no-op result
        from paimon_core.table.fixed_bucket_commit import PostponeFixedBucketCommit

        if self.batch and PostponeFixedBucketCommit.applies(
            self.table, messages
        ):  # bucket = -2: staged rows into real buckets
            job = PostponeFixedBucketCommit(
                self.table, self.commit_user, self.overwrite, user_given=self.check_committed
            )
            return self._maintain(job.commit(messages, commit_identifier))
        from paimon_core.append.append_pre_commit_compact import merged_for_commit

        # precommit-compact = true (append): the small new files of all writers merged, as Java's
        # coordinator after the writers does; the merge's output is deleted again if the commit fails
        with merged_for_commit(self.table.store, messages) as merged:
            result = commit_keeping_landed_append(
                self.table,
                merged,
                lambda: committer.commit(
                    merged, commit_identifier, overwrite=self.overwrite, check_committed=self.check_committed
                ),
            )
        return self._maintain(result)

    def truncate(self, commit_identifier: int) -> CommitResult:
        """Remove all rows (a new OVERWRITE snapshot; old files stay for time travel)."""
        return self._maintain(self._committer().truncate(commit_identifier))

    def _maintain(self, result: CommitResult) -> CommitResult:
        if result.already_committed:
            return result
        return maintain_after_commit(self.table.store, result, partition_expire=self._partition_expire)

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the files of messages that will never be committed."""
        delete_uncommitted(self.table, messages)

    def abort_unless_landed(self, messages: Sequence[CommitMessage], commit_identifier: int) -> bool:
        """After :meth:`commit` raised: delete the messages' files unless (user, identifier) landed
        after all. Returns whether they were deleted; when the history cannot be read the files stay
        (orphan-file cleanup removes them later; deleting files a landed snapshot needs loses data)."""
        try:
            landed = self.is_committed(commit_identifier)
        except Exception as e:  # noqa: BLE001 - cannot tell: keep the files
            logger.warning(
                "Cannot tell whether the failed commit of %s landed (%s): keeping its files",
                self.table.name,
                e,
            )
            return False
        if landed:
            logger.warning("The failed commit of %s landed after all: keeping its files", self.table.name)
            return False
        self.abort(messages)
        return True
