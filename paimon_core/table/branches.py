"""Branch handles of :class:`FileStoreTable` (a mixin): the handle's branch, its branches, and
``switch_to_branch`` (Java's ``FileStoreTable.switchToBranch``). The calls that change branches
(create, delete, fast-forward, rename, merge) are under ``table.maintenance``
(:class:`~paimon_core.table.maintenance.MaintenanceTable`); they run on the store
(:meth:`~paimon_core.store.file_store.FileStore.branch_manager`). A handle
works on one branch: ``main`` by default, another through ``catalog.get_table("db.t$branch_x")``,
``table.switch_to_branch("x")`` or ``table.copy({"branch": "x"})``; its reads, writes, tags,
consumers, expiry and rollback then use that branch's metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from paimon_core.branch.branch_manager import BranchManager
    from paimon_core.table.table import FileStoreTable

__all__ = ["TableBranches"]


class TableBranches:
    """branch, branch_manager, branches, switch_to_branch."""

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
