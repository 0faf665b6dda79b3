"""RollingKeyValueFileWriter: files and metas of merged key-ordered rows, however they are chunked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.data.binary_row import deserialize_binary_row
from paimon_core.format.file_format import read_file
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.mergetree.kv_file_writer import ROLL_CHECK_ROWS, RollingKeyValueFileWriter
from paimon_core.paths import PathFactory
from paimon_core.schema.data_types import BigIntType, DataField, DoubleType, VarCharType
from paimon_core.stats.collector import stats_modes_for

STRING = VarCharType(VarCharType.MAX_LENGTH)
KEYS = [DataField(0, "s", STRING.copy(nullable=False)), DataField(1, "id", BigIntType(nullable=False))]
VALUES = [*KEYS, DataField(2, "v", DoubleType()), DataField(3, "t", STRING)]
N = 3 * ROLL_CHECK_ROWS + 1234


def _merged(n: int = N, seed: int = 0) -> pa.Table:
    """Merge output in key order: (s, id) ascending, retractions sprinkled in."""
    rng = np.random.default_rng(seed)
    s = np.sort(rng.choice(np.array(["a", "b", "c", "\u00e9"]), size=n))
    ids = np.arange(n, dtype=np.int64)
    v = rng.random(n)
    return pa.table(
        {
            "s": pa.array(s),
            "id": pa.array(ids),
            "v": pa.array(v, mask=rng.random(n) < 0.1),
            "t": pa.array([f"t{i % 97}" for i in range(n)], mask=rng.random(n) < 0.3),
            "_SEQUENCE_NUMBER": pa.array(rng.permutation(n).astype(np.int64) + 10),
            "_VALUE_KIND": pa.array(rng.choice(np.array([0, 0, 0, 1, 3], np.int8), size=n)),
        }
    )


def _writer(
    root: Path,
    *,
    fmt: str = "parquet",
    target: int = 300_000,
    level: int = 4,
    source: FileSource = FileSource.COMPACT,
    options: dict[str, str] | None = None,
) -> RollingKeyValueFileWriter:
    opts = options or {}
    return RollingKeyValueFileWriter(
        file_io=LocalFileIO(),
        paths=PathFactory(str(root), file_format=fmt),
        partition_path="",
        bucket=0,
        key_fields=KEYS,
        value_fields=VALUES,
        file_format=fmt,
        options=opts,
        target_file_size=target,
        schema_id=3,
        key_stats_modes=stats_modes_for(KEYS, opts),
        value_stats_modes=stats_modes_for(VALUES, opts),
        level=level,
        file_source=source,
    )


def _digest(root: Path, files: list[DataFileMeta]) -> list[str]:
    return [hashlib.sha256((root / "bucket-0" / f.file_name).read_bytes()).hexdigest() for f in files]


def _comparable(f: DataFileMeta) -> DataFileMeta:
    return f.copy(file_name="", creation_time=None)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize("chunking", ["ones-then-big", "random", "aligned"])
def test_chunked_writes_give_the_same_files(tmp_path: Path, fmt: str, chunking: str) -> None:
    merged = _merged()
    whole = _writer(tmp_path / "whole", fmt=fmt)
    whole.write(merged)
    expected = whole.close()
    assert len(expected) > 1  # rolled

    chunked = _writer(tmp_path / "chunked", fmt=fmt)
    rng = np.random.default_rng(1)
    if chunking == "ones-then-big":
        sizes = [1] * 50 + [N]
    elif chunking == "random":
        sizes = list(rng.integers(0, 40_000, size=200))
    else:
        sizes = [ROLL_CHECK_ROWS] * 10
    start = 0
    for size in sizes:
        chunked.write(merged.slice(start, int(size)))
        start += int(size)
    chunked.write(merged.slice(start))
    got = chunked.close()
    assert [_comparable(f) for f in got] == [_comparable(f) for f in expected]
    assert _digest(tmp_path / "chunked", got) == _digest(tmp_path / "whole", expected)


def test_metas_describe_each_file(tmp_path: Path) -> None:
    merged = _merged(seed=5)
    w = _writer(tmp_path, target=200_000, level=5)
    for part in merged.to_batches(max_chunksize=10_000):
        w.write(pa.Table.from_batches([part]))
    files = w.close()
    assert len(files) > 2
    key_types = [k.type for k in KEYS]
    start = 0
    for f in files:
        assert f.level == 5 and f.file_source == FileSource.COMPACT and f.schema_id == 3
        assert f.creation_time is not None
        part = merged.slice(start, f.row_count)
        start += f.row_count
        assert deserialize_binary_row(f.min_key, key_types) == (part["s"][0].as_py(), part["id"][0].as_py())
        assert deserialize_binary_row(f.max_key, key_types) == (part["s"][-1].as_py(), part["id"][-1].as_py())
        seqs = part["_SEQUENCE_NUMBER"].to_numpy()
        assert (f.min_sequence_number, f.max_sequence_number) == (int(seqs.min()), int(seqs.max()))
        kinds = part["_VALUE_KIND"].to_numpy()
        assert f.delete_row_count == int(np.isin(kinds, [1, 3]).sum())
        back = pa.Table.from_batches(
            list(read_file(LocalFileIO(), str(tmp_path / "bucket-0" / f.file_name), "parquet"))
        )
        assert back.column_names == [
            "_KEY_s",
            "_KEY_id",
            "_SEQUENCE_NUMBER",
            "_VALUE_KIND",
            "s",
            "id",
            "v",
            "t",
        ]
        assert back["_KEY_s"].to_pylist() == part["s"].to_pylist()
        assert back["id"].to_pylist() == part["id"].to_pylist()
        assert back["v"].to_pylist() == part["v"].to_pylist()
        assert back["t"].to_pylist() == part["t"].to_pylist()
        assert back["_SEQUENCE_NUMBER"].to_pylist() == part["_SEQUENCE_NUMBER"].to_pylist()
    assert start == N


def test_level0_append_files_are_new_level0_metas(tmp_path: Path) -> None:
    w = _writer(tmp_path, level=0, source=FileSource.APPEND)
    w.write(_merged(1000))
    (f,) = w.close()
    assert f.level == 0 and f.file_source == int(FileSource.APPEND) and f.value_stats_cols is None
    assert f.row_count == 1000


def test_stats_disabled(tmp_path: Path) -> None:
    w = _writer(tmp_path, options={"metadata.stats-mode": "none"})
    w.write(_merged(100))
    (f,) = w.close()
    assert f.value_stats.is_empty() and f.value_stats_cols == ()


@pytest.mark.parametrize("when", ["open", "closed"])
def test_abort_deletes_everything_written(tmp_path: Path, when: str) -> None:
    w = _writer(tmp_path, target=100_000)
    w.write(_merged())
    if when == "closed":
        assert w.close()
    paths = w.written_paths
    assert len(paths) > 1 and all(Path(p).exists() for p in paths)
    w.abort()
    assert not any(Path(p).exists() for p in paths)
    assert w.written_paths == []


def test_nothing_written_gives_no_file(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.write(_merged(0))
    assert w.close() == []
    assert w.written_paths == []
