"""Batch plans made on columns: splits whose files are made on first access (``PlannedSplit``).

Every plan is compared with the per-entry planner (``TableScan._splits`` over the sequentially
decoded, merged entries), which makes every ``DataFileMeta`` up front: the lazy splits must be the
same splits, file for file, with the same row counts, sizes, packing and deletion files.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.manifest import read_manifest_file
from paimon_core.manifest.manifest_batch import clear_manifest_cache
from paimon_core.manifest.merger import merge_entries
from paimon_core.table.source import DataSplit
from paimon_core.table.split_planner import PlannedSplit, _pack_ranges
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_scan import _pack


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": pa.array([f"d{i % 3}" for i in ids]),
                     "v": pa.array([f"v{i}" * (1 + i % 5) for i in ids])})


def _write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(data)
    builder.new_commit().commit(write.prepare_commit())


def _table(tmp_path: Path, *, primary_key: bool = False, options: dict[str, str] | None = None) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    opts = {"bucket": "2", **(options or {})} if primary_key else {**(options or {})}
    catalog.create_table("db.t", _rows(0, 1).schema, partition_keys=["dt"],
                         primary_keys=["dt", "id"] if primary_key else [], options=opts)
    return catalog.get_table("db.t")


def _old_plan(table: FileStoreTable) -> list[DataSplit]:
    snap = table.latest_snapshot()
    assert snap is not None
    entries = merge_entries(
        e
        for m in table.new_file_store_scan().data_manifests(snap)
        for e in read_manifest_file(table.file_io, table.paths.manifest_path(m.file_name))
    )
    scan = table.new_read_builder().new_scan()
    dvs = scan._deletion_files(snap, entries) if scan._deletion_vectors() else {}
    return scan._splits(snap.id, entries, incremental=False, dvs=dvs)


def _plan(table: FileStoreTable) -> list[DataSplit]:
    clear_manifest_cache()
    return table.new_read_builder().new_scan().plan().splits


def test_append_plan_packs_like_the_per_entry_planner(tmp_path: Path) -> None:
    # Small targets: each partition's files are packed into several splits. Unaware-bucket append
    # files all start at sequence number 0, so the packing order is the files' random UUID names:
    # the sizes are pinned so that the packing does not depend on that order. Every file is
    # 1,368-1,585 bytes, so any two fit in 3,200 bytes and no three do; 13 files per partition
    # make 6 pairs and 1 single whatever the order (with "3 kb" some pairs fit only in some orders).
    table = _table(tmp_path, options={"source.split.target-size": "3200 b", "source.split.open-file-cost": "1 kb"})
    for k in range(13):
        _write(table, _rows(k * 50, 50 + 10 * k))
    got = _plan(table)
    want = _old_plan(table)
    assert all(isinstance(s, PlannedSplit) for s in got)
    assert [type(s) for s in want] == [DataSplit] * len(want)
    sizes = [f.file_size for s in want for f in s.files]
    assert 2 * max(sizes) <= 3200 < 3 * min(sizes), sizes  # the pinned sizes the packing relies on
    assert sorted(len(s.files) for s in want) == [1] * 3 + [2] * 18
    # row counts and sizes come from the columns, before (and without) any file object
    assert all("files" not in vars(s) for s in got)
    assert [(s.row_count, s.file_size) for s in got] == [(s.row_count, s.file_size) for s in want]
    assert all("files" not in vars(s) for s in got)
    assert got == want and want == got  # both directions: DataSplit.__eq__ defers to PlannedSplit
    assert [s.files for s in got] == [s.files for s in want]
    assert [hash(s) for s in got] == [hash(s) for s in want]
    assert sum(s.row_count for s in got) == sum(50 + 10 * k for k in range(13))


def test_pack_ranges_equal_pack() -> None:
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 40)
        weights = [rng.choice([1, 2, 5, 50, 99, 100, 101, 300]) for _ in range(n)]
        target = rng.choice([1, 100, 150, 1000])
        cum = [0]
        for w in weights:
            cum.append(cum[-1] + w)
        lo = rng.randint(0, n - 1)
        ranges = _pack_ranges(cum, lo, n, target)
        files = list(range(lo, n))
        # table_scan._pack: files of equal weight objects, open cost 0, packed by weight
        want = _pack([_W(weights[i], i) for i in files], target, 0)  # type: ignore[arg-type]
        assert [[f.i for f in p] for p in want] == [list(range(a, b)) for a, b in ranges]


@dataclasses.dataclass
class _W:
    file_size: int
    i: int
    min_sequence_number: int = 0
    file_name: str = ""

    def __post_init__(self) -> None:
        self.file_name = f"{self.i:05d}"


def test_lazy_split_is_a_plain_data_split_everywhere_it_leaves(tmp_path: Path) -> None:
    table = _table(tmp_path)
    for k in range(3):
        _write(table, _rows(k * 10, 10))
    split = _plan(table)[0]
    assert isinstance(split, PlannedSplit) and "files" not in vars(split)
    for other in (pickle.loads(pickle.dumps(split)), copy.copy(split), copy.deepcopy(split)):
        assert type(other) is DataSplit and other == split and split == other
    assert "files" in vars(split)  # pickling made them
    moved = dataclasses.replace(split, bucket_path="elsewhere")
    assert moved.files == split.files and moved.bucket_path == "elsewhere"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = split.nope  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        split.bucket = 3  # type: ignore[misc]
    # the table reads the same rows through lazy splits as through eager ones
    read = table.new_read_builder().new_read()
    assert read.to_arrow(_plan(table)).sort_by("id") == read.to_arrow(_old_plan(table)).sort_by("id")


@pytest.mark.parametrize("options", [{}, {"deletion-vectors.enabled": "true"}], ids=["pk", "pk-dv"])
def test_primary_key_plan_with_deletion_vectors(tmp_path: Path, options: dict[str, str]) -> None:
    table = _table(tmp_path, primary_key=True, options=options)
    for k in range(4):
        _write(table, _rows(k * 7, 20))  # overlapping keys: updates, and deletion vectors when enabled
    if options:
        table.maintenance.compact(compact_strategy="full")
        _write(table, _rows(3, 5))
        table.maintenance.compact(compact_strategy="minor")
    got, want = _plan(table), _old_plan(table)
    assert got == want
    assert [s.deletion_files for s in got] == [s.deletion_files for s in want]
    assert [s.raw_convertible for s in got] == [s.raw_convertible for s in want]
    if options:
        assert any(d is not None for s in got for d in s.deletion_files)


@pytest.mark.parametrize("ahead", [1, 3, 10_000])
def test_files_made_ahead_in_any_access_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: int) -> None:
    from paimon_core.table import split_planner

    monkeypatch.setattr(split_planner, "MAKE_AHEAD_FILES", ahead)
    table = _table(tmp_path, options={"source.split.target-size": "2 kb", "source.split.open-file-cost": "1 kb"})
    for k in range(10):
        _write(table, _rows(k * 30, 30))
    got, want = _plan(table), _old_plan(table)
    assert len(got) > 4
    source = vars(got[0])["_source"][0]
    import random

    for i in random.Random(ahead).sample(range(len(got)), len(got)):  # any order, each split once
        assert got[i].files == want[i].files
        assert got[i].files is got[i].files  # made once, then held by the split
    assert not source._made  # every split took its files over: nothing held twice
    assert source._live is None and all("_source" not in vars(s) for s in got)  # the plan's columns released


def test_two_threads_get_the_same_file_objects(tmp_path: Path) -> None:
    import threading

    table = _table(tmp_path, options={"source.split.target-size": "2 kb", "source.split.open-file-cost": "1 kb"})
    for k in range(6):
        _write(table, _rows(k * 30, 30))
    for _ in range(20):
        splits = _plan(table)
        barrier = threading.Barrier(2)
        seen: list[list[tuple[object, ...]]] = [[], []]

        def read(slot: int, barrier: threading.Barrier, seen: list[list[tuple[object, ...]]],
                 splits: list[DataSplit]) -> None:
            barrier.wait()
            seen[slot] = [s.files for s in reversed(splits)]

        threads = [threading.Thread(target=read, args=(i, barrier, seen, splits)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(a is b for a, b in zip(seen[0], seen[1], strict=True))
