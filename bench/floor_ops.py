"""The floor: the same work done with plain pyarrow Parquet calls, no table format at all.

    python -m bench.floor_ops '{"op": "write", "input": "in.parquet", "path": "out.parquet"}'

Compression is zstd level 1, Paimon's default. Ops (same result fields as :mod:`bench.ours_ops`):

* ``write`` {input, path}: ``pq.write_table`` of the input.
* ``rewrite`` {groups_file, streaming}: per group, ``pq.read_table`` of its inputs + ``pq.write_table``
  (of the inputs, or of the group's preloaded ``rows``); ``streaming``: ``iter_batches`` +
  ``ParquetWriter.write_batch`` instead, in bounded memory.
* ``read`` {path, mode: table|stream, filter}: ``pq.read_table`` (``stream``: ``iter_batches``,
  only counted). With ``filter`` the path is a hive-partitioned directory (``dt=.../*.parquet``)
  read with ``filters=`` (partition pruning + row-group statistics).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.sidekit import Checksum, Stopwatch, serve, stream_read

ZSTD = {"compression": "zstd", "compression_level": 1}


def op_write(spec: dict[str, Any]) -> dict[str, Any]:
    data = pq.read_table(spec["input"])
    sw = Stopwatch()
    with sw.phase("write"):
        pq.write_table(data, spec["path"], **ZSTD)
    return sw.result(rows=data.num_rows, files_written=1)


def op_read(spec: dict[str, Any]) -> dict[str, Any]:
    sw = Stopwatch()
    acc = Checksum()
    conjuncts = spec.get("filter")
    if spec.get("mode", "table") == "stream":
        path = spec["path"]
        return sw.result(**stream_read(lambda: pq.ParquetFile(path).iter_batches(batch_size=65536), sw))
    with sw.phase("read"):
        if conjuncts:
            filters = [(field, "==" if op == "=" else op, value) for op, field, value in conjuncts]
            out = pq.read_table(spec["path"], partitioning="hive", filters=filters)
        else:
            out = pq.read_table(spec["path"])
    acc.add(out)
    return sw.result(rows=acc.rows, checksum=acc.result())


def op_rewrite(spec: dict[str, Any]) -> dict[str, Any]:
    with open(spec["groups_file"], encoding="utf-8") as f:
        groups = json.load(f)
    preloaded = {i: pq.read_table(g["rows"]) for i, g in enumerate(groups) if g.get("rows")}
    sw = Stopwatch()
    rows_read = rows_written = 0
    if spec.get("streaming"):
        with sw.phase("rewrite"):
            for i, group in enumerate(groups):
                read, written = _rewrite_streaming(group, preloaded.get(i))
                rows_read += read
                rows_written += written
        return sw.result(rows=rows_read, rows_written=rows_written, files_written=len(groups))
    with sw.phase("rewrite"):
        for i, group in enumerate(groups):
            data = pq.read_table(group["inputs"], partitioning=None)  # the files only, no hive columns
            rows_read += data.num_rows
            out = preloaded.get(i, data)
            pq.write_table(out, group["output"], **ZSTD)
            rows_written += out.num_rows
    return sw.result(rows=rows_read, rows_written=rows_written, files_written=len(groups))


def _rewrite_streaming(group: dict[str, Any], rows: pa.Table | None) -> tuple[int, int]:
    """The streaming floor of one group: every input read with ``ParquetFile.iter_batches``, batches
    written as they come through one ``ParquetWriter`` (``rows``: write these instead, batch by
    batch, the inputs only read); memory is a few batches, whatever the group's size."""
    read = written = 0
    writer: pq.ParquetWriter | None = None
    try:
        for path in group["inputs"]:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
                read += batch.num_rows
                if rows is None:
                    writer = writer or pq.ParquetWriter(group["output"], batch.schema, **ZSTD)
                    writer.write_batch(batch)
                    written += batch.num_rows
        for batch in rows.to_batches(max_chunksize=65536) if rows is not None else ():
            writer = writer or pq.ParquetWriter(group["output"], batch.schema, **ZSTD)
            writer.write_batch(batch)
            written += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    return read, written


HANDLERS = {"write": op_write, "read": op_read, "rewrite": op_rewrite}

if __name__ == "__main__":
    sys.exit(serve(HANDLERS))
