"""FileStoreTable: the facade over one table's files."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache

import pyarrow as pa

from paimon_core.branch.branch_names import BRANCH_OPTION, branch_of_options
from paimon_core.branch.table_branches import TableBranches
from paimon_core.consumer.consumer_manager import ConsumerManager
from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError, InvalidOptionError
from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.operation.commit.commit_guard import added_file_paths
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.operation.scan import FileStoreScan
from paimon_core.options import CoreOptions, validate_options
from paimon_core.options_support import check_batch_read, check_table_kind
from paimon_core.path_confinement import external_roots
from paimon_core.paths import PathFactory, partition_dir
from paimon_core.predicate import Predicate
from paimon_core.results import CommitResult
from paimon_core.schema.schema_manager import IMMUTABLE_OPTIONS, SchemaManager
from paimon_core.schema.table_schema import TableSchema
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import (
    Lock,
    LockedSnapshotCommit,
    RenamingSnapshotCommit,
    SnapshotCommit,
)
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.table.builders import BatchWriteBuilder, ReadBuilder, StreamWriteBuilder
from paimon_core.table.maintenance import TableMaintenance
from paimon_core.tag.tag_manager import TagManager
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)


_warned_paths: set[str] = set()


def _warn_unsafe_store(path: str) -> None:
    if path not in _warned_paths:
        _warned_paths.add(path)
        logger.warning(
            "Storage of %s has no atomic exclusive create: concurrent committers could overwrite "
            "each other's snapshot. Use a single committer or pass commit_lock= to the catalog.",
            path,
        )


class FileStoreTable(TableMaintenance, TableBranches):
    """One Paimon table: schema, snapshots, and factories for reads and writes."""

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
        self.file_io = file_io
        self.commit_lock = commit_lock
        self.path = path.rstrip("/")
        self.schema = schema
        self.name = name or self.path.rsplit("/", 1)[-1]
        self.dynamic_options = dict(dynamic_options or {})
        self.clock = clock
        self.options = CoreOptions({**schema.options, **self.dynamic_options})
        # a table kind paimon_core cannot read or maintain (chain table, blob columns ...): refused
        # here, where every table object is made, before anything is read or written
        check_table_kind(self.options.options, action="open the table", table=self.name)
        self.paths = PathFactory(
            self.path,
            data_file_prefix=self.options.data_file_prefix,
            file_format=self.options.file_format,
            external_roots=external_roots(self.options),
            branch=branch_of_options(self.options.options),
        )
        self.snapshot_manager = SnapshotManager(file_io, self.paths)
        self.schema_manager = SchemaManager(file_io, self.paths, clock=clock)
        self.tag_manager = TagManager(file_io, self.paths, clock=clock)
        self.consumer_manager = ConsumerManager(file_io, self.paths, clock=clock)
        self.partition_codec = PartitionCodec([f.type for f in schema.partition_fields])
        self._schema_cache = lru_cache(maxsize=256)(self._load_schema)
        self._legacy_partition_name = self.options.options.get("partition.legacy-name", "true").lower() == "true"

    def __getstate__(self) -> dict[str, object]:
        return {
            "file_io": self.file_io,
            "path": self.path,
            "schema": self.schema,
            "name": self.name,
            "dynamic_options": self.dynamic_options,
            "commit_lock": self.commit_lock,
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(  # type: ignore[misc]
            state["file_io"],
            state["path"],
            state["schema"],
            name=state["name"],
            dynamic_options=state["dynamic_options"],
            commit_lock=state.get("commit_lock"),
        )

    def __repr__(self) -> str:
        return f"FileStoreTable({self.name!r}, path={self.path!r}, schema_id={self.schema.id})"

    # --- schema --------------------------------------------------------------------
    @property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(list(self.schema.fields))

    def _load_schema(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id:
            return self.schema
        return self.schema_manager.schema(schema_id)

    def schema_manager_cached(self, schema_id: int) -> TableSchema:
        """Schema ``schema_id`` (cached: schema files never change)."""
        return self._schema_cache(schema_id)

    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    # --- paths ----------------------------------------------------------------------
    def partition_path(self, partition: bytes) -> str:
        if not self.schema.partition_keys:
            return ""
        return partition_dir(
            self.schema.partition_fields,
            self.partition_codec.decode(partition),
            default_partition_name=self.options.partition_default_name,
            legacy_name=self._legacy_partition_name,
        )

    def bucket_path(self, partition: bytes, bucket: int) -> str:
        return self.paths.bucket_path(self.partition_path(partition), bucket)

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
        return FileStoreScan(self.file_io, self.paths, self.partition_codec)

    def new_file_store_commit(self, commit_user: str) -> FileStoreCommit:
        snapshot_commit: SnapshotCommit
        if self.commit_lock is not None:
            snapshot_commit = LockedSnapshotCommit(self.snapshot_manager, self.commit_lock)
        else:
            if not self.file_io.atomic_publish_is_safe:
                _warn_unsafe_store(self.path)
            snapshot_commit = RenamingSnapshotCommit(self.snapshot_manager)
        return FileStoreCommit(
            file_io=self.file_io,
            paths=self.paths,
            snapshot_manager=self.snapshot_manager,
            schema=self.schema,
            commit_user=commit_user,
            table_name=self.name,
            options=self.options,
            clock=self.clock,
            snapshot_commit=snapshot_commit,
            added_file_paths=lambda changes: added_file_paths(self, changes),
            schema_of=self.schema_manager_cached,
        )

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
