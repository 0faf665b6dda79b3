"""JdbcCatalogLock: a commit lock row in ``paimon_distributed_locks`` (SQLite file here).

The 8-writer-process proof on an S3 store without conditional put is in
tests/distributed/test_s3_commits.py; these are the lock's own rules, fast.
"""

from __future__ import annotations

import pickle
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
import sqlalchemy as sa

from paimon_core import FileSystemCatalog
from paimon_core.catalog.jdbc_lock import JdbcCatalogLock, commit_lock_from_options
from paimon_core.exceptions import InvalidOptionError, LockAcquireTimeoutError
from paimon_core.snapshot.snapshot_commit import LockedSnapshotCommit


def _uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'locks.db'}"


def test_threads_holding_the_lock_never_overlap(tmp_path: Path) -> None:
    inside, overlaps, entered = [0], [0], [0]
    guard = threading.Lock()

    def worker() -> None:
        lock = JdbcCatalogLock(_uri(tmp_path), lock_id="c.db.t", check_max_sleep_ms=5)  # its own object
        for _ in range(10):
            with lock:
                with guard:
                    inside[0] += 1
                    entered[0] += 1
                    overlaps[0] += inside[0] > 1
                time.sleep(0.002)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert entered[0] == 40 and overlaps[0] == 0


def test_locks_of_different_tables_are_independent_and_timeout_is_an_error(tmp_path: Path) -> None:
    base = JdbcCatalogLock(_uri(tmp_path), lock_id="c", acquire_timeout_ms=60_000, check_max_sleep_ms=20)
    a, b = base.for_table("db.a"), base.for_table("db.b")
    assert (a.lock_id, b.lock_id) == ("c.db.a", "c.db.b")  # Java's catalogKey.database.table
    with a, b:  # both at once
        with pytest.raises(LockAcquireTimeoutError, match="c.db.a"):
            with JdbcCatalogLock(_uri(tmp_path), lock_id="c.db.a", acquire_timeout_ms=200, check_max_sleep_ms=20):
                pass
    with a:  # released on exit
        pass


def test_an_expired_lease_of_a_crashed_holder_is_taken_over(tmp_path: Path) -> None:
    crashed = JdbcCatalogLock(_uri(tmp_path), lock_id="t", acquire_timeout_ms=1000)
    assert crashed.try_acquire()  # and never released
    engine = sa.create_engine(_uri(tmp_path))
    with engine.begin() as conn:  # the holder took it two seconds ago with a one-second lease
        conn.execute(sa.text("UPDATE paimon_distributed_locks SET acquired_at = datetime('now', '-2 seconds')"))
    engine.dispose()
    assert JdbcCatalogLock(_uri(tmp_path), lock_id="t").try_acquire()
    assert not JdbcCatalogLock(_uri(tmp_path), lock_id="t").try_acquire()  # a live lease holds


def test_catalog_options_select_the_lock_and_tables_commit_under_it(tmp_path: Path) -> None:
    options = {"lock.enabled": "true", "lock.type": "jdbc", "uri": _uri(tmp_path), "catalog-key": "wh1"}
    catalog = FileSystemCatalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    assert isinstance(table.commit_lock, JdbcCatalogLock) and table.commit_lock.lock_id == "wh1.db.t"
    assert isinstance(table.new_file_store_commit("u").snapshot_commit, LockedSnapshotCommit)
    table.write_arrow(pa.table({"id": pa.array([1, 2], pa.int64())}))
    clone = pickle.loads(pickle.dumps(table))  # shipped to an executor with its lock
    assert isinstance(clone.commit_lock, JdbcCatalogLock) and clone.commit_lock.lock_id == "wh1.db.t"
    clone.write_arrow(pa.table({"id": pa.array([3], pa.int64())}))
    assert sorted(catalog.get_table("db.t").to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t").commit_lock is None  # off by default


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"lock.enabled": "yes"}, "lock.enabled"),
        ({"lock.enabled": "true", "lock.type": "hive"}, "lock.type"),
        ({"lock.enabled": "true"}, "uri"),
        ({"lock.enabled": "true", "uri": "sqlite://", "lock-acquire-timeout": "soon"}, "lock-acquire-timeout"),
    ],
)
def test_bad_lock_options_are_clear_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        commit_lock_from_options(options)
