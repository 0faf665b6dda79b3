"""Branch names: what a new branch may be called, and how a table handle names its branch.

Java's ``BranchManager.validateBranch`` refuses ``main`` (the default branch), blank names and
purely numeric names (they would read as snapshot ids in ``$branch_<n>``). A branch name also
becomes a directory (``branch/branch-<name>``) and part of an identifier (``db.t$branch_<name>``,
split on ``.`` and ``$``), so ours allows letters, digits, ``_`` and ``-`` only: no ``/``,
``..``, ``.`` or ``$`` that would escape the directory or break the identifier.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.paths import MAIN_BRANCH

__all__ = [
    "BRANCH_OPTION",
    "SYSTEM_BRANCH_PREFIX",
    "base_table_name",
    "branch_of_options",
    "check_branch_ref",
    "split_branch_names",
    "validate_new_branch_name",
]

#: The table option naming the branch a handle reads and writes (Java's ``CoreOptions.BRANCH``).
BRANCH_OPTION = "branch"
#: ``db.t$branch_x``: the identifier suffix selecting branch ``x`` (Java's ``Identifier``).
SYSTEM_BRANCH_PREFIX = "branch_"

_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


def check_branch_ref(name: object) -> str:
    """``name`` if it can name a branch (``main`` included); else InvalidArgumentError."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgumentError(
            f"Branch name {name!r} is blank.", branch=name if isinstance(name, str) else None
        )
    if not _NAME.match(name):
        raise InvalidArgumentError(
            f"Invalid branch name {name!r}: use letters, digits, '_' or '-' "
            "(no '/', '.', '$', spaces or control characters)",
            branch=name,
        )
    return name


def validate_new_branch_name(name: object) -> str:
    """Java's ``BranchManager.validateBranch`` plus the character rule of :func:`check_branch_ref`."""
    name = check_branch_ref(name)
    if name == MAIN_BRANCH:
        raise InvalidArgumentError(
            f"Branch name '{MAIN_BRANCH}' is the default branch and cannot be used.", branch=name
        )
    if name.isdigit():
        raise InvalidArgumentError(f"Branch name cannot be pure numeric string but is '{name}'.", branch=name)
    return name


def branch_of_options(options: Mapping[str, str]) -> str:
    """The branch a table handle with these options works on (``main`` unless ``branch`` is set)."""
    value = options.get(BRANCH_OPTION)
    if value is None or not value.strip():
        return MAIN_BRANCH  # Java's BranchManager.normalizeBranch
    return check_branch_ref(value)


def base_table_name(name: str) -> str:
    """``db.t$branch_x`` -> ``db.t``: the table's name without the branch suffix."""
    return name.split(f"${SYSTEM_BRANCH_PREFIX}", 1)[0]


def split_branch_names(names: str | Sequence[str]) -> list[str]:
    """``"a, b"`` or ``["a", "b"]`` -> ``["a", "b"]`` (deduplicated, each checked)."""
    parts = names.split(",") if isinstance(names, str) else list(names)
    out = [check_branch_ref(p.strip() if isinstance(p, str) else p) for p in parts]
    if not out:
        raise InvalidArgumentError("No branch name given", branch=names)
    return list(dict.fromkeys(out))
