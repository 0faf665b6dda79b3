"""Row groups of an append compaction's Parquet output (``COMPACT_ROW_GROUP_BYTES``).

A compaction cuts its output into row groups of ``COMPACT_ROW_GROUP_BYTES`` of buffered Arrow
data (not a fresh write's 128 MiB: a whole output file would sit decoded in memory per task),
unless the table sets ``file.block-size`` or ``parquet.block.size``, which then rule as for any
write. The rows are the same either way. The constant is shrunk here so a small table shows it.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append import append_compact_rewriter
from paimon_core.table.table import FileStoreTable

ROWS_PER_COMMIT, COMMITS = 10_000, 6
SMALL_ROW_GROUP = 64 * 1024


def _table(tmp_path: Path, options: dict[str, str]) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = catalog.create_table("db.t", schema, options=options)
    for c in range(COMMITS):
        ids = range(c * ROWS_PER_COMMIT, (c + 1) * ROWS_PER_COMMIT)
        t.write_arrow(pa.table({"id": pa.array(ids, pa.int64()), "s": [f"value-{i:09d}" for i in ids]}, schema=schema))
    return t


def _compacted(tmp_path: Path, options: dict[str, str]) -> tuple[list[int], pa.Table]:
    t = _table(tmp_path, options)
    before = t.to_arrow().sort_by("id")
    t.maintenance.compact()
    t = FileSystemCatalog(str(tmp_path / "wh")).get_table("db.t")
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert len(live) == 1, "one output file"
    path = Path(t.bucket_path(live[0].partition, live[0].bucket)) / live[0].file.file_name
    after = t.to_arrow().sort_by("id")
    assert after.equals(before)
    return [pq.ParquetFile(path).metadata.num_row_groups], after


def test_compaction_cuts_row_groups_at_the_compaction_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(append_compact_rewriter, "COMPACT_ROW_GROUP_BYTES", SMALL_ROW_GROUP)
    (groups,), after = _compacted(tmp_path, {})
    arrow_bytes = after.nbytes
    assert groups >= arrow_bytes // SMALL_ROW_GROUP // 2 > 1, (groups, arrow_bytes)


@pytest.mark.parametrize("key", ["file.block-size", "parquet.block.size"])
def test_a_block_size_the_table_sets_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    monkeypatch.setattr(append_compact_rewriter, "COMPACT_ROW_GROUP_BYTES", SMALL_ROW_GROUP)
    (groups,), _ = _compacted(tmp_path, {key: str(64 * 1024 * 1024)})
    assert groups == 1
