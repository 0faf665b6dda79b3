"""A writer process appends to the partition that sort compactions in another process rewrite,
round after round: no row is lost or duplicated (the race apache/paimon#7595 describes for an
overwrite commit), and every compaction commits as COMPACT."""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind

ROWS = 40


def _batch(start: int, n: int = ROWS) -> pa.Table:
    ids = np.arange(start, start + n)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "p": pa.array(["x"] * n),
        "a": pa.array((ids * 7919) % 1000, pa.int64()),
        "b": pa.array((ids * 104729) % 997, pa.int64()),
    })  # fmt: skip


def _writer(warehouse: str, first: int, commits: int) -> int:
    import time

    t = FileSystemCatalog(warehouse).get_table("db.w")
    for k in range(commits):
        if k == commits // 2:  # make sure the two overlap, however the processes are scheduled
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not any(
                s.commit_kind == CommitKind.COMPACT for s in t.snapshot_manager.snapshots()
            ):
                time.sleep(0.05)
        t.write_arrow(_batch(first + k * ROWS))
    return commits


def _sorter(warehouse: str, rounds: int) -> list[int]:
    from paimon_core.operation.compact.compact_planner import CompactRequest
    from paimon_core.operation.compact.sort_compact import SortCompaction
    from paimon_core.sort.table_sorter import SortSpec

    t = FileSystemCatalog(warehouse).get_table("db.w")
    out = []
    for r in range(rounds):
        strategy = ("zorder", "hilbert", "order")[r % 3]
        spec = SortSpec.of(strategy, "a,b", t.options.options)
        result = SortCompaction(t.store, spec, max_conflict_rounds=5).run(CompactRequest(partitions=({"p": "x"},)))
        out.append(result.snapshot_id or 0)
    return out


def test_concurrent_appends_survive_sort_compactions(local_warehouse: str) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    t = cat.create_table("db.w", _batch(0).schema, partition_keys=["p"],
                         options={"write-only": "true", "commit.max-retries": "200", "target-file-size": "8kb"})  # fmt: skip
    t.write_arrow(_batch(0, 400))
    commits, rounds = 60, 12
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        writing = pool.apply_async(_writer, (local_warehouse, 1_000_000, commits))
        sorting = pool.apply_async(_sorter, (local_warehouse, rounds))
        assert writing.get(timeout=600) == commits
        compacted = sorting.get(timeout=600)
    t = cat.get_table("db.w")
    ids = t.to_arrow().column("id").to_numpy()
    want = np.concatenate([np.arange(400), 1_000_000 + np.arange(commits * ROWS)])
    assert len(ids) == len(want) and (np.sort(ids) == want).all()
    snap = t.latest_snapshot()
    assert snap is not None and snap.total_record_count == len(want)
    kinds = [t.snapshot_manager.snapshot(i).commit_kind for i in compacted if i]
    assert len(kinds) == rounds and set(kinds) == {CommitKind.COMPACT}
    appends = [i for i in range(1, snap.id + 1) if t.snapshot_manager.snapshot(i).commit_kind == CommitKind.APPEND]
    assert min(c for c in compacted if c) < max(appends)  # the writer kept committing after compactions
