"""A commit whose N-th storage call fails, for every N (Paimon's ``FailingFileIO`` tests).

For each table kind the write-and-commit of a task is first run once to count its FileIO calls;
then, on a fresh copy of the table, the N-th call fails (before it ran, and after it ran: the
call landed but its caller saw an error), for every N. Each time:

* the commit succeeds or raises a typed :class:`~paimon_core.exceptions.PaimonError` (no raw
  ``OSError``, ``AttributeError`` ...), a transient one when a retry may succeed;
* the table is readable and holds exactly the old rows or exactly the old and the new ones;
  a plain failure (not :class:`CommitStateUnknownError`) leaves the old rows, a success the new;
* the task's retry (same commit user and identifier) ends with the new rows exactly once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitStateUnknownError, PaimonError
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.output import is_retryable
from tests.fixtures.failing_file_io import FailingFileIO, failing_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False)])
USER, IDENTIFIER = "task-every-io", 7
KINDS = {
    "append": {"partition_keys": ["dt"]},
    "primary-key": {"primary_keys": ["id", "dt"], "partition_keys": ["dt"], "options": {"bucket": "2"}},
}


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": list(ids), "dt": [f"d{i % 2}" for i in ids]}, schema=SCHEMA)


OLD, NEW = _rows(range(6)), _rows(range(100, 104))


def _ids(table: FileStoreTable) -> list[int]:
    return sorted(table.to_arrow().column("id").to_pylist())


def _write_as_task(table: FileStoreTable) -> None:
    """The task: write NEW, commit it as (USER, IDENTIFIER); a replay aborts its own files."""
    builder = table.new_batch_write_builder(commit_user=USER)
    write = builder.new_write()
    write.write_arrow(NEW)
    messages = write.prepare_commit()
    commit = builder.new_commit()
    if commit.commit(messages, IDENTIFIER).already_committed:
        commit.abort(messages)


def _open(warehouse: Path) -> tuple[FileStoreTable, FailingFileIO]:
    catalog, file_io = failing_catalog(str(warehouse))
    return catalog.get_table("db.t"), file_io


@pytest.fixture(scope="module", params=sorted(KINDS))
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp(f"base-{request.param}") / "wh"
    catalog = FileSystemCatalog(str(warehouse))
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, **KINDS[request.param])  # type: ignore[arg-type]
    table.write_arrow(OLD.slice(0, 3))
    table.write_arrow(OLD.slice(3))
    return warehouse


@pytest.mark.parametrize("after", [False, True], ids=["before-the-call", "after-the-call"])
def test_a_commit_failing_at_every_io_call(base: Path, tmp_path: Path, after: bool) -> None:
    probe_dir = tmp_path / "probe"
    shutil.copytree(base, probe_dir)
    probe, counter = _open(probe_dir)
    _write_as_task(probe)
    calls = counter.count
    assert calls >= 10 and _ids(probe) == sorted(
        [*OLD.column("id").to_pylist(), *NEW.column("id").to_pylist()]
    )
    old, new = _ids(probe)[: OLD.num_rows], _ids(probe)

    outcomes: dict[str, int] = {}
    for n in range(1, calls + 1):
        copy = tmp_path / f"n{n}"
        shutil.copytree(base, copy)
        table, file_io = _open(copy)
        file_io.reset(fail_at=n, after=after)
        failed: BaseException | None = None
        try:
            _write_as_task(table)
        except Exception as e:  # noqa: BLE001 - checked below
            failed = e
        failure = file_io.failures[0] if file_io.failures else None
        what = f"{failure.op} {'/'.join(failure.path.rsplit('/', 2)[-2:])}" if failure else "no call"
        where = f"call {n} of {calls} ({what}): {failed!r}"
        # (a run may make a call or two less than the probe: post-commit expiry depends on the clock)
        assert (failure.index == n) if failure else (failed is None and file_io.count < n), where
        file_io.reset()  # the store is back
        got = _ids(table)
        if failed is None:
            assert got == new, where
            outcomes["ok"] = outcomes.get("ok", 0) + 1
        else:
            assert isinstance(failed, PaimonError), where  # typed, never a raw error
            if isinstance(failed, CommitStateUnknownError):
                assert got in (old, new) and is_retryable(failed), where
            else:
                assert got == old, where
            outcomes[type(failed).__name__] = outcomes.get(type(failed).__name__, 0) + 1
        _write_as_task(table)  # the task's retry, same identity
        assert _ids(table) == new, where  # exactly once
        shutil.rmtree(copy)
    assert outcomes.get("ok", 0) < calls, outcomes  # the failures were felt


@pytest.mark.parametrize("seed", range(4))
def test_a_task_retried_through_random_failures_commits_once(base: Path, tmp_path: Path, seed: int) -> None:
    """Java's random ``FailingFileIO``: every call fails with a probability, under a seed; the
    task is retried until it succeeds (at most 3 failures, Java's ``maxFails``) and its rows land
    exactly once. The same seed fails the same first call (the harness is deterministic)."""
    firsts = []
    for run in range(2):
        copy = tmp_path / f"run{run}"
        shutil.copytree(base, copy)
        table, file_io = _open(copy)
        file_io.reset(probability=0.05, seed=seed, max_failures=3)  # Java's maxFails
        for _attempt in range(4):  # at most 3 fail
            try:
                _write_as_task(table)
                break
            except PaimonError as e:
                assert not isinstance(e, CommitStateUnknownError) or is_retryable(e), e
        else:
            pytest.fail(f"no attempt succeeded: {file_io.failures}")
        firsts.append((file_io.failures[0].index, file_io.failures[0].op) if file_io.failures else None)
        file_io.reset()
        assert _ids(table) == sorted([*OLD.column("id").to_pylist(), *NEW.column("id").to_pylist()])
        assert [(s.commit_user, s.commit_identifier) for s in table.snapshot_manager.snapshots()].count(
            (USER, IDENTIFIER)
        ) == 1
    assert firsts[0] == firsts[1]
