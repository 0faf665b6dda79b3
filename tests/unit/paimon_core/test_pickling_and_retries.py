"""What Spark executors carry must pickle; a commit that keeps losing gives up cleanly."""

from __future__ import annotations

import pickle

import pytest

from paimon_core import CommitRetriesExhaustedError, FileSystemCatalog, SchemaMismatchError
from paimon_core.snapshot.snapshot import Snapshot
from tests.fixtures.tables import sample_rows


def test_table_messages_and_errors_pickle(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.p", sample_rows(1).schema, partition_keys=["dt"])
    t2 = pickle.loads(pickle.dumps(t))
    w = t2.new_batch_write_builder().new_write()  # an "executor" writes with its own copy
    w.write_arrow(sample_rows(20))
    msgs = pickle.loads(pickle.dumps(w.prepare_commit()))
    t.new_batch_write_builder().new_commit().commit(msgs)  # the "driver" commits
    assert t.to_arrow().num_rows == 20
    rb = t.new_read_builder()
    splits = pickle.loads(pickle.dumps(rb.new_scan().plan().splits))
    assert pickle.loads(pickle.dumps(rb.new_read())).to_arrow(splits).num_rows == 20
    err = pickle.loads(pickle.dumps(SchemaMismatchError("bad column", column="x")))
    assert isinstance(err, SchemaMismatchError) and err.column == "x" and str(err) == "bad column"


class _AlwaysLoses:
    """A publish that always finds the snapshot id taken (another writer always wins)."""

    def commit(self, snapshot: Snapshot) -> bool:
        return False


def test_retries_exhausted_leaves_table_and_manifest_dir_unchanged(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.r", sample_rows(1).schema, options={"commit.max-retries": "2", "commit.min-retry-wait": "1 ms"}
    )
    t.write_arrow(sample_rows(5))
    manifests_before = {s.name for s in t.file_io.list_files(t.paths.manifest_dir)}
    commit = t.new_file_store_commit("loser")
    commit.snapshot_commit = _AlwaysLoses()
    w = t.new_batch_write_builder().new_write()
    w.write_arrow(sample_rows(5, start=5))
    with pytest.raises(CommitRetriesExhaustedError, match="after 3 attempts"):
        commit.commit(w.prepare_commit(), 1)
    assert t.latest_snapshot().id == 1 and t.to_arrow().num_rows == 5
    assert {s.name for s in t.file_io.list_files(t.paths.manifest_dir)} == manifests_before


def test_whole_table_overwrite_when_dynamic_overwrite_is_off(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.w", sample_rows(1).schema, partition_keys=["dt"], options={"dynamic-partition-overwrite": "false"}
    )
    t.write_arrow(sample_rows(40))
    t.write_arrow(sample_rows(2, start=100), overwrite=True)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [100, 101]
