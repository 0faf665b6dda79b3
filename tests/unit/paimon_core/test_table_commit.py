"""TableCommit, the one commit path (issue 26), from paimon_core's own entry points: batch
(``BatchTableCommit``) and stream (``StreamTableCommit``) commits whose writer's inline compaction
loses to a dedicated compaction landing between the writer's prepare and the commit keep the
write's rows and leave no orphan file; a stream replay commits nothing; precommit-compact applies
to stream commits too; stream commits keep postpone rows staged, batch commits with a given user
replay them into real buckets. The Spark entry points: tests/integration/test_one_commit_path.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.results import CommitResult
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_commit import TableCommit
from tests.unit.paimon_core.maintenance.expiry_helpers import referenced_files, unreferenced_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


@pytest.fixture
def catalog(tmp_path: object) -> FileSystemCatalog:
    c = FileSystemCatalog(str(tmp_path))
    c.create_database("db")
    return c


def _rows(start: int, n: int, v: int) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "v": [v] * n}, schema=SCHEMA)


def _compacting_table(catalog: FileSystemCatalog) -> FileStoreTable:
    """A primary-key table whose next write compacts its bucket inline (the 3rd sorted run)."""
    t = catalog.create_table(
        "db.pk",
        SCHEMA,
        primary_keys=["id"],
        options={"bucket": "1", "num-sorted-run.compaction-trigger": "3"},
    )
    for i in range(2):
        t.write_arrow(_rows(i, 10, i))
    return t


def _prepared_then_compacted(t: FileStoreTable) -> Sequence[CommitMessage]:
    """A writer's messages with an inline compaction, then a dedicated compaction from another
    table handle lands before they are committed."""
    w = t.new_batch_write_builder().new_write()
    w.write_arrow(_rows(100, 10, 100))
    messages = w.prepare_commit()
    assert any(m.compact_after for m in messages), "the writer did not compact: the test proves nothing"
    other = FileSystemCatalog(t.path.rsplit("/", 2)[0]).get_table("db.pk")
    other.maintenance.compact()
    return messages


def _assert_kept(t: FileStoreTable, result: CommitResult) -> None:
    t = FileSystemCatalog(t.path.rsplit("/", 2)[0]).get_table("db.pk")
    assert result.snapshot_id is not None and result.commit_kind == "APPEND"
    assert (
        result.maintenance_error is not None and "inline compaction not committed" in result.maintenance_error
    )
    ids = t.to_arrow()["id"].to_pylist()
    assert sorted(ids) == list(range(11)) + list(range(100, 110))
    assert unreferenced_files(t) == set()  # the losing compaction's files are gone
    assert referenced_files(t)  # and what the snapshots reference is there (read above)


@pytest.mark.parametrize("entry", ["batch", "stream", "table_commit"])
def test_an_inline_compaction_losing_to_a_dedicated_one_keeps_the_write(
    catalog: FileSystemCatalog, entry: str
) -> None:
    t = _compacting_table(catalog)
    messages = _prepared_then_compacted(t)
    if entry == "batch":
        result = t.new_batch_write_builder(commit_user="job-1").new_commit().commit(messages)
    elif entry == "stream":
        result = t.new_stream_write_builder("stream-1").new_commit().commit(messages, 7)
    else:
        result = TableCommit(t, "tc-1", check_committed=False).commit(messages, 1)
    _assert_kept(t, result)


def test_a_stream_replay_commits_nothing_twice(catalog: FileSystemCatalog) -> None:
    t = _compacting_table(catalog)
    commit = t.new_stream_write_builder("stream-1").new_commit()
    messages = _prepared_then_compacted(t)
    first = commit.commit(messages, 7)
    latest = t.snapshot_manager.latest_snapshot_id()
    again = commit.commit(messages, 7)  # a replay of identifier 7 (e.g. after a crash)
    assert again.already_committed and again.snapshot_id is None
    assert t.snapshot_manager.latest_snapshot_id() == latest and first.snapshot_id is not None


def _append_table(catalog: FileSystemCatalog, name: str, **options: str) -> FileStoreTable:
    return catalog.create_table(name, SCHEMA, options={"bucket": "-1", **options})


def _two_writers(t: FileStoreTable) -> list[CommitMessage]:
    out: list[CommitMessage] = []
    for i in range(2):
        w = t.new_batch_write_builder().new_write()
        w.write_arrow(_rows(i * 10, 10, i))
        out += w.prepare_commit()
    return out


def test_precommit_compact_applies_to_stream_commits(catalog: FileSystemCatalog) -> None:
    """Before the one commit path, StreamTableCommit committed every writer's small file."""
    t = _append_table(catalog, "db.a", **{"precommit-compact": "true"})
    messages = _two_writers(t)
    assert sum(len(m.new_files) for m in messages) == 2
    result = t.new_stream_write_builder("s").new_commit().commit(messages, 1)
    assert result.added_files == 1 and t.to_arrow().num_rows == 20
    assert unreferenced_files(t) == set()  # the writers' own files went after the merge


@pytest.mark.parametrize("stream", [False, True])
def test_postpone_rows_go_to_real_buckets_on_batch_commits_only(
    catalog: FileSystemCatalog, stream: bool
) -> None:
    t = catalog.create_table("db.p", SCHEMA, primary_keys=["id"], options={"bucket": str(POSTPONE_BUCKET)})
    w = t.new_batch_write_builder().new_write()
    w.write_arrow(_rows(0, 10, 0))
    messages = w.prepare_commit()
    assert {m.bucket for m in messages} == {POSTPONE_BUCKET}
    commit = TableCommit(t, "u-1", check_committed=True, batch=not stream)
    commit.commit(messages, 1)
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert {e.bucket == POSTPONE_BUCKET for e in live} == {stream}
    assert unreferenced_files(t) == set()
