"""FileStoreTable: the facade over one table's files."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pyarrow as pa

from paimon_core.branch.branch_names import BRANCH_OPTION, branch_of_options
from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError, InvalidOptionError
from paimon_core.io.file_io import FileIO
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.operation.scan import FileStoreScan
from paimon_core.options import validate_options
from paimon_core.options_support import check_batch_read
from paimon_core.predicate import Predicate
from paimon_core.results import CommitResult
from paimon_core.schema.schema_manager import IMMUTABLE_OPTIONS
from paimon_core.schema.table_schema import TableSchema
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import Lock
from paimon_core.store import FileStore, create_file_store
from paimon_core.table.branches import TableBranches
from paimon_core.table.builders import BatchWriteBuilder, ReadBuilder, StreamWriteBuilder
from paimon_core.table.inspect_table import InspectTable
from paimon_core.table.maintenance import MaintenanceTable
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)


class FileStoreTable(TableBranches):
    """One Paimon table: schema, snapshots, and factories for reads and writes; its maintenance
    calls under :attr:`maintenance`, its metadata as Arrow tables under :attr:`inspect`."""

    def __init__(
        self,
        file_io: FileIO,
        path: str,
        schema: TableSchema,
        *,
        name: str | None = None,
        dynamic_options: Mapping[str, str] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        commit_lock: Lock | None = None,
    ) -> None:
        # the storage, built once from the resolved options (Java's FileStoreTable wraps a FileStore)
        self.store: FileStore = create_file_store(
            file_io, path, schema, name=name, dynamic_options=dynamic_options, clock=clock, commit_lock=commit_lock
        )
        self._bind(self.store)

    @classmethod
    def from_store(cls, store: FileStore) -> FileStoreTable:
        """The table over an existing store (a Spark task's unpickled store, another branch's)."""
        table = cls.__new__(cls)
        table._bind(store)
        return table

    def _bind(self, store: FileStore) -> None:
        # the table shares the store's objects: table.paths is table.store.paths, and so on
        self.store = store
        self.file_io = store.file_io
        self.commit_lock = store.commit_lock
        self.path = store.path
        self.schema = store.schema
        self.name = store.name
        self.dynamic_options = store.dynamic_options
        self.clock = store.clock
        self.options = store.options
        self.paths = store.paths
        self.snapshot_manager = store.snapshot_manager
        self.schema_manager = store.schema_manager
        self.tag_manager = store.tag_manager
        self.consumer_manager = store.consumer_manager
        self.partition_codec = store.partition_codec

    def __getstate__(self) -> dict[str, object]:
        return {"store": self.store}  # the store pickles what rebuilds it

    def __setstate__(self, state: dict[str, object]) -> None:
        store = state["store"]
        assert isinstance(store, FileStore)
        self._bind(store)

    def __repr__(self) -> str:
        return f"FileStoreTable({self.name!r}, path={self.path!r}, schema_id={self.schema.id})"

    # --- namespaces ----------------------------------------------------------------
    @property
    def maintenance(self) -> MaintenanceTable:
        """Expiry, orphan cleanup, compaction, partitions, tags, rollback, branches, consumers
        (``table.maintenance.expire_snapshots(...)``; see :mod:`paimon_core.table.maintenance`)."""
        return MaintenanceTable(self)

    @property
    def inspect(self) -> InspectTable:
        """The system tables as Arrow (``table.inspect.snapshots()``; see
        :mod:`paimon_core.table.inspect_table`)."""
        return InspectTable(self)

    # --- schema --------------------------------------------------------------------
    @property
    def arrow_schema(self) -> pa.Schema:
        return self.store.arrow_schema

    def schema_manager_cached(self, schema_id: int) -> TableSchema:
        """Schema ``schema_id`` (cached: schema files never change)."""
        return self.store.schema_of(schema_id)

    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    # --- paths ----------------------------------------------------------------------
    def partition_path(self, partition: bytes) -> str:
        return self.store.partition_path(partition)

    def bucket_path(self, partition: bytes, bucket: int) -> str:
        return self.store.bucket_path(partition, bucket)

    # --- factories --------------------------------------------------------------------
    def copy(self, dynamic_options: Mapping[str, str]) -> FileStoreTable:
        """The same table with extra options for this handle only (e.g. ``scan.snapshot-id``).

        Options that decide where rows live (``bucket``, ``merge-engine``...) cannot change.
        Time travel to a snapshot or tag reads with that snapshot's schema, as Java does.
        """
        opts = dict(dynamic_options)
        validate_options(opts)
        if BRANCH_OPTION in opts and branch_of_options(opts) != self.paths.branch:
            # another branch: its own schema and snapshots (Java's switchToBranch)
            rest = {k: v for k, v in opts.items() if k != BRANCH_OPTION}
            switched = self.switch_to_branch(branch_of_options(opts))
            return switched.copy(rest) if rest else switched
        defaults = {"bucket": "-1", "merge-engine": "deduplicate"}
        for key in IMMUTABLE_OPTIONS & opts.keys():
            if opts[key] != self.schema.options.get(key, defaults.get(key)):
                raise InvalidOptionError(f"Option '{key}' cannot be changed dynamically", key=key)
        merged = {**self.dynamic_options, **opts}
        schema = self.schema
        travel = self._time_travel_schema_id(merged)
        if travel is not None and travel != schema.id:
            schema = self.schema_manager_cached(travel)
        return FileStoreTable(
            self.file_io,
            self.path,
            schema,
            name=self.name,
            dynamic_options=merged,
            clock=self.clock,
            commit_lock=self.commit_lock,
        )

    def _time_travel_schema_id(self, options: Mapping[str, str]) -> int | None:
        from paimon_core.table.snapshot_resolver import resolve

        keys = ("scan.snapshot-id", "scan.tag-name", "scan.timestamp-millis")
        if not any(options.get(k) for k in keys):
            return None
        target = resolve({k: options[k] for k in keys if options.get(k)}, self.snapshot_manager, self.tag_manager)
        return target.snapshot.schema_id if target.snapshot is not None else None

    def new_file_store_scan(self) -> FileStoreScan:
        return self.store.new_scan()

    def new_file_store_commit(self, commit_user: str) -> FileStoreCommit:
        return self.store.new_commit(commit_user)

    def new_batch_write_builder(self, *, commit_user: str | None = None) -> BatchWriteBuilder:
        """One batch write and commit. Pass ``commit_user`` (e.g. derived from a job's run id)
        to make the commit idempotent: a (commit user, identifier) already committed is skipped."""
        return BatchWriteBuilder(self, commit_user=commit_user)

    def new_stream_write_builder(self, commit_user: str | None = None) -> StreamWriteBuilder:
        return StreamWriteBuilder(self, commit_user)

    def new_read_builder(self) -> ReadBuilder:
        check_batch_read(self.options.options, table=self.name)  # scan.fallback-branch: not followed
        return ReadBuilder(self)

    # --- conveniences ------------------------------------------------------------------
    def latest_snapshot(self) -> Snapshot | None:
        return self.snapshot_manager.latest_snapshot()

    def to_arrow(
        self,
        *,
        columns: list[str] | None = None,
        predicate: Predicate | None = None,
        limit: int | None = None,
    ) -> pa.Table:
        """Read the table (honouring this handle's time-travel options) into one Arrow table."""
        rb = self.new_read_builder().with_projection(columns).with_filter(predicate).with_limit(limit)
        return rb.new_read().to_arrow(rb.new_scan().plan().splits)

    def write_arrow(self, data: pa.Table | pa.RecordBatchReader, *, overwrite: bool | Mapping[str, object] = False) -> CommitResult:
        """Write and commit in one call. Files of a failed commit are deleted again."""
        from paimon_core.table.input_conform import check_write_input

        check_write_input(data, api="write_arrow")
        if not isinstance(overwrite, (bool, Mapping)):
            raise InvalidArgumentError(
                f"write_arrow: overwrite must be True/False or a partition spec dict; got {type(overwrite).__name__}"
            )
        builder = self.new_batch_write_builder()
        if overwrite:
            builder.overwrite(overwrite if isinstance(overwrite, Mapping) else None)
        write = builder.new_write()
        try:
            write.write_arrow(data)
            messages = write.prepare_commit()
        except BaseException:
            write.abort()
            raise
        commit = builder.new_commit()
        try:
            return commit.commit(messages)
        except CommitStateUnknownError:
            raise  # the snapshot may reference the files: never delete them
        except BaseException:
            commit.abort_unless_landed(messages)
            raise
