"""Write and read builders (the API shape pypaimon and Paimon's Java API share)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.commit.committer import OverwriteSpec, new_commit_user
from paimon_core.predicate import Predicate, PredicateBuilder
from paimon_core.results import CommitResult
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.source import Plan
from paimon_core.table.table_commit import TableCommit, delete_uncommitted
from paimon_core.table.table_read import TableRead
from paimon_core.table.table_scan import TableScan
from paimon_core.table.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

logger = logging.getLogger(__name__)


class BatchTableCommit:
    """Commits the messages of one batch job as one snapshot: a :class:`TableCommit` that commits
    once (the one commit path of every writer, see :mod:`paimon_core.table.table_commit`)."""

    def __init__(
        self, table: FileStoreTable, commit_user: str, overwrite: OverwriteSpec | None, *, user_given: bool = False
    ) -> None:
        self.table = table
        self.commit_user = commit_user
        self.overwrite = overwrite
        self.user_given = user_given
        # A generated batch commit user is fresh and commits once: there is no earlier commit of
        # it to look for, so skip the history walk (as Java's batch commit). A caller-given user
        # (e.g. from a job's run id) is checked, so re-running the job commits nothing twice.
        self._commit = TableCommit(table, commit_user, overwrite=overwrite, check_committed=user_given)
        self._done = False
        self._identifier = BATCH_COMMIT_IDENTIFIER

    def commit(self, messages: Sequence[CommitMessage], commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> CommitResult:
        if self._done:
            raise InvalidArgumentError("A BatchTableCommit commits once; create a new write builder for the next batch")
        self._done = True
        self._identifier = commit_identifier
        return self._commit.commit(messages, commit_identifier)

    def truncate(self) -> CommitResult:
        """Remove all rows (a new OVERWRITE snapshot; old files stay for time travel)."""
        self._done = True
        return self._commit.truncate(BATCH_COMMIT_IDENTIFIER)

    def abort_unless_landed(self, messages: Sequence[CommitMessage]) -> bool:
        """After :meth:`commit` raised: delete the messages' files unless its snapshot landed after
        all. Returns whether they were deleted; when the history cannot be read the files stay."""
        return self._commit.abort_unless_landed(messages, self._identifier)

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the files of messages that will never be committed."""
        delete_uncommitted(self.table, messages)


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


class StreamTableCommit(TableCommit):
    """Commits with a caller-chosen identifier; an identifier already committed is a no-op. Staged
    rows of postpone-bucket tables stay in ``bucket-postpone`` (a stream's commit)."""

    def __init__(self, table: FileStoreTable, commit_user: str) -> None:
        super().__init__(table, commit_user, check_committed=True, batch=False)


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
