"""``precommit-compact = true`` on unaware-bucket append tables: the small new files of the writers of
one commit are merged per partition before the commit (Java's AppendPreCommitCompactCoordinator)."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append.append_pre_commit_compact import AppendPreCommitCompactCoordinator
from paimon_core.exceptions import CommitConflictError, InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.commit.committer import FileStoreCommit
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.append.test_append_compact_coordinator import new_file
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])


def _catalog(wh: str) -> FileSystemCatalog:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    return cat


def _messages(t: FileStoreTable, writers: int = 4) -> tuple[list[CommitMessage], object]:
    """The messages of ``writers`` writers (as Spark tasks), each writing both partitions."""
    b = t.new_batch_write_builder()
    messages: list[CommitMessage] = []
    for w in range(writers):
        tw = b.new_write()
        ids = list(range(w * 100, w * 100 + 100))
        tw.write_arrow(pa.table({"id": ids, "dt": ["a" if i % 3 else "b" for i in ids]}, schema=SCHEMA))
        messages += tw.prepare_commit()
    return messages, b


def _files_on_disk(t: FileStoreTable) -> int:
    return sum(len(files) for d, _, files in os.walk(t.path) if "bucket-" in d)


def test_writers_small_files_are_merged_before_the_commit(local_warehouse: str) -> None:
    cat = _catalog(local_warehouse)
    plain = cat.create_table("db.plain", SCHEMA, partition_keys=["dt"])
    merged = cat.create_table("db.merged", SCHEMA, partition_keys=["dt"], options={"precommit-compact": "true"})
    for t in (plain, merged):
        messages, builder = _messages(t)
        builder.new_commit().commit(messages)  # type: ignore[attr-defined]
    p_snap, m_snap = plain.latest_snapshot(), merged.latest_snapshot()
    assert p_snap is not None and m_snap is not None and m_snap.commit_kind == CommitKind.APPEND
    p_files = plain.new_file_store_scan().live_entries(p_snap)
    m_files = merged.new_file_store_scan().live_entries(m_snap)
    assert len(p_files) == 8 and len(m_files) == 2  # 4 writers x 2 partitions -> one file per partition
    assert sorted(plain.to_arrow()["id"].to_pylist()) == sorted(merged.to_arrow()["id"].to_pylist()) == list(range(400))
    assert _files_on_disk(merged) == 2 and unreferenced_files(merged) == set()  # the merged new files are gone


def test_a_failed_commit_keeps_the_writers_files_for_abort(local_warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _catalog(local_warehouse).create_table("db.t", SCHEMA, partition_keys=["dt"], options={"precommit-compact": "true"})
    messages, builder = _messages(t)

    def conflict(self: FileStoreCommit, *args: object, **kwargs: object) -> None:
        raise CommitConflictError("simulated")

    monkeypatch.setattr(FileStoreCommit, "commit", conflict)
    commit = builder.new_commit()  # type: ignore[attr-defined]
    with pytest.raises(CommitConflictError):
        commit.commit(messages)
    assert _files_on_disk(t) == 8  # the merge's output deleted; the writers' files untouched
    commit.abort(messages)
    assert _files_on_disk(t) == 0 and t.latest_snapshot() is None


def test_only_unaware_bucket_append_tables_and_valid_values(local_warehouse: str) -> None:
    cat = _catalog(local_warehouse)
    fixed = cat.create_table("db.fixed", SCHEMA, options={"bucket": "1", "bucket-key": "id", "precommit-compact": "true"})
    messages, builder = _messages(fixed)
    builder.new_commit().commit(messages)  # type: ignore[attr-defined]
    assert len(fixed.new_file_store_scan().live_entries(fixed.latest_snapshot())) == 4  # left alone
    with pytest.raises(InvalidOptionError, match="precommit-compact"):
        cat.create_table("db.bad", SCHEMA, options={"precommit-compact": "yes"})
    fallback = cat.create_table("db.fb", SCHEMA, options={"changelog.precommit-compact": "true"})
    messages, builder = _messages(fallback)
    builder.new_commit().commit(messages)  # type: ignore[attr-defined]
    assert len(fallback.new_file_store_scan().live_entries(fallback.latest_snapshot())) == 1


def test_coordinator_emits_a_partition_when_it_reaches_the_target_size() -> None:
    def f(name: str, size: int) -> DataFileMeta:
        return new_file(size, name=name)

    c = AppendPreCommitCompactCoordinator(100)
    assert c.add_file((b"p", 0), f("a", 40)) is None
    assert c.add_file((b"q", 0), f("b", 90)) is None
    assert [x.file_name for x in c.add_file((b"p", 0), f("c", 60)) or []] == ["a", "c"]
    assert [(k, [x.file_name for x in g]) for k, g in c.emit_all()] == [((b"q", 0), ["b"])]
    assert c.emit_all() == []
