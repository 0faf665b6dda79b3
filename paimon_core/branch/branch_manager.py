"""Create, delete and fast-forward branches (Java's ``FileSystemBranchManager``).

Layout (Java's): branch ``x`` of a table lives in ``<table>/branch/branch-x/`` with its own
``snapshot/``, ``schema/``, ``tag/``, ``changelog/`` and ``consumer/`` directories; manifests,
index, statistics and data files stay in the table's own directories and are shared by every
branch. So every operation here reads and writes only metadata files: no data file is ever
deleted (files only a deleted branch referenced become orphans for ``remove_orphan_files``,
which keeps every file a live branch references).

* :meth:`BranchManager.create_branch` from a tag copies the tag, the tagged snapshot (written
  from the tag when the snapshot itself expired) and the schemas up to the snapshot's into the
  branch; an empty branch gets the schemas up to the latest one only.
* :meth:`BranchManager.delete_branch` removes the branch directory, its snapshots and tags first
  (so an interrupted delete leaves a branch with fewer roots, never roots without a schema).
  A branch directory that is a symbolic link (or whose ``snapshot/`` or ``tag/`` is one, or lies
  below one) is refused: deleting through it would delete the files of the link's target.
* :meth:`BranchManager.fast_forward` makes the current branch (usually ``main``) the branch:
  the current branch's snapshots and tags from the branch's earliest snapshot on, and its
  schemas from that snapshot's schema on, are replaced by the branch's. Interrupted, it can be
  run again and finishes the same way.

The manager works from the store of a table handle (:meth:`FileStore.branch_manager
<paimon_core.store.file_store.FileStore.branch_manager>`): it copies from, and fast-forwards into,
the handle's own branch (``main`` for ``db.t``, ``x`` for ``db.t$branch_x``), as Java's does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.branch.branch_names import check_branch_ref, split_branch_names, validate_new_branch_name
from paimon_core.exceptions import (
    BranchAlreadyExistsError,
    BranchNotFoundError,
    InvalidArgumentError,
    SnapshotNotFoundError,
    UnsafePathError,
)
from paimon_core.operation.referenced_files import list_branches
from paimon_core.path_confinement import link_below
from paimon_core.paths import MAIN_BRANCH, PathFactory, branch_path
from paimon_core.results import _ToDict
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.tag.tag_manager import TagManager, trim_to_snapshot

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO
    from paimon_core.store.file_store import FileStore

__all__ = ["BranchManager", "CreateBranchResult", "DeleteBranchResult", "FastForwardResult"]

logger = logging.getLogger(__name__)

_FALLBACK_OPTIONS = ("scan.fallback-branch", "scan.primary-branch")


@dataclass(frozen=True)
class CreateBranchResult(_ToDict):
    """The branch ``create_branch`` made: from ``tag`` (its snapshot) or empty (no snapshot)."""

    table: str
    branch: str
    tag: str | None
    snapshot_id: int | None
    schema_id: int
    created: bool = True  # False: ignore_if_exists and the branch was there already


@dataclass(frozen=True)
class DeleteBranchResult(_ToDict):
    """The branches ``delete_branch`` removed (or, with ``dry_run``, would remove)."""

    table: str
    dry_run: bool
    deleted_branches: tuple[str, ...]
    deleted_snapshots: int = 0  # snapshot files of those branches
    deleted_tags: int = 0


@dataclass(frozen=True)
class FastForwardResult(_ToDict):
    """What ``fast_forward`` replaced in the target branch (``into``) with ``branch``'s metadata."""

    table: str
    branch: str
    into: str
    dry_run: bool
    from_snapshot_id: int  # the branch's earliest snapshot: the target's from here on is replaced
    latest_snapshot_id: int
    removed_snapshots: tuple[int, ...] = ()
    removed_schemas: tuple[int, ...] = ()
    removed_tags: tuple[str, ...] = ()
    copied_snapshots: tuple[int, ...] = ()
    copied_schemas: tuple[int, ...] = ()
    copied_tags: tuple[str, ...] = ()


class BranchManager:
    """Branches of the table behind one handle; copies from and fast-forwards into its branch."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.file_io: FileIO = store.file_io
        self.table_path = store.path
        self.current = store.paths.branch

    # --- lookups ------------------------------------------------------------------------
    def branch_root(self, name: str) -> str:
        return branch_path(self.table_path, check_branch_ref(name))

    def branches(self) -> list[str]:
        """Names of the table's branches (``main`` not included), sorted."""
        return list_branches(self.file_io, self.table_path)

    def branch_exists(self, name: str) -> bool:
        name = check_branch_ref(name)
        return name == MAIN_BRANCH or self.file_io.exists(self.branch_root(name))

    def _paths(self, name: str) -> PathFactory:
        return PathFactory(self.table_path, branch=name)

    def _require(self, name: str) -> str:
        name = check_branch_ref(name)
        if name == MAIN_BRANCH or not self.file_io.exists(self.branch_root(name)):
            raise BranchNotFoundError(
                f"Branch name '{name}' doesn't exist in {self.store.name}.", branch=name
            )
        return name

    # --- create -------------------------------------------------------------------------
    def create_branch(
        self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False
    ) -> CreateBranchResult:
        """A branch from ``tag`` of this handle's branch, or an empty one (schema only)."""
        name = validate_new_branch_name(name)
        table = self.store.name
        if self.file_io.exists(self.branch_root(name)):
            if ignore_if_exists:
                latest = SchemaManager(self.file_io, self._paths(name)).list_ids()
                return CreateBranchResult(table, name, tag, None, latest[-1] if latest else -1, created=False)
            raise BranchAlreadyExistsError(f"Branch name '{name}' already exists in {table}.", branch=name)
        src_tags, src_snaps, src_schemas = (
            self.store.tag_manager,
            self.store.snapshot_manager,
            self.store.schema_manager,
        )
        dst = self._paths(name)
        if tag is None:
            schema = src_schemas.latest()
            if schema is None:  # pragma: no cover - a loaded table always has a schema
                raise InvalidArgumentError(f"Table {table} has no schema", branch=name)
            self._copy_schemas(src_schemas, dst, schema.id, name)
            logger.info("Created empty branch %s of %s (schema %d)", name, table, schema.id)
            return CreateBranchResult(table, name, None, None, schema.id)
        tagged = trim_to_snapshot(src_tags.get(tag))  # TagNotFoundError names the tag
        # schemas first: a branch directory with roots but no schema stops orphan cleanup
        self._copy_schemas(src_schemas, dst, tagged.schema_id, name)
        self._publish(dst.tag_path(tag), self.file_io.read_bytes(src_tags.tag_path(tag)), name)
        try:
            data = self.file_io.read_bytes(src_snaps.snapshot_path(tagged.id))
        except FileNotFoundError:  # expired: the tag kept its content (Java writes it from the tag)
            data = tagged.to_json().encode()
        self._publish(dst.snapshot_path(tagged.id), data, name)
        branch_snaps = SnapshotManager(self.file_io, dst)
        branch_snaps.commit_earliest_hint(tagged.id)
        branch_snaps.commit_latest_hint(tagged.id)
        logger.info("Created branch %s of %s from tag %s (snapshot %d)", name, table, tag, tagged.id)
        return CreateBranchResult(table, name, tag, tagged.id, tagged.schema_id)

    def _copy_schemas(self, src: SchemaManager, dst: PathFactory, up_to: int, name: str) -> None:
        for sid in src.list_ids():
            if sid <= up_to:
                self._publish(dst.schema_path(sid), self.file_io.read_bytes(src.paths.schema_path(sid)), name)

    def _publish(self, path: str, data: bytes, name: str) -> None:
        if not self.file_io.try_write_atomic(path, data):
            raise BranchAlreadyExistsError(
                f"Branch name '{name}' already exists in {self.store.name} (created concurrently: {path}).",
                branch=name,
            )

    # --- delete -------------------------------------------------------------------------
    def delete_branch(self, names: str | Sequence[str], *, dry_run: bool = False) -> DeleteBranchResult:
        """Remove branches (one name, a comma-separated list or a list); all must exist, and
        none may be this handle's branch or a fallback branch the table reads."""
        wanted = split_branch_names(names)
        for n in wanted:
            self._require(n)
            if n == self.current:
                raise InvalidArgumentError(
                    f"Cannot delete branch '{n}' through a handle on it: open the table on another branch",
                    branch=n,
                )
            for key in _FALLBACK_OPTIONS:
                if self.store.options.get(key) == n:
                    raise InvalidArgumentError(
                        f"Cannot delete branch '{n}' because it is configured as '{key}'. Unset '{key}' first.",
                        branch=n,
                    )
        for n in wanted:
            self._refuse_links(n)
        snaps = tags = 0
        for n in wanted:
            paths = self._paths(n)
            snap_files = [st.path for st in self.file_io.list_files(paths.snapshot_dir)]
            tag_files = [st.path for st in self.file_io.list_files(paths.tag_dir)]
            snaps += len(SnapshotManager(self.file_io, paths).list_snapshot_ids())
            tags += len(TagManager(self.file_io, paths).list_names())
            if dry_run:
                continue
            # roots first: an interrupted delete leaves fewer roots, never roots without a schema
            for path in [*snap_files, *tag_files]:
                self.file_io.delete(path)
            self.file_io.delete(paths.branch_root, recursive=True)
            logger.info("Deleted branch %s of %s", n, self.store.name)
        return DeleteBranchResult(self.store.name, dry_run, tuple(wanted), snaps, tags)

    def _refuse_links(self, name: str) -> None:
        """:class:`UnsafePathError` when the branch directory, or its ``snapshot/`` or ``tag/``, is
        a symbolic link or lies below one: deleting through it would delete the files of the
        directory it points to. Links are never followed, nor removed (that is the operator's call)."""
        paths = self._paths(name)
        for d in (paths.branch_root, paths.snapshot_dir, paths.tag_dir):
            link = link_below(self.file_io, d, [self.table_path], include_self=True)
            if link is not None:
                raise UnsafePathError(
                    f"Cannot delete branch '{name}' of {self.store.name}: {link} is a symbolic link, and "
                    "deleting through it would delete the files it points to; nothing was deleted "
                    "(remove the link by hand if the branch should go)",
                    path=link,
                    branch=name,
                )

    # --- fast-forward ---------------------------------------------------------------------
    def fast_forward(self, name: str, *, dry_run: bool = False) -> FastForwardResult:
        """Make this handle's branch (``main`` usually) equal to branch ``name`` from the
        branch's earliest snapshot on (Java's ``fastForward``)."""
        name = check_branch_ref(name)
        if name == MAIN_BRANCH:
            raise InvalidArgumentError(f"Branch name '{name}' do not use in fast-forward.", branch=name)
        if name == self.current:
            raise InvalidArgumentError(
                f"Fast-forward from the current branch '{name}' is not allowed.", branch=name
            )
        self._require(name)
        src = self._paths(name)
        src_snaps = SnapshotManager(self.file_io, src)
        branch_ids = src_snaps.list_snapshot_ids()
        if not branch_ids:
            raise SnapshotNotFoundError(
                f"Cannot fast forward branch {name}, because it does not have snapshot.", branch=name
            )
        earliest = src_snaps.earliest_snapshot_id() or branch_ids[0]
        earliest_schema = src_snaps.snapshot(earliest).schema_id
        dst = self.store.paths
        dst_snaps, dst_schemas, dst_tags = (
            self.store.snapshot_manager,
            self.store.schema_manager,
            self.store.tag_manager,
        )
        removed_snaps = [i for i in dst_snaps.list_snapshot_ids() if i >= earliest]
        removed_schemas = [i for i in dst_schemas.list_ids() if i >= earliest_schema]
        removed_tags = [n for n, t in dst_tags.tags().items() if t.id >= earliest]
        copy_snaps = [i for i in branch_ids if i >= earliest]
        src_schemas = SchemaManager(self.file_io, src)
        copy_schemas = src_schemas.list_ids()
        src_tags = TagManager(self.file_io, src)
        copy_tags = src_tags.list_names()
        result = FastForwardResult(
            self.store.name, name, self.current, dry_run, earliest, copy_snaps[-1],
            tuple(removed_snaps), tuple(removed_schemas), tuple(removed_tags),
            tuple(copy_snaps), tuple(copy_schemas), tuple(copy_tags),
        )  # fmt: skip
        if dry_run:
            return result
        # Java's order: drop the LATEST hint and the replaced metadata, then copy the branch's.
        # Files the branch has too are overwritten in place (atomically) instead of deleted
        # first, so the target never lacks, say, its schema-0 while this runs.
        old_earliest = dst_snaps.earliest_snapshot_id()
        self.file_io.delete(f"{dst.snapshot_dir}/LATEST")
        for path in (
            [dst.snapshot_path(i) for i in removed_snaps if i not in set(copy_snaps)]
            + [dst.schema_path(i) for i in removed_schemas if i not in set(copy_schemas)]
            + [dst.tag_path(n) for n in removed_tags if n not in set(copy_tags)]
        ):
            self.file_io.delete(path)
        for i in copy_snaps:
            self.file_io.write_bytes(
                dst.snapshot_path(i), self.file_io.read_bytes(src.snapshot_path(i)), overwrite=True
            )
        for i in copy_schemas:
            self.file_io.write_bytes(
                dst.schema_path(i), self.file_io.read_bytes(src.schema_path(i)), overwrite=True
            )
        for n in copy_tags:
            self.file_io.write_bytes(
                dst.tag_path(n), self.file_io.read_bytes(src.tag_path(n)), overwrite=True
            )
        # hints of this branch, not copies of the branch's: its older snapshots stay readable,
        # and files an interrupted expiry left below its EARLIEST hint stay hidden
        keep_older = old_earliest is not None and old_earliest < earliest
        dst_snaps.commit_earliest_hint(old_earliest if keep_older and old_earliest is not None else earliest)
        dst_snaps.commit_latest_hint(copy_snaps[-1])
        logger.info(
            "Fast-forwarded %s of %s to branch %s: snapshots %d..%d replaced (%d removed, %d copied)",
            self.current, self.store.name, name, earliest, copy_snaps[-1], len(removed_snaps), len(copy_snaps),
        )  # fmt: skip
        return result
