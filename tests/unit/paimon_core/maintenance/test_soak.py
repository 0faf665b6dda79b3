"""Randomized soak of table maintenance against a model (issue 5's proof).

Rounds interleave appends, partition overwrites, tag creation and deletion, snapshot
expiry with random retention, rollbacks and orphan cleanup. After every round:

* every retained snapshot and every tag reads back exactly the rows the model recorded
  when that snapshot was committed;
* every data file a retained snapshot or tag references exists (found through the scan,
  independently of the maintenance code);
* after an orphan clean, no data file that nothing references is left on disk.

Then crash injection: the process "dies" (FileIO.delete raises) after N deletes inside
expiry, tag deletion and orphan cleanup, for every N; the table stays readable and a re-run
finishes the job.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

HOUR = 3_600_000
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.int64())])
PARTS = ["a", "b", "c"]

Rows = list[tuple[int, str, int]]


class Model:
    """What each snapshot and tag must read back."""

    def __init__(self) -> None:
        self.snapshots: dict[int, Rows] = {}
        self.tags: dict[str, int] = {}
        self.state: Rows = []
        self.next_id = 0


def _rows(t: pa.Table) -> Rows:
    return sorted(zip(t.column("id").to_pylist(), t.column("dt").to_pylist(), t.column("v").to_pylist(), strict=True))


def _read(table: FileStoreTable, **opts: str) -> Rows:
    return _rows(table.copy(opts).to_arrow())


def _data_files_of(table: FileStoreTable, **opts: str) -> set[str]:
    plan = table.copy(opts).new_read_builder().new_scan().plan()
    return {f.file_name for s in plan.splits for f in s.files}


def _named_by_manifests(table: FileStoreTable, snapshots: list[Snapshot]) -> set[str]:
    """Data files any manifest entry (ADD or DELETE) of these snapshots names: orphan clean
    keeps those, as Java's does, until manifest compaction drops the DELETE entries."""
    out: set[str] = set()
    for snap in snapshots:
        for lst in (snap.base_manifest_list, snap.delta_manifest_list):
            for meta in read_manifest_list(table.file_io, table.paths.manifest_path(lst)):
                for e in read_manifest_file(table.file_io, table.paths.manifest_path(meta.file_name)):
                    out.add(e.file.file_name)
    return out


def _retained(table: FileStoreTable) -> list[Snapshot]:
    sm = table.snapshot_manager
    return [sm.snapshot(s) for s in sm.list_snapshot_ids()] + list(table.tag_manager.tags().values())


def _assert_no_orphans(table: FileStoreTable, live: set[str], path: Path) -> None:
    on_disk = _data_files_on_disk(path)
    assert live <= on_disk
    leftover = on_disk - _named_by_manifests(table, _retained(table))
    assert not leftover, f"orphan clean left unreferenced data files {sorted(leftover)[:3]}"


def _data_files_on_disk(table_path: Path) -> set[str]:
    return {p.name for p in table_path.glob("dt=*/bucket-*/*") if p.is_file()}


def _check(table: FileStoreTable, model: Model, table_path: Path) -> set[str]:
    """Every retained snapshot/tag reads as modelled and its files exist; returns live files."""
    on_disk = _data_files_on_disk(table_path)
    live: set[str] = set()
    sm = table.snapshot_manager
    earliest = sm.earliest_snapshot_id()
    # Snapshots below EARLIEST are being expired (a crashed run left their files): readers
    # starting from the earliest snapshot must not see them; everything from it on must read.
    for sid in [s for s in sm.list_snapshot_ids() if earliest is not None and s >= earliest]:
        assert _read(table, **{"scan.snapshot-id": str(sid)}) == model.snapshots[sid], f"snapshot {sid}"
        files = _data_files_of(table, **{"scan.snapshot-id": str(sid)})
        assert files <= on_disk, f"snapshot {sid} lost files {sorted(files - on_disk)[:3]}"
        live |= files
    assert set(table.tag_manager.list_names()) == set(model.tags)
    for name, sid in model.tags.items():
        assert _read(table, **{"scan.tag-name": name}) == model.snapshots[sid], f"tag {name}"
        files = _data_files_of(table, **{"scan.tag-name": name})
        assert files <= on_disk, f"tag {name} lost files"
        live |= files
    return live


def _commit(table: FileStoreTable, model: Model, rng: random.Random, *, overwrite: bool) -> None:
    n = rng.randint(1, 4)
    dt = rng.choice(PARTS)
    ids = list(range(model.next_id, model.next_id + n))
    model.next_id += n
    data = pa.table({"id": ids, "dt": [dt] * n, "v": [rng.randint(0, 99) for _ in ids]}, schema=SCHEMA)
    if overwrite:
        result = table.write_arrow(data, overwrite={"dt": dt})
        model.state = [r for r in model.state if r[1] != dt] + _rows(data)
    else:
        result = table.write_arrow(data)
        model.state = model.state + _rows(data)
    assert result.snapshot_id is not None
    model.snapshots[result.snapshot_id] = sorted(model.state)


def _make_table(tmp_path: Path, clock: ManualClock, options: dict[str, str] | None = None) -> FileStoreTable:
    cat = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    cat.create_database("db")
    return cat.create_table("db.t", SCHEMA, partition_keys=["dt"], options=options or {})


def _round(table: FileStoreTable, model: Model, rng: random.Random, clock: ManualClock, path: Path) -> None:
    op = rng.choices(
        ["append", "overwrite", "tag", "untag", "expire", "rollback", "orphans"],
        weights=[5, 2, 2, 1, 2, 1, 1],
    )[0]
    clock.advance(rng.randint(1, 3) * HOUR)
    sm = table.snapshot_manager
    if op in ("append", "overwrite") or sm.latest_snapshot_id() is None:
        _commit(table, model, rng, overwrite=op == "overwrite")
    elif op == "tag":
        sid = rng.choice(sm.list_snapshot_ids())
        name = f"t{len(model.tags)}-{sid}-{rng.randint(0, 1 << 30)}"
        table.maintenance.create_tag(name, sid)
        model.tags[name] = sid
    elif op == "untag" and model.tags:
        name = rng.choice(sorted(model.tags))
        table.maintenance.delete_tag(name, dry_run=False)
        del model.tags[name]
    elif op == "expire":
        retain_min = rng.randint(1, 4)
        retain_max = retain_min + rng.randint(0, 4)
        result = table.maintenance.expire_snapshots(
            retain_min=retain_min, retain_max=retain_max, older_than=clock.now_millis() - rng.randint(0, 6) * HOUR
        )
        for sid in result.to_dict()["expired_snapshot_ids"]:
            assert not sm.snapshot_exists(sid)
    elif op == "rollback":
        ids = sm.list_snapshot_ids()
        targets: list[int | str] = list(ids[:-1]) + [n for n, s in model.tags.items() if s < ids[-1]]
        if targets:
            target = rng.choice(targets)
            sid = model.tags[target] if isinstance(target, str) else target
            table.maintenance.rollback_to(target, dry_run=False)
            for gone in [s for s in model.snapshots if s > sid]:
                del model.snapshots[gone]
            model.tags = {n: s for n, s in model.tags.items() if s <= sid}
            model.state = list(model.snapshots[sid])
    elif op == "orphans":
        live = _check(table, model, path)
        table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)
        _assert_no_orphans(table, live, path)


@pytest.mark.parametrize("seed", range(6))
def test_soak_maintenance_against_model(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    # The clock runs days ahead of the files' real mtimes, so every file is "old" for orphan clean.
    clock = ManualClock(int(time.time() * 1000) + 48 * HOUR)
    table = _make_table(tmp_path, clock)
    path = Path(table.path)
    model = Model()
    for _ in range(40):
        _round(table, model, rng, clock, path)
        _check(table, model, path)
    # finally: expire hard and clean; only what retained snapshots and tags use remains
    clock.advance(10 * HOUR)
    table.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=clock.now_millis())
    live = _check(table, model, path)
    table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)
    _assert_no_orphans(table, live, path)
    _check(table, model, path)


# ------------------------------------------------------------------------------------------
# crash injection
# ------------------------------------------------------------------------------------------


class _Crash(Exception):
    pass


@contextlib.contextmanager
def _crashing_after(n: int) -> Iterator[None]:
    """Every ``FileIO.delete`` after the first ``n`` kills the "process" (raises _Crash)."""
    real_delete = LocalFileIO.delete
    calls = {"n": 0}

    def delete(self: LocalFileIO, path: str, *, recursive: bool = False) -> bool:
        calls["n"] += 1
        if calls["n"] > n:
            raise _Crash(f"killed at delete #{calls['n']}")
        return real_delete(self, path, recursive=recursive)

    LocalFileIO.delete = delete  # type: ignore[method-assign]
    try:
        yield
    finally:
        LocalFileIO.delete = real_delete  # type: ignore[method-assign]


def _history(tmp_path: Path, clock: ManualClock) -> tuple[FileStoreTable, Model]:
    table = _make_table(tmp_path, clock)
    model = Model()
    rng = random.Random(7)
    for i in range(12):
        clock.advance(HOUR)
        _commit(table, model, rng, overwrite=i % 3 == 2)
        if i in (4, 8):
            sid = table.snapshot_manager.latest_snapshot_id()
            assert sid is not None
            table.maintenance.create_tag(f"tag{i}", sid)
            model.tags[f"tag{i}"] = sid
    clock.advance(10 * HOUR)
    return table, model


def _run_with_crash(n: int, action: Callable[[], Any]) -> bool:
    """Run ``action`` with deletes failing after ``n``; True if it crashed."""
    with _crashing_after(n):
        try:
            action()
        except _Crash:
            return True
    return False


@pytest.mark.parametrize("procedure", ["expire", "delete_tag", "orphans"])
def test_crash_at_every_delete_then_rerun(tmp_path: Path, procedure: str) -> None:
    n = 0
    while True:
        clock = ManualClock(int(time.time() * 1000) + 48 * HOUR)
        case_dir = tmp_path / f"n{n}"
        table, model = _history(case_dir, clock)
        path = Path(table.path)
        if procedure == "orphans":  # leak files: drop the newest snapshots by hand (as a crash would)
            sm = table.snapshot_manager
            latest = sm.latest_snapshot_id()
            assert latest is not None
            table.maintenance.rollback_to(latest - 3, dry_run=False)
            for s in range(latest - 2, latest + 1):
                model.snapshots.pop(s, None)

        def action(table: FileStoreTable = table, clock: ManualClock = clock) -> None:
            if procedure == "expire":
                table.maintenance.expire_snapshots(retain_min=2, retain_max=2, older_than=clock.now_millis())
            elif procedure == "delete_tag":
                table.maintenance.delete_tag("tag4", dry_run=False)
            else:
                table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)

        crashed = _run_with_crash(n, action)
        if procedure == "delete_tag" and not table.tag_manager.exists("tag4"):
            model.tags.pop("tag4", None)  # the tag file goes first; its files may leak to orphan clean
        _check(table, model, path)  # readable whatever point it died at
        if procedure == "delete_tag":
            if table.tag_manager.exists("tag4"):
                table.maintenance.delete_tag("tag4", dry_run=False)
            model.tags.pop("tag4", None)
        else:
            action()  # the re-run finishes the job
        live = _check(table, model, path)
        table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)
        _assert_no_orphans(table, live, path)
        if not crashed:
            break
        n += 1
        assert n < 500, "did not finish"
    assert n > 0 or procedure == "delete_tag", f"{procedure} deleted nothing: the crash test tested nothing"


def test_files_of_in_flight_commit_survive_orphan_clean(tmp_path: Path) -> None:
    """A file written by a commit in flight is newer than the cutoff and is kept."""
    clock = ManualClock(int(time.time() * 1000))
    table = _make_table(tmp_path, clock)
    table.write_arrow(pa.table({"id": [1], "dt": ["a"], "v": [1]}, schema=SCHEMA))
    write = table.new_batch_write_builder().new_write()
    write.write_arrow(pa.table({"id": [2], "dt": ["a"], "v": [2]}, schema=SCHEMA))
    messages = write.prepare_commit()  # files on disk, not committed yet: mtime = now
    old = time.time() - 3 * 24 * 3600  # the committed files look days old
    for p in Path(table.path).glob("dt=*/bucket-*/*"):
        if p.name not in _data_files_of(table):
            continue
        os.utime(p, (old, old))
    table.maintenance.remove_orphan_files(older_than=clock.now_millis() - HOUR, force=True, dry_run=False)
    table.new_batch_write_builder().new_commit().commit(messages)
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2]
