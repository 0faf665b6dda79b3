"""``changelog-producer = input``: every write also lands its input rows (unmerged, sorted by key,
with their row kinds) as changelog files in the APPEND snapshot's changelog manifests; streaming
reads serve them; compaction, expiry and orphan cleanup keep them consistent."""

from __future__ import annotations

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def _write(t: FileStoreTable, rows: list[tuple[int, str]], kinds: list[int] | None = None) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    data = pa.table({"k": [r[0] for r in rows], "v": [r[1] for r in rows]}, schema=SCHEMA)
    w.write_arrow(data, row_kinds=None if kinds is None else pa.array(kinds, pa.int8()))
    b.new_commit().commit(w.prepare_commit())


def _changes(t: FileStoreTable, snapshot_id: int) -> list[tuple[str, int, str]]:
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    units = scan.plan_delta(t.snapshot_manager.snapshot(snapshot_id))
    assert units is not None
    got = TableRead(t, row_kind=True).to_arrow(units)
    return list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), got["v"].to_pylist(), strict=True))


def test_input_rows_become_the_changelog(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.cl", SCHEMA, primary_keys=["k"], options={"bucket": "1", "changelog-producer": "input"})
    _write(t, [(2, "b"), (1, "a"), (2, "b2")])
    _write(t, [(1, "a2"), (2, "b2")], kinds=[2, 3])  # +U 1, -D 2
    s1, s2 = t.snapshot_manager.snapshot(1), t.snapshot_manager.snapshot(2)
    assert s1.changelog_manifest_list is not None and s1.changelog_record_count == 3
    assert s2.changelog_record_count == 2
    # unmerged, in key order then arrival: both rows of key 2 are in the changelog
    assert _changes(t, 1) == [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 2, "b2")]
    assert _changes(t, 2) == [("+U", 1, "a2"), ("-D", 2, "b2")]
    assert t.to_arrow().to_pylist() == [{"k": 1, "v": "a2"}]
    files = t.inspect.system_table("files")  # data files only; changelog files sit beside them with their prefix
    assert all("/changelog-" not in p for p in files["file_path"].to_pylist())
    # compaction leaves the changelog alone and makes no changelog of its own (input producer)
    result = t.maintenance.compact()
    compact = t.snapshot_manager.snapshot(result.snapshot_id)  # type: ignore[arg-type]
    assert compact.changelog_manifest_list is None and t.to_arrow().to_pylist() == [{"k": 1, "v": "a2"}]
    assert StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}).plan_delta(compact) is None


def test_changelog_files_are_expired_and_not_orphans(catalog: FileSystemCatalog) -> None:
    from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

    t = catalog.create_table(
        "db.cl", SCHEMA, primary_keys=["k"], options={"bucket": "1", "changelog-producer": "input", "write-only": "true"}
    )
    for i in range(4):
        _write(t, [(i, f"v{i}")])
    assert unreferenced_files(t) == set()  # every changelog file is referenced by its snapshot
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than="2999-01-01T00:00:00")
    assert unreferenced_files(t) == set()  # expired snapshots' changelog files are gone with them
    assert sorted(r["k"] for r in t.to_arrow().to_pylist()) == [0, 1, 2, 3]
