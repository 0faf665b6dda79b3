"""Branch calls of :class:`FileStoreTable` (a mixin, as :mod:`paimon_core.table.maintenance`).

Java's ``FileStoreTable.createBranch / deleteBranch / fastForward / switchToBranch``. A handle
works on one branch: ``main`` by default, another through ``catalog.get_table("db.t$branch_x")``,
``table.switch_to_branch("x")`` or ``table.copy({"branch": "x"})``; its reads, writes, tags,
consumers, expiry and rollback then use that branch's metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from paimon_core.branch.branch_names import BRANCH_OPTION, SYSTEM_BRANCH_PREFIX, check_branch_ref
from paimon_core.ledger.recorder import recorded

if TYPE_CHECKING:
    from paimon_core.branch.branch_manager import (
        BranchManager,
        CreateBranchResult,
        DeleteBranchResult,
        FastForwardResult,
    )
    from paimon_core.branch.branch_merge import MergeBranchResult
    from paimon_core.branch.branch_rename import RenameBranchResult
    from paimon_core.table.table import FileStoreTable

__all__ = ["TableBranches", "base_table_name"]


def base_table_name(name: str) -> str:
    """``db.t$branch_x`` -> ``db.t``."""
    return name.split(f"${SYSTEM_BRANCH_PREFIX}", 1)[0]


class TableBranches:
    """create_branch, delete_branch, fast_forward, branches, switch_to_branch."""

    @property
    def _this(self) -> FileStoreTable:
        return cast("FileStoreTable", self)  # the mixin is only ever part of FileStoreTable

    @property
    def branch(self) -> str:
        """The branch this handle reads and writes (``main`` unless switched)."""
        return self._this.paths.branch

    def branch_manager(self) -> BranchManager:
        from paimon_core.branch.branch_manager import BranchManager

        return BranchManager(self._this)

    def branches(self) -> list[str]:
        """The table's branches (``main`` not included), sorted."""
        return self.branch_manager().branches()

    @recorded("create_branch")
    def create_branch(
        self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False
    ) -> CreateBranchResult:
        """Branch ``name`` from ``tag`` of this handle's branch, or empty (the latest schema only)."""
        return self.branch_manager().create_branch(name, tag, ignore_if_exists=ignore_if_exists)

    @recorded("delete_branch")
    def delete_branch(self, names: str | Sequence[str], *, dry_run: bool = False) -> DeleteBranchResult:
        """Remove branches (a name, ``"a,b"`` or a list): their metadata only; data files they
        shared stay, files only they referenced are left for ``remove_orphan_files``."""
        return self.branch_manager().delete_branch(names, dry_run=dry_run)

    @recorded("fast_forward")
    def fast_forward(self, name: str, *, dry_run: bool = False) -> FastForwardResult:
        """Replace this handle's branch, from ``name``'s earliest snapshot on, with branch ``name``."""
        return self.branch_manager().fast_forward(name, dry_run=dry_run)

    @recorded("rename_branch")
    def rename_branch(self, from_branch: str, to_branch: str, *, dry_run: bool = False) -> RenameBranchResult:
        """Rename branch ``from_branch`` to ``to_branch`` (Java's ``renameBranch``)."""
        from paimon_core.branch.branch_rename import rename_branch

        return rename_branch(self._this, from_branch, to_branch, dry_run=dry_run)

    @recorded("merge_branch")
    def merge_branch(
        self, source_branch: str, target_branch: str | None = None, *, dry_run: bool = False
    ) -> MergeBranchResult:
        """Commit the files of ``source_branch`` that ``target_branch`` (default ``main``) lacks
        to it, append-only tables only (Java's ``mergeBranch``)."""
        from paimon_core.branch.branch_merge import merge_branch

        return merge_branch(self._this, source_branch, target_branch, dry_run=dry_run)

    def switch_to_branch(self, name: str) -> FileStoreTable:
        """The same table on branch ``name``, at that branch's latest schema (Java's
        ``switchToBranch``: the handle's other dynamic options are not carried over)."""
        from paimon_core.exceptions import BranchNotFoundError
        from paimon_core.paths import MAIN_BRANCH, PathFactory
        from paimon_core.schema.schema_manager import SchemaManager
        from paimon_core.table.table import FileStoreTable

        this = self._this
        name = check_branch_ref(name)
        if name == this.paths.branch:
            return this
        schema = SchemaManager(this.file_io, PathFactory(this.path, branch=name)).latest()
        if schema is None:
            raise BranchNotFoundError(
                f"Branch {name} does not exist in {base_table_name(this.name)}", branch=name
            )
        base = base_table_name(this.name)
        is_main = name == MAIN_BRANCH
        return FileStoreTable(
            this.file_io,
            this.path,
            schema,
            name=base if is_main else f"{base}${SYSTEM_BRANCH_PREFIX}{name}",
            dynamic_options={} if is_main else {BRANCH_OPTION: name},
            clock=this.clock,
            commit_lock=this.commit_lock,
        )
