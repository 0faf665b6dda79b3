"""A publish whose outcome cannot be told must never lead to deleting the commit's files, and a
retry with the same commit identity settles it.

The failure seen on the S3 server: the snapshot PUT landed, the client saw an error, and the
look-up that should tell "ours" from "not there" failed as well (the store was going away). The
commit then looked like a plain failure and ``write_arrow`` deleted the data files a live snapshot
references: every later read failed. Both halves are covered here: the committer turns any doubt into
``CommitStateUnknownError``, and a writer interrupted mid-publish (``KeyboardInterrupt``, a task kill)
checks the history before deleting anything.

``CommitStateUnknownError`` is transient: the task is retried with its deterministic identity
(commit user + identifier), whose commit first looks that identity up in the snapshot history
(Java's ``filterCommitted``) and commits nothing when the first try landed, once when it did not.

The failures come from :class:`~tests.fixtures.failing_file_io.FailingFileIO` (Java's
``FailingFileIO``): the N-th call on the snapshot file fails, before or after it ran.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.exceptions import CommitFilesLostError, CommitStateUnknownError, TransientError
from paimon_core.results import CommitResult
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.output import EXIT_TRANSIENT, emit_error, is_retryable
from tests.fixtures.failing_file_io import FailingFileIO, failing_catalog

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
#: the task's deterministic commit identity (an Airflow task derives both from its run)
USER, IDENTIFIER = "airflow-task-a", 42
#: the calls on a snapshot file: its publish and the look-ups of it
SNAPSHOT_OPS = ("try_write_atomic", "read_bytes", "exists")


def _table(tmp_path: Path) -> tuple[FileStoreTable, FailingFileIO]:
    catalog, file_io = failing_catalog(str(tmp_path))
    catalog.create_database("db")
    return catalog.create_table("db.t", pa.schema([("id", pa.int64())])), file_io


def _on_snapshot(snapshot_id: int) -> Callable[[str, str], bool]:
    """Count only the calls on ``snapshot-<id>`` from its publish on (1: the publish, 2: the
    look-up after it)."""
    name = f"/snapshot/snapshot-{snapshot_id}"
    published: list[bool] = []

    def where(op: str, path: str) -> bool:
        if not path.endswith(name):
            return False
        if op == "try_write_atomic":
            published.append(True)
        return bool(published)

    return where


def test_landed_publish_with_failing_lookup_keeps_every_file(tmp_path: Path) -> None:
    table, file_io = _table(tmp_path)
    # 1: the publish lands, then the connection drops; 2: the look-up fails (the store went away)
    file_io.reset(
        fail_at={1, 2},
        after={1},
        error=lambda op, path: ConnectionError("connection reset"),
        ops=SNAPSHOT_OPS,
        where=_on_snapshot(1),
    )
    with pytest.raises(CommitStateUnknownError, match="checking whether it landed failed too"):
        table.write_arrow(ROWS)
    assert [f.op for f in file_io.failures] == ["try_write_atomic", "read_bytes"]
    file_io.reset()
    # The snapshot landed and everything it references is still there.
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_interrupt_after_landing_keeps_the_files(tmp_path: Path) -> None:
    table, file_io = _table(tmp_path)
    file_io.reset(
        fail_at=1,
        after=True,
        error=lambda op, path: KeyboardInterrupt(),
        ops=SNAPSHOT_OPS,
        where=_on_snapshot(1),
    )
    with pytest.raises(KeyboardInterrupt):
        table.write_arrow(ROWS)
    file_io.reset()
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_interrupt_before_landing_deletes_the_files(tmp_path: Path) -> None:
    """The other side: a commit that surely did not land still cleans up after itself."""
    table, file_io = _table(tmp_path)
    file_io.reset(
        fail_at=1, error=lambda op, path: KeyboardInterrupt(), ops=SNAPSHOT_OPS, where=_on_snapshot(1)
    )
    with pytest.raises(KeyboardInterrupt):
        table.write_arrow(ROWS)
    file_io.reset()
    assert table.snapshot_manager.latest_snapshot_id() is None
    assert not list(tmp_path.glob("db.db/t/bucket-*/*.parquet"))


def test_unknown_state_is_transient_and_lost_files_are_not() -> None:
    unknown = CommitStateUnknownError("may have landed", snapshot_id=3)
    assert isinstance(unknown, TransientError) and is_retryable(unknown)
    lost = CommitFilesLostError("landed, files gone", missing_files=["data-1.parquet"], snapshot_ids=[3])
    # a retry finds the commit landed and cannot bring the files back
    assert isinstance(lost, CommitStateUnknownError) and not is_retryable(lost)


def _write_as_task(table: FileStoreTable, rows: pa.Table) -> CommitResult:
    """One run of the task: write, then commit with the task's identity (its files are aborted
    when the identity is already in the history: the caller owns them then)."""
    builder = table.new_batch_write_builder(commit_user=USER)
    write = builder.new_write()
    write.write_arrow(rows)
    messages = write.prepare_commit()
    commit = builder.new_commit()
    result = commit.commit(messages, IDENTIFIER)
    if result.already_committed:
        commit.abort(messages)
    return result


def _identities(table: FileStoreTable) -> list[tuple[str, int]]:
    return [(s.commit_user, s.commit_identifier) for s in table.snapshot_manager.snapshots()]


@pytest.mark.parametrize("landed", [True, False], ids=["landed", "not-landed"])
def test_a_retry_after_an_unknown_state_commits_exactly_once(tmp_path: Path, landed: bool) -> None:
    table, file_io = _table(tmp_path)
    table.write_arrow(pa.table({"id": pa.array([0], pa.int64())}))  # snapshot 1, another writer's
    if landed:  # the publish of snapshot 2 lands, its response and the look-up are lost
        file_io.reset(fail_at={1, 2}, after={1}, ops=SNAPSHOT_OPS, where=_on_snapshot(2))
    else:  # the publish fails before it reaches the store (and nothing lands later)
        file_io.reset(fail_at=1, ops=SNAPSHOT_OPS, where=_on_snapshot(2))
    with pytest.raises(CommitStateUnknownError) as info:
        _write_as_task(table, ROWS)
    assert is_retryable(info.value) and emit_error("t", info.value, stream=io.StringIO()) == EXIT_TRANSIENT
    assert (table.snapshot_manager.latest_snapshot_id() == 2) is landed
    file_io.reset()

    retried = _write_as_task(table, ROWS)  # the task's retry: same user and identifier
    assert retried.already_committed is landed
    assert _identities(table).count((USER, IDENTIFIER)) == 1  # committed exactly once
    assert table.snapshot_manager.latest_snapshot_id() == 2
    assert sorted(table.to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    again = _write_as_task(table, ROWS)  # any further retry is a no-op
    assert again.already_committed and sorted(table.to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
