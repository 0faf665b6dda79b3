"""Snapshot expiry: Java's range rules, tags and consumers, gaps, races, crashes, memory."""

from __future__ import annotations

import logging
import os
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError, InvalidOptionError, SnapshotNotFoundError
from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.operation.expire_snapshots import ExpireSnapshots, ExpireSnapshotsResult
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock
from tests.fixtures.failing_file_io import FailingFileIO

from .expiry_helpers import (
    HOUR,
    T0,
    commit,
    list_all_files,
    make_table,
    read,
    rows,
    synthesize_history,
    unreferenced_files,
)


def _history(t: FileStoreTable, n: int, *, overwrite_every: int = 3) -> None:
    """n commits, every ``overwrite_every``-th an overwrite (so later snapshots DELETE files)."""
    for i in range(n):
        commit(t, rows([i, i + 100], tag=f"c{i}"), overwrite=(i % overwrite_every == overwrite_every - 1))


def _earliest(t: FileStoreTable) -> int | None:
    return t.snapshot_manager.earliest_snapshot_id()


def _all_old(t: FileStoreTable) -> None:
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(10 * HOUR)


# --- range rules ------------------------------------------------------------------------


def test_min_floor_and_all_reads_of_retained_snapshots(warehouse: str) -> None:
    t = make_table(warehouse)
    _history(t, 10)
    want = {sid: read(t, snapshot_id=sid) for sid in range(1, 11)}
    _all_old(t)
    res = t.maintenance.expire_snapshots(retain_min=3)
    assert isinstance(res, ExpireSnapshotsResult)
    assert res.expired_snapshot_ids == tuple(range(1, 8))
    assert res.earliest_snapshot_id == 8 == _earliest(t)
    assert res.deleted_data_files > 0 and res.deleted_manifest_files > 0 and res.deleted_bytes > 0
    for sid in range(8, 11):
        assert read(t, snapshot_id=sid) == want[sid]
    with pytest.raises(SnapshotNotFoundError):
        read(t, snapshot_id=7)
    assert unreferenced_files(t) == set()
    # The floor holds even though everything is old.
    assert t.maintenance.expire_snapshots(retain_min=3).expired_snapshot_ids == ()
    res = t.maintenance.expire_snapshots(retain_min=1, max_deletes=100)
    assert res.expired_snapshot_ids == (8, 9) and _earliest(t) == 10
    assert read(t) == want[10] and unreferenced_files(t) == set()


def test_retain_max_expires_young_snapshots(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    _history(t, 10)
    # Nothing is older than the 1 h default: only retain_max removes snapshots.
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == ()
    res = t.maintenance.expire_snapshots(retain_min=1, retain_max=4)
    assert res.expired_snapshot_ids == tuple(range(1, 7)) and _earliest(t) == 7
    assert unreferenced_files(t) == set()


def test_time_retention_is_measured_on_the_next_snapshot(local_warehouse: str) -> None:
    clock = ManualClock(T0)
    t = make_table(local_warehouse, clock=clock, options={"snapshot.time-retained": "1 h"})
    for i in range(8):
        commit(t, rows([i]), step=60_000)  # snapshot k committed at T0 + (k-1) min
    # Snapshot 5 (T0+4min) is older than the cutoff, snapshot 6 (T0+5min) is not: only 1..4
    # may go, since 5 may expire only once 6 is past the retention.
    clock.set(T0 + 4 * 60_000 + HOUR + 1)
    res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.expired_snapshot_ids == (1, 2, 3, 4)
    assert res.cutoff_millis == T0 + 4 * 60_000 + 1
    clock.set(T0 + 5 * 60_000 + HOUR + 1)
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == (5,)


def test_older_than_overrides_time_retained(local_warehouse: str) -> None:
    clock = ManualClock(T0)
    t = make_table(local_warehouse, clock=clock, options={"snapshot.time-retained": "100 d"})
    for i in range(6):
        commit(t, rows([i]), step=60_000)
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == ()
    # Snapshot 4 was committed at T0+3min: cutoff just after it lets 1..3 go.
    res = t.maintenance.expire_snapshots(retain_min=1, older_than=T0 + 3 * 60_000 + 1)
    assert res.expired_snapshot_ids == (1, 2, 3)


def test_expire_limit_bounds_each_run_and_catches_up(local_warehouse: str) -> None:
    t = make_table(local_warehouse, options={"snapshot.expire.limit": "3"})
    _history(t, 12)
    want = read(t)
    _all_old(t)
    runs = []
    while True:
        res = t.maintenance.expire_snapshots(retain_min=2)
        if not res.expired_snapshot_ids:
            break
        assert len(res.expired_snapshot_ids) <= 3
        runs.append(res.expired_snapshot_ids)
    assert runs == [(1, 2, 3), (4, 5, 6), (7, 8, 9), (10,)]
    assert _earliest(t) == 11 and read(t) == want and unreferenced_files(t) == set()
    # The argument overrides the option.
    t2 = make_table(local_warehouse, options={"snapshot.expire.limit": "3"}, name="t2")
    _history(t2, 12)
    _all_old(t2)
    assert t2.maintenance.expire_snapshots(retain_min=2, max_deletes=7).expired_snapshot_ids == tuple(range(1, 8))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"retain_min": 0},
        {"retain_max": 2, "retain_min": 3},
        {"max_deletes": 0},
        {"retain_min": True},
        {"retain_max": "5"},
    ],
)
def test_invalid_arguments_change_nothing(local_warehouse: str, kwargs: dict[str, object]) -> None:
    t = make_table(local_warehouse)
    _history(t, 5)
    _all_old(t)
    before = list_all_files(t.file_io, t.path)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.expire_snapshots(**kwargs)  # type: ignore[arg-type]
    assert list_all_files(t.file_io, t.path) == before


def test_invalid_table_option_is_reported(local_warehouse: str) -> None:
    # refused at create since issue 17; a table that holds it: tests/unit/paimon_core/test_option_validation.py
    with pytest.raises(InvalidOptionError, match="'snapshot.num-retained.min' must be 1 or more, got '0'"):
        make_table(local_warehouse, options={"snapshot.num-retained.min": "0"})
    t = make_table(local_warehouse)
    _history(t, 3)
    with pytest.raises(InvalidArgumentError, match="retain_min"):
        t.maintenance.expire_snapshots(retain_min=0)


def test_dry_run_changes_nothing_and_predicts_the_run(warehouse: str) -> None:
    t = make_table(warehouse, options={"snapshot.num-retained.min": "2"})
    _history(t, 9)
    t.tag_manager.create_from_snapshot_id("keep", t.snapshot_manager, 4)
    _all_old(t)
    before = {p: t.file_io.read_bytes(f"{t.path}/{p}") for p in list_all_files(t.file_io, t.path)}
    dry = t.maintenance.expire_snapshots(dry_run=True)
    after = {p: t.file_io.read_bytes(f"{t.path}/{p}") for p in list_all_files(t.file_io, t.path)}
    assert after == before
    assert dry.dry_run and dry.expired_snapshot_ids == tuple(range(1, 8)) and dry.earliest_snapshot_id == 8
    assert 0 < len(dry.sample_paths) <= 20
    real = t.maintenance.expire_snapshots()
    for field in (
        "expired_snapshot_ids",
        "deleted_data_files",
        "deleted_manifest_files",
        "deleted_snapshot_files",
    ):
        assert getattr(real, field) == getattr(dry, field), field
    assert real.to_dict()["dry_run"] is False and unreferenced_files(t) == set()


# --- tags ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pk", [False, True])
def test_tags_protect_data_files_and_manifests(warehouse: str, pk: bool) -> None:
    t = make_table(warehouse, pk=pk)
    commit(t, rows([1, 2, 3], "a"))
    commit(t, rows([2, 4], "b"))  # an upsert of 2 on PK tables
    tag_id = commit(t, rows([5], "c"))
    t.tag_manager.create_from_snapshot_id("t3", t.snapshot_manager, tag_id)
    tagged = read(t, tag="t3")
    commit(t, rows([7, 8], "d"), overwrite=True)  # DELETEs every file the tag uses
    commit(t, rows([9], "e"))
    commit(t, rows([8, 10], "f"), overwrite=True)
    latest = read(t)
    _all_old(t)
    res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.expired_snapshot_ids == (1, 2, 3, 4, 5) and _earliest(t) == 6
    assert read(t, tag="t3") == tagged and read(t) == latest
    assert unreferenced_files(t) == set()
    # Files only snapshot 5 used (rows 7, 8 "d" and 9) are gone; the tag's files are not.
    assert res.deleted_data_files >= 2


def test_unreadable_tag_blocks_data_deletion(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    commit(t, rows([1]))
    commit(t, rows([2]))
    t.tag_manager.create_from_snapshot_id("t2", t.snapshot_manager, 2)
    commit(t, rows([3]), overwrite=True)
    commit(t, rows([4]), overwrite=True)
    tag = t.tag_manager.get("t2")
    os.remove(t.paths.manifest_path(tag.base_manifest_list))  # the tag's file set cannot be read
    data_before = {f for f in list_all_files(t.file_io, t.path) if f.startswith("bucket-")}
    _all_old(t)
    res = t.maintenance.expire_snapshots(retain_min=1)
    # Snapshots 3 and 4 deleted files; tag 2 is the nearest older tag of both, and its file
    # set cannot be built: nothing is deleted rather than risking the tag's files.
    assert res.expired_snapshot_ids == (1, 2, 3) and res.deleted_data_files == 0
    assert {f for f in list_all_files(t.file_io, t.path) if f.startswith("bucket-")} == data_before


# --- consumers ----------------------------------------------------------------------------


def test_fresh_consumer_fences_and_stale_consumer_expires(
    local_warehouse: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock(T0)
    t = make_table(local_warehouse, clock=clock, options={"consumer.expiration-time": "1 d"})
    _history(t, 10)
    t.consumer_manager.reset_consumer("reader", Consumer(4))
    clock.advance(2 * HOUR)
    with caplog.at_level(logging.WARNING):
        res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.expired_snapshot_ids == (1, 2, 3) and res.blocking_consumers == ("reader",)
    assert res.expired_consumers == ()
    assert any("reader" in r.getMessage() and "keeps snapshots" in r.getMessage() for r in caplog.records)
    assert read(t, snapshot_id=4)
    # A day without progress: the consumer expires, and with it the fence.
    clock.set(int(os.path.getmtime(t.consumer_manager.consumer_path("reader")) * 1000) + 25 * HOUR)
    res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.expired_consumers == ("reader",) and res.blocking_consumers == ()
    assert res.expired_snapshot_ids == tuple(range(4, 10)) and t.consumer_manager.consumers() == {}


def test_dry_run_keeps_consumers_but_reports_them(local_warehouse: str) -> None:
    clock = ManualClock(T0)
    t = make_table(local_warehouse, clock=clock, options={"consumer.expiration-time": "1 h"})
    _history(t, 5)
    t.consumer_manager.reset_consumer("c", Consumer(2))
    clock.set(T0 + 100 * HOUR)
    res = t.maintenance.expire_snapshots(retain_min=1, dry_run=True)
    assert res.expired_consumers == ("c",) and res.expired_snapshot_ids == (1, 2, 3, 4)
    assert t.consumer_manager.consumers() == {"c": 2} and _earliest(t) == 1


def test_changelog_only_consumer_does_not_fence_snapshots(local_warehouse: str) -> None:
    t = make_table(local_warehouse, options={"consumer.changelog-only": "true"})
    _history(t, 6)
    t.consumer_manager.reset_consumer("c", Consumer(2))
    _all_old(t)
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == (1, 2, 3, 4, 5)


def test_write_only_table_still_expires_when_asked(local_warehouse: str) -> None:
    t = make_table(local_warehouse, options={"write-only": "true"})
    _history(t, 4)
    _all_old(t)
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == (1, 2, 3)


# --- gaps, races, files already gone -------------------------------------------------------


def test_survives_gaps_in_the_snapshot_sequence(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    for i in range(20):
        commit(t, rows([i]))  # appends only: the missing snapshots delete no data files
    leaked = set()
    for sid in range(3, 15):  # more than 10 middle snapshots deleted by hand (issue #4743)
        snap = t.snapshot_manager.snapshot(sid)
        leaked |= {f"manifest/{snap.base_manifest_list}", f"manifest/{snap.delta_manifest_list}"}
        os.remove(t.snapshot_manager.snapshot_path(sid))
    want = read(t)
    _all_old(t)
    # The retained end (20 - 10 + 1 = 11) falls in the gap: retain from snapshot 2 downwards.
    res = t.maintenance.expire_snapshots(retain_min=10)
    assert res.expired_snapshot_ids == (1,) and _earliest(t) == 2
    res = t.maintenance.expire_snapshots(retain_min=5)
    assert res.expired_snapshot_ids == (2, 15) and _earliest(t) == 16
    assert read(t) == want and read(t, snapshot_id=16)
    # Only the manifest lists of the hand-deleted snapshots are left for orphan cleanup.
    assert unreferenced_files(t) == leaked


def test_concurrent_expiries_race_safely(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    _history(t, 30, overwrite_every=2)
    t.tag_manager.create_from_snapshot_id("mid", t.snapshot_manager, 12)
    tagged, latest = read(t, tag="mid"), read(t)
    _all_old(t)
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def run(retain_min: int) -> None:
        handle = t.copy({})
        try:
            barrier.wait()
            for _ in range(3):
                ExpireSnapshots(handle.store, chunk_size=4, batch_size=3).expire(
                    retain_min=retain_min, max_deletes=100
                )
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(m,)) for m in (2, 5, 2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    t.maintenance.expire_snapshots(retain_min=2)
    assert _earliest(t) == 29 and read(t) == latest and read(t, tag="mid") == tagged
    assert unreferenced_files(t) == set()


def test_files_already_deleted_are_skipped(local_warehouse: str) -> None:
    t = make_table(local_warehouse)
    _history(t, 8)
    _all_old(t)
    dry = t.maintenance.expire_snapshots(retain_min=2, dry_run=True)
    data = [p for p in dry.sample_paths if "/bucket-" in p][:2]
    manifests = [p for p in dry.sample_paths if "/manifest/" in p][:2]
    assert data and manifests
    for p in data + manifests:
        os.remove(p)
    res = t.maintenance.expire_snapshots(retain_min=2)
    assert res.expired_snapshot_ids == dry.expired_snapshot_ids
    assert res.deleted_data_files == dry.deleted_data_files - len(data)
    assert unreferenced_files(t) == set()


# --- crash safety ----------------------------------------------------------------------------


class _Crash(Exception):
    pass


def _crashing(t: FileStoreTable, after: int) -> FileStoreTable:
    """``t`` opened through a :class:`FailingFileIO` whose deletes fail from the ``after + 1``-th
    on: the process crashed there, nothing after it reaches the store."""
    warehouse = str(Path(t.path).parents[1])
    file_io = FailingFileIO(
        warehouse, fail_from=after + 1, ops={"delete"}, error=lambda op, path: _Crash(f"crash after {after} deletes")
    )
    return FileSystemCatalog(warehouse, file_io=file_io, clock=t.clock).get_table(t.name)


def _crash_table(
    path: str, pk: bool
) -> tuple[FileStoreTable, dict[int, list[tuple[object, ...]]], list[tuple[object, ...]]]:
    # Frequent manifest merges: expired snapshots then own manifests nothing retained uses.
    opts = {"manifest.merge-min-count": "2", **({"bucket": "2"} if pk else {})}
    t = make_table(path, pk=pk, partitioned=True, options=opts)
    for i in range(9):
        commit(
            t,
            rows([i, i + 1], f"r{i}", dt=f"p{i % 2}"),
            overwrite={"dt": f"p{i % 2}"} if i % 3 == 2 else False,
        )
    t.tag_manager.create_from_snapshot_id("t4", t.snapshot_manager, 4)
    _all_old(t)
    return t, {sid: read(t, snapshot_id=sid) for sid in range(7, 10)}, read(t, tag="t4")


@pytest.mark.parametrize("pk", [False, True])
def test_crash_at_any_delete_leaves_retained_state_readable_and_rerun_finishes(tmp_path: Path, pk: bool) -> None:
    probe, _, _ = _crash_table(str(tmp_path / "probe"), pk)
    dry = probe.maintenance.expire_snapshots(retain_min=3, dry_run=True)
    total = sum(
        getattr(dry, f)
        for f in (
            "deleted_data_files",
            "deleted_manifest_files",
            "deleted_index_files",
            "deleted_snapshot_files",
        )
    )
    assert dry.expired_snapshot_ids == tuple(range(1, 7)) and total > 15
    for after in sorted({0, 1, 2, 3, total // 3, total // 2, total - 7, total - 3, total - 1}):
        t, want, tagged = _crash_table(str(tmp_path / f"crash{after}"), pk)
        with pytest.raises(_Crash):
            _crashing(t, after).maintenance.expire_snapshots(retain_min=3)
        for sid, expected in want.items():
            assert read(t, snapshot_id=sid) == expected, (after, sid)
        assert read(t, tag="t4") == tagged, after
        t.maintenance.expire_snapshots(retain_min=3)
        assert _earliest(t) == 7, after
        assert unreferenced_files(t) == set(), after
        assert read(t, tag="t4") == tagged and all(read(t, snapshot_id=s) == w for s, w in want.items())


# --- primary keys, index files, empty directories ------------------------------------------


def test_dynamic_bucket_table_deletes_old_index_files(local_warehouse: str) -> None:
    t = make_table(local_warehouse, pk=True, options={"bucket": "-1"})
    for i in range(6):
        commit(t, rows([i, i + 1], f"r{i}"))  # each commit replaces the HASH index file
    want = read(t)
    index_before = {f for f in list_all_files(t.file_io, t.path) if f.startswith("index/")}
    assert len(index_before) >= 6
    _all_old(t)
    res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.deleted_index_files == len(index_before) - 1
    assert read(t) == want and unreferenced_files(t) == set()


def test_clean_empty_directories(local_warehouse: str) -> None:
    t = make_table(local_warehouse, partitioned=True, options={"snapshot.clean-empty-directories": "true"})
    commit(t, rows([1], dt="gone"))
    commit(t, rows([2], dt="stays"))
    commit(t, rows([3], dt="gone"), overwrite={"dt": "gone"})
    t.write_arrow(rows([], dt="gone"), overwrite={"dt": "gone"})
    _all_old(t)
    t.maintenance.expire_snapshots(retain_min=1)
    assert not os.path.exists(f"{t.path}/dt=gone")
    assert os.path.isdir(f"{t.path}/dt=stays/bucket-0")


# --- bounded memory --------------------------------------------------------------------------


@pytest.mark.slow
def test_memory_stays_bounded_over_thousands_of_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda _fd: None)  # set-up speed only
    t = make_table(str(tmp_path / "wh"))
    commit(t, rows([0]))
    n = 2000
    synthesize_history(t, n)
    # What a collect-everything run holds: every snapshot, and every path it deletes
    # (a data file, two manifests, two manifest lists and the snapshot file per snapshot).
    tracemalloc.start()
    snaps = [t.snapshot_manager.snapshot(i) for i in range(1, n + 1)]
    paths = [
        [f"{t.path}/bucket-0/data-synth-{s.id}.parquet", t.snapshot_manager.snapshot_path(s.id)]
        + [f"{t.path}/manifest/{m.file_name}" for m in t.new_file_store_scan().data_manifests(s)]
        + [f"{t.path}/manifest/{s.base_manifest_list}", f"{t.path}/manifest/{s.delta_manifest_list}"]
        for s in snaps
    ]
    naive_peak = tracemalloc.get_traced_memory()[1]
    del snaps, paths
    tracemalloc.stop()

    t.maintenance.expire_snapshots(retain_min=1, max_deletes=2, dry_run=True)  # warm up the decoders
    t.snapshot_manager.commit_earliest_hint(1)  # as any earlier expiry leaves it: no listing
    tracemalloc.start()
    res = t.maintenance.expire_snapshots(retain_min=1, retain_max=1, max_deletes=n)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert res.expired_snapshot_ids == tuple(range(1, n + 1))
    assert res.deleted_data_files == n and res.deleted_snapshot_files == n
    assert res.deleted_manifest_files == 4 * n - 1  # all but the base manifest of the survivor
    # Measured: ~0.3 MB against ~4 MB (one chunk of 50 snapshots at a time, whatever n is).
    assert peak < naive_peak / 5, (peak, naive_peak)
    assert unreferenced_files(t) == set()


# --- facade ------------------------------------------------------------------------------------


def test_facade_result_is_json_safe(local_warehouse: str) -> None:
    import json

    t = make_table(local_warehouse)
    _history(t, 4)
    _all_old(t)
    d = t.maintenance.expire_snapshots(retain_min=1).to_dict()
    assert json.loads(json.dumps(d)) == d and d["expired_snapshot_ids"] == [1, 2, 3]
    assert t.maintenance.expire_snapshots(retain_min=1).expired_snapshot_ids == ()


# --- interop: pypaimon reads what expiry leaves ---------------------------------------------


def _sorted_rows(table: pa.Table) -> list[tuple[object, ...]]:
    table = table.select(["id", "dt", "v"]).sort_by([("dt", "ascending"), ("id", "ascending")])
    return list(zip(*(table.column(n).to_pylist() for n in table.column_names), strict=True))


@pytest.mark.interop
@pytest.mark.parametrize("pk", [False, True])
def test_pypaimon_reads_retained_snapshots_and_tags_after_expiry(
    local_warehouse: str, pypaimon: Any, pk: bool
) -> None:
    from peers import PeerError

    t = make_table(local_warehouse, pk=pk)
    _history(t, 8)
    t.tag_manager.create_from_snapshot_id("t2", t.snapshot_manager, 2)
    ours = {sid: read(t, snapshot_id=sid) for sid in range(1, 9)}
    tagged = read(t, tag="t2")
    _all_old(t)
    t.maintenance.expire_snapshots(retain_min=3)
    assert _earliest(t) == 6
    for sid in (6, 7, 8):
        got = pypaimon.read(local_warehouse, "db.t", options={"scan.snapshot-id": sid})
        assert _sorted_rows(got) == ours[sid], sid
    assert _sorted_rows(pypaimon.read(local_warehouse, "db.t", options={"scan.tag-name": "t2"})) == tagged
    assert _sorted_rows(pypaimon.read(local_warehouse, "db.t")) == ours[8]
    with pytest.raises(PeerError):  # an expired snapshot is an error, not wrong rows
        pypaimon.read(local_warehouse, "db.t", options={"scan.snapshot-id": 3})
    t.maintenance.delete_tag("t2", dry_run=False)
    assert unreferenced_files(t) == set()
    assert _sorted_rows(pypaimon.read(local_warehouse, "db.t")) == ours[8]
    assert pypaimon.list_tags(local_warehouse, "db.t") == {}
