"""Branch calls of :class:`FileStoreTable` (a mixin, as :mod:`paimon_core.table.maintenance`).

Java's ``FileStoreTable.createBranch / deleteBranch / fastForward / switchToBranch``; the
branches themselves are store-level (:meth:`~paimon_core.store.file_store.FileStore.branch_manager`,
:meth:`~paimon_core.store.file_store.FileStore.switch_to_branch`). A handle
works on one branch: ``main`` by default, another through ``catalog.get_table("db.t$branch_x")``,
``table.switch_to_branch("x")`` or ``table.copy({"branch": "x"})``; its reads, writes, tags,
consumers, expiry and rollback then use that branch's metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

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

__all__ = ["TableBranches"]


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
        return self._this.store.branch_manager()

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

        return rename_branch(self._this.store, from_branch, to_branch, dry_run=dry_run)

    @recorded("merge_branch")
    def merge_branch(
        self, source_branch: str, target_branch: str | None = None, *, dry_run: bool = False
    ) -> MergeBranchResult:
        """Commit the files of ``source_branch`` that ``target_branch`` (default ``main``) lacks
        to it, append-only tables only (Java's ``mergeBranch``)."""
        from paimon_core.branch.branch_merge import merge_branch

        return merge_branch(self._this.store, source_branch, target_branch, dry_run=dry_run)

    def switch_to_branch(self, name: str) -> FileStoreTable:
        """The same table on branch ``name``, at that branch's latest schema (Java's
        ``switchToBranch``: the handle's other dynamic options are not carried over)."""
        from paimon_core.table.table import FileStoreTable

        this = self._this
        store = this.store.switch_to_branch(name)
        if store is this.store:
            return this
        return FileStoreTable(
            store.file_io,
            store.path,
            store.schema,
            name=store.name,
            dynamic_options=store.dynamic_options,
            clock=store.clock,
            commit_lock=store.commit_lock,
        )
