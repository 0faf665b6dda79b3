"""Several processes committing to one table at once lose nothing."""

from __future__ import annotations

import multiprocessing as mp

import pyarrow as pa

from paimon_core import FileSystemCatalog
from tests.fixtures.tables import sample_rows


def _committer(warehouse: str, worker: int, commits: int, rows: int) -> list[int]:
    table = FileSystemCatalog(warehouse).get_table("db.c")
    ids = []
    for k in range(commits):
        start = (worker * commits + k) * rows
        res = table.write_arrow(sample_rows(rows, start=start))
        assert res.snapshot_id is not None
        ids.append(res.snapshot_id)
    return ids


def test_concurrent_processes_lose_no_commit(local_warehouse: str) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    # Force frequent manifest merges too: they race with the commits.
    cat.create_table("db.c", sample_rows(1).schema, options={"manifest.merge-min-count": "3", "commit.max-retries": "100"})
    workers, commits, rows = 4, 6, 25
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers) as pool:
        results = pool.starmap(_committer, [(local_warehouse, w, commits, rows) for w in range(workers)])
    all_ids = sorted(i for r in results for i in r)
    assert all_ids == list(range(1, workers * commits + 1))  # every commit got its own snapshot
    table = cat.get_table("db.c")
    out = table.to_arrow()
    assert out.num_rows == workers * commits * rows
    assert sorted(out.column("id").to_pylist()) == list(range(workers * commits * rows))
    assert table.latest_snapshot().total_record_count == out.num_rows


def test_threads_share_nothing_but_the_table(local_warehouse: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    cat.create_table("db.c", sample_rows(1).schema, options={"commit.max-retries": "100"})
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda w: _committer(local_warehouse, w, 3, 10), range(4)))
    out = cat.get_table("db.c").to_arrow()
    assert sorted(out.column("id").to_pylist()) == list(range(120))
    assert isinstance(out, pa.Table)


def test_commit_lock_serializes_publishes(local_warehouse: str) -> None:
    """Stores without exclusive create use a lock; commits through it lose nothing either."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    class CountingLock:
        def __init__(self) -> None:
            self.inner = threading.Lock()
            self.entered = 0

        def __enter__(self) -> object:
            self.inner.acquire()
            self.entered += 1
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.release()

    lock = CountingLock()
    cat = FileSystemCatalog(local_warehouse, commit_lock=lock)
    cat.create_database("db")
    cat.create_table("db.c", sample_rows(1).schema, options={"commit.max-retries": "100"})
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda w: cat.get_table("db.c").write_arrow(sample_rows(10, start=w * 10)), range(6)))
    assert lock.entered >= 6
    assert sorted(cat.get_table("db.c").to_arrow().column("id").to_pylist()) == list(range(60))


def test_listing_survives_files_vanishing(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file removed between scandir() and stat() (another committer's temp file) is skipped."""
    import os

    from paimon_core.io.local_io import LocalFileIO

    (tmp_path / "keep").write_bytes(b"1")
    (tmp_path / ".gone.tmp").write_bytes(b"1")
    real_scandir = os.scandir

    class Vanishing:
        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __iter__(self):  # type: ignore[no-untyped-def]
            entries = list(self.inner)
            os.unlink(tmp_path / ".gone.tmp")  # vanishes after listing, before stat
            return iter(entries)

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    monkeypatch.setattr(os, "scandir", Vanishing)
    names = [s.name for s in LocalFileIO().list_status(str(tmp_path))]
    assert names == ["keep"]
