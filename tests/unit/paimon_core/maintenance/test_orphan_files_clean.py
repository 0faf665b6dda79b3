"""remove_orphan_files: what is deleted, what must survive (branches, tags, concurrent commits,
rollback leftovers), and when the clean must refuse or abort (Paimon issues #3074, #2769, #5712)."""

from __future__ import annotations

import os
import pickle
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError
from paimon_core.exceptions import OrphanCleanAbortedError
from paimon_core.io.file_io import FileStatus
from paimon_core.manifest import read_index_manifest
from paimon_core.operation import orphan_files_clean, referenced_files
from paimon_core.operation.orphan_candidates import CandidateDir, plan_candidate_dirs
from paimon_core.operation.orphan_files_clean import (
    OrphanFilesClean,
    OrphanFilesCleanResult,
    clean_database,
    combine_results,
    valid_branches,
)
from paimon_core.operation.referenced_files import ReferenceReader, collect_roots
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

DAY = 86_400_000


def _rows(ids: list[int], dt: str, v: float = 0.0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "dt": pa.array([dt] * len(ids)),
            "v": pa.array([v + i for i in ids]),
        }
    )


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _age(root: Path, millis: int) -> None:
    """Set the mtime of everything under ``root`` (files and directories) to ``millis``."""
    for p in [*root.rglob("*"), root]:
        os.utime(p, (millis / 1000, millis / 1000))


def _plant(path: Path, *, mtime_millis: int, data: bytes = b"orphan") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime_millis / 1000, mtime_millis / 1000))
    return path.name


def _read(t: FileStoreTable, **options: str) -> list[tuple[Any, ...]]:
    out = (t.copy(options) if options else t).to_arrow()
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


def _names(t: FileStoreTable, snap: Snapshot) -> set[str]:
    """Independent oracle: every file one snapshot names (lists, manifests, all entries, index)."""
    sc = t.new_file_store_scan()
    lists = [
        x for x in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list) if x
    ]
    metas = [m for name in lists for m in sc.read_list(name)]
    out = set(lists) | {m.file_name for m in metas}
    out |= {e.file.file_name for e in sc.read_entries(metas)}
    if snap.index_manifest:
        out.add(snap.index_manifest)
        out |= {
            e.index_file.file_name
            for e in read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest))
        }
    return out


def _expire_by_hand(table_dir: Path, ids: list[int], earliest: int) -> None:
    for i in ids:
        (table_dir / "snapshot" / f"snapshot-{i}").unlink()
    (table_dir / "snapshot" / "EARLIEST").write_text(str(earliest))


@dataclass
class Lake:
    catalog: FileSystemCatalog
    now: int
    db: Path
    ev: FileStoreTable
    pk: FileStoreTable
    expected: dict[str, set[str]]  # table -> relative paths an orphan clean must delete
    fresh: dict[str, set[str]]  # table -> planted orphans newer than the cutoff
    reads: dict[tuple[str, str, str], list[tuple[Any, ...]]]

    def before(self) -> dict[str, set[str]]:
        return {t: _files(self.db / t) for t in ("ev", "pk")}

    def assert_reads_unchanged(self) -> None:
        for (table, key, value), rows in self.reads.items():
            t = self.catalog.get_table(f"db.{table}")
            assert _read(t, **({key: value} if key else {})) == rows, (table, key, value)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    """db.ev (append, partitioned, tag t3, branch b, snapshots 1-2 expired by hand) and db.pk
    (dynamic-bucket primary key: index files; snapshot 1 expired by hand); every file is 2 days
    old; orphans planted old and new."""
    now = int(time.time() * 1000)
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=ManualClock(now))
    catalog.create_database("db")
    db = tmp_path / "wh" / "db.db"
    schema = _rows([1], "x").schema
    ev = catalog.create_table(
        "db.ev", schema, partition_keys=["dt"], options={"manifest.full-compaction-threshold-size": "1 b"}
    )
    ev.write_arrow(_rows([1, 2, 3, 4], "d1"))  # s1
    ev.write_arrow(_rows([1, 2, 3, 4, 5], "d1", 10.0), overwrite={"dt": "d1"})  # s2 deletes s1's file
    ev.write_arrow(_rows([7, 8], "d2"))  # s3: full manifest compaction forgets s1's file
    ev.maintenance.create_tag("t3")
    ev.write_arrow(_rows([9], "d2"))  # s4
    ev.write_arrow(_rows([100, 101], "d3"))  # s5: moved into branch b by hand, then gone from main
    sm = ev.snapshot_manager
    snaps = {i: sm.snapshot(i) for i in range(1, 6)}
    evd, branch = db / "ev", db / "ev" / "branch" / "branch-b"
    (branch / "snapshot").mkdir(parents=True)
    (branch / "schema").mkdir()
    shutil.copy(evd / "snapshot" / "snapshot-5", branch / "snapshot" / "snapshot-5")
    (branch / "snapshot" / "LATEST").write_text("5")
    shutil.copy(evd / "schema" / "schema-0", branch / "schema" / "schema-0")
    (evd / "snapshot" / "snapshot-5").unlink()
    (evd / "snapshot" / "LATEST").write_text("4")
    ev_orphans = (_names(ev, snaps[1]) | _names(ev, snaps[2])) - set().union(
        *(_names(ev, snaps[i]) for i in (3, 4, 5))
    )
    _expire_by_hand(evd, [1, 2], 3)

    pk = catalog.create_table(
        "db.pk", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "3"},
    )  # fmt: skip
    pk.write_arrow(_rows([1, 2, 3, 4], "d1"))
    pk.write_arrow(_rows([3, 4, 5, 6, 7], "d1", 5.0))  # replaces bucket index files
    pk.write_arrow(_rows([1], "d2"))
    ps = {i: pk.snapshot_manager.snapshot(i) for i in (1, 2, 3)}
    pk_orphans = _names(pk, ps[1]) - _names(pk, ps[2]) - _names(pk, ps[3])
    assert any(n.startswith("index-") and not n.startswith("index-manifest") for n in pk_orphans)
    _expire_by_hand(db / "pk", [1], 2)

    reads = {("ev", "", ""): _read(ev), ("ev", "scan.tag-name", "t3"): _read(ev, **{"scan.tag-name": "t3"})}
    reads |= {("ev", "scan.snapshot-id", "3"): _read(ev, **{"scan.snapshot-id": "3"})}
    reads |= {
        ("pk", "", ""): _read(pk),
        ("pk", "scan.snapshot-id", "2"): _read(pk, **{"scan.snapshot-id": "2"}),
    }

    _age(db, now - 2 * DAY)
    expected = {
        "ev": {p for p in _files(evd) if p.rsplit("/", 1)[-1] in ev_orphans},
        "pk": {p for p in _files(db / "pk") if p.rsplit("/", 1)[-1] in pk_orphans},
    }
    assert expected["ev"] and any(p.endswith(".parquet") for p in expected["ev"])
    live_parquet = next(p for p in (evd / "dt=d1" / "bucket-0").iterdir() if p.name not in ev_orphans)
    old, new = now - 2 * DAY, now + 60_000
    planted_old = {
        "ev": [
            "dt=d1/bucket-0/data-orphan-0.parquet", "manifest/manifest-orphan-0", "snapshot/.snapshot-6.abc.tmp",
            "statistics/stats-orphan", "changelog/.changelog-4.tmp", "branch/branch-b/snapshot/.snapshot-6.tmp",
            "dt=zz/bucket-0/data-lonely-0.parquet",
        ],
        "pk": ["index/index-orphan-0", "manifest/index-manifest-orphan-0", "dt=d2/bucket-0/data-orphan-1.orc"],
    }  # fmt: skip
    planted_new = {
        "ev": [
            "dt=d1/bucket-0/data-fresh-0.parquet",
            "manifest/manifest-fresh-0",
            "snapshot/.snapshot-7.abc.tmp",
        ],
        "pk": ["index/index-fresh-0"],
    }
    for table, paths in planted_old.items():
        for rel in paths:
            _plant(db / table / rel, mtime_millis=old, data=live_parquet.read_bytes())
            expected[table].add(rel)
    for table, paths in planted_new.items():
        for rel in paths:
            _plant(db / table / rel, mtime_millis=new)
    fresh = {t: set(p) for t, p in planted_new.items()}
    return Lake(
        catalog, now, db, catalog.get_table("db.ev"), catalog.get_table("db.pk"), expected, fresh, reads
    )


def _rel(result: OrphanFilesCleanResult, root: Path) -> set[str]:
    return {Path(p).relative_to(root).as_posix() for p in result.deleted_paths}


def test_removes_exactly_the_orphans_and_keeps_branch_tag_and_fresh_files(lake: Lake) -> None:
    before = lake.before()
    dry = {t: lake.catalog.get_table(f"db.{t}").maintenance.remove_orphan_files(dry_run=True) for t in ("ev", "pk")}
    assert lake.before() == before  # a dry run deletes nothing
    for t in ("ev", "pk"):
        result = lake.catalog.get_table(f"db.{t}").maintenance.remove_orphan_files(dry_run=False)
        assert _rel(result, lake.db / t) == lake.expected[t]
        assert result.deleted_paths == dry[t].deleted_paths  # the dry run reported the same paths
        assert result.deleted_file_count == dry[t].deleted_file_count == len(lake.expected[t])
        assert result.deleted_bytes == dry[t].deleted_bytes > 0 and not result.dry_run and dry[t].dry_run
        assert result.older_than_millis == lake.now - DAY and result.candidates_scanned > len(
            lake.expected[t]
        )
        assert _files(lake.db / t) == before[t] - lake.expected[t]  # no other file touched
        assert lake.fresh[t] <= _files(lake.db / t)
    lake.assert_reads_unchanged()
    # branch b's snapshot (partition d3, only it references) keeps its data and manifests
    branch_snap = Snapshot.from_json((lake.db / "ev/branch/branch-b/snapshot/snapshot-5").read_bytes())
    ev = lake.catalog.get_table("db.ev")
    for e in ev.new_file_store_scan().live_entries(branch_snap):
        assert (
            lake.db / "ev" / ev.partition_path(e.partition) / f"bucket-{e.bucket}" / e.file.file_name
        ).exists()
    assert not (lake.db / "ev" / "dt=zz").exists()  # emptied data dirs are removed
    assert (lake.db / "ev" / "dt=d3" / "bucket-0").is_dir()
    again = ev.maintenance.remove_orphan_files(dry_run=False)
    assert again.deleted_file_count == 0 and again.deleted_paths == ()


def test_commit_landing_during_the_scan_keeps_its_files(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    ev = lake.ev
    builder = ev.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows([50, 51], "d4"))
    messages = write.prepare_commit()
    _age(lake.db, lake.now - 2 * DAY)  # a slow writer: its files are older than the cutoff
    new_data = {f"dt=d4/{p}" for p in _files(lake.db / "ev" / "dt=d4")}
    assert new_data
    assert new_data <= _rel(ev.maintenance.remove_orphan_files(dry_run=True), lake.db / "ev")  # orphans until committed
    real_list = orphan_files_clean.list_candidate_files
    lock, committed = threading.Lock(), list[Any]()

    def list_then_commit(d: CandidateDir) -> list[FileStatus]:
        listed = real_list(d)
        with lock:
            if not committed:  # the commit lands while the candidates are being listed
                committed.append(builder.new_commit().commit(messages))
        return listed

    monkeypatch.setattr(orphan_files_clean, "list_candidate_files", list_then_commit)
    result = ev.maintenance.remove_orphan_files(dry_run=False)
    assert committed and committed[0].snapshot_id == 5
    assert not new_data & _rel(result, lake.db / "ev")
    assert new_data <= {f"dt=d4/{p}" for p in _files(lake.db / "ev" / "dt=d4")}
    assert [r for r in _read(lake.catalog.get_table("db.ev")) if r[1] == "d4"] == [
        (50, "d4", 50.0),
        (51, "d4", 51.0),
    ]


def test_corrupt_or_missing_metadata_aborts_with_nothing_deleted(lake: Lake) -> None:
    ev = lake.ev
    snap = ev.latest_snapshot()
    assert snap is not None
    manifest = ev.paths.manifest_path(ev.new_file_store_scan().data_manifests(snap)[0].file_name)
    saved = Path(manifest).read_bytes()
    Path(manifest).write_bytes(b"not avro at all")
    before = lake.before()
    with pytest.raises(OrphanCleanAbortedError, match="nothing deleted"):
        ev.maintenance.remove_orphan_files(dry_run=False)
    assert lake.before() == before
    Path(manifest).write_bytes(saved)
    # a live snapshot whose manifest list is missing: corrupt (or an expiry half done): abort
    listed = Path(ev.paths.manifest_path(snap.delta_manifest_list))
    listed.unlink()
    with pytest.raises(OrphanCleanAbortedError, match="does not exist"):
        OrphanFilesClean(ev.store, vanish_wait_seconds=0).clean()
    assert lake.before() == {**before, "ev": before["ev"] - {f"manifest/{listed.name}"}}
    # a branch without schema
    (lake.db / "pk" / "branch" / "branch-x" / "snapshot").mkdir(parents=True)
    with pytest.raises(OrphanCleanAbortedError, match=r"\['x'\] .* no schema"):
        lake.pk.maintenance.remove_orphan_files(dry_run=False)
    assert _files(lake.db / "pk") == before["pk"]


def test_roots_vanishing_during_the_read_are_skipped(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    # snapshot-3 expires between listing and reading it (tag t3 still holds its files)
    real_read_root = referenced_files.read_root

    def expiring_read_root(file_io: Any, path: str, **kw: Any) -> Snapshot | None:
        if path.endswith("/snapshot/snapshot-3"):
            os.unlink(path)
        return real_read_root(file_io, path, **kw)

    monkeypatch.setattr(referenced_files, "read_root", expiring_read_root)
    result = lake.ev.maintenance.remove_orphan_files(dry_run=False)
    assert _rel(result, lake.db / "ev") == lake.expected["ev"]
    monkeypatch.undo()
    # pk snapshot-2 is expired completely while its manifest list is being read
    s2 = lake.pk.snapshot_manager.snapshot(2)
    real_list = referenced_files.read_manifest_list

    def expiring_list(file_io: Any, path: str) -> Any:
        if path.endswith(s2.base_manifest_list):
            os.unlink(lake.db / "pk" / "snapshot" / "snapshot-2")
            os.unlink(path)
        return real_list(file_io, path)

    monkeypatch.setattr(referenced_files, "read_manifest_list", expiring_list)
    result = OrphanFilesClean(lake.pk.store, vanish_wait_seconds=0).clean()
    assert result.deleted_file_count >= len(lake.expected["pk"])
    assert _read(lake.catalog.get_table("db.pk")) == lake.reads[("pk", "", "")]


def test_cutoff_validation(lake: Lake) -> None:
    ev = lake.ev
    with pytest.raises(InvalidArgumentError, match="must be in the past"):
        ev.maintenance.remove_orphan_files(older_than=lake.now + 1000, dry_run=False)
    with pytest.raises(InvalidArgumentError, match="force"):
        ev.maintenance.remove_orphan_files(older_than=lake.now - 30 * 60_000, dry_run=False)
    with pytest.raises(InvalidArgumentError, match="older_than"):
        ev.maintenance.remove_orphan_files(older_than="yesterday", dry_run=False)
    assert lake.before()["ev"] >= lake.expected["ev"]
    forced = ev.maintenance.remove_orphan_files(older_than=lake.now - 60_000, force=True, dry_run=True)
    assert forced.older_than_millis == lake.now - 60_000
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((lake.now - 3 * DAY) / 1000))
    early = ev.maintenance.remove_orphan_files(older_than=iso, dry_run=True)  # everything is younger than 3 days
    assert early.deleted_file_count == 0 and early.older_than_millis == (lake.now - 3 * DAY) // 1000 * 1000


def test_rollback_leftovers_are_exactly_what_is_removed(tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=ManualClock(now))
    catalog.create_database("db")
    t = catalog.create_table("db.rb", _rows([0], "x").schema, partition_keys=["dt"])
    for i in range(5):
        t.write_arrow(_rows([i * 10, i * 10 + 1], f"p{i % 2}"))
    sm, sc = t.snapshot_manager, t.new_file_store_scan()
    snaps = {i: sm.snapshot(i) for i in range(1, 6)}
    reads = {i: _read(t, **{"scan.snapshot-id": str(i)}) for i in (1, 2, 3)}
    leaked = {e.file.file_name for i in (4, 5) for e in sc.delta_entries(snaps[i])}
    leaked_lists = {x for i in (4, 5) for x in (snaps[i].base_manifest_list, snaps[i].delta_manifest_list)}
    kept = set().union(*(_names(t, snaps[i]) for i in (1, 2, 3)))
    # a rollback to 3 that only rewrote metadata (Paimon >= 1.2): snapshot files 4, 5 removed
    for i in (4, 5):
        (tmp_path / "wh/db.db/rb/snapshot" / f"snapshot-{i}").unlink()
    (tmp_path / "wh/db.db/rb/snapshot/LATEST").write_text("3")
    _age(tmp_path / "wh", now - 2 * DAY)
    result = catalog.get_table("db.rb").maintenance.remove_orphan_files(dry_run=False)
    deleted = {Path(p).name for p in result.deleted_paths}
    assert {n for n in deleted if n.endswith(".parquet")} == leaked
    assert leaked_lists <= deleted and not deleted & kept
    remaining = {Path(p).name for p in _files(tmp_path / "wh/db.db/rb")}
    assert kept <= remaining and not (leaked | leaked_lists) & remaining
    t = catalog.get_table("db.rb")
    assert {i: _read(t, **{"scan.snapshot-id": str(i)}) for i in (1, 2, 3)} == reads


def test_memory_store_with_a_clock_in_the_future() -> None:
    url = f"memory://orphans-{time.time_ns()}"
    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(url, clock=clock)
    catalog.create_database("db")
    t = catalog.create_table("db.m", _rows([0], "x").schema, partition_keys=["dt"])
    t.write_arrow(_rows([1, 2], "a"))
    t.write_arrow(_rows([3], "b"))
    fs = fsspec.filesystem("memory")
    root = url.split("://", 1)[1] + "/db.db/m"
    orphan = f"{root}/dt=a/bucket-0/data-orphan-0.parquet"
    fs.pipe(orphan, b"junk")
    rows = _read(t)
    try:
        with pytest.raises(InvalidArgumentError):  # the orphan is younger than an hour
            t.maintenance.remove_orphan_files(older_than=clock.now_millis() - 1, dry_run=False)
        assert fs.exists(orphan)
        clock.advance(10 * DAY)
        result = t.maintenance.remove_orphan_files(dry_run=False)
        assert [p.split("://", 1)[-1].lstrip("/") for p in result.deleted_paths] == [orphan.lstrip("/")]
        assert not fs.exists(orphan) and _read(catalog.get_table("db.m")) == rows
    finally:
        fs.rm(url.split("://", 1)[1], recursive=True)


def test_external_data_paths_are_never_listed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 27: the option is metadata (a hand-written schema file can name any directory), so
    orphan cleanup never lists an external root; expiry deletes what the table's snapshots wrote."""
    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    catalog.create_database("db")
    ext = tmp_path / "ext"
    options = {"data-file.external-paths": f"file://{ext}"}
    t = catalog.create_table("db.x", _rows([0], "x").schema, partition_keys=["dt"], options=options)
    t.write_arrow(_rows([1, 2], "a"))
    _plant(ext / "dt=a/bucket-0/data-ext-0.parquet", mtime_millis=clock.now_millis())
    _plant(ext / "not-a-partition/keep", mtime_millis=clock.now_millis())
    rows = _read(t)
    clock.advance(10 * DAY)
    result = t.maintenance.remove_orphan_files(dry_run=False)
    assert result.deleted_paths == ()
    assert (ext / "dt=a/bucket-0/data-ext-0.parquet").exists() and (ext / "not-a-partition/keep").exists()
    assert f"Not listing external data path file://{ext}" in caplog.text
    assert _read(catalog.get_table("db.x")) == rows


def test_database_wide_clean_reports_failed_tables_and_cleans_the_rest(lake: Lake) -> None:
    results = clean_database(lake.catalog, "db", dry_run=True)
    assert [r.table for r in results] == ["db.ev", "db.pk"]
    total = combine_results(results, table="db.*")
    assert total.deleted_file_count == len(lake.expected["ev"]) + len(lake.expected["pk"])
    assert list(total.deleted_paths) == sorted(total.deleted_paths) and total.to_dict()["table"] == "db.*"
    (lake.db / "ev" / "snapshot" / "snapshot-4").write_text("{broken")
    with pytest.raises(OrphanCleanAbortedError, match=r"\['db.ev'\]"):
        clean_database(lake.catalog, "db")
    assert lake.expected["ev"] <= _files(lake.db / "ev")  # ev untouched
    assert not lake.expected["pk"] & _files(lake.db / "pk")  # pk cleaned


def test_planning_pieces_pickle_for_spark_executors(lake: Lake) -> None:
    ev = lake.ev
    branches = valid_branches(ev.file_io, ev.path)
    assert branches == ["main", "b"]
    dirs = pickle.loads(pickle.dumps(plan_candidate_dirs(ev.store, branches)))
    assert {d.kind for d in dirs} == {"metadata", "snapshot", "changelog", "data"}
    assert {Path(d.path).relative_to(lake.db / "ev").as_posix() for d in dirs if d.kind == "data"} >= {
        "dt=d1/bucket-0", "dt=d3/bucket-0", "dt=zz/bucket-0",
    }  # fmt: skip
    roots = collect_roots(ev.file_io, ev.path, branches)
    assert any(len(r.sources) == 2 for r in roots)  # snapshot-3 and tag t3 are one root
    reader = pickle.loads(pickle.dumps(ReferenceReader(ev.file_io, ev.path)))
    files = reader.root_files(pickle.loads(pickle.dumps(roots[-1])))
    assert files and any(is_manifest for _, is_manifest in files)


@pytest.mark.interop
def test_pypaimon_reads_the_same_rows_after_the_clean(lake: Lake, pypaimon: Any) -> None:
    wh = str(lake.db.parent)
    options: list[dict[str, str]] = [{}, {"scan.tag-name": "t3"}]
    before = [pypaimon.read(wh, "db.ev", options=o) for o in options]
    lake.ev.maintenance.remove_orphan_files(dry_run=False)
    for o, table in zip(options, before, strict=True):
        assert pypaimon.read(wh, "db.ev", options=o).sort_by("id").equals(table.sort_by("id"))
        assert table.num_rows == len(lake.reads[("ev", "scan.tag-name" if o else "", "t3" if o else "")])


def test_staging_leftovers_of_a_crashed_engine_write_are_removed(tmp_path: Path) -> None:
    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(str(tmp_path / "wh"), clock=clock)
    catalog.create_database("db")
    t = catalog.create_table("db.s", _rows([0], "x").schema, partition_keys=["dt"])
    t.write_arrow(_rows([1, 2], "a"))
    staging = Path(t.paths.staging_dir.removeprefix("file://"))
    old, fresh = staging / "run-old", staging / "run-fresh"
    _plant(old / "__paimon_partition=1/part-00000.parquet", mtime_millis=clock.now_millis())
    _plant(old / "_temporary/0/_temporary/attempt_1/part-00001.parquet", mtime_millis=clock.now_millis())
    rows = _read(t)
    clock.advance(10 * DAY)
    _plant(fresh / "part-00000.parquet", mtime_millis=clock.now_millis())  # a write staging right now
    result = t.maintenance.remove_orphan_files(dry_run=False)
    assert {Path(p).name for p in result.deleted_paths} == {"part-00000.parquet", "part-00001.parquet"}
    assert not old.exists() and (fresh / "part-00000.parquet").exists()
    assert _read(catalog.get_table("db.s")) == rows
