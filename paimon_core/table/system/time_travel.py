"""The snapshot a system table reads (Java's ``TimeTravelUtil.tryTravelOrLatest``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_core.table.table_scan import TableScan

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.table.table import FileStoreTable

__all__ = ["try_travel_or_latest"]


def try_travel_or_latest(table: FileStoreTable) -> Snapshot | None:
    """The snapshot the handle's scan would read: its time-travel options, else the latest.

    For an incremental handle (``incremental-between``) that is the end snapshot.
    """
    return TableScan(table, options=table.dynamic_options).target().snapshot
