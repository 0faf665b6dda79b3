"""A mixed warehouse for the maintenance-pass bench and tests: many small tables of every kind.

:func:`build` creates ``tables`` tables in database ``database`` (``bench``), cycling through the kinds a
production warehouse holds (every one partitioned by ``dt``):

* ``append``: unaware-bucket append table (``bucket = -1``);
* ``pk``: primary-key table with fixed buckets (``bucket = 1``);
* ``dynamic``: primary-key table with dynamic buckets (``bucket = -1``).

Writers are ``write-only`` (they leave compaction and expiry to the dedicated jobs, the
recommended setup with the DAGs) and keep at most ``snapshot.num-retained.max = 2`` snapshots
(``min = 1``), so every table with ``commits`` > 2 needs snapshot expiry. A share
``need_compaction`` of the tables (every ``round(1 / share)``-th) gets ``compaction_commits``
commits into one partition: enough small files (append: ``compaction.min.file-num`` 5) or sorted
runs (primary keys: ``num-sorted-run.compaction-trigger`` 5) that compaction is due; the others
get ``commits`` commits spread over two partitions, under every trigger.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "MixedWarehouse", "build", "table_name"]

KINDS = ("append", "pk", "dynamic")
DATABASE = "bench"


def table_name(i: int, database: str = DATABASE) -> str:
    return f"{database}.t{i:04d}_{KINDS[i % len(KINDS)]}"


@dataclass(frozen=True)
class MixedWarehouse:
    """What :func:`build` made."""

    warehouse: str
    tables: tuple[str, ...]
    needs_compaction: tuple[str, ...]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "tables": len(self.tables),
            "kinds": {k: sum(1 for t in self.tables if t.endswith(k)) for k in KINDS},
            "needs_compaction": len(self.needs_compaction),
            "seconds": round(self.seconds, 1),
        }


def build(
    warehouse: str,
    tables: int,
    *,
    need_compaction: float = 0.1,
    commits: int = 3,
    compaction_commits: int = 6,
    rows: int = 100,
    database: str = DATABASE,
) -> MixedWarehouse:
    """Create the warehouse (see the module docs)."""
    import pyarrow as pa

    from paimon_core import FileSystemCatalog

    started = time.monotonic()
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database(database, ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])
    every = max(1, round(1 / need_compaction)) if need_compaction > 0 else 0
    names: list[str] = []
    due: list[str] = []
    for i in range(tables):
        kind = KINDS[i % len(KINDS)]
        name = table_name(i, database)
        options = {
            "write-only": "true",
            "snapshot.num-retained.min": "1",
            "snapshot.num-retained.max": "2",
            "bucket": "1" if kind == "pk" else "-1",
        }
        table = catalog.create_table(
            name,
            schema,
            partition_keys=["dt"],
            primary_keys=["id", "dt"] if kind != "append" else [],
            options=options,
        )
        compact = bool(every) and i % every == 0
        n = compaction_commits if compact else commits
        for c in range(n):
            day = "2026-11-01" if compact else f"2026-11-0{1 + c % 2}"
            ids = pa.array(range(c * rows, (c + 1) * rows), pa.int64())
            table.write_arrow(pa.table({"id": ids, "dt": [day] * rows, "v": [f"r{c}"] * rows}, schema=schema))
        names.append(name)
        if compact:
            due.append(name)
    return MixedWarehouse(warehouse, tuple(names), tuple(due), time.monotonic() - started)
