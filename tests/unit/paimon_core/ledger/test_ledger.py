"""Ledger: exists / ensure / append / read on a real warehouse, many processes at once included."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.ledger import (
    LEDGER_OPTIONS,
    LEDGER_SCHEMA,
    LEDGER_TABLE,
    Ledger,
    LedgerRecord,
    LedgerWriteError,
)
from paimon_core.ledger.record import new_record_id
from tests.unit.paimon_core.ledger.helpers import (
    LedgerFailingFileIO,
    ledger_snapshot_ids,
    run_concurrent_appends,
)

DAY_MS = 86_400_000


def rec(table: str = "db.t", action: str = "compact", start: int | None = None, **kw: object) -> LedgerRecord:
    start = int(time.time() * 1000) if start is None else start
    return LedgerRecord(new_record_id(), table, action, "success", start, start + 10, duration_ms=10, **kw)  # type: ignore[arg-type]


def test_ensure_creates_once_and_exists_is_cached(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    ledger = Ledger(catalog)
    assert not ledger.exists()
    table = ledger.ensure()
    assert ledger.ensure().schema.id == table.schema.id == 0  # idempotent: no second schema
    assert Ledger(FileSystemCatalog(warehouse)).exists()
    assert table.schema.partition_keys == ("dt",) and not table.schema.primary_keys
    assert {k: table.options.options[k] for k in LEDGER_OPTIONS} == LEDGER_OPTIONS
    assert [f.name for f in table.schema.fields] == LEDGER_SCHEMA.names
    assert catalog.list_databases() == ["paimon_maintenance"]


def test_append_writes_many_records_in_one_commit_and_read_filters(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    ledger = Ledger(catalog)
    ledger.ensure()
    now = int(time.time() * 1000)
    old = [rec("db.a", "expire_snapshots", start=now - 3 * DAY_MS) for _ in range(3)]
    new = [
        rec("db.a", "compact", start=now),
        rec("db.b", "compact", start=now),
        rec("db.b", "create_tag", start=now),
    ]
    ledger.append(old + new)
    assert ledger_snapshot_ids(catalog) == [1]  # one commit for six records, two partitions
    everything = ledger.read()
    assert everything.num_rows == 6 and everything.schema.names == LEDGER_SCHEMA.names
    assert everything.column("start_time").cast(pa.int64()).to_pylist() == sorted(
        r.start_millis for r in old + new
    )
    recent = ledger.read(since_millis=now - DAY_MS)
    assert sorted(recent.column("record_id").to_pylist()) == sorted(r.record_id for r in new)
    assert ledger.read(table="db.b", actions=["compact"]).column("record_id").to_pylist() == [
        new[1].record_id
    ]
    assert ledger.read(table="db.zzz").num_rows == 0
    assert ledger.record_ids([old[0].dt]) == {r.record_id for r in old}
    ledger.append([])  # nothing: no commit
    assert ledger_snapshot_ids(catalog) == [1]


def test_append_without_a_ledger_or_to_a_broken_one_raises_ledger_write_error(tmp_path: Path) -> None:
    io = LedgerFailingFileIO()
    catalog = FileSystemCatalog(str(tmp_path / "wh"), file_io=io)
    with pytest.raises(LedgerWriteError, match="does not exist"):
        Ledger(catalog).append([rec()])
    Ledger(catalog).ensure()
    sleeps: list[float] = []
    ledger = Ledger(catalog, attempts=3, sleep=sleeps.append)
    with io.fail(), pytest.raises(LedgerWriteError, match="after 3 attempt") as info:
        ledger.append([rec()])
    assert isinstance(info.value.__cause__, PermissionError) and len(sleeps) == 2 and io.failed_writes >= 3
    assert ledger.read().num_rows == 0  # nothing half-written
    ledger.append([rec()])
    assert ledger.read().num_rows == 1


def test_eight_processes_ensure_and_append_at_once_lose_nothing(local_warehouse: str) -> None:
    ids = run_concurrent_appends(local_warehouse, processes=8, commits=4, per_commit=2)
    catalog = FileSystemCatalog(local_warehouse)
    schema_dir = Path(local_warehouse) / "paimon_maintenance.db" / "ledger" / "schema"
    assert sorted(p.name for p in schema_dir.iterdir()) == ["schema-0"]  # one table, created once
    assert catalog.list_tables("paimon_maintenance") == ["ledger"]
    got = Ledger(catalog).read().column("record_id").to_pylist()
    assert len(ids) == 64 and sorted(got) == sorted(ids)  # each exactly once
    assert catalog.get_table(LEDGER_TABLE).snapshot_manager.latest_snapshot_id() == 32


def test_appends_apply_the_ledgers_partition_retention(local_warehouse: str) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    ledger = Ledger(catalog)
    ledger.ensure()
    now = int(time.time() * 1000)
    old, kept = rec(start=now - 120 * DAY_MS), rec(start=now - 30 * DAY_MS)
    ledger.append([old, kept])  # the first append of this process checks retention (after its commit)
    assert sorted(ledger.read().column("record_id").to_pylist()) == [kept.record_id]
    ledger.append([rec(start=now - 200 * DAY_MS)])  # checked at most once an hour per process
    assert ledger.read().num_rows == 2
