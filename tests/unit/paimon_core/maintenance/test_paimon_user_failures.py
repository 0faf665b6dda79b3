"""One named regression test per real Paimon user failure about table maintenance (issue 5).

Section 2 of the features notes (``paimon-features.md``) lists failures Paimon users hit. Every item about snapshot
expiry, orphan clean, tags, rollback and consumers is a ``test_itemNN_*`` here; its docstring cites
the Paimon issue or PR and states the invariant the test checks.

Out of scope here (commits and compaction, not maintenance procedures):

* items 12-14 (#3143 conflict classification and retry, #5762/#8226 lost concurrent commits, #7595
  an overwrite's delete set pinned to its base snapshot) are in
  ``tests/unit/paimon_core/test_commit_conflicts.py`` and ``test_commit_concurrency.py``;
* items 15-16 (#2675/#2967 some job always expires when writers are ``write-only``, #5130 a batch
  append compaction reaches a fixed point) need compaction, which is not built yet.

Tables run on a ManualClock. ``write-only=true`` keeps writers from expiring after their commits
where a test drives expiry itself (the explicit calls run regardless, as Paimon's procedures do).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import random
import shutil
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError, SnapshotNotFoundError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.operation import orphan_files_clean
from paimon_core.operation.expire_snapshots import ExpireSnapshots
from paimon_core.operation.orphan_candidates import CandidateDir, list_candidate_files
from paimon_core.operation.orphan_files_clean import OrphanFilesClean
from paimon_core.table.stream_scan import StartingPosition, StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead
from paimon_core.tag.tag_period import TagPeriodHandler
from paimon_core.utils.clock import ManualClock

from .expiry_helpers import (
    HOUR,
    T0,
    commit,
    list_all_files,
    make_table,
    read,
    referenced_files,
    rows,
    synthesize_history,
    unreferenced_files,
)

DAY = 24 * HOUR
Rows = list[tuple[object, ...]]
NO_WRITER_EXPIRY = {"write-only": "true"}


# --- small shared pieces --------------------------------------------------------------------


class _Died(Exception):
    """A simulated process death inside a maintenance procedure."""


def _all_old(t: FileStoreTable, by: int = 10 * HOUR) -> None:
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(by)


def _open(warehouse: str | Path, clock_ms: int) -> FileStoreTable:
    """Another handle on ``db.t``, as a different process would open it."""
    return FileSystemCatalog(str(warehouse), clock=ManualClock(clock_ms)).get_table("db.t")


def _as_rows(table: pa.Table) -> Rows:
    out = table.sort_by([("dt", "ascending"), ("id", "ascending")])
    return list(zip(*(out.column(n).to_pylist() for n in out.column_names), strict=True))


def _rel(t: FileStoreTable, path: str) -> str:
    return path[len(t.path) + 1 :]


def _data_files(t: FileStoreTable) -> set[str]:
    return {f for f in list_all_files(t.file_io, t.path) if f.endswith(".parquet")}


def _age_everything(root: str, millis: int) -> None:
    for p in [*Path(root).rglob("*"), Path(root)]:
        os.utime(p, (millis / 1000, millis / 1000))


# --- item 1 ---------------------------------------------------------------------------------


def _reader_sees_only_whole_snapshots(reader: FileStoreTable, want: dict[int, Rows]) -> int:
    """What a reader starting now gets: the earliest snapshot and every later one read fully, a
    streaming start "from earliest" (full state, and changes) reads every file it plans."""
    sm = reader.snapshot_manager
    earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
    assert earliest is not None and latest is not None
    earliest_snap = sm.earliest_snapshot()
    assert earliest_snap is not None and earliest_snap.id == earliest
    for sid in range(earliest, latest + 1):
        assert read(reader, snapshot_id=sid) == want[sid], f"snapshot {sid} (earliest {earliest})"
    full = StreamTableScan(reader, options={"scan.mode": "from-snapshot-full", "scan.snapshot-id": "1"})
    assert full.starting_position() == StartingPosition(earliest, True)
    assert _as_rows(TableRead(reader).to_arrow(full.plan_full(earliest_snap))) == want[earliest]
    changes = StreamTableScan(reader, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    assert changes.starting_position() == StartingPosition(earliest, False)
    for sid in range(earliest, latest + 1):
        units = changes.plan_delta(sm.snapshot(sid))
        if units:
            TableRead(reader).to_arrow(units)  # every planned file exists
    return earliest


@contextmanager
def _between_data_and_metadata_deletes(on_pause: Callable[[str], None]) -> Iterator[None]:
    """Call ``on_pause(path)`` each time a run moves from deleting data files to deleting other
    files: a chunk's data files are gone, its manifests and snapshot files are not yet."""
    real = LocalFileIO.delete
    kinds: list[str] = []
    lock = threading.Lock()

    def delete(self: LocalFileIO, path: str, *, recursive: bool = False) -> bool:
        kind = "data" if "/bucket-" in path else "metadata"
        with lock:
            if kind == "metadata" and kinds and kinds[-1] == "data":
                on_pause(path)
            kinds.append(kind)
        return real(self, path, recursive=recursive)

    LocalFileIO.delete = delete  # type: ignore[method-assign]
    try:
        yield
    finally:
        LocalFileIO.delete = real  # type: ignore[method-assign]


def _overwrite_history(t: FileStoreTable, n: int) -> dict[int, Rows]:
    """``n`` commits, every third a full overwrite (later snapshots DELETE earlier files)."""
    for i in range(n):
        commit(t, rows([i, i + 100], f"c{i}"), overwrite=i % 3 == 2)
    return {sid: read(t, snapshot_id=sid) for sid in range(1, n + 1)}


@pytest.mark.parametrize("stop", ["pause", "die"])
def test_item01_reader_starting_mid_expiry_never_sees_a_half_deleted_snapshot(
    tmp_path: Path, stop: str
) -> None:
    """https://github.com/apache/paimon/issues/6978: a reader that started from the earliest
    snapshot while expiry was half done (data files deleted, snapshot file still there) hit
    FileNotFoundException.

    Invariant: at any moment of an expiry run, and after the run dies at any such moment,
    ``earliest_snapshot_id()``, a batch read from it and a streaming start "from earliest" only
    land on snapshots whose files are all there (expiry moves EARLIEST before deleting a chunk).
    """
    tpl = str(tmp_path / "tpl")
    t = make_table(tpl, options={**NO_WRITER_EXPIRY, "file-operation.thread-num": "1"})
    want = _overwrite_history(t, 12)
    _all_old(t)
    now = t.clock.now_millis()
    pauses = 0
    for case in range(1, 4):
        wh = str(tmp_path / f"case{case}")
        shutil.copytree(tpl, wh)
        t, reader = _open(wh, now), _open(wh, now)
        seen: list[int] = []
        failures: list[BaseException] = []

        def on_pause(
            path: str,
            reader: FileStoreTable = reader,
            seen: list[int] = seen,
            failures: list[BaseException] = failures,
            case: int = case,
        ) -> None:
            try:
                seen.append(_reader_sees_only_whole_snapshots(reader, want))
            except Exception as e:  # noqa: BLE001 - kept: the deleter would take a FileNotFoundError for "gone"
                failures.append(e)
            if stop == "die" and len(seen) == case:
                raise _Died(f"died before deleting {path}")

        with _between_data_and_metadata_deletes(on_pause):
            if stop == "die":
                with pytest.raises(_Died):
                    ExpireSnapshots(t.store, chunk_size=3).expire(retain_min=2)
            else:
                ExpireSnapshots(t.store, chunk_size=3).expire(retain_min=2)
        assert not failures, failures
        pauses += len(seen)
        assert seen == sorted(seen) and seen[-1] > 1, seen  # readers moved on with the chunks
        _reader_sees_only_whole_snapshots(_open(wh, now), want)
        if stop == "pause":
            assert len(seen) >= 3  # several chunks deleted data files
            break
        t.maintenance.expire_snapshots(retain_min=2)  # a re-run finishes the dead one
        assert (
            t.snapshot_manager.earliest_snapshot_file_id() == 11 == _reader_sees_only_whole_snapshots(t, want)
        )
        assert unreferenced_files(t) == set()
    assert pauses >= 3


# --- item 2 ---------------------------------------------------------------------------------


def test_item02_expiry_survives_gaps_in_the_snapshot_sequence(local_warehouse: str) -> None:
    """https://github.com/apache/paimon/issues/4743: after more than 10 middle snapshots were
    deleted by hand, expiry stopped for good and storage grew.

    Invariant: expiry walks over gaps; later runs keep expiring, so storage stays bounded: the
    only garbage left is what the hand-deleted snapshots leaked, and orphan clean removes it.
    """
    # Full manifest compaction on every commit: retained manifests name live files only, so
    # orphan clean may take every leaked file (else DELETE entries keep naming some, as in Java).
    options = {**NO_WRITER_EXPIRY, "manifest.full-compaction-threshold-size": "1 b"}
    t = make_table(local_warehouse, options=options)
    for i in range(20):
        commit(t, rows([i, i + 100], f"c{i}"), overwrite=i % 2 == 1)
    for sid in range(4, 16):  # 12 middle snapshots deleted by hand
        os.remove(t.snapshot_manager.snapshot_path(sid))
    _all_old(t)
    res = t.maintenance.expire_snapshots(retain_min=3)
    assert res.expired_snapshot_ids == (1, 2, 3, 16, 17)
    assert t.snapshot_manager.earliest_snapshot_id() == 18
    leaked = unreferenced_files(t)  # what the deleted snapshots' deltas would have freed
    for r in range(8):  # writing and expiring go on; nothing piles up any more
        commit(t, rows([1000 + r], f"n{r}"), overwrite=True)
        _all_old(t)
        res = t.maintenance.expire_snapshots(retain_min=3)
        assert res.expired_snapshot_ids == (18 + r,)
        assert t.snapshot_manager.list_snapshot_ids() == [19 + r, 20 + r, 21 + r]
        assert unreferenced_files(t) == leaked
    want = read(t)
    cleaned = t.maintenance.remove_orphan_files(dry_run=False)
    assert {_rel(t, p) for p in cleaned.deleted_paths} == leaked
    assert unreferenced_files(t) == set() and read(t) == want == [(1007, "p1", "n71007")]


# --- item 3 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("when", ["while_listing_candidates", "before_reading_references"])
def test_item03_commit_landing_during_orphan_clean_keeps_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """https://github.com/apache/paimon/issues/3074 (fix PR #3075): orphan clean deleted live
    files of a commit that landed between reading the used files and listing the candidates.

    Invariant: candidates are listed before the references are read, so a commit landing at any
    point of the clean keeps its files; files younger than ``older_than`` are never candidates,
    and a cutoff closer than an hour is refused without ``force``.
    """
    now = int(time.time() * 1000)
    t = make_table(str(tmp_path / "wh"), partitioned=True, clock=ManualClock(now))
    commit(t, rows([1, 2], dt="p1"))
    commit(t, rows([3], dt="p2"))
    builder = t.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(rows([50, 51], "slow", dt="p9"))
    messages = write.prepare_commit()
    _age_everything(t.path, now - 2 * DAY)  # a slow writer: its files are older than the cutoff
    slow_files = {f for f in _data_files(t) if f.startswith("dt=p9/")}
    assert slow_files
    dry = t.maintenance.remove_orphan_files(dry_run=True)
    assert slow_files <= {_rel(t, p) for p in dry.deleted_paths}  # orphans until committed
    committed: list[int | None] = []
    lock = threading.Lock()

    def land() -> None:
        with lock:
            if not committed:
                committed.append(builder.new_commit().commit(messages).snapshot_id)

    if when == "while_listing_candidates":

        def list_then_commit(d: CandidateDir) -> list[Any]:
            listed = list_candidate_files(d)
            land()
            return listed

        monkeypatch.setattr(orphan_files_clean, "list_candidate_files", list_then_commit)
    else:
        real_refs = OrphanFilesClean.referenced_names

        def commit_then_read(self: OrphanFilesClean, *args: Any, **kwargs: Any) -> set[str]:
            land()
            return real_refs(self, *args, **kwargs)

        monkeypatch.setattr(OrphanFilesClean, "referenced_names", commit_then_read)
    res = t.maintenance.remove_orphan_files(dry_run=False)
    assert committed == [3]
    assert not slow_files & {_rel(t, p) for p in res.deleted_paths}
    assert slow_files <= _data_files(t) and referenced_files(t) <= list_all_files(t.file_io, t.path)
    assert [r for r in read(t) if r[1] == "p9"] == [(50, "p9", "slow50"), (51, "p9", "slow51")]
    monkeypatch.undo()
    # The older_than guard: an in-flight write's fresh files are not candidates.
    write = t.new_batch_write_builder().new_write()
    write.write_arrow(rows([60], "fresh", dt="p9"))
    messages = write.prepare_commit()
    assert t.maintenance.remove_orphan_files(dry_run=False).deleted_file_count == 0
    with pytest.raises(InvalidArgumentError, match="force"):
        t.maintenance.remove_orphan_files(older_than=now - 60_000, dry_run=False)
    t.new_batch_write_builder().new_commit().commit(messages)
    assert (60, "p9", "fresh60") in read(t)


# --- item 4 ---------------------------------------------------------------------------------


def test_item04_branch_and_branch_tag_files_are_never_orphans(tmp_path: Path) -> None:
    """https://github.com/apache/paimon/pull/3970 (issue #2769): orphan clean ignored branches
    and deleted the data files of branches.

    Invariant: a file that only a branch's snapshot or a branch's tag references is never an
    orphan; once the branch is gone (``delete_branch`` is metadata-only) it is one.
    """
    clock = ManualClock(int(time.time() * 1000) + 2 * DAY)  # every file on disk looks 2 days old
    t = make_table(str(tmp_path / "wh"), partitioned=True, clock=clock, options=NO_WRITER_EXPIRY)
    for i, dt_ in enumerate(["p1", "p2", "p3", "p4"]):
        commit(t, rows([i], dt=dt_))
    t.maintenance.create_tag("bt", 4)
    everything = referenced_files(t)
    root, sm = Path(t.path), t.snapshot_manager
    branch = root / "branch" / "branch-b"
    for sub in ("schema", "snapshot", "tag"):
        (branch / sub).mkdir(parents=True)
    shutil.copy(root / "schema" / "schema-0", branch / "schema" / "schema-0")
    shutil.move(sm.snapshot_path(3), branch / "snapshot" / "snapshot-3")  # only branch b has 3
    (branch / "snapshot" / "LATEST").write_text("3")
    shutil.move(t.tag_manager.tag_path("bt"), branch / "tag" / "tag-bt")  # and a tag on 4
    os.remove(sm.snapshot_path(4))
    sm.commit_latest_hint(2)
    branch_only = everything - referenced_files(t)
    assert {f for f in branch_only if f.endswith(".parquet")} == {
        f for f in everything if f.startswith(("dt=p3/", "dt=p4/"))
    }
    orphan = root / "dt=p1" / "bucket-0" / "data-orphan-0.parquet"
    orphan.write_bytes(b"junk")
    main_rows = read(t)
    res = t.maintenance.remove_orphan_files(dry_run=False)
    assert {_rel(t, p) for p in res.deleted_paths} == {"dt=p1/bucket-0/data-orphan-0.parquet"}
    assert branch_only <= list_all_files(t.file_io, t.path) and read(t) == main_rows
    shutil.rmtree(branch)
    dry = t.maintenance.remove_orphan_files(dry_run=True)
    assert {_rel(t, p) for p in dry.deleted_paths} == branch_only


# --- item 5 ---------------------------------------------------------------------------------


def _three_tags(warehouse: str) -> FileStoreTable:
    """t1 {A}; t2 {A, C}; t3 {A, E}; the latest snapshot {D} is the only one left.
    C (and the manifests naming it) is what only t2 uses."""
    t = make_table(
        warehouse, partitioned=True, options={**NO_WRITER_EXPIRY, "dynamic-partition-overwrite": "false"}
    )
    t.maintenance.create_tag("t1", commit(t, rows([1], "A", dt="p1")))
    commit(t, rows([2], "B", dt="p2"))
    t.maintenance.create_tag("t2", commit(t, rows([3], "C", dt="p2"), overwrite={"dt": "p2"}))
    t.maintenance.create_tag("t3", commit(t, rows([4], "E", dt="p2"), overwrite={"dt": "p2"}))
    commit(t, rows([5], "D", dt="p3"), overwrite=True)
    _all_old(t)
    t.maintenance.expire_snapshots(retain_min=1)
    assert t.snapshot_manager.list_snapshot_ids() == [5]
    return t


@pytest.mark.parametrize("damage", ["older_tag_list_missing", "newer_tag_manifest_unreadable"])
def test_item05_unreadable_neighbour_aborts_tag_deletion_deletes(tmp_path: Path, damage: str) -> None:
    """https://github.com/apache/paimon/issues/6479: tag deletion deleted data files when a
    neighbouring tag's manifest list was missing (data corruption).

    Invariant: when the file set of a neighbour (the skipper) cannot be built, deleting a tag
    removes the tag file only: no data file, manifest or index file is deleted.
    """
    control = _three_tags(str(tmp_path / "control"))
    assert control.maintenance.delete_tag("t2", dry_run=False).deleted_data_files == 1  # undamaged, C goes: the files are at stake
    t = _three_tags(str(tmp_path / "wh"))
    want = {n: read(t, tag=n) for n in ("t1", "t3")}
    restore: Callable[[], object] = lambda: None  # noqa: E731
    if damage == "older_tag_list_missing":
        os.remove(t.paths.manifest_path(t.tag_manager.get("t1").base_manifest_list))
        del want["t1"]
    else:
        manifest = t.paths.manifest_path(
            t.new_file_store_scan().data_manifests(t.tag_manager.get("t3"))[-1].file_name
        )
        saved = Path(manifest).read_bytes()
        Path(manifest).write_bytes(b"not avro")
        restore = lambda: Path(manifest).write_bytes(saved)  # noqa: E731
    before = list_all_files(t.file_io, t.path)
    res = t.maintenance.delete_tag("t2", dry_run=False)
    assert res.deleted_tags == ("t2",) and res.kept_files_of == ("t2",)
    assert res.deleted_data_files == res.deleted_manifest_files == res.deleted_index_files == 0
    assert before - list_all_files(t.file_io, t.path) == {"tag/tag-t2"}
    restore()
    assert {n: read(t, tag=n) for n in want} == want


# --- item 6 ---------------------------------------------------------------------------------


def _tagged_history(warehouse: str) -> tuple[FileStoreTable, set[str]]:
    """s1 [1], s2 [2] tagged t2, s3 and s4 overwrite everything, s5 appends; returns the table
    and every file tag t2 references (data files, manifest lists, manifests)."""
    t = make_table(warehouse, options=NO_WRITER_EXPIRY)
    commit(t, rows([1]))
    t.maintenance.create_tag("t2", commit(t, rows([2])))
    commit(t, rows([3]), overwrite=True)
    commit(t, rows([4]), overwrite=True)
    commit(t, rows([5]))
    tag = t.tag_manager.get("t2")
    scan = t.new_file_store_scan()
    files = {f"manifest/{tag.base_manifest_list}", f"manifest/{tag.delta_manifest_list}"}
    files |= {f"manifest/{m.file_name}" for m in scan.data_manifests(tag)}
    files |= {f"bucket-0/{e.file.file_name}" for e in scan.live_entries(tag)}
    _all_old(t)
    return t, files


@pytest.mark.parametrize("damage", ["manifest_list_missing", "manifest_unreadable"])
def test_item06_snapshot_expiry_with_an_unreadable_tag_deletes_none_of_its_files(
    tmp_path: Path, damage: str
) -> None:
    """https://github.com/apache/paimon/pull/5237 (and #5229): snapshot expiry deleted files a tag
    used when reading the tag failed (an empty skipper).

    Invariant: when a tag's file set cannot be read, expiry still expires the snapshots but
    deletes none of the files the tag references (its data files and its manifests).
    """
    control, files = _tagged_history(str(tmp_path / "control"))
    control.tag_manager.delete("t2")  # without the tag, expiry deletes its data files: they are at stake
    control.maintenance.expire_snapshots(retain_min=1)
    assert not {f for f in files if f.endswith(".parquet")} & list_all_files(control.file_io, control.path)
    t, files = _tagged_history(str(tmp_path / "wh"))
    want = read(t, tag="t2")
    tag = t.tag_manager.get("t2")
    restore: Callable[[], object] = lambda: None  # noqa: E731
    if damage == "manifest_list_missing":
        os.remove(t.paths.manifest_path(tag.base_manifest_list))
        files.discard(f"manifest/{tag.base_manifest_list}")
    else:
        manifest = t.paths.manifest_path(t.new_file_store_scan().data_manifests(tag)[-1].file_name)
        saved = Path(manifest).read_bytes()
        Path(manifest).write_bytes(b"not avro")
        restore = lambda: Path(manifest).write_bytes(saved)  # noqa: E731
    res = t.maintenance.expire_snapshots(retain_min=1)
    assert res.expired_snapshot_ids == (1, 2, 3, 4) and res.deleted_data_files == 0
    assert files <= list_all_files(t.file_io, t.path)
    restore()
    if damage == "manifest_unreadable":
        assert read(t, tag="t2") == want


# --- item 7 ---------------------------------------------------------------------------------


class _Interleave:
    """Runs ``inject`` once, in full, right before the ``at``-th file operation (read, exists,
    list, delete) of whatever runs inside :meth:`active`: exactly what a second process doing
    ``inject`` at that moment would do. ``at=0`` only counts the operations."""

    OPS = ("read_bytes", "exists", "list_status", "delete")

    def __init__(self, at: int, inject: Callable[[], object]) -> None:
        self.at, self.inject, self.count = at, inject, 0
        self.lock = threading.Lock()
        self.injecting = False
        self.errors: list[
            BaseException
        ] = []  # of inject (the caller's deleter would hide a FileNotFoundError)

    @contextmanager
    def active(self) -> Iterator[None]:
        originals = {n: getattr(LocalFileIO, n) for n in self.OPS}

        def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
            def call(io: LocalFileIO, *args: Any, **kwargs: Any) -> Any:
                if self.injecting:  # inject's own operations (from any of its threads)
                    return real(io, *args, **kwargs)
                with self.lock:
                    if not self.injecting:
                        self.count += 1
                        if self.count == self.at:
                            self.injecting = True
                            try:
                                self.inject()
                            except BaseException as e:  # noqa: BLE001 - checked by the caller
                                self.errors.append(e)
                            finally:
                                self.injecting = False
                return real(io, *args, **kwargs)

            return call

        for n in self.OPS:
            setattr(LocalFileIO, n, wrap(originals[n]))
        try:
            yield
        finally:
            for n in self.OPS:
                setattr(LocalFileIO, n, originals[n])


@contextmanager
def _jittered_io(seed: int) -> Iterator[None]:
    """Random short pauses inside file reads, lists and deletes: other threads run in between."""
    rng = random.Random(seed)
    lock = threading.Lock()
    originals = {n: getattr(LocalFileIO, n) for n in _Interleave.OPS}

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(io: LocalFileIO, *args: Any, **kwargs: Any) -> Any:
            with lock:
                pause = rng.choice((0.0, 0.0, 0.0, 0.0002, 0.001))
            time.sleep(pause)
            return real(io, *args, **kwargs)

        return call

    for n in _Interleave.OPS:
        setattr(LocalFileIO, n, wrap(originals[n]))
    try:
        yield
    finally:
        for n in _Interleave.OPS:
            setattr(LocalFileIO, n, originals[n])


def _missing_files(t: FileStoreTable) -> set[str]:
    """Files (data and manifests) that a snapshot or tag uses and that are not on disk."""
    return referenced_files(t) - list_all_files(t.file_io, t.path)


def test_item07_concurrent_delete_tag_and_expiry_lose_no_file(tmp_path: Path) -> None:
    """https://github.com/apache/paimon/pull/3650: deleting tags while a streaming writer expired
    snapshots computed a wrong skip set, and readers hit FileNotFoundException.

    Invariant: ``delete_tag`` and snapshot expiry running at the same time never delete a file
    a retained snapshot or a remaining tag uses. Checked (1) with one of them run in full between
    two file operations of the other, at every such point, both ways; (2) with both running
    freely in two threads, with random pauses in file operations, many times.
    """
    tpl = str(tmp_path / "tpl")
    t = make_table(tpl, partitioned=True, options=NO_WRITER_EXPIRY)
    for i in range(18):  # partition p0 or p1; every third commit overwrites its partition
        p = f"p{i % 2}"
        commit(t, rows([i, i + 100], f"c{i}", dt=p), overwrite={"dt": p} if i % 3 == 2 else False)
    tags = {f"tag{sid}": sid for sid in (2, 4, 5, 10, 13)}
    for name, sid in tags.items():
        t.maintenance.create_tag(name, sid)
    want = {sid: read(t, snapshot_id=sid) for sid in range(1, 19)}
    _all_old(t)
    t.maintenance.expire_snapshots(retain_min=12)  # earliest 7: tags 2, 4, 5 hold files of expired snapshots
    now = t.clock.now_millis()
    n = 0

    def fresh() -> tuple[FileStoreTable, FileStoreTable]:
        nonlocal n
        n += 1
        shutil.copytree(tpl, tmp_path / f"run{n}")
        return _open(tmp_path / f"run{n}", now), _open(tmp_path / f"run{n}", now)

    def delete_tag5(t: FileStoreTable) -> object:
        return t.maintenance.delete_tag("tag5", dry_run=False)  # neighbours: tag4 and the earliest snapshot

    def expire_7(t: FileStoreTable) -> object:  # snapshot 8 keeps p0 files of 3 (tag4) and 5 (tag5)
        return ExpireSnapshots(t.store, chunk_size=1).expire(retain_min=11)

    def expire_7_to_9(t: FileStoreTable) -> object:  # 9 overwrote p0: its files are deleted
        return ExpireSnapshots(t.store, chunk_size=1).expire(retain_min=9)

    # (1) one run in full at every file operation of the other, both ways
    cases = ((delete_tag5, expire_7, 8), (expire_7_to_9, delete_tag5, 10))
    for procedure, other, earliest in cases:
        tagger, expirer = fresh()
        counter = _Interleave(0, lambda: None)
        with counter.active():
            procedure(tagger if procedure is delete_tag5 else expirer)
        assert counter.count > 10
        for at in range(1, counter.count + 1):
            tagger, expirer = fresh()
            first, second = (tagger, expirer) if procedure is delete_tag5 else (expirer, tagger)
            interleave = _Interleave(at, functools.partial(other, second))
            with interleave.active():
                procedure(first)
            assert not interleave.errors, (procedure.__name__, at, interleave.errors)
            assert not _missing_files(tagger), (procedure.__name__, at)
            assert tagger.tag_manager.list_names() == ["tag10", "tag13", "tag2", "tag4"]
            assert tagger.snapshot_manager.earliest_snapshot_id() == earliest
    # (2) free-running threads
    for it in range(4):
        rng = random.Random(it)
        tagger, expirer = fresh()
        doomed = rng.sample(sorted(tags), k=rng.randint(2, len(tags)))
        retain_min = rng.randint(1, 6)
        errors: list[BaseException] = []
        barrier = threading.Barrier(2)

        def delete_tags(tagger: FileStoreTable = tagger, doomed: list[str] = doomed) -> None:
            for name in doomed:
                tagger.maintenance.delete_tag(name, dry_run=False)

        def expire_often(expirer: FileStoreTable = expirer, retain_min: int = retain_min) -> None:
            for _ in range(6):
                ExpireSnapshots(expirer.store, chunk_size=2, batch_size=2).expire(
                    retain_min=retain_min, max_deletes=1
                )

        def guarded(
            fn: Callable[[], None], errors: list[BaseException] = errors, barrier: threading.Barrier = barrier
        ) -> Callable[[], None]:
            def run() -> None:
                try:
                    barrier.wait()
                    fn()
                except BaseException as e:  # pragma: no cover - reported below
                    errors.append(e)

            return run

        with _jittered_io(it):
            threads = [threading.Thread(target=guarded(f)) for f in (delete_tags, expire_often)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        assert not errors, (it, errors)
        check = _open(tmp_path / f"run{n}", now)
        sm = check.snapshot_manager
        oldest = sm.earliest_snapshot_id()
        assert oldest is not None and oldest > 7 and sm.latest_snapshot_id() == 18
        assert not _missing_files(check), it
        for sid in range(oldest, 19):
            assert read(check, snapshot_id=sid) == want[sid], (it, sid)
        assert sorted(check.tag_manager.list_names()) == sorted(set(tags) - set(doomed))
        for name in set(tags) - set(doomed):
            assert read(check, tag=name) == want[tags[name]], (it, name)


# --- item 8 ---------------------------------------------------------------------------------


def test_item08_consumer_fence_holds_across_writer_side_and_dedicated_expiry(local_warehouse: str) -> None:
    """https://github.com/apache/paimon/issues/5819: with ``consumer-id`` set, a streaming job
    still failed with "snapshot with id ... has expired" when a dedicated compactor expired.

    Invariant: every handle that expires (the writer after its commits, a dedicated expiry job
    with its own, more aggressive retention) keeps the consumer's next snapshot and everything
    after it; the streaming consumer, also after a restart, never meets an expired snapshot and
    reads every row exactly once.
    """
    clock = ManualClock(T0)
    writer = make_table(
        local_warehouse,
        clock=clock,
        options={
            "snapshot.num-retained.min": "2",
            "snapshot.num-retained.max": "3",
            "snapshot.time-retained": "1 min",
        },
    )
    dedicated = (
        FileSystemCatalog(local_warehouse, clock=clock)
        .get_table("db.t")
        .copy({"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "write-only": "true"})
    )
    stream_options = {"consumer-id": "job", "scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
    next_id = 0

    def write_commit() -> None:
        nonlocal next_id
        commit(writer, rows([next_id, next_id + 1], "w"), step=60_000)
        next_id += 2
        writer.maintenance.expire_snapshots()  # writer-side expiry (Java's TableCommitImpl.maintain)

    write_commit()
    reader = FileSystemCatalog(local_warehouse, clock=clock).get_table("db.t")
    scan = StreamTableScan(reader, options=stream_options)
    nxt = scan.starting_position().snapshot_id
    scan.notify_next_snapshot(nxt)  # the consumer's first checkpoint
    seen: list[int] = []
    fenced = 0
    rng = random.Random(5819)
    for _ in range(80):
        op = rng.choice(["commit", "commit", "commit", "expire", "read", "restart"])
        if op == "commit":
            write_commit()
        elif op == "expire":
            res = dedicated.maintenance.expire_snapshots()
            assert all(sid < nxt for sid in res.expired_snapshot_ids)
            fenced += res.blocking_consumers == ("job",)
        elif op == "restart":
            reader = FileSystemCatalog(local_warehouse, clock=clock).get_table("db.t")
            scan = StreamTableScan(reader, options=stream_options)
            assert scan.starting_position() == StartingPosition(nxt, False, "job")
        latest = reader.snapshot_manager.latest_snapshot_id()
        assert latest is not None
        steps = rng.randint(1, 2) if op == "read" else 0
        while steps and nxt <= latest:
            units = scan.plan_delta(reader.snapshot_manager.snapshot(nxt))  # never expired
            seen += TableRead(reader).to_arrow(units or []).column("id").to_pylist()
            nxt += 1
            scan.notify_next_snapshot(nxt)
            steps -= 1
        earliest = reader.snapshot_manager.earliest_snapshot_id()
        assert earliest is not None and earliest <= nxt
    latest = reader.snapshot_manager.latest_snapshot_id()
    assert latest is not None
    while nxt <= latest:
        units = scan.plan_delta(reader.snapshot_manager.snapshot(nxt))
        seen += TableRead(reader).to_arrow(units or []).column("id").to_pylist()
        nxt += 1
    assert sorted(seen) == list(range(next_id))
    assert fenced >= 3  # the dedicated job wanted more and the consumer held it back
    assert (reader.snapshot_manager.earliest_snapshot_id() or 0) > 10  # and expiry did run


# --- item 9 ---------------------------------------------------------------------------------


def test_item09_stale_consumers_block_expiry_with_a_warning_until_they_expire(
    local_warehouse: str, caplog: pytest.LogCaptureFixture
) -> None:
    """https://github.com/apache/paimon/pull/3700 (and PR #1348, #6890): consumers without
    ``consumer.expiration-time`` never expire, so snapshots piled up; in ``write-only`` tables
    no consumer expiry ran at all.

    Invariant: a stale consumer without an expiration time blocks expiry, and every run logs a
    warning naming it with its lag and how to release it; with ``consumer.expiration-time`` it
    expires (also on a ``write-only`` table, in the explicit run) and expiry catches up.
    """
    clock = ManualClock(T0)
    t = make_table(local_warehouse, clock=clock, options=NO_WRITER_EXPIRY)
    for i in range(10):
        commit(t, rows([i]))
    t.maintenance.reset_consumer("stale-job", 3)
    clock.advance(30 * DAY)  # a month without progress
    for expected in ((1, 2), ()):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="paimon_core.operation.expire_snapshots"):
            res = t.maintenance.expire_snapshots(retain_min=1)
        assert res.expired_snapshot_ids == expected and res.blocking_consumers == ("stale-job",)
        assert res.expired_consumers == ()
        (msg,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert "stale-job" in msg and "next snapshot 3" in msg and "8 snapshots behind latest 10" in msg
        assert "consumer.expiration-time" in msg and "reset_consumer" in msg
    res = t.copy({"consumer.expiration-time": "7 d"}).maintenance.expire_snapshots(retain_min=1)
    assert res.expired_consumers == ("stale-job",) and res.blocking_consumers == ()
    assert res.expired_snapshot_ids == tuple(range(3, 10)) and t.consumer_manager.consumers() == {}
    assert read(t) == [(i, "p1", f"a{i}") for i in range(10)]


# --- item 10 --------------------------------------------------------------------------------


def test_item10_expire_limit_bounds_each_run_and_still_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """https://github.com/apache/paimon/issues/3223 and https://github.com/apache/paimon/pull/4508:
    a restart expired hundreds of snapshots in one commit (minutes), hence
    ``snapshot.expire.limit``; a job expiring only 10 per run then built a backlog, hence 50.

    Invariant: one run expires at most ``snapshot.expire.limit`` snapshots (default 50), and
    repeated runs catch up, also with a small limit while commits keep arriving.
    """
    monkeypatch.setattr(os, "fsync", lambda _fd: None)  # set-up speed only
    t = make_table(str(tmp_path / "wh"), options=NO_WRITER_EXPIRY)
    commit(t, rows([0]))
    synthesize_history(t, 129)
    _all_old(t)
    assert t.options.snapshot_expire_limit == 50
    runs = []
    while expired := t.maintenance.expire_snapshots(retain_min=10).expired_snapshot_ids:
        runs.append(expired)
    assert [len(r) for r in runs] == [50, 50, 20] and runs[0][0] == 1 and runs[-1][-1] == 120
    synthesize_history(t, 30)  # a backlog of 30; then one new snapshot per run, limit 3
    limited = t.copy({"snapshot.expire.limit": "3"})
    backlogs = []
    for _ in range(40):
        synthesize_history(t, 1)
        _all_old(t)
        assert len(limited.maintenance.expire_snapshots(retain_min=10).expired_snapshot_ids) <= 3
        latest, earliest = t.snapshot_manager.latest_snapshot_id(), t.snapshot_manager.earliest_snapshot_id()
        assert latest is not None and earliest is not None
        backlogs.append(latest - 9 - earliest)
    assert backlogs[:3] == [28, 26, 24] and backlogs[-1] == 0 and backlogs == sorted(backlogs, reverse=True)
    assert unreferenced_files(t) == set()


# --- item 11 --------------------------------------------------------------------------------


def test_item11_expiry_memory_does_not_grow_with_the_number_of_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """https://github.com/apache/paimon/pull/9409: expiry collected every path in memory and hit
    OOM; it now deletes in batches.

    Invariant: the driver's peak memory during one expiry run does not grow with the number of
    snapshots and files it expires. A fast variant (100 vs 400 snapshots, one data file and four
    manifest files each); the slow comparison against a collect-everything run over 2,000
    snapshots is ``test_expire_snapshots.py::test_memory_stays_bounded_over_thousands_of_snapshots``.
    """
    monkeypatch.setattr(os, "fsync", lambda _fd: None)  # set-up speed only
    peaks: dict[int, int] = {}
    for n in (100, 400):
        t = make_table(str(tmp_path / f"n{n}"), options=NO_WRITER_EXPIRY)
        commit(t, rows([0]))
        synthesize_history(t, n)
        _all_old(t)
        t.maintenance.expire_snapshots(retain_min=1, max_deletes=2, dry_run=True)  # warm up the decoders
        tracemalloc.start()
        res = t.maintenance.expire_snapshots(retain_min=1, max_deletes=n)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(res.expired_snapshot_ids) == n and res.deleted_data_files == n
    # Measured ~0.26 MB for both; holding 300 more snapshots and their paths adds far more.
    assert peaks[400] < peaks[100] * 1.25 + 64 * 1024, peaks


# --- item 17 --------------------------------------------------------------------------------


def _utc(y: int, mo: int, d: int) -> int:
    return int(dt.datetime(y, mo, d, tzinfo=dt.UTC).timestamp() * 1000)


PERIOD_FORMATS: list[dict[str, str]] = [
    {"tag.creation-period": period, "tag.period-formatter": fmt}
    for period in ("daily", "hourly", "two-hours")
    for fmt in ("with_dashes", "without_dashes", "without_dashes_and_spaces")
] + [{"tag.creation-period-duration": "30 min"}]


def test_item17_auto_tag_retention_works_with_every_period_formatter(tmp_path: Path) -> None:
    """https://github.com/apache/paimon/pull/5786: automatic tags named by a
    ``tag.period-formatter`` without dashes never expired.

    Invariant: for every creation period and every formatter, ``tag.num-retained-max`` keeps
    exactly the newest automatic tags (manual tags do not count and stay), and the files of the
    retired tags are freed once their snapshots expire.
    """
    start = _utc(2024, 1, 1)
    for i, period in enumerate(PERIOD_FORMATS):
        clock = ManualClock(start)
        options = {
            **NO_WRITER_EXPIRY,
            "tag.automatic-creation": "process-time",
            "sink.process-time-zone": "UTC",
            "tag.num-retained-max": "2",
            **period,
        }
        t = make_table(str(tmp_path / f"c{i}"), clock=clock, options=options)
        handler = TagPeriodHandler.create(t.options)
        step = handler.period_ms
        for k in range(6):
            clock.set(start + k * step + 1000)
            sid = commit(t, rows([k], f"k{k}"), overwrite=True)
            if k == 0:
                t.maintenance.create_tag("manual", sid)
            t.maintenance.trigger_tag_automatic_creation(now=start + k * step + 2000)
        auto = sorted(
            (n for n in t.tag_manager.list_names() if handler.is_auto_tag(n)), key=handler.tag_to_time
        )
        assert [handler.tag_to_time(n) for n in auto] == [
            dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=k * step) for k in (3, 4)
        ], period
        assert set(t.tag_manager.list_names()) == {"manual", *auto}, period
        _all_old(t, 30 * DAY)
        t.maintenance.expire_snapshots(retain_min=1)
        assert unreferenced_files(t) == set(), period
        assert read(t, tag="manual") == [(0, "p1", "k00")] and read(t, tag=auto[-1]) == [(5, "p1", "k55")]


# --- item 18 --------------------------------------------------------------------------------


def _expire_during(reader: FileStoreTable, other: FileStoreTable, when: str) -> list[bool]:
    """Make ``other`` expire snapshots 1-5 at one point of ``reader``'s start resolution."""
    sm = reader.snapshot_manager
    done: list[bool] = []

    def expire() -> None:
        if not done:
            done.append(True)
            assert other.maintenance.expire_snapshots(retain_min=5).expired_snapshot_ids == (1, 2, 3, 4, 5)

    real_search, real_try = sm.earlier_or_equal_time_millis, sm.try_snapshot
    calls = [0]

    def search(ts: int) -> Any:
        if when == "before_search":
            expire()
        found = real_search(ts)
        if when == "after_search":
            expire()
        return found

    def try_snapshot(sid: int) -> Any:
        calls[0] += 1
        if when == "mid_search" and calls[0] == 2:
            expire()
        return real_try(sid)

    setattr(sm, "earlier_or_equal_time_millis", search)  # noqa: B010 - this handle only
    setattr(sm, "try_snapshot", try_snapshot)  # noqa: B010
    return done


def test_item18_from_timestamp_start_resolves_against_concurrent_expiry(tmp_path: Path) -> None:
    """https://github.com/apache/paimon/issues/3479: a streaming read with ``from-timestamp``
    failed when the earliest snapshot expired at the same moment.

    Invariant: resolving a from-timestamp start position while snapshots expire either gives a
    snapshot that exists when the resolution returns (or latest + 1 to wait for the next one),
    the exact one when the timestamp falls in the retained range, or fails with a clear
    SnapshotNotFoundError; planning from a position that expired afterwards fails the same way.
    Never another exception.
    """
    tpl = str(tmp_path / "tpl")
    t = make_table(tpl, options=NO_WRITER_EXPIRY)
    for i in range(10):
        commit(t, rows([i]))
    times = {sid: t.snapshot_manager.snapshot(sid).time_millis for sid in range(1, 11)}
    _all_old(t)
    now = t.clock.now_millis()
    cases = {
        "before_all": times[1] - 5000,
        "expiring": times[3],
        "retained": times[8],
        "after_latest": times[10] + 1,
    }
    exact = {"retained": 8, "after_latest": 11}
    n = 0
    for name, ts in cases.items():
        for when in ("before_search", "mid_search", "after_search"):
            n += 1
            wh = str(tmp_path / f"case{n}")
            shutil.copytree(tpl, wh)
            reader, other = _open(wh, now), _open(wh, now)
            done = _expire_during(reader, other, when)
            scan = StreamTableScan(
                reader, options={"scan.mode": "from-timestamp", "scan.timestamp-millis": str(ts)}
            )
            try:
                pos = scan.starting_position()
            except SnapshotNotFoundError:
                continue
            assert done, (name, when)
            sm = _open(wh, now).snapshot_manager
            if name in exact:
                assert pos == StartingPosition(exact[name], False), (name, when)
            if when != "after_search":  # it expired before the resolution returned
                assert pos.snapshot_id == 11 or sm.snapshot_exists(pos.snapshot_id), (name, when, pos)
            if pos.snapshot_id == 11:
                continue
            try:
                units = scan.plan_delta(sm.snapshot(pos.snapshot_id))
            except SnapshotNotFoundError as e:
                assert when == "after_search" and str(pos.snapshot_id) in str(e), (name, when)
                continue
            TableRead(reader).to_arrow(units or [])
    # And racing an expiry thread that removes one snapshot at a time: only the two outcomes.
    wh = str(tmp_path / "race")
    shutil.copytree(tpl, wh)
    stop = threading.Event()
    expirer = _open(wh, now)

    def expire_one_by_one() -> None:
        while (
            not stop.is_set() and expirer.maintenance.expire_snapshots(retain_min=1, max_deletes=1).expired_snapshot_ids
        ):
            pass

    th = threading.Thread(target=expire_one_by_one)
    th.start()
    outcomes: set[str] = set()
    try:
        reader = _open(wh, now)
        for k in range(150):
            ts = times[1 + k % 10] - (k % 3)
            try:
                pos = StreamTableScan(
                    reader, options={"scan.mode": "from-timestamp", "scan.timestamp-millis": str(ts)}
                ).starting_position()
                outcomes.add("position")
                assert 1 <= pos.snapshot_id <= 11
            except SnapshotNotFoundError:
                outcomes.add("error")
    finally:
        stop.set()
        th.join()
    assert "position" in outcomes


# --- item 19 --------------------------------------------------------------------------------


def test_item19_rollback_then_orphan_clean_loses_no_live_file_and_leaves_no_leak(
    local_warehouse: str,
) -> None:
    """https://github.com/apache/paimon/pull/5712: rollback deleting data files was judged too
    dangerous and became metadata-only; the rolled-back data is left to orphan clean.

    Invariant: after a rollback (to a snapshot, and to a tag whose snapshot has expired) and
    an orphan clean, every retained snapshot and tag reads as before (no live file lost) and
    no file nothing references is left (no leak).
    """
    clock = ManualClock(int(time.time() * 1000) + 2 * DAY)  # every file on disk looks 2 days old
    t = make_table(local_warehouse, partitioned=True, clock=clock, options=NO_WRITER_EXPIRY)
    for i in range(8):
        p = f"p{i % 2}"
        commit(t, rows([i, i + 10], f"c{i}", dt=p), overwrite={"dt": p} if i % 3 == 2 else False)
    t.maintenance.create_tag("t3", 3)
    t.maintenance.create_tag("t7", 7)
    want = {sid: read(t, snapshot_id=sid) for sid in range(1, 9)}
    before = referenced_files(t)
    res = t.maintenance.rollback_to(5, dry_run=False)
    assert res.deleted_snapshot_ids == (6, 7, 8) and res.deleted_tags == ("t7",)
    leaked = before - referenced_files(t)
    assert any(f.endswith(".parquet") for f in leaked) and unreferenced_files(t) == leaked
    cleaned = t.maintenance.remove_orphan_files(dry_run=False)
    assert {_rel(t, p) for p in cleaned.deleted_paths} == leaked
    assert unreferenced_files(t) == set()
    assert {sid: read(t, snapshot_id=sid) for sid in range(1, 6)} == {s: want[s] for s in range(1, 6)}
    assert read(t, tag="t3") == want[3]
    # Newer commits, expiry past the tag, then back to the tag: its snapshot is written back.
    commit(t, rows([50], "x", dt="p0"), overwrite={"dt": "p0"})
    commit(t, rows([51], "x", dt="p1"))
    t.maintenance.expire_snapshots(retain_min=1, older_than=clock.now_millis())
    assert t.snapshot_manager.list_snapshot_ids() == [7]
    res = t.maintenance.rollback_to("t3", dry_run=False)
    assert res.restored_snapshot_from_tag and t.snapshot_manager.list_snapshot_ids() == [3]
    assert unreferenced_files(t)
    t.maintenance.remove_orphan_files(dry_run=False)
    assert unreferenced_files(t) == set()
    assert read(t) == want[3] == read(t, tag="t3")
    assert commit(t, rows([60], "y", dt="p1")) == 4 and (60, "p1", "y60") in read(t)
