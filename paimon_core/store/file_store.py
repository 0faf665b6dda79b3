"""FileStore: one table's storage, built once from the resolved options (Java's ``AbstractFileStore``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.branch.branch_names import (
    BRANCH_OPTION,
    SYSTEM_BRANCH_PREFIX,
    base_table_name,
    branch_of_options,
    check_branch_ref,
)
from paimon_core.consumer.consumer_manager import ConsumerManager
from paimon_core.exceptions import BranchNotFoundError
from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.operation.commit.commit_guard import added_file_paths
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.operation.scan import FileStoreScan
from paimon_core.options import CoreOptions
from paimon_core.options_support import check_table_kind
from paimon_core.path_confinement import external_roots
from paimon_core.paths import MAIN_BRANCH, PathFactory, partition_dir
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.schema.table_schema import TableSchema
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_commit import (
    Lock,
    LockedSnapshotCommit,
    RenamingSnapshotCommit,
    SnapshotCommit,
)
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.tag.tag_manager import TagManager
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

if TYPE_CHECKING:
    from paimon_core.branch.branch_manager import BranchManager

__all__ = ["FileStore", "create_file_store"]

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


class FileStore:
    """The storage of one table (or one branch of it) under one set of resolved options.

    Everything here is derived once from ``schema.options`` plus the handle's dynamic options, so a
    read, a write and a compaction of the same handle see the same options. Picklable: a Spark task
    gets the store and rebuilds the managers from it.
    """

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
        # here, where every store is made, before anything is read or written
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

    # --- pickling: the managers are rebuilt ---------------------------------------------
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
        return f"{type(self).__name__}({self.name!r}, path={self.path!r}, schema_id={self.schema.id})"

    # --- schema ---------------------------------------------------------------------------
    @property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(list(self.schema.fields))

    def _load_schema(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id:
            return self.schema
        return self.schema_manager.schema(schema_id)

    def schema_of(self, schema_id: int) -> TableSchema:
        """Schema ``schema_id`` (cached: schema files never change)."""
        return self._schema_cache(schema_id)

    # the name FileStoreTable has always used
    schema_manager_cached = schema_of

    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    @property
    def has_primary_key(self) -> bool:
        return bool(self.schema.primary_keys)

    @property
    def branch(self) -> str:
        return self.paths.branch

    def branch_manager(self) -> BranchManager:
        """The table's branches, seen from this store's branch (Java's ``FileSystemBranchManager``)."""
        from paimon_core.branch.branch_manager import BranchManager

        return BranchManager(self)

    def switch_to_branch(self, name: str) -> FileStore:
        """The store of branch ``name`` of the same table, at that branch's latest schema (Java's
        ``switchToBranch``: this store's other dynamic options are not carried over); this store
        when it is on ``name`` already. BranchNotFoundError when the branch has no schema."""
        name = check_branch_ref(name)
        if name == self.paths.branch:
            return self
        schema = SchemaManager(self.file_io, PathFactory(self.path, branch=name)).latest()
        base = base_table_name(self.name)
        if schema is None:
            raise BranchNotFoundError(f"Branch {name} does not exist in {base}", branch=name)
        is_main = name == MAIN_BRANCH
        return create_file_store(
            self.file_io,
            self.path,
            schema,
            name=base if is_main else f"{base}${SYSTEM_BRANCH_PREFIX}{name}",
            dynamic_options={} if is_main else {BRANCH_OPTION: name},
            clock=self.clock,
            commit_lock=self.commit_lock,
        )

    # --- paths ------------------------------------------------------------------------------
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

    # --- snapshots ----------------------------------------------------------------------------
    def latest_snapshot(self) -> Snapshot | None:
        return self.snapshot_manager.latest_snapshot()

    # --- factories ---------------------------------------------------------------------------
    def new_scan(self) -> FileStoreScan:
        """A manifest-level scan (Java's ``FileStore.newScan``)."""
        return FileStoreScan(self.file_io, self.paths, self.partition_codec)

    def new_commit(self, commit_user: str) -> FileStoreCommit:
        """The low-level committer (Java's ``FileStore.newCommit``). Writers commit through
        :class:`~paimon_core.table.table_commit.TableCommit`, which wraps this."""
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
            schema_of=self.schema_of,
        )

    # the names FileStoreTable has always used
    new_file_store_scan = new_scan
    new_file_store_commit = new_commit


def create_file_store(
    file_io: FileIO,
    path: str,
    schema: TableSchema,
    *,
    name: str | None = None,
    dynamic_options: Mapping[str, str] | None = None,
    clock: Clock = SYSTEM_CLOCK,
    commit_lock: Lock | None = None,
) -> FileStore:
    """The store of a table: :class:`KeyValueFileStore` with a primary key, else
    :class:`AppendOnlyFileStore` (Java's ``FileStoreTableFactory``)."""
    from paimon_core.store.append_only_file_store import AppendOnlyFileStore
    from paimon_core.store.key_value_file_store import KeyValueFileStore

    cls: type[FileStore] = KeyValueFileStore if schema.primary_keys else AppendOnlyFileStore
    return cls(file_io, path, schema, name=name, dynamic_options=dynamic_options, clock=clock, commit_lock=commit_lock)
