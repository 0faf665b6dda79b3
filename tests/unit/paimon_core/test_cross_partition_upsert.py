"""Cross-partition upsert (primary key without all partition keys, bucket = -1).

The model is a row-by-row port of Java's ``GlobalIndexAssigner.processInput`` with the merge
engine's existing-key processor (delete old / use old / skip new) and merge function; the
table must read back exactly the model's rows, with no key twice.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError
from paimon_core.bucket import bucket_hashes
from paimon_core.exceptions import DuplicateKeyError, InvalidOptionError, SchemaError
from paimon_core.operation.scan import ScanFilter
from paimon_core.schema.data_types import BigIntType
from paimon_core.table.index_bootstrap import _AllLevelsScan, bootstrap_keys
from paimon_core.table.table_read import TableRead
from paimon_core.utils.clock import ManualClock

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])
ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    "first-row": {"merge-engine": "first-row"},
}
Row = dict[str, Any]


def _table(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _create(cat: FileSystemCatalog, name: str, engine: str, **extra: str):  # type: ignore[no-untyped-def]
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "4", **ENGINES[engine], **extra}
    return cat.create_table(name, SCHEMA, primary_keys=["id"], partition_keys=["dt"], options=opts)


def _read_all_levels(t) -> list[Row]:  # type: ignore[no-untyped-def]
    """Merged rows of every level (first-row tables hide level 0 from batch reads)."""
    snap = t.latest_snapshot()
    splits = _AllLevelsScan(t).splits_of(snap, ScanFilter())
    rows: list[Row] = TableRead(t).to_arrow(splits).to_pylist()
    return rows


class CrossPartitionModel:
    """Java's per-record processing: key index + existing processor + merge function."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.index: dict[int, str] = {}
        self.rows: dict[int, Row] = {}

    def upsert(self, r: Row) -> None:
        k, p = r["id"], r["dt"]
        old = self.index.get(k)
        if old is not None and old != p:
            if self.engine == "deduplicate":
                self.rows.pop(k, None)  # -D in the old partition, then insert the new one
            elif self.engine in ("partial-update", "aggregation"):
                r = {**r, "dt": old}  # goes to the old partition
            else:
                return  # first-row: skip the new record
        self.index.setdefault(k, r["dt"])
        if self.engine == "deduplicate":
            self.index[k] = p
        self._merge(k, r)

    def _merge(self, k: int, r: Row) -> None:
        cur = self.rows.get(k)
        if cur is None or self.engine == "deduplicate":
            self.rows[k] = dict(r)
        elif self.engine == "partial-update":
            self.rows[k] = {c: (r[c] if r[c] is not None else cur[c]) for c in r}
        elif self.engine == "aggregation":
            v = r["v"] if cur["v"] is None else cur["v"] if r["v"] is None else cur["v"] + r["v"]
            self.rows[k] = {**cur, "s": r["s"] if r["s"] is not None else cur["s"], "v": v}

    def delete(self, k: int) -> None:
        self.rows.pop(k, None)  # the key index keeps the key (as in Java)


def _random_rows(rng: random.Random, n: int, engine: str) -> list[Row]:
    out = []
    for _ in range(n):
        k = rng.randrange(24)
        v = None if engine == "partial-update" and rng.random() < 0.3 else float(rng.randrange(100))
        s = None if rng.random() < 0.3 else f"s{rng.randrange(9)}"
        out.append({"id": k, "dt": rng.choice("abc"), "v": v, "s": s})
    return out


def _as_set(rows: list[Row]) -> set[tuple[Any, ...]]:
    return {(r["id"], r["dt"], r["v"], r["s"]) for r in rows}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_model(catalog: FileSystemCatalog, engine: str, seed: int) -> None:
    t = _create(catalog, "db.t", engine)
    model = CrossPartitionModel(engine)
    rng = random.Random(seed)
    for _commit in range(4):
        b = t.new_batch_write_builder()
        w = b.new_write()  # a fresh writer bootstraps the key index from the table
        for _call in range(rng.choice([1, 2])):  # later calls see the earlier, uncommitted ones
            rows = _random_rows(rng, 20, engine)
            for r in rows:
                model.upsert(r)
            w.write_arrow(_table(rows))
        if engine == "deduplicate" and rng.random() < 0.7:
            gone = rng.sample(range(24), 3)
            for k in gone:
                model.delete(k)
            w.delete_arrow(pa.table({"id": pa.array(gone, pa.int64())}))
        b.new_commit().commit(w.prepare_commit())
        got = _read_all_levels(t)
        ids = [r["id"] for r in got]
        assert len(ids) == len(set(ids)), "a key lives in two places"
        assert _as_set(got) == _as_set(list(model.rows.values()))
    if engine != "first-row":
        assert _as_set(t.to_arrow().to_pylist()) == _as_set(list(model.rows.values()))
    # Physical layout: every key once, no bucket above target-row-num, no HASH index (KEY_DYNAMIC).
    splits = bootstrap_keys(t, t.latest_snapshot(), key_names=["id"])
    keys = [k for s in splits for k in s.keys.column("id").to_pylist()]
    assert len(keys) == len(set(keys))
    assert all(s.keys.num_rows <= 4 for s in splits)
    assert t.latest_snapshot().index_manifest is None


def _buckets(t) -> dict[int, tuple[str, int]]:  # type: ignore[no-untyped-def]
    return {
        k: (t.partition_codec.decode(s.partition)[0], s.bucket)
        for s in bootstrap_keys(t, t.latest_snapshot(), key_names=["id"])
        for k in s.keys.column("id").to_pylist()
    }


def test_moving_out_frees_a_slot_for_the_next_new_key(catalog: FileSystemCatalog) -> None:
    t = _create(catalog, "db.t", "deduplicate", **{"dynamic-bucket.target-row-num": "2"})
    t.write_arrow(_table([{"id": i, "dt": "a", "v": 1.0, "s": None} for i in range(1, 5)]))
    assert _buckets(t) == {1: ("a", 0), 2: ("a", 0), 3: ("a", 1), 4: ("a", 1)}
    t.write_arrow(_table([{"id": 1, "dt": "b", "v": 2.0, "s": None}, {"id": 5, "dt": "a", "v": 3.0, "s": None}]))
    assert _buckets(t) == {1: ("b", 0), 2: ("a", 0), 3: ("a", 1), 4: ("a", 1), 5: ("a", 0)}


def test_initial_buckets_give_each_assigner_its_own_buckets(catalog: FileSystemCatalog) -> None:
    t = _create(catalog, "db.t", "deduplicate", **{"dynamic-bucket.initial-buckets": "3", "dynamic-bucket.target-row-num": "2"})
    ids = list(range(40))
    t.write_arrow(_table([{"id": i, "dt": "ab"[i % 2], "v": 1.0, "s": None} for i in ids]))
    owners = (np.abs(bucket_hashes([pa.array(ids, pa.int64())], [BigIntType()]).astype(np.int64)) % 3).tolist()
    got = _buckets(t)
    assert all(got[i][1] % 3 == owners[i] for i in ids)
    per_bucket: dict[tuple[str, int], int] = {}
    for loc in got.values():
        per_bucket[loc] = per_bucket.get(loc, 0) + 1
    assert max(per_bucket.values()) <= 2
    assert {b % 3 for _, b in per_bucket} == {0, 1, 2}


def test_delete_by_key_finds_the_partition(catalog: FileSystemCatalog) -> None:
    t = _create(catalog, "db.t", "deduplicate")
    t.write_arrow(_table([{"id": 1, "dt": "a", "v": 1.0, "s": "x"}, {"id": 2, "dt": "b", "v": 2.0, "s": "y"}]))
    b = t.new_batch_write_builder()
    w = b.new_write()
    w.delete_arrow(pa.table({"id": pa.array([2, 99], pa.int64())}))
    b.new_commit().commit(w.prepare_commit())
    assert t.to_arrow().to_pylist() == [{"id": 1, "dt": "a", "v": 1.0, "s": "x"}]
    files = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert {t.partition_codec.decode(e.partition)[0] for e in files} == {"a", "b"}  # no null partition


def test_rowkind_field_table(catalog: FileSystemCatalog) -> None:
    schema = SCHEMA.append(pa.field("op", pa.string()))
    t = catalog.create_table(
        "db.rk", schema, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "-1", "rowkind.field": "op"}
    )
    t.write_arrow(pa.Table.from_pylist([{"id": 1, "dt": "a", "v": 1.0, "s": None, "op": "+I"}], schema=schema))
    t.write_arrow(pa.Table.from_pylist([{"id": 1, "dt": "b", "v": 2.0, "s": None, "op": "+U"}], schema=schema))
    assert t.to_arrow().select(["id", "dt", "v"]).to_pylist() == [{"id": 1, "dt": "b", "v": 2.0}]
    old = [e for e in t.new_file_store_scan().live_entries(t.latest_snapshot()) if e.file.delete_row_count]
    assert len(old) == 1 and t.partition_codec.decode(old[0].partition) == ("a",)


def test_index_ttl_skips_old_files(local_warehouse: str) -> None:
    now = int(dt.datetime.now().timestamp() * 1000)
    clock = ManualClock(now)
    cat = FileSystemCatalog(local_warehouse, clock=clock)
    cat.create_database("db")
    t = _create(cat, "db.t", "deduplicate", **{"cross-partition-upsert.index-ttl": "1 h"})
    t.write_arrow(_table([{"id": 1, "dt": "a", "v": 1.0, "s": None}]))
    t.write_arrow(_table([{"id": 1, "dt": "b", "v": 2.0, "s": None}]))  # within the TTL: moved
    assert [(r["id"], r["dt"]) for r in t.to_arrow().to_pylist()] == [(1, "b")]
    clock.advance(2 * 3600 * 1000)  # the files are now older than the TTL: their keys are forgotten
    t.write_arrow(_table([{"id": 1, "dt": "c", "v": 3.0, "s": None}]))
    assert sorted((r["id"], r["dt"]) for r in t.to_arrow().to_pylist()) == [(1, "b"), (1, "c")]


def test_two_writers_leave_a_duplicate_that_the_next_write_reports(catalog: FileSystemCatalog) -> None:
    t = _create(catalog, "db.t", "deduplicate")
    t.write_arrow(_table([{"id": 0, "dt": "a", "v": 0.0, "s": None}]))
    b1, b2 = t.new_batch_write_builder(), t.new_batch_write_builder()
    w1, w2 = b1.new_write(), b2.new_write()
    w1.write_arrow(_table([{"id": 1, "dt": "a", "v": 1.0, "s": None}]))
    w2.write_arrow(_table([{"id": 1, "dt": "b", "v": 2.0, "s": None}]))
    b1.new_commit().commit(w1.prepare_commit())
    b2.new_commit().commit(w2.prepare_commit())
    snap = t.latest_snapshot().id
    with pytest.raises(DuplicateKeyError, match="two jobs"):
        t.write_arrow(_table([{"id": 1, "dt": "c", "v": 3.0, "s": None}]))
    assert t.latest_snapshot().id == snap


def test_overwrite(catalog: FileSystemCatalog) -> None:
    t = _create(catalog, "db.t", "deduplicate")
    t.write_arrow(_table([{"id": i, "dt": "ab"[i % 2], "v": float(i), "s": None} for i in range(6)]))
    # Static partition: keys only there (or new) are fine.
    t.write_arrow(_table([{"id": 0, "dt": "a", "v": 10.0, "s": None}, {"id": 9, "dt": "a", "v": 9.0, "s": None}]),
                  overwrite={"dt": "a"})
    assert sorted((r["id"], r["dt"], r["v"]) for r in t.to_arrow().to_pylist()) == [
        (0, "a", 10.0), (1, "b", 1.0), (3, "b", 3.0), (5, "b", 5.0), (9, "a", 9.0)
    ]
    snap = t.latest_snapshot().id
    with pytest.raises(InvalidArgumentError, match="outside the overwritten partitions"):
        t.write_arrow(_table([{"id": 1, "dt": "a", "v": 0.0, "s": None}]), overwrite={"dt": "a"})
    with pytest.raises(InvalidArgumentError, match="overwrite the whole table"):
        t.write_arrow(_table([{"id": 1, "dt": "a", "v": 0.0, "s": None}]), overwrite=True)
    assert t.latest_snapshot().id == snap
    # Whole table: everything is replaced, the last row per key wins.
    b = t.new_batch_write_builder().overwrite(dynamic=False)
    w = b.new_write()
    w.write_arrow(_table([{"id": 1, "dt": "a", "v": 1.5, "s": None}, {"id": 1, "dt": "c", "v": 2.5, "s": None}]))
    b.new_commit().commit(w.prepare_commit())
    assert t.to_arrow().to_pylist() == [{"id": 1, "dt": "c", "v": 2.5, "s": None}]


def test_bad_configurations(catalog: FileSystemCatalog) -> None:
    with pytest.raises(SchemaError, match="bucket = -1"):
        catalog.create_table("db.f", SCHEMA, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "4"})
    with pytest.raises(InvalidOptionError, match="'sequence.field' = 'v' cannot be used .*cross-partition"):
        catalog.create_table(
            "db.s", SCHEMA, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "-1", "sequence.field": "v"}
        )
    assert not catalog.table_exists("db.s")
