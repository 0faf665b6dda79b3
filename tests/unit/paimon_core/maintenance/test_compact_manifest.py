"""``table.compact_manifest``: a COMPACT snapshot whose base manifest list is merged (ADD/DELETE pairs
cancelled), rows and history unchanged, a no-op when already compact, a lost race retried."""

from __future__ import annotations

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.manifest.entries import FileKind
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


def _table(wh: str) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2", "write-only": "true"})
    for k in range(6):
        t.write_arrow(pa.table({"id": list(range(k * 10, k * 10 + 20)), "v": [k] * 20}, schema=SCHEMA))
    t.maintenance.compact()  # DELETE entries for every file written so far
    t.write_arrow(pa.table({"id": [1000], "v": [1]}, schema=SCHEMA))
    return t


def _rows(t: FileStoreTable, snapshot_id: int | None = None) -> list[tuple[int, int]]:
    h = t if snapshot_id is None else t.copy({"scan.snapshot-id": str(snapshot_id)})
    got = h.to_arrow().sort_by("id")
    return list(zip(got["id"].to_pylist(), got["v"].to_pylist(), strict=True))


def test_merges_manifests_into_a_compact_snapshot(local_warehouse: str) -> None:
    t = _table(local_warehouse)
    before = t.latest_snapshot()
    assert before is not None
    history = {i: _rows(t, i) for i in range(1, before.id + 1)}
    metas = t.new_file_store_scan().data_manifests(before)
    assert any(m.num_deleted_files for m in metas)

    dry = t.maintenance.compact_manifest(dry_run=True)
    assert dry.dry_run and dry.snapshot_id is None and t.latest_snapshot() == before
    assert dry.manifests_before == len(metas) and dry.delete_entries_before > 0 and dry.manifests_after is None

    result = t.maintenance.compact_manifest()
    snap = t.latest_snapshot()
    assert snap is not None and result.snapshot_id == snap.id == before.id + 1
    assert snap.commit_kind == CommitKind.COMPACT and snap.delta_record_count == 0
    assert snap.total_record_count == before.total_record_count and snap.index_manifest == before.index_manifest
    after = t.new_file_store_scan().data_manifests(snap)
    assert result.manifests_after == len(after) < len(metas) and result.manifests_before == len(metas)
    assert t.new_file_store_scan().delta_entries(snap) == []
    entries = [e for m in after for e in t.new_file_store_scan().read_manifest(m)]
    assert all(e.kind == FileKind.ADD for e in entries) and len(entries) == result.live_files
    live = sorted(e.file.file_name for e in t.new_file_store_scan().live_entries(before))
    assert sorted(e.file.file_name for e in entries) == live
    assert _rows(t) == history[before.id]
    assert all(_rows(t, i) == rows for i, rows in history.items())  # old snapshots keep their manifests
    assert unreferenced_files(t) == set()

    again = t.maintenance.compact_manifest()  # already compact: nothing committed, nothing left behind
    assert again.snapshot_id is None and t.latest_snapshot() == snap and unreferenced_files(t) == set()


def test_a_lost_race_is_retried_on_the_new_latest_snapshot(local_warehouse: str) -> None:
    from paimon_core.operation.manifest_compact import ManifestCompact

    t = _table(local_warehouse)
    job = ManifestCompact(t.store)
    publish = job.commit.snapshot_commit.commit
    raced: list[int] = []

    def racing(snapshot: Snapshot) -> bool:
        if not raced:  # another writer commits first: our snapshot id is taken
            raced.append(snapshot.id)
            t.write_arrow(pa.table({"id": [2000], "v": [2]}, schema=SCHEMA))
        return publish(snapshot)

    job.commit.snapshot_commit.commit = racing  # type: ignore[method-assign]
    job.commit.sleep = lambda _s: None
    result = job.run()
    snap = t.latest_snapshot()
    assert snap is not None and raced == [snap.id - 1] and result.snapshot_id == snap.id and result.attempts == 2
    assert snap.commit_kind == CommitKind.COMPACT and result.base_snapshot_id == snap.id - 1
    assert (2000, 2) in _rows(t) and len(_rows(t)) == 72
    assert unreferenced_files(t) == set()  # the lost attempt's manifests were deleted
