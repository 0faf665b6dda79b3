"""Dynamic-bucket primary-key tables (bucket = -1): HASH index, assignment, upserts."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError
from paimon_core.index.hash_index import read_hash_index
from paimon_core.manifest import read_index_manifest


def _rows(ids: list[int], v: float) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([v + i for i in ids], pa.float64())})


def _index(t):  # type: ignore[no-untyped-def]
    snap = t.latest_snapshot()
    return {
        e.bucket: (e.index_file, read_hash_index(t.file_io, t.paths.index_file_path(e.index_file.file_name)))
        for e in read_index_manifest(t.file_io, t.paths.manifest_path(snap.index_manifest))
    }


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


def test_max_buckets_and_overwrite_refused(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.m",
        _rows([0], 0).schema,
        primary_keys=["id"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "2", "dynamic-bucket.max-buckets": "3"},
    )
    t.write_arrow(_rows(list(range(50)), 0.0))
    assert set(_index(t)) == {0, 1, 2}
    assert t.to_arrow().num_rows == 50
    with pytest.raises(InvalidArgumentError, match="not supported yet"):
        t.write_arrow(_rows([1], 0.0), overwrite=True)
