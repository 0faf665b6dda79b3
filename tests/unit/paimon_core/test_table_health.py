"""``table_health`` and ``snapshot_range``/``new_partitions`` on real tables (metadata only)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.health import table_health
from paimon_core.table.snapshot_changes import new_partitions, snapshot_range
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("v", pa.int64()),
    ]
)


def _rows(ids: Sequence[int], v: int, dt: str = "a") -> pa.Table:
    return pa.table({"id": list(ids), "dt": [dt] * len(ids), "v": [v] * len(ids)}, schema=SCHEMA)


def _pk(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    opts = {"bucket": "2", **options}
    return catalog.create_table(
        "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts
    )


def test_empty_table(catalog: FileSystemCatalog) -> None:
    h = table_health(_pk(catalog), now_millis=1_000)
    assert (h.snapshot_id, h.snapshot_count, h.data_file_count, h.compaction_debt) == (None, 0, 0, 0.0)
    assert h.health_score == 100 and h.max_sorted_runs == 0 and h.buckets == ()
    assert json.loads(json.dumps(h.to_dict()))["computed_at_millis"] == 1_000


def test_sorted_runs_per_bucket_grow_with_commits_and_compaction_pays_the_debt(
    catalog: FileSystemCatalog,
) -> None:
    t = _pk(catalog)  # write-only is off, but 4 small commits stay below the compaction trigger (5)
    for i in range(4):
        t.write_arrow(_rows(range(40), i))  # 40 keys: both buckets of dt=a get a file per commit
    h = table_health(t)
    assert h.primary_key and h.snapshot_id == 4 and h.snapshot_count == 4 and h.earliest_snapshot_id == 1
    assert h.sorted_run_stop_trigger == 8  # compaction trigger 5 + 3
    assert [(b.partition, b.bucket, b.sorted_runs, b.level0_file_count) for b in h.buckets] == [
        ("dt=a", 0, 4, 4),
        ("dt=a", 1, 4, 4),
    ]
    assert (h.max_sorted_runs, h.avg_sorted_runs, h.max_level0_file_count, h.avg_level0_file_count) == (
        4,
        4.0,
        4,
        4.0,
    )
    assert h.compaction_debt == 4 / 8 and h.data_file_count == 8 and h.total_rows == 160
    assert h.small_file_count == 8 and h.small_file_ratio == 1.0  # KB files against 128 MB x 0.7
    # runs: 40 x 3/7; small files: 40 x (3 + 3) / 8 excess
    assert h.penalties.sorted_runs == round(40 * 3 / 7, 2) and h.penalties.small_files == 30.0
    assert h.health_score == round(100 - 40 * 3 / 7 - 30)
    assert h.snapshot_commit_kind == "APPEND"

    t.maintenance.compact()
    after = table_health(t)
    assert after.snapshot_commit_kind == CommitKind.COMPACT.value and after.snapshot_id == 5
    assert [(b.bucket, b.sorted_runs, b.level0_file_count, b.file_count) for b in after.buckets] == [
        (0, 1, 0, 1),
        (1, 1, 0, 1),
    ]
    assert after.max_sorted_runs == 1 and after.compaction_debt == 1 / 8 and after.max_level0_file_count == 0
    assert (
        after.penalties.sorted_runs == 0.0
        and after.penalties.small_files == 0.0
        and after.health_score == 100
    )
    assert after.total_rows == 40


def test_stop_trigger_option_and_two_partitions(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog, **{"num-sorted-run.stop-trigger": "10", "num-sorted-run.compaction-trigger": "6"})
    for i in range(3):
        t.write_arrow(_rows(range(40), i))
    t.write_arrow(_rows(range(40), 9, dt="b"))
    h = table_health(t)
    assert h.sorted_run_stop_trigger == 10 and h.partition_count == 2 and h.bucket_count == 4
    assert {(b.partition, b.sorted_runs) for b in h.buckets} == {("dt=a", 3), ("dt=b", 1)}
    assert h.max_sorted_runs == 3 and h.avg_sorted_runs == 2.0 and h.compaction_debt == 0.3


def test_append_table_small_files_consumers_tags_and_retention(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.a", SCHEMA, options={"target-file-size": "4 kb"})
    for i in range(3):
        t.write_arrow(_rows(range(i * 10_000, i * 10_000 + 5000), i))  # ~7 KB files: not small
    t.write_arrow(_rows([1], 1))  # one ~1 KB file
    h = table_health(t)
    assert not h.primary_key and h.sorted_run_stop_trigger is None and h.compaction_debt is None
    assert h.small_file_threshold_bytes == 2867  # int(4096 x 0.7)
    assert h.data_file_count == 4 and h.small_file_count == 1 and h.small_file_ratio == 0.25
    assert h.penalties.small_files == 0.0  # the bucket's only small file is not excess

    t.maintenance.create_tag("daily", 2)
    t.consumer_manager.reset_consumer("reader", _consumer(3))
    t.consumer_manager.reset_consumer("lost", _consumer(1))
    t.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    h = table_health(t)
    lags = {c.consumer_id: (c.next_snapshot, c.lag_snapshots, c.behind_earliest) for c in h.consumers}
    # consumers hold back expiry: "lost" (next 1) keeps snapshot 1 alive, so nobody is behind
    assert h.earliest_snapshot_id == 1 and lags == {"lost": (1, 4, False), "reader": (3, 2, False)}
    assert [(tag.name, tag.snapshot_id) for tag in h.tags] == [("daily", 2)]


def test_retention_penalties(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.a", SCHEMA, options={"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 s"}
    )
    for i in range(3):
        t.write_arrow(_rows([i], i))
    t.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    t.consumer_manager.reset_consumer("lost", _consumer(1))  # snapshot 1 is gone already
    earliest = t.snapshot_manager.earliest_snapshot()
    assert earliest is not None
    h = table_health(t, now_millis=earliest.time_millis + 10_000)
    assert h.penalties.retention == 20.0  # a consumer behind the earliest snapshot, expiry lagging
    assert [c.behind_earliest for c in h.consumers] == [True]
    fresh = table_health(t, now_millis=earliest.time_millis)
    assert fresh.penalties.retention == 10.0


def test_snapshot_range_and_new_partitions(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows(range(10), 1))
    t.write_arrow(_rows(range(10), 2, dt="b"))
    t.write_arrow(_rows(range(10), 3))
    r = snapshot_range(t, 1, 3, with_partitions=True)
    assert [s.snapshot_id for s in r.snapshots] == [2, 3] and not r.snapshots_truncated
    assert r.changed_partitions == ("dt=a", "dt=b") and r.snapshots[0].commit_kind == "APPEND"
    assert snapshot_range(t, None, 3, with_partitions=True).changed_partitions == ("dt=a",)
    cut = snapshot_range(t, 0, 3, max_snapshots=1)
    assert [s.snapshot_id for s in cut.snapshots] == [3] and cut.snapshots_truncated
    few = snapshot_range(t, 0, 3, with_partitions=True, max_partition_snapshots=1)
    assert len(few.snapshots) == 3 and few.changed_partitions == ("dt=a",) and few.partitions_truncated
    assert new_partitions(t, 1, 3) == ("dt=b",)
    assert new_partitions(t, 2, 3) == ()
    assert new_partitions(t, None, 2) == ("dt=b",)
    assert new_partitions(t, 0, 3) == ("dt=a", "dt=b")
    assert new_partitions(t, 0, 3, max_snapshots=1) == ("dt=a", "dt=b")  # gap path: all of snapshot 3


def _consumer(next_snapshot: int):  # type: ignore[no-untyped-def]
    from paimon_core.consumer.consumer_manager import Consumer

    return Consumer(next_snapshot)
