"""Deterministic input data: ``id int64, dt string (4 values), v double, s string (~12 chars)``.

Generated with numpy in vectorized chunks (10M rows in a few seconds) and saved once to Parquet;
every side loads that file before its timer starts, so generation is never measured.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DT_VALUES = ("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04")
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])
_ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
_CHUNK = 1_000_000


def _strings(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` random strings of 8..16 characters (mean 12), built from buffers (no Python loop)."""
    lengths = rng.integers(8, 17, size=n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    chars = _ALPHABET[rng.integers(0, len(_ALPHABET), size=int(offsets[-1]))]
    return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())]
                                 ).cast(pa.string())


def batch(start: int, n: int, *, seed: int, dt_values: tuple[str, ...] = DT_VALUES) -> pa.RecordBatch:
    """Rows ``id = start .. start+n-1`` (ascending) with random dt, v and s, reproducible by seed."""
    rng = np.random.default_rng([seed, start])
    ids = np.arange(start, start + n, dtype=np.int64)
    dt_index = rng.integers(0, len(dt_values), size=n, dtype=np.int32)
    dt = pa.DictionaryArray.from_arrays(pa.array(dt_index), pa.array(dt_values, pa.string())).cast(pa.string())
    return pa.record_batch([pa.array(ids), dt, pa.array(rng.random(n)), _strings(rng, n)], schema=SCHEMA)


def batches(n: int, *, seed: int, start: int = 0, dt_values: tuple[str, ...] = DT_VALUES) -> Iterator[pa.RecordBatch]:
    for offset in range(0, n, _CHUNK):
        yield batch(start + offset, min(_CHUNK, n - offset), seed=seed, dt_values=dt_values)


def write_input(path: Path, n: int, *, seed: int, start: int = 0, dt_values: tuple[str, ...] = DT_VALUES) -> Path:
    """Write ``n`` generated rows to ``path`` (zstd Parquet) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as w:
        for b in batches(n, seed=seed, start=start, dt_values=dt_values):
            w.write_batch(b)
    tmp.replace(path)
    return path


#: The value of ``v`` in every upserted row (generated values are in [0, 1)).
UPSERT_V = -1.0


def upserts(base: pa.Table, n: int, *, seed: int) -> tuple[pa.Table, pa.Table]:
    """(``n`` rows of ``base`` picked at random, in random order, with ``v = UPSERT_V``; the merged result).

    The merged result is ``base`` with those rows' ``v`` replaced: what a primary-key table on
    ``id`` holds after writing ``base`` and then the upserts.
    """
    rng = np.random.default_rng([seed, base.num_rows, n])
    picked = rng.choice(base.num_rows, size=n, replace=False).astype(np.int64)
    v_index = base.schema.get_field_index("v")
    up = base.take(pa.array(picked))
    up = up.set_column(v_index, "v", pa.array(np.full(n, UPSERT_V)))
    merged_v = base.column("v").to_numpy().copy()
    merged_v[picked] = UPSERT_V
    merged = base.set_column(v_index, "v", pa.array(merged_v))
    return up.combine_chunks(), merged.combine_chunks()
