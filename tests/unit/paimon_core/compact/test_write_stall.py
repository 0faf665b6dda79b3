"""A writer (``write-only = false``) never leaves a bucket with more than
``num-sorted-run.stop-trigger`` sorted runs: Java's writer waits for compaction above it
(``shouldWaitForLatestCompaction``); ours compacts again, synchronously, before the commit.
Write-only writers never stall (neither do Java's); their debt shows in the health sensor."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.mergetree.compact import compact_options
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.sorted_run import LevelSortedRun
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
# every write_arrow call flushes its own sorted run
OPTIONS = {
    "bucket": "1",
    "write-buffer-size": "1 b",
    "num-sorted-run.compaction-trigger": "2",
    "num-sorted-run.stop-trigger": "4",
}


def _runs(t: FileStoreTable) -> int:
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return sum(1 for e in live if e.file.level == 0) + len({e.file.level for e in live if e.file.level > 0})


def _commit(t: FileStoreTable, batches: int, start: int) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    for j in range(batches):  # one sorted run each
        ids = list(range(start + j * 3, start + j * 3 + 5))
        w.write_arrow(pa.table({"id": ids, "v": [start + j] * 5}, schema=SCHEMA))
    b.new_commit().commit(w.prepare_commit())


class _OldestTwo:
    """A strategy that merges only the two oldest sorted runs: one run less per compaction."""

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        if len(runs) < 2:
            return None
        return CompactUnit.from_level_runs(runs[-1].level or num_levels - 1, runs[-2:])


def _write_many(t: FileStoreTable) -> list[int]:
    runs = []
    for i in range(8):
        _commit(t, batches=7, start=i * 100)
        runs.append(_runs(t))
    return runs


def test_writers_compact_until_the_stop_trigger(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

    monkeypatch.setattr(compact_options, "compact_strategy_from_options", lambda *a, **k: _OldestTwo())
    t = catalog.create_table("db.s", SCHEMA, primary_keys=["id"], options=OPTIONS)
    runs = _write_many(t)
    assert max(runs) <= 4  # 7 new runs per commit, one fewer per compaction: 4 and more compactions each
    assert runs == [4] * 8
    # the intermediate files of a commit's successive compactions are gone, nothing else is
    assert unreferenced_files(t) == set()
    only = catalog.create_table("db.o", SCHEMA, primary_keys=["id"], options={**OPTIONS, "write-only": "true"})
    assert _write_many(only) == [7 * (i + 1) for i in range(8)]  # write-only: no stall, runs pile up
    assert t.to_arrow().sort_by("id").equals(only.to_arrow().sort_by("id"))


def test_the_real_strategy_keeps_runs_below_the_stop_trigger(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.s", SCHEMA, primary_keys=["id"], options=OPTIONS)
    assert max(_write_many(t)) <= 4
