"""Writers compact as Java's do when ``write-only`` is false (the default): after the trigger's
number of sorted runs, a commit writes APPEND then COMPACT; ``write-only = true`` writers never do."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


def _table(catalog: FileSystemCatalog, name: str, *, bucket: str = "1", **options: str) -> FileStoreTable:
    return catalog.create_table(name, SCHEMA, primary_keys=["id"], options={"bucket": bucket, **options})


def _runs(t: FileStoreTable) -> int:
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return sum(1 for e in live if e.file.level == 0) + len({e.file.level for e in live if e.file.level > 0})


def test_writers_compact_at_the_trigger(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "db.w", **{"num-sorted-run.compaction-trigger": "3"})
    kinds = []
    for i in range(7):
        r = t.write_arrow(pa.table({"id": list(range(i, i + 10)), "v": [i] * 10}, schema=SCHEMA))
        kinds.append([t.snapshot_manager.snapshot(s).commit_kind for s in r.snapshot_ids])
        assert _runs(t) < 3 or (i < 2 and _runs(t) == i + 1)
    assert kinds[0] == [CommitKind.APPEND] and kinds[1] == [CommitKind.APPEND]
    assert kinds[2] == [CommitKind.APPEND, CommitKind.COMPACT]  # the 3rd run triggers
    got = t.to_arrow().sort_by("id")
    assert got["id"].to_pylist() == list(range(16)) and got["v"].to_pylist() == [min(i, 6) for i in range(16)]
    only = _table(catalog, "db.o", **{"num-sorted-run.compaction-trigger": "3", "write-only": "true"})
    for i in range(7):
        only.write_arrow(pa.table({"id": list(range(i, i + 10)), "v": [i] * 10}, schema=SCHEMA))
    assert _runs(only) == 7 and only.to_arrow().sort_by("id").equals(got)


@pytest.mark.parametrize("bucket", ["1", "-1"])  # -1: the APPEND snapshot also carries a HASH index file
def test_a_concurrent_compaction_does_not_fail_the_write(catalog: FileSystemCatalog, bucket: str) -> None:
    """The write's COMPACT half conflicts with a dedicated compaction that landed meanwhile: the
    APPEND snapshot stays (every file it references exists), the writer's compaction files are
    deleted, the result says so."""
    from tests.unit.paimon_core.maintenance.expiry_helpers import (
        list_all_files,
        referenced_files,
        unreferenced_files,
    )

    t = _table(catalog, "db.c", bucket=bucket, **{"num-sorted-run.compaction-trigger": "3"})
    for i in range(2):
        t.write_arrow(pa.table({"id": list(range(i, i + 10)), "v": [i] * 10}, schema=SCHEMA))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.write_arrow(pa.table({"id": list(range(100, 110)), "v": [100] * 10}, schema=SCHEMA))
    messages = w.prepare_commit()  # the writer compacts its bucket here
    assert any(m.compact_after for m in messages)
    t.maintenance.compact()  # a dedicated job compacts the same bucket first
    result = b.new_commit().commit(messages)
    assert result.snapshot_id is not None and result.maintenance_error is not None
    assert "inline compaction not committed" in result.maintenance_error
    assert 100 in t.to_arrow()["id"].to_pylist() and t.to_arrow().num_rows == 21
    assert unreferenced_files(t) == set()
    assert referenced_files(t) <= list_all_files(t.file_io, t.path)  # nothing referenced was deleted
