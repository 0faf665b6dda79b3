"""Writers and commits while another process expires snapshots (issue 17, "Writers under
concurrent maintenance"): a snapshot read by a writer's restore or a commit's base may be expired
before its files are read. The read starts again from the latest snapshot; a file missing from
the latest snapshot is a typed error; never a raw ``FileNotFoundError``.

The last test is the real thing: a dynamic-bucket writer process and an expiry process.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import time
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import (
    CommitStateUnknownError,
    CorruptFileError,
    PaimonError,
    SnapshotExpiredWhileReadingError,
    TransientError,
)
from paimon_core.operation.stale_snapshot import MAX_REREADS, read_from_latest
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])
DYNAMIC = {"bucket": "-1", "dynamic-bucket.target-row-num": "3", "write-only": "true"}


def _rows(ids: list[int], dt: str, v: int = 0) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids), "v": [i + v for i in ids]}, schema=SCHEMA)


def _table(tmp_path: Path, options: dict[str, str], name: str = "t") -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    if "db" not in catalog.list_databases():
        catalog.create_database("db")
    return catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=options)


def _read(table: FileStoreTable) -> list[tuple[int, str, int]]:
    t = table.to_arrow()
    return sorted(zip(t.column("id").to_pylist(), t.column("dt").to_pylist(), t.column("v").to_pylist(), strict=True))


def _expire_all_but_latest(table: FileStoreTable) -> None:
    table.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=int(time.time() * 1000) + 60_000)


def test_dynamic_writer_restores_index_from_newer_snapshot_when_its_snapshot_expired(tmp_path: Path) -> None:
    table = _table(tmp_path, DYNAMIC)
    table.write_arrow(pa.concat_tables([_rows([1, 2], "a"), _rows([1, 2], "b")]))  # snapshot 1
    writer = table.new_stream_write_builder("w").new_write()
    writer.write_arrow(_rows([3], "a", 100))  # restores from snapshot 1 (partition a only)
    table.write_arrow(_rows([4, 5], "b"))  # snapshot 2 replaces partition b's HASH file
    _expire_all_but_latest(table)  # snapshot 1 and its HASH file of b are gone
    assert table.snapshot_manager.earliest_snapshot_id() == 2
    writer.write_arrow(_rows([2, 6], "b", 100))  # partition b restores from snapshot 2
    table.new_stream_write_builder("w").new_commit().commit(writer.prepare_commit(), 1)
    expected = [(1, "a", 1), (2, "a", 2), (3, "a", 103), (1, "b", 1), (2, "b", 102)]
    expected += [(4, "b", 4), (5, "b", 5), (6, "b", 106)]
    assert _read(table) == sorted(expected)  # key 2 of b updated in place: one row, not two


def test_commit_retries_when_its_base_snapshot_is_expired_while_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(tmp_path, {"bucket": "2"})
    table.write_arrow(_rows([1], "a"))
    committer = table.new_file_store_commit("slow")
    real_latest = committer.snapshot_manager.latest_snapshot
    calls = {"n": 0}

    def latest_then_race() -> Snapshot | None:
        snap = real_latest()
        calls["n"] += 1
        if calls["n"] == 1:  # between reading the latest snapshot and its manifests
            FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t").write_arrow(_rows([2], "a"))
            _expire_all_but_latest(table)
        return snap

    writer = table.new_batch_write_builder().new_write()
    writer.write_arrow(_rows([3], "a"))
    messages = writer.prepare_commit()
    monkeypatch.setattr(committer.snapshot_manager, "latest_snapshot", latest_then_race)
    result = committer.commit(messages, 1)
    assert result.attempts == 2 and result.snapshot_id == 3
    assert [r[0] for r in _read(table)] == [1, 2, 3]


def _pending_commit(tmp_path: Path, user: str) -> tuple[FileStoreTable, Any, list[Any]]:
    """A one-bucket table at snapshot 1 (key 1), and a committer with the messages adding key 9."""
    table = _table(tmp_path, {"bucket": "1", "write-only": "true"})
    table.write_arrow(_rows([1], "a"))
    committer = table.new_file_store_commit(user)
    writer = table.new_batch_write_builder().new_write()
    writer.write_arrow(_rows([9], "a"))
    return table, committer, writer.prepare_commit()


class _RaceOnce:
    """Runs ``race`` the first time it is called, then behaves as ``inner``."""

    def __init__(self, inner: Any, race: Any) -> None:
        self.inner = inner
        self.race = race

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _once(self) -> None:
        if self.race is not None:
            race, self.race = self.race, None
            race()

    def now_millis(self) -> int:
        self._once()
        return int(self.inner.now_millis())

    def commit(self, snapshot: Snapshot) -> bool:
        self._once()
        return bool(self.inner.commit(snapshot))


@pytest.mark.parametrize("window", ["before-check", "check-to-publish"])
def test_commit_never_recreates_an_expired_snapshot_id(tmp_path: Path, window: str) -> None:
    """The commit read snapshot 1 and will publish 2; meanwhile others commit 2 and 3 and expiry
    keeps only 3 (deleting 1 and 2). Publishing 2 now would re-create an expired id: a snapshot
    below EARLIEST that no reader sees (its rows lost) and that a later expiry would process."""
    table, committer, messages = _pending_commit(tmp_path, "slow")  # snapshot 1: key 1; commit: key 9

    def race() -> None:
        other = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
        other.write_arrow(_rows([2], "a"))  # snapshot 2
        other.write_arrow(_rows([3], "a"))  # snapshot 3
        _expire_all_but_latest(other)  # snapshots 1 and 2 go

    if window == "before-check":  # the snapshot is built (its time taken) after the manifests are read
        committer.clock = _RaceOnce(committer.clock, race)  # type: ignore[assignment]
    else:
        committer.snapshot_commit = _RaceOnce(committer.snapshot_commit, race)
    result = committer.commit(messages, 1)
    assert result.attempts == 2 and result.snapshot_id == 4
    sm = table.snapshot_manager
    assert sm.list_snapshot_ids() == [3, 4] and sm.earliest_snapshot_id() == 3
    assert [r[0] for r in _read(table)] == [1, 2, 3, 9]


def test_a_commit_racing_an_expiry_past_its_successor_is_never_taken_as_landed(tmp_path: Path) -> None:
    """As above, but others commit 2, 3 and 4 and expiry keeps only 4: publishing 2 re-creates an
    expired id whose successor 3 is gone too. The soak found this taken as landed (12 rows lost:
    the successor check found no successor and concluded "ours is the latest"). Now the first
    later snapshot (4) is checked: it does not hold the commit's files, so the commit cannot tell
    a ghost from a landing whose files were compacted away at once: CommitStateUnknownError, files
    kept. Readers are not misled by the LATEST hint the ghost wrote: it lies below EARLIEST."""
    table, committer, messages = _pending_commit(tmp_path, "slow")  # snapshot 1: key 1; commit: key 9

    def race() -> None:
        other = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
        for k in (2, 3, 4):
            other.write_arrow(_rows([k], "a"))  # snapshots 2, 3, 4
        _expire_all_but_latest(other)  # snapshots 1, 2 and 3 go

    committer.snapshot_commit = _RaceOnce(committer.snapshot_commit, race)
    with pytest.raises(CommitStateUnknownError, match="snapshot 3 is expired too") as info:
        committer.commit(messages, 1)
    assert info.value.snapshot_id == 2
    sm = table.snapshot_manager
    assert sm.list_snapshot_ids() == [2, 4]  # the ghost 2 lies below EARLIEST 4
    assert sm.earliest_snapshot_id() == 4
    assert sm.latest_snapshot_id() == 4  # the LATEST hint names the ghost: not trusted below EARLIEST
    assert [r[0] for r in _read(table)] == [1, 2, 3, 4]  # the ghost's row is not read
    bucket = table.bucket_path(messages[0].partition, messages[0].bucket)
    assert all(Path(f"{bucket}/{f.file_name}").exists() for m in messages for f in m.new_files)  # files kept
    # the next commit builds on the true latest
    table.write_arrow(_rows([5], "a"))
    assert [r[0] for r in _read(table)] == [1, 2, 3, 4, 5]


def test_a_ghost_check_that_cannot_read_the_successor_is_unknown_not_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ghost check reads the successor's base list; when that fails (expired while read),
    the commit cannot tell: CommitStateUnknownError (it used to be taken as landed)."""
    table, committer, messages = _pending_commit(tmp_path, "slow")  # snapshot 1: key 1; commit: key 9

    def race() -> None:
        other = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
        other.write_arrow(_rows([2], "a"))
        other.write_arrow(_rows([3], "a"))
        _expire_all_but_latest(other)

        def gone(name: str) -> Any:
            raise FileNotFoundError(2, "No such file", name)

        monkeypatch.setattr(committer.scan, "read_list", gone)  # the successor's lists vanish

    committer.snapshot_commit = _RaceOnce(committer.snapshot_commit, race)
    with pytest.raises(CommitStateUnknownError, match="checking whether it re-created an expired id failed"):
        committer.commit(messages, 1)


def test_a_landed_commit_whose_successor_expired_is_recognised(tmp_path: Path) -> None:
    """The legitimate twin of the race above: the commit published 2 on a live base, then others
    committed 3 and 4 and an expiry removed 1..3 before the commit checked. Snapshot 4 holds its
    file: landed, no error, no second commit."""
    table, committer, messages = _pending_commit(tmp_path, "fast")  # snapshot 1: key 1; commit: key 9
    inner = committer.snapshot_commit

    class _PublishThenRace:
        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        def commit(self, snapshot: Snapshot) -> bool:
            published = bool(inner.commit(snapshot))  # snapshot 2 is ours
            other = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
            other.write_arrow(_rows([3], "a"))
            other.write_arrow(_rows([4], "a"))
            _expire_all_but_latest(other)  # 1, 2 and 3 go before the commit looks
            return published

    committer.snapshot_commit = _PublishThenRace()  # type: ignore[assignment]
    result = committer.commit(messages, 1)
    assert result.snapshot_id == 2 and result.attempts == 1
    assert [r[0] for r in _read(table)] == [1, 3, 4, 9]


def test_file_missing_from_the_latest_snapshot_is_a_typed_error(tmp_path: Path) -> None:
    table = _table(tmp_path, DYNAMIC)
    table.write_arrow(_rows([1, 2], "a"))
    snap = table.latest_snapshot()
    assert snap is not None and snap.index_manifest is not None
    Path(table.paths.manifest_path(snap.base_manifest_list)).unlink()  # damaged by hand
    with pytest.raises(CorruptFileError, match=f"latest snapshot {snap.id}"):
        table.write_arrow(_rows([3], "a"))
    Path(table.paths.manifest_path(snap.index_manifest)).unlink()
    with pytest.raises(CorruptFileError, match=r"Restoring the dynamic bucket index .*index-manifest"):
        table.write_arrow(_rows([4], "a"))


def test_rereads_are_bounded_then_a_transient_error_names_file_and_snapshot(tmp_path: Path) -> None:
    table = _table(tmp_path, {"bucket": "1", "write-only": "true"})  # one snapshot per write
    table.write_arrow(_rows([0], "a"))
    seen: list[int] = []

    def read(snapshot: Snapshot | None) -> None:
        assert snapshot is not None
        seen.append(snapshot.id)
        table.write_arrow(_rows([len(seen)], "a"))  # every read loses the race again
        raise FileNotFoundError(2, "No such file", f"/gone/index-{snapshot.id}")

    with pytest.raises(SnapshotExpiredWhileReadingError) as info:
        read_from_latest(table.snapshot_manager, read, table=table.name, what="Restoring")
    err = info.value
    assert isinstance(err, TransientError)
    assert len(seen) == MAX_REREADS + 1 and seen == list(range(1, MAX_REREADS + 2))
    assert err.snapshot_id == seen[-1] and err.path == f"/gone/index-{seen[-1]}"
    assert f"snapshot {seen[-1]}" in str(err) and "retry" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, SnapshotExpiredWhileReadingError) and again.path == err.path


# --------------------------------------------------------------------------------------------
# the real race: a dynamic-bucket writer process and an expiry process
# --------------------------------------------------------------------------------------------


def _writer(warehouse: str, worker: int, seconds: float) -> tuple[list[int], list[str]]:
    """Commits batches of new keys; returns the ids that landed and every error (type: text)."""
    table = FileSystemCatalog(warehouse).get_table("db.t")
    landed: list[int] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds
    n = 0
    while time.monotonic() < stop:
        ids = [worker * 1_000_000 + n * 10 + k for k in range(10)]
        n += 1
        try:
            table.write_arrow(pa.table({"id": ids, "dt": [f"p{worker}{k % 3}" for k in range(10)], "v": ids}, schema=SCHEMA))
            landed += ids
        except PaimonError as e:
            if not isinstance(e, TransientError):
                errors.append(f"{type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - the test reports every raw error
            errors.append(f"RAW {type(e).__name__}: {e}\n{traceback.format_exc()}")
    return landed, errors


def _expirer(warehouse: str, seconds: float) -> list[str]:
    table = FileSystemCatalog(warehouse).get_table("db.t")
    errors: list[str] = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            _expire_all_but_latest(table)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")
    return errors


@pytest.mark.slow
def test_dynamic_bucket_writers_beside_an_expiry_process(tmp_path: Path) -> None:
    """Two writer processes (own partitions: one writer per dynamic-bucket partition, as Java
    requires) race with expiry retaining one snapshot: every landed row is there, no raw error."""
    table = _table(tmp_path, {"bucket": "-1", "dynamic-bucket.target-row-num": "20"})
    warehouse = str(tmp_path / "wh")
    seconds = 8.0
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:
        expiry = pool.apply_async(_expirer, (warehouse, seconds))
        writers = [pool.apply_async(_writer, (warehouse, w, seconds)) for w in range(2)]
        results: list[Any] = [w.get(timeout=300) for w in writers]
        expiry_errors = expiry.get(timeout=300)
    raw = [e for _, errors in results for e in errors] + expiry_errors
    assert not raw, raw[:3]
    landed = sorted(i for ids, _ in results for i in ids)
    assert landed, "no commit landed"
    assert sorted(table.to_arrow().column("id").to_pylist()) == landed
