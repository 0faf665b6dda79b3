"""The maintenance ledger is an ordinary Paimon table: pypaimon 2.1.0 and pypaimon-rust 0.4.0 read
it as paimon_core wrote it, also after 8 processes appended to it at once (none lost, none twice)."""

from __future__ import annotations

import pyarrow as pa
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.ledger import LEDGER_SCHEMA, LEDGER_TABLE, Ledger
from tests.unit.paimon_core.ledger.helpers import run_concurrent_appends, small_table


def _norm(t: pa.Table) -> pa.Table:
    """Our schema's column order and types (readers may widen nullability or timestamp units)."""
    t = t.replace_schema_metadata(None).select(LEDGER_SCHEMA.names)
    return t.cast(pa.schema([f.with_nullable(True) for f in LEDGER_SCHEMA])).sort_by("record_id")


def test_eight_processes_append_at_once_and_every_reader_sees_each_record_once(
    local_warehouse: str, pypaimon_peer: Peer, rust_peer: Peer
) -> None:
    ids = run_concurrent_appends(local_warehouse, processes=8, commits=25)
    assert len(ids) == len(set(ids)) == 200
    catalog = FileSystemCatalog(local_warehouse)
    assert catalog.list_tables("paimon_maintenance") == ["ledger"]
    ours = Ledger(catalog).read()
    for got in (
        ours,
        pypaimon_peer.read(local_warehouse, LEDGER_TABLE),
        rust_peer.read(local_warehouse, LEDGER_TABLE),
    ):
        assert sorted(got.column("record_id").to_pylist()) == sorted(ids)
    table = catalog.get_table(LEDGER_TABLE)
    assert table.snapshot_manager.latest_snapshot_id() == 200  # one commit per append
    assert len(table.snapshot_manager.list_snapshot_ids()) <= 100  # its own snapshot retention ran


def test_peers_read_recorded_actions_column_for_column(local_warehouse: str, peer: Peer) -> None:
    catalog = FileSystemCatalog(local_warehouse)
    table = small_table(catalog, commits=6)
    Ledger(catalog).ensure()
    table.maintenance.compact()
    table.maintenance.create_tag("t1")
    table.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    try:
        table.maintenance.rollback_to(99, dry_run=False)
    except Exception:  # noqa: BLE001 - a failed action is a row too
        pass
    ours = _norm(Ledger(catalog).read())
    assert ours.num_rows == 4 and ours.column("health_score").null_count == 3
    theirs = _norm(peer.read(local_warehouse, LEDGER_TABLE))
    assert theirs.equals(ours), (theirs.to_pylist()[:1], ours.to_pylist()[:1])
    day = ours.column("dt")[0].as_py()
    only_compact = peer.read(
        local_warehouse,
        LEDGER_TABLE,
        projection=["record_id", "action", "files_read", "dt"],
        filter={"op": "=", "field": "dt", "value": day},
    )
    assert sorted(only_compact.column("action").to_pylist()) == sorted(ours.column("action").to_pylist())
