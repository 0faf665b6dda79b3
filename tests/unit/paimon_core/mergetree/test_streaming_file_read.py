"""Streaming reads of data files (``DataFileReader.read(streaming=True)``, what merges use) and
the merge's fast sort of integer keys.

Streaming must give the same rows as the default read (schema evolution, deletion vectors and
errors included) while holding only a few MiB of a large file, whatever the consumer's pace; the
fast sort must give exactly ``pc.sort_indices``' order.
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CorruptFileError, DataFileNotFoundError
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.mergetree.merge_reader import _sort_indices
from paimon_core.mergetree.writer import sort_keys_for
from paimon_core.schema.data_types import VarCharType
from paimon_core.schema.schema_change import AddColumn
from paimon_core.table.table import FileStoreTable


def _rows(n: int, start: int = 0) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "v": ids * 0.5, "s": pa.array([f"s{i}" for i in ids])})


def _files(t: FileStoreTable) -> list[tuple[str, DataFileMeta]]:
    snap = t.latest_snapshot()
    entries = t.new_file_store_scan().live_entries(snap)
    return [(t.bucket_path(e.partition, e.bucket), e.file) for e in entries]


def _read(
    t: FileStoreTable, bucket_path: str, f: DataFileMeta, *, streaming: bool, system: bool = False
) -> pa.Table:
    reader = DataFileReader(t.file_io, t.schema_manager_cached, table_name=t.name, batch_size=1000)
    fields = list(t.schema.fields)
    batches = list(reader.read(bucket_path, f, fields, streaming=streaming, with_kind=system, with_seq=system))
    assert all(b.num_rows <= 1000 for b in batches)
    return pa.Table.from_batches(batches)


def test_streaming_read_equals_the_default_read(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.pk", _rows(1).schema, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(_rows(2500))
    t = catalog.alter_table("db.pk", [AddColumn("extra", VarCharType(20))])  # old file: nulls
    t.write_arrow(_rows(1200, start=100).append_column("extra", pa.array(["x"] * 1200)))
    files = _files(t)
    assert len(files) == 2
    for bucket_path, f in files:
        for system in (False, True):
            default = _read(t, bucket_path, f, streaming=False, system=system)
            streamed = _read(t, bucket_path, f, streaming=True, system=system)
            assert streamed.equals(default) and streamed.num_rows == f.row_count
    old = next(_read(t, p, f, streaming=True) for p, f in files if f.row_count == 2500)
    assert old.column("extra").null_count == 2500


def test_streaming_read_errors_name_the_file(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", _rows(1).schema)
    t.write_arrow(_rows(100))
    ((bucket_path, f),) = _files(t)
    path = join(bucket_path, f.file_name)
    reader = DataFileReader(t.file_io, t.schema_manager_cached, table_name=t.name)
    fields = list(t.schema.fields)
    content = t.file_io.read_bytes(path)
    t.file_io.write_bytes(path, content[: len(content) // 2] + b"\x00" * 64 + content[-8:], overwrite=True)
    with pytest.raises(CorruptFileError, match=f.file_name):
        list(reader.read(bucket_path, f, fields, streaming=True))
    t.file_io.delete(path)
    with pytest.raises(DataFileNotFoundError, match=f.file_name):
        next(reader.read(bucket_path, f, fields, streaming=True, snapshot_id=1))


def test_streaming_read_of_a_large_file_holds_little_memory(catalog: FileSystemCatalog) -> None:
    """One 2M-row row group (~48 MB decoded): a consumer that pulls one batch and then waits
    must not find the file decoded ahead of it (the dataset scanner with threads does that)."""
    n = 2_000_000
    data = pa.table({"id": np.arange(n, dtype=np.int64), "a": np.arange(n, dtype=np.int64) * 3,
                     "b": np.arange(n, dtype=np.float64)})
    t = catalog.create_table("db.big", data.schema, options={"file.block-size": "1 gb"})
    t.write_arrow(data)
    ((bucket_path, f),) = _files(t)
    reader = DataFileReader(t.file_io, t.schema_manager_cached, table_name=t.name, batch_size=65536)

    def held(streaming: bool) -> int:
        base = pa.total_allocated_bytes()
        it = reader.read(bucket_path, f, list(t.schema.fields), streaming=streaming)
        first = next(it)
        time.sleep(0.5)  # a slow consumer
        peak = pa.total_allocated_bytes() - base
        assert first.num_rows == 65536
        rows = first.num_rows + sum(b.num_rows for b in it)
        assert rows == n
        return peak

    streamed = held(True)
    assert streamed < 16 * 2**20, streamed
    print(f"held after one batch: streaming {streamed / 2**20:.1f} MiB, scanner {held(False) / 2**20:.1f} MiB")


@pytest.mark.parametrize("seed", range(40))
def test_fast_integer_sort_equals_sort_indices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs = int(rng.integers(1, 6))
    heads = []
    for r in range(runs):
        n = int(rng.integers(0, 50))
        keys = np.sort(rng.integers(0, 60, n))  # repeated keys inside a run too
        if seed % 4 == 0:  # runs newest first, sequences disjoint
            seq = np.sort(rng.integers(0, 1000, n)) + (runs - r) * 1000
        elif seed % 4 == 1:  # interleaved sequence numbers, equal ones across runs
            seq = rng.integers(0, 30, n)
        else:
            seq = rng.permutation(n) + r * 100
        heads.append(pa.table({"k": pa.array(keys, pa.int64()), "_SEQUENCE_NUMBER": pa.array(seq, pa.int64()),
                               "i": pa.array(np.full(n, r), pa.int32())}))
    heads = [h for h in heads if h.num_rows] or [heads[0]]
    chunk = pa.concat_tables(heads)
    sort_keys = sort_keys_for(["k"], [])
    want = pc.sort_indices(chunk, sort_keys=sort_keys).to_numpy()
    got = _sort_indices(chunk, sort_keys, [h.num_rows for h in heads]).to_numpy()
    assert got.tolist() == want.tolist()
