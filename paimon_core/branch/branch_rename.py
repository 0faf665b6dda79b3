"""Rename a branch (Java's ``FileSystemBranchManager.renameBranch``, procedure ``rename_branch``).

Java refuses renaming ``main`` ("Cannot rename the main branch."), a branch that does not exist,
a target that exists, and a target name ``validateBranch`` refuses (``main``, blank, all digits);
ours also the characters :func:`~paimon_core.branch.branch_names.check_branch_ref` refuses, a
branch the handle works on and one a table option reads (``scan.fallback-branch``), which the
rename would silently break.

Java renames the directory ``branch/branch-<from>`` in one file-system rename. A directory rename
is not available on object stores (and ours renames files only), so the branch is copied file by
file into ``branch/branch-<to>`` with exclusive creates (schemas first, snapshots and tags last),
then the old branch is deleted as ``delete_branch`` deletes it (its roots first). Interrupted, it
leaves both branches (never neither); run again, it refuses (the target exists): delete whichever
copy is incomplete. Data files are shared by every branch and are not touched.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.branch.branch_names import check_branch_ref, validate_new_branch_name
from paimon_core.exceptions import (
    BranchAlreadyExistsError,
    BranchNotFoundError,
    InvalidArgumentError,
    UnsafePathError,
)
from paimon_core.io.file_io import join
from paimon_core.path_confinement import link_below
from paimon_core.paths import MAIN_BRANCH, branch_path
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO
    from paimon_core.store.file_store import FileStore

__all__ = ["RenameBranchResult", "rename_branch"]

logger = logging.getLogger(__name__)

_FALLBACK_OPTIONS = ("scan.fallback-branch", "scan.primary-branch")
#: copied last (the roots), in this order: a branch with roots and no schema would stop orphan clean
_ROOT_DIRS = ("tag", "snapshot")


@dataclass(frozen=True)
class RenameBranchResult(_ToDict):
    """The rename ``rename_branch`` made (``dry_run``: would make)."""

    table: str
    from_branch: str
    to_branch: str
    dry_run: bool
    copied_files: int = 0
    result: bool = True  # Java's procedure output


def _walk(file_io: FileIO, root: str) -> list[str]:
    """Every file below ``root``, as paths relative to it (sorted); links are refused."""
    out: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        here = join(root, rel) if rel else root
        for st in file_io.list_status(here):
            child = f"{rel}/{st.name}" if rel else st.name
            if file_io.is_symlink(st.path):
                raise UnsafePathError(
                    f"{st.path} is a symbolic link; a branch holding one is not renamed (nothing changed)",
                    path=st.path,
                )
            if st.is_dir:
                stack.append(child)
            else:
                out.append(child)
    return sorted(out)


def _order(rel: str) -> tuple[int, str]:
    top = rel.split("/", 1)[0]
    if top == "schema":
        return (0, rel)
    if top in _ROOT_DIRS:
        return (2 + _ROOT_DIRS.index(top), rel)
    return (1, rel)


def rename_branch(store: FileStore, from_branch: str, to_branch: str, *, dry_run: bool = False) -> RenameBranchResult:
    """Rename branch ``from_branch`` of the table to ``to_branch`` (see the module docstring)."""
    from_branch = check_branch_ref(from_branch)
    if from_branch == MAIN_BRANCH:
        raise InvalidArgumentError("Cannot rename the main branch.", branch=from_branch)
    manager = store.branch_manager()
    file_io = store.file_io
    src, dst = branch_path(store.path, from_branch), None
    if not file_io.exists(src):
        raise BranchNotFoundError(f"Branch name '{from_branch}' doesn't exist in {store.name}.", branch=from_branch)
    to_branch = check_branch_ref(to_branch)
    if to_branch != MAIN_BRANCH and manager.branch_exists(to_branch):
        raise BranchAlreadyExistsError(f"Branch name '{to_branch}' already exists in {store.name}.", branch=to_branch)
    to_branch = validate_new_branch_name(to_branch)
    dst = branch_path(store.path, to_branch)
    if from_branch == store.branch:
        raise InvalidArgumentError(
            f"Cannot rename branch '{from_branch}' through a handle on it: open {store.name} on another branch",
            branch=from_branch,
        )
    for key in _FALLBACK_OPTIONS:
        if store.options.get(key) == from_branch:
            raise InvalidArgumentError(
                f"Cannot rename branch '{from_branch}' because it is configured as '{key}'. Unset '{key}' first.",
                branch=from_branch,
            )
    link = link_below(file_io, src, [store.path], include_self=True)
    if link is not None:
        raise UnsafePathError(
            f"Cannot rename branch '{from_branch}' of {store.name}: {link} is a symbolic link (nothing changed)",
            path=link,
            branch=from_branch,
        )
    files = sorted(_walk(file_io, src), key=_order)
    if dry_run:
        return RenameBranchResult(store.name, from_branch, to_branch, True, len(files))
    for rel in files:
        data = file_io.read_bytes(join(src, rel))
        if not file_io.try_write_atomic(join(dst, rel), data):
            raise BranchAlreadyExistsError(
                f"Branch name '{to_branch}' already exists in {store.name} (created concurrently: {join(dst, rel)}); "
                f"branch '{from_branch}' is unchanged",
                branch=to_branch,
            )
    manager.delete_branch(from_branch)
    logger.info("Renamed branch %s of %s to %s (%d files)", from_branch, store.name, to_branch, len(files))
    return RenameBranchResult(store.name, from_branch, to_branch, False, len(files))
