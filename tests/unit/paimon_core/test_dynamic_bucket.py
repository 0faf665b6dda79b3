"""Dynamic-bucket primary-key tables (bucket = -1): HASH index, assignment, upserts, overwrite.

Bucket choices are checked against a row-by-row port of Java's ``HashBucketAssigner`` /
``PartitionIndex`` (K assigners for ``dynamic-bucket.initial-buckets`` = K).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.bucket import bucket_hashes, hash_bytes_by_words
from paimon_core.data.binary_row import binary_row_bytes
from paimon_core.exceptions import InvalidOptionError
from paimon_core.index.hash_index import read_hash_index
from paimon_core.manifest import read_index_manifest
from paimon_core.schema.data_types import BigIntType, VarCharType


def _rows(ids: list[int], v: float) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([v + i for i in ids], pa.float64())})


def _prows(ids: list[int], dts: list[str], v: float) -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "dt": pa.array(dts), "v": pa.array([v + i for i in ids], pa.float64())}
    )


def _index(t):  # type: ignore[no-untyped-def]
    snap = t.latest_snapshot()
    return {
        e.bucket: (e.index_file, read_hash_index(t.file_io, t.paths.index_file_path(e.index_file.file_name)))
        for e in read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest))
    }


def _index_by_partition(t) -> dict[tuple[Any, ...], dict[int, set[int]]]:  # type: ignore[no-untyped-def]
    snap = t.latest_snapshot()
    if snap.index_manifest is None:
        return {}
    out: dict[tuple[Any, ...], dict[int, set[int]]] = {}
    for e in read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest)):
        hashes = read_hash_index(t.file_io, t.paths.index_file_path(e.index_file.file_name))
        part = out.setdefault(t.partition_codec.decode(e.partition), {})
        assert e.bucket not in part, "two HASH files for one bucket"
        part[e.bucket] = set(hashes.tolist())
    return out


def _key_buckets(t) -> dict[tuple[tuple[Any, ...], int], int]:  # type: ignore[no-untyped-def]
    """(partition, key) -> bucket, from the data files of each bucket (merged reads)."""
    out: dict[tuple[tuple[Any, ...], int], int] = {}
    rb = t.new_read_builder()
    for split in rb.new_scan().plan().splits:
        part = t.partition_codec.decode(split.partition)
        for key in rb.new_read().to_arrow([split]).column("id").to_pylist():
            assert (part, key) not in out, f"key {key} in two buckets of {part}"
            out[(part, key)] = split.bucket
    return out


def _hash(ids: list[int]) -> list[int]:
    out: list[int] = bucket_hashes([pa.array(ids, pa.int64())], [BigIntType()]).tolist()
    return out


class JavaHashAssigner:
    """Row-by-row port of Java's HashBucketAssigner with K assigners (numChannels = K)."""

    def __init__(self, k: int, target: int, max_buckets: int = -1) -> None:
        self.k, self.target, self.max_buckets = k, target, max_buckets
        self.hash2bucket: dict[tuple[Any, int], int] = {}
        self.non_full: dict[tuple[Any, int], dict[int, int]] = {}  # (partition, assigner) -> bucket -> count
        self.total: dict[tuple[Any, int], list[int]] = {}

    def assign(self, partition: Any, partition_hash: int, h: int) -> int:
        if (partition, h) in self.hash2bucket:
            return self.hash2bucket[(partition, h)]
        aid = (abs(partition_hash) % self.k + abs(h) % self.k) % self.k
        non_full = self.non_full.setdefault((partition, aid), {})
        total = self.total.setdefault((partition, aid), [])
        for b in sorted(non_full):
            if non_full[b] < self.target:
                non_full[b] += 1
                self.hash2bucket[(partition, h)] = b
                return b
            del non_full[b]
        top = (32767 if self.max_buckets == -1 else self.max_buckets) - 1
        for b in range(top + 1):
            if b % self.k == aid and b not in total:
                non_full[b] = 1
                total.append(b)
                self.hash2bucket[(partition, h)] = b
                return b
        raise AssertionError("model does not pick random buckets")


def _phash(dt: str | None) -> int:
    return 0 if dt is None else hash_bytes_by_words(binary_row_bytes([dt], [VarCharType(2147483647)]))


def test_assignment_fills_buckets_and_keeps_keys_in_place(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.d", _rows([0], 0).schema, primary_keys=["id"], options={"bucket": "-1", "dynamic-bucket.target-row-num": "4"}
    )
    t.write_arrow(_rows(list(range(10)), 0.0))
    idx = _index(t)
    assert {b: len(h) for b, (_, h) in idx.items()} == {0: 4, 1: 4, 2: 2}
    first_files = {b: m.file_name for b, (m, _) in idx.items()}
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert {e.total_buckets for e in entries} == {-1}
    # Upsert old keys (stay in their bucket) and add two new keys (fill bucket 2).
    t.write_arrow(_rows([3, 20, 21], 100.0))
    idx = _index(t)
    assert {b: len(h) for b, (_, h) in idx.items()} == {0: 4, 1: 4, 2: 4}
    assert idx[0][0].file_name == first_files[0]  # unchanged bucket keeps its index file
    assert idx[2][0].file_name != first_files[2]
    out = t.to_arrow().sort_by("id")
    assert out.column("id").to_pylist() == [*range(10), 20, 21]
    assert dict(zip(out.column("id").to_pylist(), out.column("v").to_pylist(), strict=True))[3] == 103.0
    # Every key lives in exactly one bucket's index.
    all_hashes = np.concatenate([h for _, h in idx.values()])
    assert len(all_hashes) == len(np.unique(all_hashes)) == 12


@pytest.mark.parametrize(("initial", "target"), [(1, 7), (3, 5), (4, 1000), (2, 3)])
def test_initial_buckets_match_java_assigners(local_warehouse: str, initial: int, target: int) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": str(target), "dynamic-bucket.initial-buckets": str(initial)}
    t = cat.create_table("db.t", _prows([0], ["a"], 0).schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)
    model = JavaHashAssigner(initial, target)
    hashes = _hash(list(range(120)))
    rng = random.Random(initial * 1000 + target)
    written: set[tuple[tuple[str], int]] = set()
    for step in range(4):
        ids = [rng.randrange(120) for _ in range(60)]
        dts = [rng.choice(["a", "b", "c"]) for _ in ids]
        for i, d in zip(ids, dts, strict=True):
            model.assign(d, _phash(d), hashes[i])
            written.add(((d,), i))
        t.write_arrow(_prows(ids, dts, float(step)))
    got = _key_buckets(t)
    assert set(got) == written
    assert got == {(part, key): model.hash2bucket[(part[0], hashes[key])] for part, key in got}
    index = _index_by_partition(t)
    for (part, key), bucket in got.items():
        assert _hash([key])[0] in index[part][bucket]
    if target == 1000:  # a partition starts with `initial` buckets, no more
        assert all(set(buckets) == set(range(initial)) for buckets in index.values())


def test_max_buckets_caps_and_keys_stay_unique(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.m",
        _rows([0], 0).schema,
        primary_keys=["id"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "2", "dynamic-bucket.max-buckets": "3"},
    )
    t.write_arrow(_rows(list(range(50)), 0.0))
    t.write_arrow(_rows(list(range(25, 80)), 100.0))
    idx = _index(t)
    assert set(idx) == {0, 1, 2}
    all_hashes = np.concatenate([h for _, h in idx.values()])
    assert len(all_hashes) == len(np.unique(all_hashes)) == 80
    out = t.to_arrow()
    assert sorted(out.column("id").to_pylist()) == list(range(80))
    assert len(_key_buckets(t)) == 80


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"dynamic-bucket.target-row-num": "0"}, "target-row-num"),
        ({"dynamic-bucket.max-buckets": "0"}, "max-buckets"),
        ({"dynamic-bucket.max-buckets": "-2"}, "max-buckets"),
        ({"dynamic-bucket.initial-buckets": "0"}, "initial-buckets"),
        ({"dynamic-bucket.initial-buckets": "4", "dynamic-bucket.max-buckets": "2"}, "raise 'dynamic-bucket.max-buckets'"),
    ],
)
def test_bad_dynamic_bucket_options(catalog: FileSystemCatalog, options: dict[str, str], match: str) -> None:
    # refused at create (issue 17); a table written so by another engine: tests/unit/paimon_core/test_option_validation.py
    with pytest.raises(InvalidOptionError, match=match):
        catalog.create_table("db.bad", _rows([0], 0).schema, primary_keys=["id"], options={"bucket": "-1", **options})
    assert not catalog.table_exists("db.bad")


def test_postpone_bucket_tables_batch_write_into_real_buckets_or_bucket_postpone(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.p", _rows([0], 0).schema, primary_keys=["id"], options={"bucket": "-2"})
    t.write_arrow(_rows([1], 0.0))  # postpone.batch-write-fixed-bucket (default on): a real bucket
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert [(e.bucket, e.total_buckets) for e in entries] == [(0, 1)] and t.to_arrow().num_rows == 1
    staged = t.copy({"postpone.batch-write-fixed-bucket": "false"})
    staged.write_arrow(_rows([2], 0.0))  # off: rows wait in bucket-postpone
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert sorted((e.bucket, e.total_buckets) for e in entries) == [(-2, -2), (0, 1)]
    assert t.to_arrow().num_rows == 1  # Java's rule: only real buckets are read
    t.maintenance.compact()
    assert t.to_arrow().num_rows == 2


def _dyn_table(catalog: FileSystemCatalog, name: str = "db.o"):  # type: ignore[no-untyped-def]
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "3"}
    return catalog.create_table(name, _prows([0], ["a"], 0).schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=opts)


def _state(t) -> dict[tuple[str, int], float]:  # type: ignore[no-untyped-def]
    out = t.to_arrow()
    return dict(zip(zip(out.column("dt").to_pylist(), out.column("id").to_pylist(), strict=True), out.column("v").to_pylist(), strict=True))


def _check_index_matches_data(t) -> None:  # type: ignore[no-untyped-def]
    """The HASH index of every partition holds exactly the live keys, each in its data bucket."""
    index = _index_by_partition(t)
    data = _key_buckets(t)
    want: dict[tuple[Any, ...], dict[int, set[int]]] = {}
    for (part, key), bucket in data.items():
        want.setdefault(part, {}).setdefault(bucket, set()).add(_hash([key])[0])
    assert index == want


def test_overwrite_static_partition_replaces_its_index(catalog: FileSystemCatalog) -> None:
    t = _dyn_table(catalog)
    t.write_arrow(_prows(list(range(10)), ["a"] * 5 + ["b"] * 5, 0.0))
    before_b = _index_by_partition(t)[("b",)]
    t.write_arrow(_prows([100, 101, 2], ["a", "a", "a"], 50.0), overwrite={"dt": "a"})
    assert _state(t) == {("a", 100): 150.0, ("a", 101): 151.0, ("a", 2): 52.0, **{("b", i): float(i) for i in range(5, 10)}}
    index = _index_by_partition(t)
    assert index[("b",)] == before_b  # untouched partition keeps its files
    assert index[("a",)] == {0: set(_hash([100, 101, 2]))}  # only the new keys, fresh buckets
    _check_index_matches_data(t)
    # A later upsert finds the new keys where the overwrite put them.
    t.write_arrow(_prows([2, 100, 7, 300], ["a", "a", "b", "a"], 900.0))
    assert _state(t)[("a", 2)] == 902.0 and _state(t)[("a", 300)] == 1200.0 and _state(t)[("b", 7)] == 907.0
    _check_index_matches_data(t)


def test_overwrite_whole_table_and_dynamic_partitions(catalog: FileSystemCatalog) -> None:
    t = _dyn_table(catalog)
    t.write_arrow(_prows(list(range(12)), ["a", "b", "c"] * 4, 0.0))
    # Dynamic partition overwrite (the default): partitions written are replaced, others stay.
    t.write_arrow(_prows([50, 51], ["b", "b"], 1.0), overwrite=True)
    assert set(_index_by_partition(t)) == {("a",), ("b",), ("c",)}
    assert {k for k in _state(t) if k[0] == "b"} == {("b", 50), ("b", 51)}
    assert len(_state(t)) == 10
    _check_index_matches_data(t)
    # Whole table: every partition's index goes, only the new keys are indexed.
    b = t.new_batch_write_builder().overwrite(dynamic=False)
    w = b.new_write()
    w.write_arrow(_prows([1, 2, 3, 4], ["c", "c", "c", "c"], 7.0))
    b.new_commit().commit(w.prepare_commit())
    assert _state(t) == {("c", i): 7.0 + i for i in range(1, 5)}
    assert _index_by_partition(t) == {("c",): {0: set(_hash([1, 2, 3])), 1: set(_hash([4]))}}
    _check_index_matches_data(t)
    # Truncate: no rows, no index files.
    t.new_batch_write_builder().new_commit().truncate()
    assert t.to_arrow().num_rows == 0
    assert _index_by_partition(t) == {}
