"""Bulk (vectorized) manifest decoding: the same entries as the sequential decoder, lazily.

Every test compares against ``read_manifest_file`` (the sequential, per-record decoder), so a
fast wrong answer cannot pass; the vectorized path is forced on (``VECTORIZE_MIN_RECORDS = 0``)
and checked to have been taken where it must.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import CommitConflictError, CorruptFileError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import (
    DataFileMeta,
    FileKind,
    ManifestEntry,
    SimpleStats,
    manifest_batch,
    read_manifest_file,
)
from paimon_core.manifest.entry_set import EntrySet, merge_live
from paimon_core.manifest.manifest_batch import LazyDataFileMeta, read_manifest_batch
from paimon_core.manifest.manifest_decode import decode_manifest_batches
from paimon_core.manifest.manifest_file import write_manifest_file
from paimon_core.manifest.merger import merge_entries
from tests.unit.paimon_core.manifest.test_manifest_file import _entry, data_file_st

IO = LocalFileIO()
INT32 = st.integers(-(2**31), 2**31 - 1)
#: Partitions as Paimon writes them (a serialized BinaryRow: >= 12 bytes), so the vectorized path applies.
PARTITION = st.binary(min_size=12, max_size=40)

entry_st = st.builds(
    ManifestEntry,
    kind=st.sampled_from(FileKind),
    partition=PARTITION,
    bucket=INT32,
    total_buckets=INT32,
    file=data_file_st,
)


pytestmark = pytest.mark.usefixtures("vectorize_always")


def _write(tmp_path: Path, entries: list[ManifestEntry]) -> str:
    path = str(tmp_path / f"manifest-{uuid.uuid4()}-0")
    write_manifest_file(IO, path, entries, partition_stats=SimpleStats.empty(), schema_id=0)
    return path


def _check_same(batch: manifest_batch.ManifestBatch, want: list[ManifestEntry]) -> None:
    got = batch.entries()
    assert got == want
    assert want == got  # the eager side's __eq__ defers to the lazy subclass
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert hash(g.file) == hash(w.file)
        assert batch.identifier(i) == w.identifier()
        for name in DataFileMeta.__dataclass_fields__:
            assert getattr(g.file, name) == getattr(w.file, name), name


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(entry_st, min_size=1, max_size=12))
def test_vectorized_decoding_equals_sequential(tmp_path: Path, entries: list[ManifestEntry]) -> None:
    path = _write(tmp_path, entries)
    [batch] = decode_manifest_batches([(path, IO.read_bytes(path))])
    assert not batch.is_eager  # the vectorized path was taken
    _check_same(batch, read_manifest_file(IO, path))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.lists(st.builds(ManifestEntry, kind=st.sampled_from(FileKind), partition=st.binary(max_size=40),
                                           bucket=INT32, total_buckets=INT32, file=data_file_st), max_size=6),
                      min_size=1, max_size=4))
def test_any_partition_bytes_decode_right(tmp_path: Path, files: list[list[ManifestEntry]]) -> None:
    """Short partitions defeat the candidate heuristic: the file then decodes sequentially, still right."""
    paths = [_write(tmp_path, es) for es in files]
    batches = decode_manifest_batches([(p, IO.read_bytes(p)) for p in paths])
    for path, batch in zip(paths, batches, strict=True):
        _check_same(batch, read_manifest_file(IO, path))


def test_many_blocks_and_files_in_one_pass(tmp_path: Path) -> None:
    rng = random.Random(7)
    files = []
    for f in range(3):
        entries = []
        for i in range(700):  # > 64 KB of records: several Avro blocks per file
            stats = SimpleStats(bytes(rng.randrange(256) for _ in range(40)), bytes(40), (0, None, 3))
            entries.append(
                _entry(
                    f"data-{f}-{i}.parquet",
                    kind=FileKind.DELETE if i % 11 == 0 else FileKind.ADD,
                    bucket=rng.randrange(-3, 1000),
                    value_stats=stats,
                    min_sequence_number=rng.randrange(-(2**63), 2**63),
                    extra_files=("x.index",) if i % 13 == 0 else (),
                    external_path=f"s3://b/{i}" if i % 17 == 0 else None,
                    embedded_index=b"\x00\x01" if i % 19 == 0 else None,
                )
            )
        files.append(entries)
    paths = [_write(tmp_path, es) for es in files]
    batches = decode_manifest_batches([(p, IO.read_bytes(p)) for p in paths])
    for path, batch in zip(paths, batches, strict=True):
        assert not batch.is_eager
        _check_same(batch, read_manifest_file(IO, path))


def test_lazy_meta_behaves_as_the_eager_one(tmp_path: Path) -> None:
    path = _write(tmp_path, [_entry("a.parquet", value_stats_cols=("id",)), _entry("b.parquet")])
    batch = read_manifest_batch(IO, path)
    lazy, eager = batch.file(0), read_manifest_file(IO, path)[0].file
    assert isinstance(lazy, LazyDataFileMeta) and isinstance(lazy, DataFileMeta)
    assert lazy == eager and eager == lazy and lazy != batch.file(1)
    assert {lazy, eager} == {eager}
    for moved in (pickle.loads(pickle.dumps(lazy)), copy.copy(lazy), copy.deepcopy(lazy), lazy.with_level(3)):
        assert type(moved) is DataFileMeta
    assert lazy.with_level(3) == dataclasses.replace(eager, level=3)
    assert dataclasses.asdict(lazy) == dataclasses.asdict(eager)
    with pytest.raises(AttributeError):
        lazy.level = 5  # type: ignore[misc]


def test_corrupt_file_in_a_group_is_named(tmp_path: Path) -> None:
    good = _write(tmp_path, [_entry(f"f{i}") for i in range(5)])
    bad = _write(tmp_path, [_entry(f"g{i}") for i in range(5)])
    data = IO.read_bytes(bad)
    IO.write_bytes(bad, data[: len(data) - 30], overwrite=True)
    with pytest.raises(CorruptFileError) as err:
        decode_manifest_batches([(good, IO.read_bytes(good)), (bad, IO.read_bytes(bad))])
    assert bad in str(err.value)


def test_cache_sees_a_file_rewritten_in_place(tmp_path: Path) -> None:
    path = _write(tmp_path, [_entry("a.parquet")])
    first = read_manifest_batch(IO, path)
    assert read_manifest_batch(IO, path) is first  # cached
    other = _write(tmp_path, [_entry("b.parquet"), _entry("c.parquet")])
    IO.write_bytes(path, IO.read_bytes(other), overwrite=True)
    again = read_manifest_batch(IO, path)
    assert again is not first and [e.file.file_name for e in again.entries()] == ["b.parquet", "c.parquet"]


def test_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest_batch, "CACHE_MAX_BYTES", 40_000)
    paths = [_write(tmp_path, [_entry(f"f{k}-{i}") for i in range(20)]) for k in range(30)]
    for p in paths:
        read_manifest_batch(IO, p)
    assert manifest_batch._CACHE._bytes <= 40_000
    assert len(manifest_batch._CACHE._items) < 30


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(FileKind), st.integers(0, 5), st.integers(0, 1)), max_size=30))
def test_merge_live_equals_merge_entries(tmp_path: Path, ops: list[tuple[FileKind, int, int]]) -> None:
    entries = [_entry(f"f{name}", kind=kind, level=level) for kind, name, level in ops]
    path = _write(tmp_path, entries) if entries else None
    batches = [read_manifest_batch(IO, path)] if path else []
    try:
        want = merge_entries(entries)
    except CommitConflictError:
        with pytest.raises(CommitConflictError):
            merge_live(EntrySet(batches))
        return
    assert merge_live(EntrySet(batches)).entries() == want
