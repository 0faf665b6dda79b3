"""LATEST/EARLIEST hints: missing, stale, or pointing at expired snapshots."""

from __future__ import annotations

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import Snapshot
from tests.fixtures.tables import sample_rows


def _table_with_snapshots(catalog: FileSystemCatalog, n: int):  # type: ignore[no-untyped-def]
    t = catalog.create_table("db.h", sample_rows(1).schema)
    for k in range(n):
        t.write_arrow(sample_rows(3, start=3 * k))
    return t


def test_latest_hint_written_like_java(catalog: FileSystemCatalog) -> None:
    t = _table_with_snapshots(catalog, 2)
    assert t.file_io.read_text(f"{t.paths.snapshot_dir}/LATEST") == "2"


def test_missing_and_stale_hints(catalog: FileSystemCatalog) -> None:
    t = _table_with_snapshots(catalog, 4)
    sm = t.snapshot_manager
    io = t.file_io
    io.delete(f"{t.paths.snapshot_dir}/LATEST")
    assert sm.latest_snapshot_id() == 4 and sm.earliest_snapshot_id() == 1
    io.overwrite_text(f"{t.paths.snapshot_dir}/LATEST", "2")  # stale: a crash before the hint update
    assert sm.latest_snapshot_id() == 4
    io.overwrite_text(f"{t.paths.snapshot_dir}/LATEST", "garbage")
    assert sm.latest_snapshot_id() == 4
    # Expired snapshots 1-2 with a stale EARLIEST hint.
    io.overwrite_text(f"{t.paths.snapshot_dir}/EARLIEST", "1")
    io.delete(t.paths.snapshot_path(1))
    io.delete(t.paths.snapshot_path(2))
    assert sm.earliest_snapshot_id() == 3
    # The next commit still lands on 5.
    assert t.write_arrow(sample_rows(1, start=100)).snapshot_id == 5


def test_snapshot_json_round_trip_and_java_keys(catalog: FileSystemCatalog) -> None:
    t = _table_with_snapshots(catalog, 1)
    text = t.file_io.read_text(t.paths.snapshot_path(1))
    assert '"version" : 3' in text and '"commitKind" : "APPEND"' in text
    snap = Snapshot.from_json(text)
    assert Snapshot.from_json(snap.to_json()) == snap
    for key in ("baseManifestList", "deltaManifestList", "commitUser", "commitIdentifier", "totalRecordCount"):
        assert f'"{key}"' in text


def test_time_lookup_binary_search(catalog: FileSystemCatalog) -> None:
    t = _table_with_snapshots(catalog, 5)
    sm = t.snapshot_manager
    snaps = list(sm.snapshots())
    assert sm.earlier_or_equal_time_millis(snaps[2].time_millis).id >= 3
    assert sm.earlier_or_equal_time_millis(snaps[0].time_millis - 1) is None


def test_only_the_earliest_hint_is_forced_to_disk(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """LATEST is verified by every reader (an empty or lost one only costs a listing): no fsync.
    EARLIEST guards half-expired snapshots, and every snapshot and manifest is named by a
    published snapshot: those are fsynced."""
    import os

    import paimon_core.io.local_io as local_io

    catalog = FileSystemCatalog(str(tmp_path / "wh"))  # local: the fsyncs are LocalFileIO's
    catalog.create_database("db", ignore_if_exists=True)
    t = _table_with_snapshots(catalog, 1)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(local_io.os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    sm = t.snapshot_manager
    sm.commit_latest_hint(1)
    assert synced == [] and t.file_io.read_text(f"{t.paths.snapshot_dir}/LATEST") == "1"
    sm.commit_earliest_hint(1)
    assert len(synced) == 1 and t.file_io.read_text(f"{t.paths.snapshot_dir}/EARLIEST") == "1"
    synced.clear()
    t.write_arrow(sample_rows(2, start=50))  # manifest, base + delta lists, snapshot
    assert len(synced) == 4
    # an empty LATEST (what a crash can leave of an unsynced replace) is no hint at all
    t.file_io.overwrite_text(f"{t.paths.snapshot_dir}/LATEST", "")
    assert sm.latest_snapshot_id() == 2
