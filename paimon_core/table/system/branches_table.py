"""``$branches``: one row per branch of the table (Java's ``BranchesTable``).

``create_time`` is the branch directory's modification time as a wall-clock time in the local
zone (Java reads ``getModificationTime`` of ``branch/branch-<name>``); ``main`` is not listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.paths import BRANCH_PREFIX
from paimon_core.table.system.rendering import local_wall_millis

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["SCHEMA", "read"]

SCHEMA = pa.schema(
    [
        pa.field("branch_name", pa.string(), nullable=False),
        pa.field("create_time", pa.timestamp("ms"), nullable=False),
    ]
)


def read(table: FileStoreTable) -> pa.Table:
    """Every ``branch/branch-<name>`` directory, by name."""
    dirs = {
        st.name[len(BRANCH_PREFIX) :]: st.mtime_millis
        for st in table.file_io.list_dirs(table.paths.branch_dir)
        if st.name.startswith(BRANCH_PREFIX) and len(st.name) > len(BRANCH_PREFIX)
    }
    names = sorted(dirs)
    return pa.Table.from_arrays(
        [
            pa.array(names, pa.string()),
            pa.array([local_wall_millis(dirs[n]) for n in names], pa.timestamp("ms")),
        ],
        schema=SCHEMA,
    )
