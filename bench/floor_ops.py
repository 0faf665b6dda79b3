"""The floor: the same work done with plain pyarrow Parquet calls, no table format at all.

    python -m bench.floor_ops '{"op": "write", "input": "in.parquet", "path": "out.parquet"}'

Compression is zstd level 1, Paimon's default. Ops (same result fields as :mod:`bench.ours_ops`):

* ``write`` {input, path}: ``pq.write_table`` of the input.
* ``read`` {path, mode: table|stream, filter}: ``pq.read_table`` (``stream``: ``iter_batches``,
  only counted). With ``filter`` the path is a hive-partitioned directory (``dt=.../*.parquet``)
  read with ``filters=`` (partition pruning + row-group statistics).
"""

from __future__ import annotations

import json
import sys
from typing import Any

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
    with sw.phase("rewrite"):
        for i, group in enumerate(groups):
            data = pq.read_table(group["inputs"], partitioning=None)  # the files only, no hive columns
            rows_read += data.num_rows
            out = preloaded.get(i, data)
            pq.write_table(out, group["output"], **ZSTD)
            rows_written += out.num_rows
    return sw.result(rows=rows_read, rows_written=rows_written, files_written=len(groups))


HANDLERS = {"write": op_write, "read": op_read, "rewrite": op_rewrite}

if __name__ == "__main__":
    sys.exit(serve(HANDLERS))
