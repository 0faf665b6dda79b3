"""Small real Paimon tables for the Airflow tests."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from paimon_core import FileStoreTable, FileSystemCatalog
from paimon_core.utils.clock import ManualClock

DAY_MS = 86_400_000


def millis(day: str, hour: int = 0) -> int:
    """Epoch millis of ``day`` (YYYY-MM-DD) at ``hour`` UTC."""
    return int(dt.datetime.fromisoformat(day).replace(hour=hour, tzinfo=dt.UTC).timestamp() * 1000)


def rows(start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "v": pa.array([f"v{i}" for i in range(start, start + n)]),
        }
    )


def table_with_snapshots(
    warehouse: str, name: str = "db.t", *, commit_times: list[int] | None = None, n: int = 3
) -> FileStoreTable:
    """An append table with one snapshot per commit time (epoch millis; default: 3 recent ones)."""
    import time

    now = int(time.time() * 1000)
    times = commit_times or [now - (n - i) * 1000 for i in range(n)]
    clock = ManualClock(times[0])
    catalog = FileSystemCatalog(warehouse, clock=clock)
    if not catalog.database_exists(name.split(".")[0]):
        catalog.create_database(name.split(".")[0])
    table = catalog.create_table(name, rows(0, 1).schema)
    for i, t in enumerate(times):
        clock.set(t)
        table.write_arrow(rows(i * 10, 10))
    return FileSystemCatalog(warehouse).get_table(name)
