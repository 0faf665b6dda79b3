"""Incremental clustering (``clustering.incremental``): only the runs the universal strategy
picks are sorted by ``clustering.columns`` and land on the unit's output level, committed as a
COMPACT of exactly those files; ``full`` clusters every run once; idle history partitions are
clustered in full, oldest first, within ``clustering.history-partition.limit``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append.incremental_cluster import clustering_strategy
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.sort_compact import SortCompaction
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

MAX = 3  # num-levels defaults to num-sorted-run.compaction-trigger + 1 = 4


def _batch(seed: int, dt: str = "a", n: int = 500) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(seed * 10_000, seed * 10_000 + n), pa.int64()),
        "dt": pa.array([dt] * n),
        "x": pa.array(rng.integers(0, 1000, n), pa.int64()),
        "z": pa.array(rng.integers(0, 1000, n), pa.int64()),
    })  # fmt: skip


def _table(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    opts = {"clustering.incremental": "true", "clustering.columns": "x,z", "num-sorted-run.compaction-trigger": "3",
            "write-only": "true", **options}  # fmt: skip
    return catalog.create_table("db.c", _batch(0).schema, partition_keys=["dt"], options=opts)


def _levels(t: FileStoreTable, dt: str = "a") -> list[int]:
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    return sorted(e.file.level for e in entries if t.partition_path(e.partition) == f"dt={dt}")


def _ids(t: FileStoreTable) -> list[int]:
    return sorted(t.to_arrow().column("id").to_pylist())


def test_minor_clusters_what_the_universal_strategy_picks(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    for i in range(2):
        t.write_arrow(_batch(i + 1))
    nothing = SortCompaction.incremental_clustering(t.store).run()
    assert nothing.tasks == 0 and nothing.snapshot_id is None  # 2 runs < trigger 3
    for i in range(2, 4):
        t.write_arrow(_batch(i + 1))
    want = _ids(t)
    job = SortCompaction.incremental_clustering(t.store)
    assert job.spec.strategy == "zorder" and job.spec.columns == ("x", "z")  # auto: 2 columns -> zorder
    result = job.run()
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT and result.files_read == 4
    assert _levels(t) == [MAX] * result.files_written and _ids(t) == want  # all runs picked: max level
    t.write_arrow(_batch(9))
    assert SortCompaction.incremental_clustering(t.store).run().tasks == 0  # one max-level run + one L0 file: nothing
    full = SortCompaction.incremental_clustering(t.store, full=True).run()
    assert full.tasks == 1 and set(_levels(t)) == {MAX} and len(_ids(t)) == len(want) + 500
    again = SortCompaction.incremental_clustering(t.store, full=True).run()
    assert again.tasks == 0  # one run on the max level, clustered by the same columns
    assert unreferenced_files(t) == set()


def test_history_partitions_are_clustered_in_full_oldest_first(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, **{"clustering.history-partition.idle-to-full-sort": "1 ms",
                           "clustering.history-partition.limit": "1"})  # fmt: skip
    t.write_arrow(_batch(1, "b"))
    t.write_arrow(_batch(2, "b"))
    time.sleep(1.1)  # creation times are stored in seconds resolution at worst
    t.write_arrow(_batch(3, "c"))
    time.sleep(1.1)
    for i in range(4):
        t.write_arrow(_batch(10 + i, "a"))
    want = _ids(t)
    result = SortCompaction.incremental_clustering(t.store).run(CompactRequest(partitions=({"dt": "a"},)))
    assert {b["partition"] for b in result.buckets} == {"dt=a", "dt=b"}  # c is newer than b: over the limit
    assert set(_levels(t, "a")) == {MAX} and set(_levels(t, "b")) == {MAX} and _levels(t, "c") == [0]
    assert _ids(t) == want
    # without named partitions there are no history partitions (as Java)
    assert SortCompaction.incremental_clustering(t.store, full=True).run().tasks == 1  # only c is left unclustered


def test_refusals(catalog: FileSystemCatalog) -> None:
    plain = catalog.create_table("db.p", _batch(0).schema, partition_keys=["dt"])
    with pytest.raises(InvalidArgumentError, match="when 'clustering.incremental' is true"):
        SortCompaction.incremental_clustering(plain.store)
    t = _table(catalog)
    with pytest.raises(InvalidArgumentError, match="partition_idle_time"):
        SortCompaction.incremental_clustering(t.store).run(CompactRequest(partition_idle_time_ms=5))
    assert clustering_strategy({}, 1) == "order" and clustering_strategy({}, 5) == "hilbert"
    assert clustering_strategy({"clustering.strategy": "hilbert"}, 1) == "hilbert"


def test_pypaimon_reads_clustered_files_on_higher_levels(local_warehouse: str, pypaimon: Any) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    t = _table(cat)
    for i in range(4):
        t.write_arrow(_batch(i + 1))
    want = t.to_arrow().sort_by("id")
    SortCompaction.incremental_clustering(t.store).run()
    assert set(_levels(t)) == {MAX}
    got = pypaimon.read(local_warehouse, "db.c").sort_by("id")
    assert got.select(want.column_names).cast(want.schema).equals(want)
