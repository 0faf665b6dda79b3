"""Write and read builders (the API shape pypaimon and Paimon's Java API share)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.index.index_path_factory import index_file_path
from paimon_core.operation.commit.committer import OverwriteSpec, new_commit_user
from paimon_core.options_validation import check_maintenance_options
from paimon_core.predicate import Predicate, PredicateBuilder
from paimon_core.results import CommitResult
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.commit_maintenance import maintain_after_commit
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.source import Plan
from paimon_core.table.table_read import TableRead
from paimon_core.table.table_scan import TableScan
from paimon_core.table.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_core.operation.partition_expire import PartitionExpire
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)


def commit_keeping_landed_append(
    table: FileStoreTable, messages: Sequence[CommitMessage], commit: Callable[[], CommitResult]
) -> CommitResult:
    """Run ``commit``; when its APPEND snapshot landed but the COMPACT half of a writer's inline
    compaction conflicted (a dedicated compaction changed the bucket meanwhile), the write still
    succeeded: the compaction's files are deleted and the result says what happened in
    ``maintenance_error`` (Java's writer would fail here and restart)."""
    from paimon_core.exceptions import CommitConflictError

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
                table.file_io.delete(index_file_path(table, m.partition, m.bucket, i))
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


def _new_partition_expire(table: FileStoreTable) -> PartitionExpire | None:
    """The writer's partition expiry (None: off); a bad strategy or formatter fails here."""
    if table.options.write_only:
        return None
    from paimon_core.operation.partition_expire import PartitionExpire

    return PartitionExpire.from_options(table)


class BatchTableCommit:
    """Commits the messages of one batch job as one snapshot."""

    def __init__(
        self, table: FileStoreTable, commit_user: str, overwrite: OverwriteSpec | None, *, user_given: bool = False
    ) -> None:
        check_maintenance_options(table.options, table=table.name)  # before anything lands
        self.table = table
        self.commit_user = commit_user
        # Java's TableCommitImpl: made (and its options checked) with the commit; the check
        # interval runs from here
        self._partition_expire = _new_partition_expire(table)
        self.overwrite = overwrite
        self.user_given = user_given
        self._done = False
        self._identifier = BATCH_COMMIT_IDENTIFIER

    def commit(self, messages: Sequence[CommitMessage], commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> CommitResult:
        if self._done:
            raise InvalidArgumentError("A BatchTableCommit commits once; create a new write builder for the next batch")
        self._done = True
        self._identifier = commit_identifier
        from paimon_core.postpone.fixed_bucket_commit import PostponeFixedBucketCommit

        if PostponeFixedBucketCommit.applies(self.table, messages):  # bucket = -2: staged rows into real buckets
            job = PostponeFixedBucketCommit(self.table, self.commit_user, self.overwrite, user_given=self.user_given)
            return maintain_after_commit(
                self.table, job.commit(messages, commit_identifier), partition_expire=self._partition_expire
            )
        # A generated batch commit user is fresh and commits once: there is no earlier commit of
        # it to look for, so skip the history walk (as Java's batch commit). A caller-given user
        # (e.g. from a job's run id) is checked, so re-running the job commits nothing twice.
        committer = self.table.new_file_store_commit(self.commit_user)
        from paimon_core.append.append_pre_commit_compact import merged_for_commit

        # precommit-compact = true (append): the small new files of all writers merged, as Java's
        # coordinator after the writers does; the merge's output is deleted again if the commit fails
        already = self.user_given and committer.is_committed(commit_identifier)
        with merged_for_commit(self.table, messages, skip=already) as merged:
            result = commit_keeping_landed_append(
                self.table,
                merged,
                lambda: committer.commit(
                    merged, commit_identifier, overwrite=self.overwrite, check_committed=self.user_given
                ),
            )
        return maintain_after_commit(self.table, result, partition_expire=self._partition_expire)

    def truncate(self) -> CommitResult:
        """Remove all rows (a new OVERWRITE snapshot; old files stay for time travel)."""
        self._done = True
        return maintain_after_commit(
            self.table,
            self.table.new_file_store_commit(self.commit_user).truncate(BATCH_COMMIT_IDENTIFIER),
            partition_expire=self._partition_expire,
        )

    def abort_unless_landed(self, messages: Sequence[CommitMessage]) -> bool:
        """After :meth:`commit` raised: delete the messages' files unless its snapshot landed after
        all. Returns whether they were deleted; when the history cannot be read the files stay
        (orphan-file cleanup removes them later; deleting files a landed snapshot needs loses data)."""
        try:
            landed = self.table.new_file_store_commit(self.commit_user).is_committed(self._identifier)
        except Exception as e:  # noqa: BLE001 - cannot tell: keep the files
            logger.warning("Cannot tell whether the failed commit of %s landed (%s): keeping its files", self.table.name, e)
            return False
        if landed:
            logger.warning("The failed commit of %s landed after all: keeping its files", self.table.name)
            return False
        self.abort(messages)
        return True

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the files of messages that will never be committed."""
        for m in messages:
            bucket_path = self.table.bucket_path(m.partition, m.bucket)
            for f in (*m.new_files, *m.changelog_files):
                self.table.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
        from paimon_core.operation.compact.table_compact import delete_written

        delete_written(self.table, messages)  # what a writer's inline compaction wrote


class BatchWriteBuilder:
    """``table.new_batch_write_builder()``: one batch write, one commit."""

    def __init__(self, table: FileStoreTable, *, commit_user: str | None = None) -> None:
        self.table = table
        self.user_given = commit_user is not None
        self.commit_user = commit_user or new_commit_user(table.options.get("commit.user-prefix"))
        self._overwrite: OverwriteSpec | None = None

    def overwrite(
        self, static_partition: Mapping[str, object] | None = None, *, dynamic: bool | None = None
    ) -> BatchWriteBuilder:
        """Replace data instead of appending: the given partition, the partitions written
        (``dynamic-partition-overwrite``, the default) or the whole table.

        On dynamic-bucket tables the new rows get fresh buckets and the commit replaces the
        overwritten partitions' HASH index files, as Java's INSERT OVERWRITE does.
        """
        if static_partition:
            codec_fields = {f.name: f for f in self.table.schema.partition_fields}
            from paimon_core.data.partition_spec import partition_spec_value

            spec = {}
            for k, v in static_partition.items():
                if k not in codec_fields:
                    raise InvalidArgumentError(
                        f"'{k}' is not a partition key of {self.table.name} (partition keys: {list(codec_fields)})"
                    )
                spec[k] = partition_spec_value(
                    v, codec_fields[k].type, column=k, default_partition_name=self.table.options.partition_default_name
                )
            self._overwrite = OverwriteSpec(spec, dynamic=False)
        else:
            if dynamic is None:
                dynamic = self.table.options.dynamic_partition_overwrite
            self._overwrite = OverwriteSpec(None, dynamic=dynamic)
        return self

    def new_write(self) -> TableWrite:
        return TableWrite(self.table, overwrite=self._overwrite)

    def new_commit(self) -> BatchTableCommit:
        return BatchTableCommit(self.table, self.commit_user, self._overwrite, user_given=self.user_given)


class StreamTableCommit:
    """Commits with a caller-chosen identifier; an identifier already committed is a no-op."""

    def __init__(self, table: FileStoreTable, commit_user: str) -> None:
        check_maintenance_options(table.options, table=table.name)  # before anything lands
        self.table = table
        self.commit_user = commit_user
        # Java's TableCommitImpl: made (and its options checked) with the commit; the check
        # interval runs from here
        self._partition_expire = _new_partition_expire(table)

    def commit(self, messages: Sequence[CommitMessage], commit_identifier: int) -> CommitResult:
        committer = self.table.new_file_store_commit(self.commit_user)
        result = commit_keeping_landed_append(
            self.table, messages, lambda: committer.commit(messages, commit_identifier)
        )
        return maintain_after_commit(self.table, result, partition_expire=self._partition_expire)

    def is_committed(self, commit_identifier: int) -> bool:
        return self.table.new_file_store_commit(self.commit_user).is_committed(commit_identifier)


class StreamWriteBuilder:
    """``table.new_stream_write_builder(commit_user)``: many commits, stable commit user."""

    def __init__(self, table: FileStoreTable, commit_user: str | None = None) -> None:
        self.table = table
        self.commit_user = commit_user or new_commit_user(table.options.get("commit.user-prefix"))

    def new_write(self) -> TableWrite:
        return TableWrite(self.table)

    def new_commit(self) -> StreamTableCommit:
        return StreamTableCommit(self.table, self.commit_user)


class ReadBuilder:
    """``table.new_read_builder()``: filter, projection, limit; then scan and read."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self._predicate: Predicate | None = None
        self._projection: list[str] | None = None
        self._limit: int | None = None
        self._row_kind = False

    def with_row_kind(self, enabled: bool = True) -> ReadBuilder:
        """Add a ``_ROW_KIND`` column (+I/-U/+U/-D). With ``incremental-between`` on a
        primary-key table the read returns each change of those snapshots, unmerged."""
        self._row_kind = enabled
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return PredicateBuilder(list(self.table.schema.fields))

    def with_filter(self, predicate: Predicate | None) -> ReadBuilder:
        self._predicate = predicate
        return self

    def with_projection(self, columns: Sequence[str] | None) -> ReadBuilder:
        if columns is not None:
            self.table.schema.fields_of(list(columns))  # raises for unknown columns
        self._projection = None if columns is None else list(columns)
        return self

    def with_limit(self, limit: int | None) -> ReadBuilder:
        if limit is not None and limit < 0:
            raise InvalidArgumentError(f"limit must be >= 0, got {limit}")
        self._limit = limit
        return self

    def new_scan(self) -> TableScan:
        return TableScan(self.table, predicate=self._predicate, options=self.table.dynamic_options)

    def new_read(self) -> TableRead:
        return TableRead(
            self.table, projection=self._projection, predicate=self._predicate, limit=self._limit, row_kind=self._row_kind
        )

    def plan(self) -> Plan:
        return self.new_scan().plan()
