"""Options are resolved once per table handle (schema + dynamic options) and used by every
operation; option values paimon_core cannot honour are refused, naming the option."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitRetriesExhaustedError, InvalidOptionError
from paimon_core.schema.schema_change import SetOption
from paimon_core.snapshot.snapshot import Snapshot
from tests.fixtures.tables import sample_rows


class _AlwaysTaken:
    """A publish that always loses the race, as if another writer took every snapshot id."""

    def __init__(self) -> None:
        self.calls = 0

    def commit(self, snapshot: Snapshot) -> bool:
        self.calls += 1
        return False


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_dynamic_commit_options_reach_the_committer(catalog: FileSystemCatalog, retries: int) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema)
    handle = t.copy({"commit.max-retries": str(retries), "commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "1 ms"})
    sleeps: list[float] = []
    commit = handle.new_file_store_commit("u")
    assert commit.options.commit_max_retries == retries
    commit.snapshot_commit = _AlwaysTaken()  # type: ignore[assignment]
    commit.sleep = sleeps.append
    write = handle.new_batch_write_builder().new_write()
    write.write_arrow(sample_rows(3))
    with pytest.raises(CommitRetriesExhaustedError) as info:
        commit.commit(write.prepare_commit(), 1)
    assert info.value.attempts == retries + 1  # type: ignore[attr-defined]
    assert commit.snapshot_commit.calls == retries + 1  # type: ignore[attr-defined]
    assert len(sleeps) == retries and all(0 < s <= 0.001 for s in sleeps)
    assert t.latest_snapshot() is None


def test_dynamic_options_reach_writes_and_scans(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    t.write_arrow(sample_rows(10, start=10))
    handle = t.copy({"target-file-size": "1 kb"})
    assert handle.new_batch_write_builder().new_write().target_file_size == 1024
    assert handle.copy({"scan.snapshot-id": "1"}).to_arrow().num_rows == 10


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("full-compaction.delta-commits", "0"),
        ("record-level.expire-time", "1 d"),
    ],
)
def test_unsupported_option_values_are_refused(catalog: FileSystemCatalog, key: str, value: str) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    with pytest.raises(InvalidOptionError, match=f"option '{key}' = '{value}' is not supported") as info:
        catalog.create_table("db.t", schema, primary_keys=["id"], options={key: value, "bucket": "1"})
    assert info.value.key == key  # type: ignore[attr-defined]
    assert not catalog.table_exists("db.t")
    t = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    with pytest.raises(InvalidOptionError, match=key):
        catalog.alter_table("db.t", [SetOption(key, value)])
    assert key not in catalog.get_table("db.t").schema.options
    # a table another engine made with the option: readable, not writable here
    with pytest.raises(InvalidOptionError, match=f"Cannot write table .*'{key}'"):
        t.copy({key: value}).new_batch_write_builder().new_write()
    assert t.to_arrow().num_rows == 0


def test_supported_changelog_producer_values_are_accepted(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    for i, value in enumerate(["none", "input", "full-compaction", "lookup"]):
        catalog.create_table(f"db.t{i}", schema, primary_keys=["id"], options={"changelog-producer": value, "bucket": "1"})
