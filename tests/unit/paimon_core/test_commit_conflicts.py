"""Conflicts that cannot be retried fail cleanly and leave the table as it was."""

from __future__ import annotations

import pytest

from paimon_core import CommitConflictError, FileSystemCatalog
from paimon_core.table.commit_message import CommitMessage
from tests.fixtures.tables import sample_rows


def test_deleting_a_file_removed_concurrently_is_a_conflict(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.c", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    entry = t.new_file_store_scan().live_entries(t.latest_snapshot())[0]
    # A "compaction" planned on snapshot 1 that rewrites the file...
    rewrite = CommitMessage(entry.partition, entry.bucket, entry.total_buckets, compact_before=(entry.file,))
    # ...while another job truncates the table first.
    t.new_batch_write_builder().new_commit().truncate()
    before = t.latest_snapshot()
    with pytest.raises(CommitConflictError, match="already removed by a concurrent commit"):
        t.new_stream_write_builder("compactor").new_commit().commit([rewrite], 1)
    after = t.latest_snapshot()
    assert after.id == before.id and after.total_record_count == 0


def test_adding_the_same_file_twice_is_refused(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.d", sample_rows(1).schema)
    b = t.new_stream_write_builder("job")
    w = b.new_write()
    w.write_arrow(sample_rows(5))
    msgs = w.prepare_commit()
    b.new_commit().commit(msgs, 1)
    # Same files under a new identifier (a buggy retry): refused when checked, as Java's
    # appendCommitCheckConflict does; nothing is duplicated.
    with pytest.raises(CommitConflictError, match="already part of snapshot 1"):
        t.new_file_store_commit("job").commit(msgs, 2, check_append_conflicts=True)
    # Twice in one commit: always refused.
    with pytest.raises(CommitConflictError, match="already added"):
        t.new_file_store_commit("job").commit(msgs + msgs, 3)
    assert t.to_arrow().num_rows == 5


def test_streaming_read_is_bounded(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.big", sample_rows(1).schema)
    t.write_arrow(sample_rows(300_000))
    rb = t.new_read_builder()
    reader = rb.new_read().to_arrow_batch_reader(rb.new_scan().plan().splits)
    sizes = [b.num_rows for b in reader]
    assert sum(sizes) == 300_000 and max(sizes) <= 65536 and len(sizes) >= 5
