"""Who compacts a postpone-bucket table (``bucket = -2``), now that the dedicated compaction takes
the store (issue 26).

Its compaction assigns the buckets by replaying rows through the table's writer, a table-level job
(:class:`~paimon_core.table.postpone_bucket_compact.PostponeBucketCompact`). The store-level
:class:`~paimon_core.operation.compact.table_compact.TableCompact` refuses such a table, naming
the job, and changes nothing; ``table.maintenance.compact()`` and ``compact_database`` run the table-level job
(before, ``TableCompact`` handed the table over itself); a streaming compaction is refused when it
is made, as Java refuses it.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.streaming_compact import StreamingCompaction
from paimon_core.operation.compact.table_compact import TableCompact
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable
from spark_jobs.__main__ import main

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _postpone_table(catalog: FileSystemCatalog, name: str = "db.t") -> FileStoreTable:
    # batch writes stay in bucket-postpone (by default they go to real buckets at commit)
    opts = {"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"}
    t = catalog.create_table(name, SCHEMA, primary_keys=["id"], options=opts)
    t.write_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": [2], "v": ["B"]}, schema=SCHEMA))
    return t


def _buckets(t: FileStoreTable) -> set[int]:
    return {e.bucket for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}


def test_table_compact_refuses_a_postpone_table_and_changes_nothing(catalog: FileSystemCatalog) -> None:
    t = _postpone_table(catalog)
    before = t.latest_snapshot()
    with pytest.raises(InvalidArgumentError, match="postpone buckets .*table.maintenance.compact\\(\\)"):
        TableCompact(t.store).run(CompactRequest())
    with pytest.raises(InvalidArgumentError, match="does not take buckets"):  # its arguments are named first
        TableCompact(t.store).run(CompactRequest(buckets=frozenset([0])))
    with pytest.raises(InvalidArgumentError, match="only supports batch mode"):
        StreamingCompaction(t.store, max_rounds=1)
    assert t.latest_snapshot() == before and _buckets(t) == {POSTPONE_BUCKET}


def test_table_compact_api_runs_the_postpone_compaction(catalog: FileSystemCatalog) -> None:
    t = _postpone_table(catalog)
    assert t.to_arrow().num_rows == 0  # batch reads skip bucket-postpone until it is compacted
    compact = getattr(t, "maintenance", t).compact  # table.maintenance.compact() (table.maintenance.compact() later)
    assert compact(dry_run=True).plan  # the plan of the table-level job
    with pytest.raises(InvalidArgumentError, match="does not take partitions"):
        compact(partitions="id=1")
    result = compact()
    snap = t.snapshot_manager.snapshot(result.snapshot_id)
    assert snap.commit_kind == CommitKind.COMPACT and result.strategy == "postpone"
    assert POSTPONE_BUCKET not in _buckets(t)
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a"},
        {"id": 2, "v": "B"},
        {"id": 3, "v": "c"},
    ]


def test_compact_database_runs_the_postpone_compaction(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    postpone = _postpone_table(catalog, "db.p")
    plain = catalog.create_table("db.f", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    for v in ("x", "y"):
        plain.write_arrow(pa.table({"id": [1], "v": [v]}, schema=SCHEMA))
    capsys.readouterr()
    rc = main(["compact_database", "--warehouse", warehouse, "--execution", "local"])
    line = json.loads([ln for ln in capsys.readouterr().out.splitlines() if ln.strip()][0])
    assert rc == 0, line
    for t in (catalog.get_table("db.p"), catalog.get_table("db.f")):
        latest = t.latest_snapshot()
        assert latest is not None and latest.commit_kind == CommitKind.COMPACT, t.name
    assert POSTPONE_BUCKET not in _buckets(catalog.get_table("db.p"))
    assert catalog.get_table("db.p").to_arrow().num_rows == 3 and postpone.name == "db.p"
