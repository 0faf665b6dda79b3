"""Streaming reads of a postpone-bucket table (``bucket = -2``) that pypaimon 2.1.0 writes,
before and after our compaction: the deletes come through as ``-D`` rows, as in Java.

Java's rule (``DataTableStreamScan``: no changelog producer, so the postpone bucket is streamed;
``MergeFileSplitRead.createReader``: a split of the postpone bucket is read with
``createNoMergeReader``, every row with its row kind, in the full phase as in the deltas): a
stream from the first snapshot returns each commit's rows as written (+I and -D); a stream
starting ``latest-full`` returns the real buckets merged (deletes dropped) and then every row
still in ``bucket-postpone`` with its kind, in replay order (so applying the stream in order
gives the table's state). Our full phase dropped the -D rows of ``bucket-postpone`` (and ordered
its files by name, not by creation); with ``deletion-vectors.enabled`` it skipped them all
(level 0). Checked on the core scan and read (the order of the changes included) and through
``spark.readStream`` with ``read.changelog``; after our compaction the COMPACT snapshot streams
nothing, and later pypaimon upserts and deletes stream again with their -D rows. pypaimon reads
the table the streams describe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import ROW_KIND, TableRead

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string()), ("op", pa.string())])
Change = tuple[str, str, int, str | None]  # (row kind, dt, id, v)
Model = dict[tuple[str, int], str | None]

VARIANTS = {
    "plain": {},
    "deletion-vectors": {"deletion-vectors.enabled": "true"},
}


def _table(wh: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table("db.t")


class Writer:
    """pypaimon's writes, and the changes each commit streams (its rows, in written order)."""

    def __init__(self, peer: Any, wh: str) -> None:
        self.peer, self.wh = peer, wh
        self.commits: list[list[Change]] = []

    def upsert(self, keys: list[tuple[str, int]], tag: str) -> None:
        rows: list[Change] = [("+I", d, k, f"{tag}-{d}{k}") for d, k in keys]
        data = pa.table(
            {
                "id": [r[2] for r in rows],
                "dt": [r[1] for r in rows],
                "v": [r[3] for r in rows],
                "op": ["+I"] * len(rows),
            },
            schema=SCHEMA,
        )
        self.peer.write(self.wh, "db.t", data)
        self.commits.append(rows)

    def delete(self, keys: list[tuple[str, int]]) -> None:
        self.peer.delete(self.wh, "db.t", pa.table({"id": [k for _, k in keys], "dt": [d for d, _ in keys]}))
        self.commits.append([("-D", d, k, None) for d, k in keys])


def _apply(changes: list[Change], model: Model | None = None) -> Model:
    """A consumer's state after applying ``changes`` in order."""
    state: Model = dict(model or {})
    for kind, d, k, v in changes:
        if kind in ("+I", "+U"):
            state[(d, k)] = v
        else:
            assert (d, k) in state, f"{kind} of ({d}, {k}), which the stream never inserted"
            del state[(d, k)]
    return state


def _stream(t: FileStoreTable, **options: str) -> tuple[list[list[Change]], bool]:
    """Every unit a streaming reader of ``t`` reads until the latest snapshot, per snapshot, in
    order: (the changes of each snapshot read, whether the first was read in full)."""
    scan = StreamTableScan(t, options=options)
    position = scan.starting_position()
    sid, full, first_full = position.snapshot_id, position.full, position.full
    out: list[list[Change]] = []
    latest = t.snapshot_manager.latest_snapshot_id() or 0
    while sid <= latest:
        snapshot = t.snapshot_manager.snapshot(sid)
        units = scan.plan_full(snapshot) if full else scan.plan_delta(snapshot)
        rows = TableRead(t, row_kind=True, parallelism=1).to_arrow(units or []).to_pylist()
        out.append([(r[ROW_KIND], r["dt"], r["id"], r["v"]) for r in rows])
        sid, full = sid + 1, False
    return out, first_full


def _state(t: pa.Table) -> Model:
    keys = list(zip(t.column("dt").to_pylist(), t.column("id").to_pylist(), strict=True))
    assert len(set(keys)) == len(keys), "duplicate keys"
    return dict(zip(keys, t.column("v").to_pylist(), strict=True))


def _spark_changes(spark: SparkSession, wh: str, checkpoint: Path, **options: str) -> list[Change]:
    """``spark.readStream`` (``read.changelog``) with Trigger.AvailableNow: every row, in the
    order each batch returns them (a key lives in one Spark partition)."""
    reader = spark.readStream.format("paimon").option("warehouse", wh).option("read.changelog", "true")
    for k, v in options.items():
        reader = reader.option(k, v)
    got: list[Change] = []

    def collect(batch: DataFrame, _batch_id: int) -> None:
        got.extend((r["rowkind"], r["dt"], r["id"], r["v"]) for r in batch.collect())

    query = (
        reader.load("db.t")
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    return got


def _create(pypaimon: Any, wh: str, variant: str) -> Writer:
    options = {"bucket": "-2", "rowkind.field": "op", "postpone.default-bucket-num": "2", **VARIANTS[variant]}
    pypaimon.create_table(
        wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=options
    )
    return Writer(pypaimon, wh)


def _write_round_one(w: Writer) -> None:
    w.upsert([(d, k) for d in "ab" for k in range(8)], "c1")
    w.delete([("a", 1), ("a", 2), ("b", 7)])
    w.upsert([("a", 2), ("a", 3), ("b", 0)], "c3")  # a deleted key comes back, two updates
    w.delete([("a", 2), ("b", 0)])  # deleted again: -D after +I after -D


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_core_stream_returns_deletes_before_and_after_compaction(
    variant: str, wh: str, pypaimon: Any
) -> None:
    w = _create(pypaimon, wh, variant)
    _write_round_one(w)
    t = _table(wh)
    assert t.latest_snapshot().id == 4  # type: ignore[union-attr]
    model = _apply([c for commit in w.commits for c in commit])

    # from snapshot 1: each commit's rows as written, the -D rows included (Java's delta reads)
    deltas, full = _stream(t, **{"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    assert not full and [sorted(d) for d in deltas] == [sorted(c) for c in w.commits]
    assert _apply([c for d in deltas for c in d]) == model
    # latest-full: nothing is in a real bucket yet, so the full phase is every postpone row with
    # its kind (Java's createNoMergeReader), in replay order: applied in order, the table's state
    (snap4,), full = _stream(t)
    assert full and sorted(snap4) == sorted(c for commit in w.commits for c in commit)
    assert sum(kind == "-D" for kind, *_ in snap4) == 5
    assert _apply(snap4) == model
    assert _state(pypaimon.read(wh, "db.t")) == {}  # batch reads: no real bucket yet (Java's rule)

    # our compaction: one COMPACT snapshot, which streams nothing
    result = _table(wh).maintenance.compact()
    assert result.snapshot_id == 5 and _table(wh).latest_snapshot().commit_kind == CommitKind.COMPACT  # type: ignore[union-attr]
    assert _state(pypaimon.read(wh, "db.t")) == model == _state(_table(wh).to_arrow())
    t = _table(wh)
    deltas, _ = _stream(t, **{"scan.mode": "from-snapshot", "scan.snapshot-id": "5"})
    assert deltas == [[]]
    (full_after,), full = _stream(t)  # the real buckets merged: no -D, each live key once
    assert full and sorted(full_after) == sorted(("+I", d, k, v) for (d, k), v in model.items())

    # pypaimon keeps writing into bucket-postpone: its upserts and deletes stream with their kinds
    w.upsert([("a", 4), ("c", 1)], "c6")
    w.delete([("a", 0), ("a", 4), ("b", 3)])
    pending = _apply([*w.commits[-2], *w.commits[-1]], model)
    t = _table(wh)
    deltas, _ = _stream(t, **{"scan.mode": "from-snapshot", "scan.snapshot-id": "5"})
    assert [sorted(d) for d in deltas] == [[], sorted(w.commits[-2]), sorted(w.commits[-1])]
    (full_now,), _ = _stream(t)  # real buckets merged, then the new postpone rows in order
    assert [c for c in full_now if c[0] == "-D"] == [
        ("-D", "a", 0, None),
        ("-D", "a", 4, None),
        ("-D", "b", 3, None),
    ]
    assert _apply(full_now) == pending
    assert _state(pypaimon.read(wh, "db.t")) == model  # not compacted yet
    assert _table(wh).maintenance.compact().snapshot_id == 8
    assert _state(pypaimon.read(wh, "db.t")) == pending == _state(_table(wh).to_arrow())


def test_spark_stream_returns_deletes_before_and_after_compaction(
    spark: SparkSession, wh: str, pypaimon: Any, tmp_path: Path
) -> None:
    """One ``spark.readStream`` query (latest-full), run before the compaction, after it, and
    after more pypaimon writes (its checkpoint kept); the deltas are the core test's."""
    w = _create(pypaimon, wh, "plain")
    _write_round_one(w)
    model = _apply([c for commit in w.commits for c in commit])
    ck = tmp_path / "ck"
    full = _spark_changes(spark, wh, ck)
    assert sorted(full) == sorted(c for commit in w.commits for c in commit)
    assert sum(kind == "-D" for kind, *_ in full) == 5 and _apply(full) == model

    assert _table(wh).maintenance.compact().snapshot_id == 5
    assert _spark_changes(spark, wh, ck) == []  # the COMPACT snapshot streams nothing
    w.upsert([("a", 4), ("c", 1)], "c6")
    w.delete([("a", 0), ("a", 4), ("b", 3)])
    later = _spark_changes(spark, wh, ck)  # the new rows, -D included
    assert sorted(later) == sorted([*w.commits[-2], *w.commits[-1]])
    pending = _apply(later, model)
    assert pending == _apply([*w.commits[-2], *w.commits[-1]], model)
    assert _table(wh).maintenance.compact().snapshot_id == 8
    assert _state(pypaimon.read(wh, "db.t")) == pending
